// The CEL engine and package as a function's bundle carries them. The engine, with what compiles
// expressions (packages/kube-cel compile.ts), is a chunk of its own, loaded only when an expression
// has no precompiled tree or an evaluation is left to it (compile-lazy.ts in compile.ts's place);
// the Kubernetes libraries (libraries/all.ts) are another, loaded only when an expression needs
// them (all-lazy.ts in all.ts's place). Each declaration the engine registers (its
// standard library when it loads, the Kubernetes environment when one is built) is first compared
// with every declaration of the same name, to refuse one that overlaps another: a guard for code
// that declares functions, milliseconds of the cold start of a function that only evaluates. A bundle's
// declarations are fixed, and the same declarations are checked wherever the package runs
// unbundled (its tests, the CLI), so bundles leave those comparisons out. Where the engine's text
// no longer reads as expected, it is bundled unchanged (a test says so). Its standard library is
// registered when first looked up (build-cel-registry.ts).
import { readFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import type * as esbuild from 'esbuild';
import { EVALUATOR_EDITS, edited, REGISTRY_EDITS } from './build-cel-registry.ts';

/** The engine's module with the registry, as a path ends. */
const REGISTRY = /[\\/]@marcbachmann[\\/]cel-js[\\/]lib[\\/]registry\.js$/;
/** The engine's module that registers its standard library when evaluated, as a path ends. */
const EVALUATOR = /[\\/]@marcbachmann[\\/]cel-js[\\/]lib[\\/]evaluator\.js$/;

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

/**
 * The registry's text as bundled: without the guards, and registering the standard library when
 * first looked up (deferred: false, or when its text no longer reads as expected, registering it at
 * once); undefined when the guards are not found (bundled unchanged).
 */
export function bundledRegistry(text: string): { text: string; deferred: boolean } | undefined {
  const guarded = withoutGuards(text);
  if (guarded === undefined) return undefined;
  const deferred = edited(guarded, REGISTRY_EDITS);
  return deferred === undefined ? { text: guarded, deferred: false } : { text: deferred, deferred: true };
}

/**
 * The evaluator's text as bundled, given the registry's beside it: its standard library registered
 * with the registrations deferred, when the registry defers them; else undefined (bundled unchanged).
 */
export function bundledEvaluator(text: string, registry: string): string | undefined {
  if (!bundledRegistry(registry)?.deferred) return undefined;
  return edited(text, EVALUATOR_EDITS);
}

/** The engine's module of functions, as a path ends. */
const FUNCTIONS = /[\\/]@marcbachmann[\\/]cel-js[\\/]lib[\\/]functions\.js$/;
/**
 * The engine's regular expression written with a character beyond ASCII (`µs`, U+00B5), which
 * esbuild leaves as written: Node reads a module whose text has one into a string of two bytes a
 * character, which V8 keeps twice as large and scans more slowly. Escaped, the bundle is ASCII.
 */
export const ASCII_EDITS = [
  { from: '/(\\d*\\.?\\d*)(ns|us|\u00b5s|ms|s|m|h)/', to: '/(\\d*\\.?\\d*)(ns|us|\\u00b5s|ms|s|m|h)/' },
];

/** The package's libraries module, and what a bundle has in its place. */
const LIBRARIES = join('packages', 'kube-cel', 'src', 'libraries', 'all.ts');
const LAZY_LIBRARIES = join('packages', 'kube-cel', 'src', 'libraries', 'all-lazy.ts');

/** The package's compiling module, and what a bundle has in its place. */
const COMPILE = join('packages', 'kube-cel', 'src', 'compile.ts');
const LAZY_COMPILE = join('packages', 'kube-cel', 'src', 'compile-lazy.ts');

/**
 * The esbuild plugin that bundles the engine's registry without the guards and with its standard
 * library registered when first looked up, the engine's text in ASCII, and the engine and the
 * package's libraries in chunks loaded on demand.
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
      build.onResolve({ filter: /[\\/]compile\.ts$/ }, (args) => {
        const path = resolve(args.resolveDir, args.path);
        if (!path.endsWith(COMPILE) || args.importer.endsWith(LAZY_COMPILE)) return undefined;
        return { path: path.slice(0, -COMPILE.length) + LAZY_COMPILE };
      });
      build.onLoad({ filter: REGISTRY }, async (args) => {
        const bundled = bundledRegistry(await readFile(args.path, 'utf8'));
        return bundled === undefined ? undefined : { contents: bundled.text, loader: 'js' };
      });
      build.onLoad({ filter: FUNCTIONS }, async (args) => {
        const contents = edited(await readFile(args.path, 'utf8'), ASCII_EDITS);
        return contents === undefined ? undefined : { contents, loader: 'js' };
      });
      build.onLoad({ filter: EVALUATOR }, async (args) => {
        const registry = await readFile(join(dirname(args.path), 'registry.js'), 'utf8');
        const contents = bundledEvaluator(await readFile(args.path, 'utf8'), registry);
        return contents === undefined ? undefined : { contents, loader: 'js' };
      });
    },
  };
}
