// A matchConditions evaluator: a worker thread of the emulator (see ConditionPool in
// match-conditions.ts) that evaluates one review at a time, so a slow condition never holds the
// emulator's event loop. In a checkout of the repository it runs the TypeScript sources through
// tsx, as infra/bin/klw.mjs does; installed from the package, the compiled JavaScript beside it.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parentPort } from 'node:worker_threads';

const source = new URL('./match-conditions.ts', import.meta.url);
let evaluator;
if (existsSync(fileURLToPath(source))) {
  const { register } = await import('tsx/esm/api');
  register();
  evaluator = await import(source.href);
} else {
  evaluator = await import('./match-conditions.js');
}
// The first message names the conditions to compile; the thread is ready once they are.
parentPort.on('message', (message) => {
  if ('warm' in message) {
    evaluator.warmConditions(message.warm);
    parentPort.postMessage({ ready: true });
  } else evaluator.runConditionsJob(message, (reply) => parentPort.postMessage(reply));
});
