// The ConditionPool's own bounds, without a server: the queue of reviews waiting for a thread,
// and a thread that cannot start. Neither depends on how fast a thread starts: the queue fills
// in one synchronous loop, before any thread can say it is ready.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { ConditionPool, MAX_QUEUED_CONDITIONS } from '../../infra/local/match-conditions.ts';
import type { AdmissionRegistration } from '../../lib/registration.ts';
import { admissionReview } from '../../lib/testing/index.ts';
import type { KubeObject } from '../../lib/index.ts';

const registration = {
  type: 'validating',
  name: 'queued',
  webhookName: 'queued.example.com',
  failurePolicy: 'Fail',
  matchConditions: [{ name: 'always', expression: 'true' }],
} as unknown as AdmissionRegistration;
const body = Buffer.from(
  JSON.stringify(admissionReview({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' } } as KubeObject)),
);

describe('ConditionPool bounds', () => {
  const pools: ConditionPool[] = [];
  after(async () => {
    for (const pool of pools) await pool.close();
  });

  it(`answers 429 once ${MAX_QUEUED_CONDITIONS} reviews wait for a thread, and keeps those waiting`, async () => {
    const pool = new ConditionPool('queued', { size: 1, log: () => {} });
    pools.push(pool);
    const waiting = Array.from({ length: MAX_QUEUED_CONDITIONS }, () => pool.evaluate(registration, body, 60_000));
    const over = await pool.evaluate(registration, body, 60_000);
    assert.equal(over?.status, 429);
    assert.equal(pool.size, 1, 'one thread for one function of size 1, however many wait');
    await pool.close();
    const answers = await Promise.all(waiting);
    assert.ok(answers.every((a) => a?.status === 502), 'waiting reviews get a 502 when the pool closes');
  });

  it('answers reviews with 502 when its thread cannot start, and tries again for the next review', async () => {
    const lines: string[] = [];
    // A heap too small for the evaluator's modules to load: the thread dies before it is ready.
    const pool = new ConditionPool('starved', {
      size: 1,
      log: (l) => lines.push(l),
      resourceLimits: { maxOldGenerationSizeMb: 1, maxYoungGenerationSizeMb: 1 },
    });
    pools.push(pool);
    const review = () => pool.evaluate(registration, body, 60_000);
    const answers = await Promise.all([review(), review()]);
    assert.deepEqual(answers.map((a) => a?.status), [502, 502]);
    assert.ok(lines.some((l) => /did not start/.test(l)), lines.join('\n'));
    assert.equal(pool.size, 0);
    const again = await review();
    assert.equal(again?.status, 502);
  });
});
