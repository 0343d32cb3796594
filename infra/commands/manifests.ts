import { type Command, Option } from 'commander';
import { REGION_HELP } from '../region.ts';
import type { CommandContext } from './context.ts';
import {
  DEFAULT_CONFIGURATION_NAME,
  FLEET_FILE,
  featureGatesOption,
  kubeVersionOption,
  regionOption,
  stageOption,
  stateDirOption,
} from './options.ts';

/** Adds `klw manifests`. */
export function register(cli: Command, context: CommandContext): void {
  cli
    .command('manifests')
    .description('write the webhook configurations and CRD conversion for the functions at their https URLs')
    .option('--base-url <url>', 'https://host[:port][/stage]; each function at <base>/<name>')
    .option('--function-urls <file>', 'JSON object of function name to URL (Lambda function URLs)')
    .option('--ca-bundle <file>', 'PEM of the CA that signed the endpoint certificate')
    .option('--out <file>', 'write here instead of stdout')
    .option('--crd-patches <dir>', 'also write <crd>.conversion-patch.yaml files for kubectl patch --type merge')
    .option('--name <name>', 'name of the webhook configurations', DEFAULT_CONFIGURATION_NAME)
    .addOption(
      new Option(
        '--path-secret <source>',
        'path secret in clientConfig.url: a placeholder to replace, the local one (--state-dir), the deployed one from SSM (--stage, --region), or none',
      )
        .choices(['placeholder', 'local', 'ssm', 'none'])
        .default('placeholder'),
    )
    .addOption(stateDirOption('local state directory, for --path-secret local'))
    .addOption(stageOption('Serverless stage, for --path-secret ssm'))
    .addOption(regionOption(`${REGION_HELP}; for --path-secret ssm`))
    .addOption(new Option('--format <format>', 'output format').choices(['yaml', 'json']).default('yaml'))
    .addOption(
      kubeVersionOption(
        'write only the fields this Kubernetes version knows (matchConditions need 1.28, or 1.27 with the feature gate)',
      ),
    )
    .addOption(
      featureGatesOption(
        'feature gates on in the target API server, as kube-apiserver takes them (AdmissionWebhookMatchConditions=true)',
      ),
    )
    .option('--cluster <name>', `a cluster of ${FLEET_FILE}: its secret, Kubernetes version and enforcement`)
    .option('--all-clusters', `every cluster of ${FLEET_FILE}, one file each in --out-dir`)
    .option('--out-dir <dir>', 'with --all-clusters: where <cluster>.yaml (or .json) go')
    // Its modules load when it runs: listing the commands loads none of them.
    .action(async (options) => (await import('./manifests-action.ts')).writeManifests(context, options));
}
