// Functions that compile CEL inside Lambda load what their expressions need first: a bundle carries
// the CEL engine (needed by expressions without a precompiled tree), the RE2 engine (regular
// expressions) and the Kubernetes CEL libraries in chunks that only a dynamic import reaches.
import {
  CelEngineNotLoaded,
  loadEngine,
  loadLibraries,
  loadRegexEngine,
  needsEngine,
  needsLibraries,
  usesRegex,
} from '../../packages/kube-cel/src/index.ts';
import { fleetKubeVersions } from '../handler/fleet.ts';

/**
 * `run` once the chunks are loaded (`chunksReady`, a chunkLoader): at once when they are. Where an
 * evaluation is left to the CEL engine before its chunk is loaded (CelEngineNotLoaded), `run` is
 * done again once it is: what runs here is CEL evaluation, which has no effects.
 */
export function afterChunks<T>(chunksReady: () => Promise<void> | undefined, run: () => T): T | Promise<T> {
  const attempt = (): T | Promise<T> => {
    try {
      return run();
    } catch (err) {
      if (err instanceof CelEngineNotLoaded) return loadEngine().then(run);
      throw err;
    }
  };
  const loading = chunksReady();
  return loading ? loading.then(attempt) : attempt();
}

/**
 * Loads the chunks `expressions` need: RE2 when one uses a regular expression, the Kubernetes
 * libraries when one names their functions (or always when `checked`: a type-checked expression
 * compiles in the whole environment), the CEL engine when `checked`, when the fleet names Kubernetes
 * versions, or when one of `compiled` (the expressions as compiled; `expressions` by default) has no
 * precompiled tree. Each call answers
 * the load under way (a failed one is tried again on the next call), or undefined once it is done
 * or when nothing is needed.
 */
export function chunkLoader(
  expressions: readonly string[],
  checked = false,
  compiled: readonly string[] = expressions,
): () => Promise<void> | undefined {
  const loads = [
    // Inside Lambda the fleet's versions compile while the module loads, and a bundle's forms are
    // made for the definition's own version only: a fleet naming versions needs the engine then.
    ...(checked || fleetKubeVersions().length > 0 || compiled.some(needsEngine) ? [loadEngine] : []),
    ...(expressions.some(usesRegex) ? [loadRegexEngine] : []),
    ...(checked || expressions.some(needsLibraries) ? [loadLibraries] : []),
  ];
  let loaded = !loads.length;
  let loading: Promise<void> | undefined;
  return () => {
    if (loaded) return undefined;
    loading ??= Promise.all(loads.map((load) => load())).then(
      () => {
        loaded = true;
      },
      (err) => {
        loading = undefined;
        throw err;
      },
    );
    return loading;
  };
}
