// Functions that compile CEL inside Lambda load the RE2 engine first when their expressions use
// regular expressions: a bundle carries RE2 in a chunk that only a dynamic import reaches.
import { loadRegexEngine } from '../../packages/kube-cel/src/index.ts';

/**
 * Loads the RE2 engine when `needed`: each call answers the load under way (a failed one is tried
 * again on the next call), or undefined once it is done or when it is not needed.
 */
export function regexLoader(needed: boolean): () => Promise<void> | undefined {
  let loaded = !needed;
  let loading: Promise<void> | undefined;
  return () => {
    if (loaded) return undefined;
    loading ??= loadRegexEngine().then(
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
