/**
 * `klw deploy` with a fleet file: every cluster's path secret parameter exists before the
 * functions that read it are deployed (created when missing), and afterwards each cluster gets
 * its own manifests file with its own secret.
 */
import { resolve } from 'node:path';
import { SSMClient } from '@aws-sdk/client-ssm';
import type { Registration } from '../../lib/registration.ts';
import type { Finding } from '../lint/finding.ts';
import type { Endpoints, ManifestSet } from '../manifests.ts';
import {
  clusterPathSecretParameterName,
  ensureDeployedPathSecret,
  readDeployedPathSecret,
  usesPathSecret,
  DEFAULT_STATE_DIR,
} from '../secrets/index.ts';
import type { SecretTarget } from '../secret-actions.ts';
import { fleetManifests } from './commands.ts';
import type { Fleet, FleetCluster } from './file.ts';

/** What ensureClusterPathSecrets found: the clusters whose parameter it created, and those that had one. */
export interface ClusterSecretsReport {
  created: string[];
  existing: string[];
}

/**
 * Creates each fleet cluster's path secret parameter that does not exist yet (a new random
 * SecureString, never overwriting one another deploy made meanwhile); existing ones are left
 * as they are, so a cluster's registered URLs keep working. Nothing when no function checks a
 * path secret.
 */
export async function ensureClusterPathSecrets(
  target: SecretTarget,
  fleet: Fleet,
  registrations: readonly Registration[],
  ssm: SSMClient = new SSMClient({ region: target.region }),
): Promise<ClusterSecretsReport> {
  const report: ClusterSecretsReport = { created: [], existing: [] };
  if (!registrations.some(usesPathSecret)) return report;
  for (const { name } of fleet.clusters) {
    const parameter = clusterPathSecretParameterName(target.service, target.stage, name);
    if (await readDeployedPathSecret(ssm, parameter)) report.existing.push(name);
    else {
      await ensureDeployedPathSecret(ssm, parameter);
      report.created.push(name);
    }
  }
  return report;
}

/** The lines `klw deploy` says about the cluster secrets. */
export function clusterSecretsLines(report: ClusterSecretsReport, target: SecretTarget): string[] {
  const where = `(stage ${target.stage}, ${target.region})`;
  return [
    ...(report.created.length ? [`created the path secret of cluster ${report.created.join(', ')} ${where}`] : []),
    ...(report.existing.length ? [`kept the path secret of cluster ${report.existing.join(', ')} ${where}`] : []),
  ];
}

/** What fleetDeployManifests takes from the deploy command. */
export interface FleetDeployManifestDeps {
  build: (endpoints: Endpoints, cluster: FleetCluster) => Promise<ManifestSet>;
  report: (findings: Finding[]) => void;
  say: (line: string) => void;
  registrations: Registration[];
}

/**
 * Writes `<outDir>/<cluster>.yaml` (relative to the project root) for every cluster of the
 * fleet: the deployed URLs with that cluster's secret.
 */
export async function fleetDeployManifests(
  root: string,
  target: SecretTarget,
  endpoints: Endpoints,
  outDir: string,
  deps: FleetDeployManifestDeps,
): Promise<void> {
  await fleetManifests(
    root,
    { allClusters: true, outDir: resolve(root, outDir), format: 'yaml' },
    undefined,
    {
      pathSecret: 'ssm',
      stateDir: DEFAULT_STATE_DIR,
      stage: target.stage,
      region: target.region,
      service: target.service,
    },
    { endpoints, ...deps },
  );
  deps.say(
    `register each cluster's file in that cluster: kubectl --context <context> apply -f ${outDir}/<cluster>.yaml`,
  );
}
