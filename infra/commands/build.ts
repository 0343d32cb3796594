import type { Command } from 'commander';
import type { CommandContext } from './context.ts';

/** Adds `klw build`. */
export function register(cli: Command, { root, say }: CommandContext): void {
  cli
    .command('build')
    .description('bundle each function with esbuild into dist/functions/<name>/index.mjs and a deterministic zip')
    .argument('[functions...]', 'only these functions')
    .action(async (names: string[]) => {
      // The action's modules (esbuild, the library) load when it runs, not with the program.
      const { buildAll, formatBytes } = await import('../build.ts');
      const { loadFleet } = await import('../fleet/file.ts');
      const { loadFunctions } = await import('../functions.ts');
      const { selectDeployed } = await import('../policies/deploy.ts');
      const loaded = await loadFunctions(root(), names);
      // Named functions are built as asked; otherwise a policy's only where some cluster serves it from Lambda.
      let functions = loaded;
      if (!names.length) {
        const selection = selectDeployed(
          root(),
          loaded,
          loadFleet(
            root(),
            loaded.map((f) => f.registration),
          ),
        );
        for (const line of selection.lines) say(line);
        functions = selection.deployed;
      }
      say(`building ${functions.length} function${functions.length === 1 ? '' : 's'}`);
      await buildAll(root(), functions, (b) =>
        say(
          `  ${b.name.padEnd(28)} ${formatBytes(b.bundleBytes).padStart(9)} bundle  ${formatBytes(b.zipBytes).padStart(9)} zip  ${b.zip}`,
        ),
      );
    });
}
