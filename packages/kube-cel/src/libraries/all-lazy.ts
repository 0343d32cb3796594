/**
 * all.ts as a function's bundle has it (infra/build-cel-engine.ts puts this module in its place):
 * the libraries in a chunk of their own, which only loadLibraries loads. An expression that names
 * none of them never loads it.
 */
import type { Environment } from '../engine.ts';
import { CelError } from '../errors.ts';
import { chunk } from '../precompiled.ts';

/** The libraries' chunk. */
const libraries = chunk(() => import('./all.ts'));

/** Registers the Kubernetes libraries in `env`; they must be loaded (loadLibraries). */
export function registerLibraries(env: Environment): void {
  const loaded = libraries.module;
  if (!loaded)
    throw new CelError(
      'the Kubernetes CEL libraries are not loaded: await loadLibraries() before compiling expressions that use them',
    );
  loaded.registerLibraries(env);
}

/** Loads the libraries' chunk (once). */
export function loadLibraries(): Promise<void> {
  return libraries.load();
}
