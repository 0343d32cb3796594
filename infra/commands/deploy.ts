import type { Command } from 'commander';
import type { CommandContext } from './context.ts';
import { FLEET_FILE, regionOption, stageOption } from './options.ts';

/** Adds `klw deploy`. */
export function register(cli: Command, context: CommandContext): void {
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
    .action(async (options) => {
      // Its modules load when it runs: listing the commands loads none of them.
      await (await import('./deploy-action.ts')).deploy(context, options);
    });
}
