import type { Command } from 'commander';
import type { CommandContext } from './context.ts';
import { featureGatesOption, kubeVersionOption, type KubeTargetOptions } from './options.ts';

/** Adds `klw lint`. */
export function register(cli: Command, context: CommandContext): void {
  cli
    .command('lint')
    .description(
      "check manifests (or, without files, the functions' registrations) against the API server's rules and the good practices",
    )
    .argument('[files...]', 'YAML or JSON manifests')
    .addOption(
      kubeVersionOption(
        "check CEL and say what this Kubernetes version's API server would refuse or drop (default: the newest)",
      ),
    )
    .addOption(featureGatesOption('feature gates on in that API server (AdmissionWebhookMatchConditions=true)'))
    .action(async (files: string[], options: KubeTargetOptions) => {
      // Its modules load when it runs: listing the commands loads none of them.
      await (await import('./lint-action.ts')).lint(context, files, options);
    });
}
