// What `klw deploy` runs, imported by its action when it runs (commands/deploy.ts): the program
// lists the command's options without loading esbuild, the AWS SDK and the generator.
import { resolve } from 'node:path';
import { buildAll } from '../build.ts';
import { awsClients, checkServerless, deployedEndpoints, readServerless, updateChangedCode } from '../deploy/index.ts';
import { KlwError } from '../errors.ts';
import { clusterSecretsLines, ensureClusterPathSecrets, fleetDeployManifests } from '../fleet/deploy.ts';
import { type FleetCluster, loadFleet } from '../fleet/file.ts';
import { loadFunctions } from '../functions.ts';
import type { Endpoints } from '../manifests.ts';
import { renderDocuments } from '../output.ts';
import { selectDeployed } from '../policies/deploy.ts';
import { regionFor } from '../region.ts';
import { ensureTargetPathSecret, writePrivateOutput } from '../secret-actions.ts';
import type { CommandContext } from './context.ts';
import type { RegionOptions, StageOptions } from './options.ts';
import { endpointsFrom, manifestsFor, reportFindings } from './shared.ts';

/** The options of `klw deploy`. */
export interface DeployOptions extends StageOptions, RegionOptions {
  functionUrls?: boolean;
  direct?: boolean;
  out: string;
  outDir: string;
  caBundle?: string;
}

/** Deploys with the Serverless Framework (`runServerless`), then writes the manifests for the deployed URLs. */
export async function deploy(
  { root, say, runServerless: serverless }: CommandContext,
  options: DeployOptions,
): Promise<void> {
  const loaded = await loadFunctions(root());
  // A policy's function only where some cluster serves it from Lambda.
  const all = loaded.map((f) => f.registration);
  const fleet = loadFleet(root(), all);
  const selection = selectDeployed(root(), loaded, fleet);
  for (const line of selection.lines) say(line);
  const functions = selection.deployed;
  const registrations = functions.map((f) => f.registration);
  const config = readServerless(root());
  reportFindings(checkServerless(config, registrations));
  const target = {
    service: String(config.service),
    stage: options.stage,
    region: regionFor(options, () => config),
  };
  say(`building ${functions.length} functions`);
  await buildAll(root(), functions);
  const clients = await awsClients(target.region);
  if (options.direct) {
    say(`updating changed code in ${target.service}-${target.stage} (${target.region})`);
    await updateChangedCode(root(), clients, target, registrations, (u) =>
      say(`  ${u.name.padEnd(28)} ${u.updated ? 'updated' : 'unchanged'}`),
    );
    return;
  }
  // A fleet's functions take only the clusters' secrets: each cluster's parameter, not the service's.
  const secrets = fleet ? undefined : await ensureTargetPathSecret(target, registrations);
  if (fleet)
    for (const line of clusterSecretsLines(await ensureClusterPathSecrets(target, fleet, registrations), target))
      say(line);
  say(`serverless deploy --stage ${target.stage} --region ${target.region}`);
  const args = [
    'deploy',
    '--stage',
    target.stage,
    '--region',
    target.region,
    ...(options.functionUrls ? ['--param', 'functionUrls=true'] : []),
  ];
  const out = await serverless(root(), args);
  process.stderr.write(out.stdout + out.stderr);
  if (out.code !== 0) throw new KlwError(`serverless deploy failed (exit ${out.code})`);
  const endpoints = await deployedEndpoints(clients, target, registrations, options.functionUrls === true);
  if (secrets) endpoints.pathSecret = secrets.current;
  if (options.caBundle) endpoints.caBundlePem = endpointsFrom({ caBundle: options.caBundle }).caBundlePem!;
  if (fleet) {
    const build = (e: Endpoints, cluster: FleetCluster) =>
      manifestsFor(root(), e, undefined, { cluster, functions: loaded });
    const deps = { build, report: reportFindings, say, registrations: all };
    return fleetDeployManifests(root(), target, endpoints, options.outDir, deps);
  }
  const set = await manifestsFor(root(), endpoints, undefined, { functions: loaded });
  // The URLs hold the path secret: the file is written readable by its owner only.
  writePrivateOutput(resolve(root(), options.out), renderDocuments(set.documents, 'yaml'));
  say(`wrote ${options.out}; register with: kubectl apply -f ${options.out}`);
}
