/** `klw manifests --cluster X` and `--all-clusters --out-dir D`: the manifests of fleet clusters. */
import type { Registration } from '../../lib/registration.ts';
import { loadFunctions } from '../functions.ts';
import { KlwError } from '../errors.ts';
import type { Finding } from '../lint/finding.ts';
import type { Endpoints, ManifestSet } from '../manifests.ts';
import { renderDocuments } from '../output.ts';
import { type KubeTarget, registrationVersionFindings } from '../kube-versions.ts';
import { withPathSecret, type PathSecretOptions } from '../secret-actions.ts';
import { PATH_SECRET_PLACEHOLDER } from '../secrets/index.ts';
import { type FleetCluster, loadFleet, selectClusters } from './file.ts';
import {
  clusterConditionFindings,
  clusterManifestFile,
  clusterTarget,
  forCluster,
  writeClusterManifests,
} from './manifests.ts';

/** The options of `klw manifests` that choose fleet clusters. */
export interface FleetManifestOptions {
  cluster?: string;
  allClusters?: boolean;
  outDir?: string;
  out?: string;
  crdPatches?: string;
  format: 'yaml' | 'json';
}

/** What fleetManifests takes from the manifests command. */
export interface FleetManifestDeps {
  /** The endpoints of the command line, without a secret. */
  endpoints: Endpoints;
  /** Generates and lints the manifests of a cluster for endpoints (the command's manifestsFor). */
  build: (endpoints: Endpoints, cluster: FleetCluster) => Promise<ManifestSet>;
  report: (findings: Finding[]) => void;
  say: (line: string) => void;
  /** Writes to stdout (`klw manifests --cluster X` without --out). */
  stdout?: (text: string) => void;
  registrations?: Registration[];
}

/**
 * Writes the manifests of the clusters `--cluster` or `--all-clusters` ask for, each with its
 * own secret (from `secretOptions`' source), its Kubernetes version's fields and its enforcement;
 * false when neither is given (the manifests of the one implicit cluster, as without a fleet).
 * Every cluster's manifests are made before any is written, so a failure leaves no partial set.
 */
export async function fleetManifests(
  root: string,
  options: FleetManifestOptions,
  target: KubeTarget | undefined,
  secretOptions: PathSecretOptions,
  deps: FleetManifestDeps,
): Promise<boolean> {
  if (options.outDir && !options.allClusters)
    throw new KlwError('--out-dir goes with --all-clusters (one file per cluster); use --out for one');
  if (!options.cluster && !options.allClusters) return false;
  if (options.cluster && options.allClusters) throw new KlwError('give --cluster or --all-clusters, not both');
  if (options.allClusters && !options.outDir)
    throw new KlwError('--all-clusters writes one file per cluster: give --out-dir');
  if (options.allClusters && options.out) throw new KlwError('--all-clusters writes into --out-dir; leave out --out');
  if (options.crdPatches)
    throw new KlwError(
      '--crd-patches is not written per cluster; ' +
        'write the patches without --cluster (their URLs need a cluster secret)',
    );
  const registrations = deps.registrations ?? (await loadFunctions(root)).map((f) => f.registration);
  const clusters = selectClusters(loadFleet(root, registrations), {
    ...(options.cluster ? { cluster: options.cluster } : {}),
    all: !!options.allClusters,
  });
  const rendered: Array<{ cluster: string; text: string; objects: number }> = [];
  let placeholder = false;
  // Every cluster's findings, reported together: one cluster's errors do not hide the next one's.
  const findings: Finding[] = [];
  for (const cluster of clusters) {
    const endpoints = await withPathSecret(deps.endpoints, undefined, { ...secretOptions, cluster: cluster.name });
    const set = await deps.build(endpoints, cluster);
    const versioned = forCluster(set.documents, cluster, registrations, target);
    const { documents } = versioned;
    findings.push(
      ...versioned.findings.map((f) => ({ ...f, subject: `${cluster.name}: ${f.subject}` })),
      ...clusterConditionFindings(cluster, registrations),
    );
    placeholder ||= JSON.stringify(documents).includes(PATH_SECRET_PLACEHOLDER);
    rendered.push({
      cluster: cluster.name,
      text: renderDocuments(documents, options.format),
      objects: documents.length,
    });
  }
  // A cluster without a version of its own (nor --kube-version) runs each registration's.
  if (clusters.some((cluster) => !clusterTarget(cluster, target)))
    findings.push(...registrationVersionFindings(registrations));
  deps.report(findings);
  if (placeholder)
    deps.say(
      `clientConfig.url holds the placeholder ${PATH_SECRET_PLACEHOLDER}; ` +
        "--path-secret ssm or local writes each cluster's secret",
    );
  for (const { cluster, text, objects } of rendered) {
    const file = options.allClusters ? clusterManifestFile(options.outDir!, cluster, options.format) : options.out;
    if (!file || file === '-') {
      (deps.stdout ?? ((t: string) => process.stdout.write(t)))(text);
      continue;
    }
    writeClusterManifests(file, text);
    deps.say(`wrote ${file} (cluster ${cluster}, ${objects} objects)`);
  }
  return true;
}
