// In a checkout of the repository the loader's child would run the toolkit's TypeScript through
// tsx, which costs a second or more of CPU per child. Instead it runs its build (made as klw's own,
// infra/build-cache.mjs), once and again only when a source changed.
// Function modules are unchanged: klw transpiles each one as before (functions.ts).
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cachedBuild, LOADER_CACHE, LOADER_ENTRIES } from '../build-cache.mjs';

/** Where the loader's builds are kept. */
export const BUNDLE_CACHE = LOADER_CACHE;

/**
 * The folder of the loader's build (child.mjs), rebuilt when one of its sources changed; undefined when klw runs from the compiled package (nothing to build) or the
 * build fails (the child then runs the sources through tsx, which reports the error).
 */
export async function loaderBundle(): Promise<string | undefined> {
  if (!existsSync(join(dirname(fileURLToPath(import.meta.url)), 'child.ts'))) return undefined;
  try {
    return (await cachedBuild({ cacheDir: LOADER_CACHE, entryPoints: LOADER_ENTRIES })).dir;
  } catch {
    return undefined;
  }
}
