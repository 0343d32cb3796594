import { resolve } from 'node:path';
import type { Command } from 'commander';
import { KlwError } from '../errors.ts';
import type { FleetCluster } from '../fleet/file.ts';
import type { Endpoints } from '../manifests.ts';
import type { CommandContext } from './context.ts';
import { FLEET_FILE, regionOption, stageOption, type RegionOptions, type StageOptions } from './options.ts';

/** The options of `klw deploy`. */
interface DeployOptions extends StageOptions, RegionOptions {
  functionUrls?: boolean;
  direct?: boolean;
  out: string;
  outDir: string;
  caBundle?: string;
}

/**
 * What the deploy runs, imported when it runs: the program lists the command's options without
 * loading esbuild, the AWS SDK and the generator.
 */
async function deployModules() {
  const [build, deploy, functions, output, region, secrets, fleet, fleetFile, policies, shared] = await Promise.all([
    import('../build.ts'),
    import('../deploy/index.ts'),
    import('../functions.ts'),
    import('../output.ts'),
    import('../region.ts'),
    import('../secret-actions.ts'),
    import('../fleet/deploy.ts'),
    import('../fleet/file.ts'),
    import('../policies/deploy.ts'),
    import('./shared.ts'),
  ]);
  return {
    ...build,
    ...deploy,
    ...functions,
    ...output,
    ...region,
    ...secrets,
    ...fleet,
    ...fleetFile,
    ...policies,
    ...shared,
  };
}

/** Adds `klw deploy`. */
export function register(cli: Command, { root, say, runServerless: serverless }: CommandContext): void {
  cli
    .command('deploy')
    .description('deploy with the Serverless Framework, then write the manifests for the deployed URLs')
    .addOption(stageOption())
    .addOption(regionOption())
    .option('--function-urls', 'deploy Lambda function URLs and register those instead of the HTTP API')
    .option('--direct', 'only update the code of functions whose zip changed (UpdateFunctionCode), no CloudFormation')
    .option('--out <file>', 'where to write the manifests', 'dist/manifests.yaml')
    .option(
      '--out-dir <dir>',
      `with ${FLEET_FILE}: where each cluster's manifests go (<cluster>.yaml)`,
      'dist/clusters',
    )
    .option('--ca-bundle <file>', 'PEM CA bundle for the endpoints (public AWS endpoints need none)')
    .action(async (options: DeployOptions) => {
      const m = await deployModules();
      const { loadFunctions, loadFleet, selectDeployed, readServerless, checkServerless, reportFindings } = m;
      const { regionFor, buildAll, awsClients, updateChangedCode, ensureTargetPathSecret, clusterSecretsLines } = m;
      const { ensureClusterPathSecrets, deployedEndpoints, endpointsFrom, manifestsFor, fleetDeployManifests } = m;
      const { writePrivateOutput, renderDocuments } = m;
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
    });
}
