// A matchConditions evaluator: a worker thread of the emulator (see ConditionPool in
// match-conditions.ts) that evaluates one review at a time, so a slow condition never holds the
// emulator's event loop. In a checkout of the repository it runs the evaluator built into
// JavaScript once, and again whenever a source changed (infra/build-cache.mjs), as
// infra/bin/klw.mjs does; when that build fails, the TypeScript sources through tsx, which
// reports the error. Installed from the package, the compiled JavaScript beside it. The thread's
// workerData may name the build's cache folder (`cacheDir`, for tests); its ready message says
// which of the three it runs (`from`).
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parentPort, workerData } from 'node:worker_threads';

const source = new URL('./match-conditions.ts', import.meta.url);

/** The evaluator from its cached build, or undefined when it cannot be built. */
async function built() {
  try {
    const { cachedBuild, TOOLKIT } = await import('../../build-cache.mjs');
    // A cache of its own: the evaluator alone loads less than klw's build, whose chunks it would share.
    const { dir } = await cachedBuild({
      cacheDir: workerData?.cacheDir ?? join(TOOLKIT, 'node_modules', '.cache', 'klw-conditions'),
      entryPoints: { 'match-conditions': 'infra/local/back/match-conditions.ts' },
    });
    return await import(pathToFileURL(join(dir, 'match-conditions.mjs')).href);
  } catch {
    return undefined;
  }
}

let evaluator;
let from = 'package';
if (existsSync(fileURLToPath(source))) {
  evaluator = await built();
  from = 'build';
  if (!evaluator) {
    const { register } = await import('tsx/esm/api');
    register();
    evaluator = await import(source.href);
    from = 'sources';
  }
} else {
  evaluator = await import('./match-conditions.js');
}
// The first message names the conditions to compile; the thread is ready once they are.
parentPort.on('message', (message) => {
  if ('warm' in message) {
    evaluator.warmConditions(message.warm);
    parentPort.postMessage({ ready: true, from });
  } else evaluator.runConditionsJob(message, (reply) => parentPort.postMessage(reply));
});
