import { Command } from 'commander';
import { KlwError } from '../errors.ts';
import type { CommandContext } from './context.ts';

/** The kinds of function `klw new` scaffolds. */
type FunctionType = 'validating' | 'mutating' | 'conversion' | 'policy';

/** The options of `klw new`. */
interface NewOptions {
  resource?: string;
  mutating?: boolean;
}

/** Adds `klw new`. */
export function register(cli: Command, { root, say }: CommandContext): void {
  cli
    .command('new')
    .description('scaffold a function with its registration and a passing test')
    .addArgument(
      new Command()
        .createArgument('<type>', 'kind of webhook, or policy (a CEL admission policy)')
        .choices(['validating', 'mutating', 'conversion', 'policy']),
    )
    .argument('<name>', 'function name (a DNS-1123 label)')
    .option(
      '--resource <plural>',
      'the resource an admission function is on: pods, deployments.apps (default: the one its name says, pod-policy -> pods, else configmaps)',
    )
    .option('--mutating', 'with policy: a mutating policy (MutatingAdmissionPolicy) instead of a validating one')
    .action(async (type: FunctionType, name: string, options: NewOptions) => {
      if (options.mutating && type !== 'policy')
        throw new KlwError(`--mutating goes with klw new policy; klw new mutating ${name} writes a mutating webhook`);
      const { scaffold } = await import('../scaffold.ts');
      for (const file of scaffold(
        root(),
        type === 'policy' ? (options.mutating ? 'mutating-policy' : 'validating-policy') : type,
        name,
        options.resource !== undefined ? { resource: options.resource } : {},
      ))
        say(`created ${file}`);
    });
}
