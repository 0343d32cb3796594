// Functions that compile CEL inside Lambda load what their expressions need first: a bundle carries
// the RE2 engine (regular expressions) and the Kubernetes CEL libraries in chunks that only a
// dynamic import reaches.
import { loadLibraries, loadRegexEngine, needsLibraries, usesRegex } from '../../packages/kube-cel/src/index.ts';

/**
 * Loads the chunks `expressions` need (RE2 when one uses a regular expression, the libraries when one
 * names their functions, or always when `checked`: a type-checked expression compiles in the whole
 * environment): each call answers the load under way (a failed one is tried again on the next
 * call), or undefined once it is done or when nothing is needed.
 */
export function chunkLoader(expressions: readonly string[], checked = false): () => Promise<void> | undefined {
  const loads = [
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
