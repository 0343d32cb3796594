// The matchConditions thread's own loading (conditions-worker.mjs): in a checkout it runs the
// evaluator built once into JavaScript, not the TypeScript sources through tsx; when that build
// cannot be made it still evaluates, from the sources.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { Worker } from 'node:worker_threads';
import type { ConditionsSpec, WorkerMessage } from '../../../../infra/local/back/match-conditions.ts';
import { admissionReview } from '../../../../lib/testing/index.ts';
import type { KubeObject } from '../../../../lib/index.ts';

const WORKER = new URL('../../../../infra/local/back/conditions-worker.mjs', import.meta.url);
const spec: ConditionsSpec = {
  name: 'named',
  webhookName: 'named.example.com',
  failurePolicy: 'Fail',
  matchConditions: [{ name: 'only-web', expression: "object.metadata.name == 'web'" }],
};
const review = (name: string) =>
  Buffer.from(JSON.stringify(admissionReview({ apiVersion: 'v1', kind: 'Pod', metadata: { name } } as KubeObject)));

/** Starts a thread (with `workerData`), warms it with the spec and evaluates a review of `web` and one of `db`. */
async function evaluate(workerData?: object) {
  const worker = new Worker(WORKER, { workerData });
  try {
    const messages: WorkerMessage[] = [];
    worker.on('message', (m: WorkerMessage) => messages.push(m));
    worker.postMessage({ warm: spec });
    const [ready] = (await once(worker, 'message')) as [WorkerMessage];
    const done = (id: number) =>
      new Promise<WorkerMessage>((resolve) =>
        worker.on('message', (m: WorkerMessage) => 'done' in m && m.id === id && resolve(m)),
      );
    const web = done(1);
    worker.postMessage({ id: 1, spec, body: review('web') });
    const db = done(2);
    worker.postMessage({ id: 2, spec, body: review('db') });
    return { ready, web: await web, db: await db };
  } finally {
    await worker.terminate();
  }
}

describe('the matchConditions thread', () => {
  const work = mkdtempSync(join(process.cwd(), '.klw-test-conditions-worker-'));
  after(() => rmSync(work, { recursive: true, force: true }));

  it('runs the evaluator from its cached build in a checkout', async () => {
    const { ready, web, db } = await evaluate();
    assert.deepEqual(ready, { ready: true, from: 'build' });
    assert.deepEqual(web, { id: 1, done: true });
    assert.ok('excluded' in db && db.excluded, JSON.stringify(db));
  });

  it('runs the TypeScript sources when the build cannot be made, and evaluates the same', async () => {
    // The cache folder would be inside a regular file: no build can be kept there.
    writeFileSync(join(work, 'file'), '');
    const { ready, web, db } = await evaluate({ cacheDir: join(work, 'file', 'cache') });
    assert.deepEqual(ready, { ready: true, from: 'sources' });
    assert.deepEqual(web, { id: 1, done: true });
    assert.ok('excluded' in db && db.excluded, JSON.stringify(db));
  });
});
