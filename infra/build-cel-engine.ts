// The CEL engine and package as a function's bundle carries them. The Kubernetes libraries
// (packages/kube-cel libraries/all.ts) are a chunk of their own, loaded only when an expression
// needs them (all-lazy.ts in all.ts's place). Each declaration the engine registers (its
// standard library when it loads, the Kubernetes environment when one is built) is first compared
// with every declaration of the same name, to refuse one that overlaps another: a guard for code
// that declares functions, milliseconds of the cold start of a function that only evaluates. A bundle's
// declarations are fixed, and the same declarations are checked wherever the package runs
// unbundled (its tests, the CLI), so bundles leave those comparisons out. Where the engine's text
// no longer reads as expected, it is bundled unchanged (a test says so).
import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type * as esbuild from 'esbuild';

/** The engine's module with the registry, as a path ends. */
const REGISTRY = /[\\/]@marcbachmann[\\/]cel-js[\\/]lib[\\/]registry\.js$/;

/** The comparisons left out: the start of each method, and the same start returning at once. */
export const ENGINE_GUARDS: ReadonlyArray<{ method: string; from: string; to: string }> = [
  {
    method: '#checkOverlappingSignatures',
    from: '  #checkOverlappingSignatures(newDec) {\n',
    to: '  #checkOverlappingSignatures(newDec) {\n    return\n',
  },
  {
    method: '#assertOverload',
    from: '  #assertOverload(decl) {\n',
    to: '  #assertOverload(decl) {\n    return decl\n',
  },
];

/**
 * The registry's text without the guards, or undefined when any guard is not found exactly once
 * (an engine whose text changed: bundled as it is).
 */
export function withoutGuards(text: string): string | undefined {
  let out = text;
  for (const { from, to } of ENGINE_GUARDS) {
    if (out.split(from).length !== 2) return undefined;
    out = out.replace(from, to);
  }
  return out;
}

/** The package's libraries module, and what a bundle has in its place. */
const LIBRARIES = join('packages', 'kube-cel', 'src', 'libraries', 'all.ts');
const LAZY_LIBRARIES = join('packages', 'kube-cel', 'src', 'libraries', 'all-lazy.ts');

/**
 * The esbuild plugin that bundles the engine's registry without the guards, and the package's
 * libraries in a chunk loaded on demand.
 */
export function engineGuardsPlugin(): esbuild.Plugin {
  return {
    name: 'kube-cel-engine-guards',
    setup(build) {
      build.onResolve({ filter: /[\\/]all\.ts$/ }, (args) => {
        const path = resolve(args.resolveDir, args.path);
        if (!path.endsWith(LIBRARIES) || args.importer.endsWith(LAZY_LIBRARIES)) return undefined;
        return { path: path.slice(0, -LIBRARIES.length) + LAZY_LIBRARIES };
      });
      build.onLoad({ filter: REGISTRY }, async (args) => {
        const contents = withoutGuards(await readFile(args.path, 'utf8'));
        return contents === undefined ? undefined : { contents, loader: 'js' };
      });
    },
  };
}
