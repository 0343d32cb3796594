import { Command } from 'commander';
import { scaffold } from '../scaffold.ts';
import type { CommandContext } from './context.ts';

/** The kinds of function `klw new` scaffolds. */
type FunctionType = 'validating' | 'mutating' | 'conversion';

/** The options of `klw new`. */
interface NewOptions {
  resource?: string;
}

/** Adds `klw new`. */
export function register(cli: Command, { root, say }: CommandContext): void {
  cli
    .command('new')
    .description('scaffold a function with its registration and a passing test')
    .addArgument(
      new Command().createArgument('<type>', 'kind of webhook').choices(['validating', 'mutating', 'conversion']),
    )
    .argument('<name>', 'function name (a DNS-1123 label)')
    .option(
      '--resource <plural>',
      'the resource an admission function is on: pods, deployments.apps (default: the one its name says, pod-policy -> pods, else configmaps)',
    )
    .action((type: FunctionType, name: string, options: NewOptions) => {
      for (const file of scaffold(
        root(),
        type,
        name,
        options.resource !== undefined ? { resource: options.resource } : {},
      ))
        say(`created ${file}`);
    });
}
