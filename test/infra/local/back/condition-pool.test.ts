// The ConditionPool's own bounds, without a server: the queue of reviews waiting for a thread,
// and a thread that cannot start. Neither depends on how fast a thread starts: the queue fills
// in one synchronous loop, before any thread can say it is ready.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { ConditionPool, MAX_QUEUED_CONDITIONS } from '../../../../infra/local/back/condition-pool.ts';
import type { AdmissionRegistration } from '../../../../lib/registration.ts';
import { admissionReview } from '../../../../lib/testing/index.ts';
import type { KubeObject } from '../../../../lib/index.ts';
import { builtConditionsWorker } from '../../../helpers.ts';

const registration = {
  type: 'validating',
  name: 'queued',
  webhookName: 'queued.example.com',
  failurePolicy: 'Fail',
  matchConditions: [{ name: 'always', expression: 'true' }],
} as unknown as AdmissionRegistration;
const review = (spec: object = {}, annotations: Record<string, string> = {}) => {
  const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', annotations }, spec } as KubeObject;
  return Buffer.from(JSON.stringify(admissionReview(pod)));
};
const body = review();
// One regex scan of a 1 MiB annotation per item of spec.n: minutes for 5,000 items on any machine.
const slow = {
  ...registration,
  name: 'slow',
  matchConditions: [
    { name: 'slow', expression: "!object.spec.n.exists(i, object.metadata.annotations['big'].matches('[a-z]+[0-9]'))" },
  ],
} as unknown as AdmissionRegistration;
const heavy = review({ n: Array.from({ length: 5_000 }, (_, i) => i) }, { big: 'a'.repeat(1024 * 1024) });

// The threads load the evaluator built into JavaScript, as installed: these tests are about the pool.
const built = mkdtempSync(join(process.cwd(), '.klw-test-conditions-'));
const worker = await builtConditionsWorker(built);

describe('ConditionPool bounds', () => {
  const pools: ConditionPool[] = [];
  after(async () => {
    for (const pool of pools) await pool.close();
    rmSync(built, { recursive: true, force: true });
  });

  it(`answers 429 once ${MAX_QUEUED_CONDITIONS} reviews wait for a thread, and keeps those waiting`, async () => {
    const pool = new ConditionPool('queued', { size: 1, log: () => {}, worker });
    pools.push(pool);
    const waiting = Array.from({ length: MAX_QUEUED_CONDITIONS }, () => pool.evaluate(registration, body, 60_000));
    const over = await pool.evaluate(registration, body, 60_000);
    assert.equal(over?.status, 429);
    assert.equal(pool.size, 1, 'one thread for one function of size 1, however many wait');
    await pool.close();
    const answers = await Promise.all(waiting);
    assert.ok(
      answers.every((a) => a?.status === 502),
      'waiting reviews get a 502 when the pool closes',
    );
  });

  it('answers reviews with 502 when its thread cannot start, and tries again for the next review', async () => {
    const lines: string[] = [];
    // A heap too small for the evaluator's modules to load: the thread dies before it is ready.
    const pool = new ConditionPool('starved', {
      size: 1,
      log: (l) => lines.push(l),
      worker,
      resourceLimits: { maxOldGenerationSizeMb: 1, maxYoungGenerationSizeMb: 1 },
    });
    pools.push(pool);
    const review = () => pool.evaluate(registration, body, 60_000);
    const answers = await Promise.all([review(), review()]);
    assert.deepEqual(
      answers.map((a) => a?.status),
      [502, 502],
    );
    assert.ok(
      lines.some((l) => /did not start/.test(l)),
      lines.join('\n'),
    );
    assert.equal(pool.size, 0);
    const again = await review();
    assert.equal(again?.status, 502);
  });
  it('drops a waiting review whose client went away: it never takes a thread', async () => {
    const pool = new ConditionPool('abandoned', { size: 1, log: () => {}, worker });
    pools.push(pool);
    const started: number[] = [];
    pool.on('evaluating', (id: number) => started.push(id));
    const first = pool.evaluate(registration, body, 60_000);
    const gone = new AbortController();
    const second = pool.evaluate(registration, body, 60_000, gone.signal);
    gone.abort(); // before the one thread is up: the second review is still waiting
    assert.equal((await second)?.status, 502);
    assert.equal(await first, undefined, 'the conditions hold: the function is invoked');
    assert.deepEqual(started, [1], 'only the first review was evaluated');
  });

  it('stops the thread of a review whose client went away, and serves the next on a new one', async () => {
    const pool = new ConditionPool('abandoned-slow', { size: 1, log: () => {}, worker });
    pools.push(pool);
    const gone = new AbortController();
    pool.once('evaluating', () => gone.abort());
    // Ten minutes: without the abort this review holds the only thread all that time.
    const answer = await pool.evaluate(slow, heavy, 600_000, gone.signal);
    assert.equal(answer?.status, 502);
    assert.equal(pool.size, 0, 'its thread was stopped');
    assert.equal(await pool.evaluate(slow, review({ n: [] }), 600_000), undefined);
  });
});
