import { resolve } from 'node:path';
import { type Command, Option } from 'commander';
import type { CommandContext } from './context.ts';

/** The options of `klw init`. */
interface InitOptions {
  template: 'validating' | 'mutating' | 'conversion';
  package?: string;
}

/** Adds `klw init`. */
export function register(cli: Command, { root, say }: CommandContext): void {
  cli
    .command('init')
    .description('create a project: package.json, tsconfig.json, a first function and its test, serverless.yml')
    .argument('<dir>', 'folder to create (new or empty)')
    .addOption(
      new Option('--template <type>', 'kind of the first function')
        .choices(['validating', 'mutating', 'conversion'])
        .default('validating'),
    )
    .option(
      '--package <spec>',
      'how the project depends on kube-lambda-webhooks: a version range, or a tarball from npm pack (file:<path> or a path, from the current folder)',
    )
    .action(async (dir: string, options: InitOptions) => {
      const { EXAMPLE_FUNCTIONS, initProject, packageHint } = await import('../init.ts');
      const files = initProject(resolve(root(), dir), {
        template: options.template,
        ...(options.package ? { packageSpec: options.package } : {}),
      });
      for (const file of files) say(`created ${dir}/${file}`);
      say(`first function: functions/${EXAMPLE_FUNCTIONS[options.template]}`);
      say(`next: cd ${dir} && npm install && npm start   (then npm test)`);
      const hint = options.package ? undefined : packageHint();
      if (hint) say(hint);
    });
}
