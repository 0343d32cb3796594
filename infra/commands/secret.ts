import type { Command } from 'commander';
import type { SecretCommandOptions } from '../secret-actions.ts';
import type { CommandContext } from './context.ts';
import { FLEET_FILE, regionOption, stageOption, stateDirOption } from './options.ts';

/** Adds `klw secret rotate` and `klw secret retire` (serverless.yml names the service and the default region). */
export function register(cli: Command, { root, say }: CommandContext): void {
  const secret = cli
    .command('secret')
    .description('manage the path secret in the webhook URLs (<url>/<name>/<secret>)');
  for (const [action, description] of [
    ['rotate', 'make a new current path secret and keep the old one valid as previous'],
    ['retire', 'drop the previous path secret once the new URLs are registered'],
  ] as const) {
    secret
      .command(action)
      .description(description)
      .addOption(stageOption())
      .addOption(regionOption())
      .option('--local', 'the local secret of the emulator instead of the deployed one')
      .option('--cluster <name>', `only this cluster's secret (a cluster of ${FLEET_FILE}); the others are untouched`)
      .addOption(stateDirOption('local state directory, with --local'))
      .action(async (options: SecretCommandOptions) => {
        // The deploy and secret modules (the AWS SDK) load when the action runs, not with the program.
        const { readServerless } = await import('../deploy/serverless.ts');
        const { checkCluster, runSecretCommand } = await import('../secret-actions.ts');
        const config = () => readServerless(root());
        const service = () => String(config().service);
        if (options.cluster) await checkCluster(root(), options.cluster);
        for (const line of await runSecretCommand(action, options, service, undefined, config)) say(line);
      });
  }
}
