// start-api evaluates matchConditions in threads of their own, never on the emulator's event
// loop: a slow condition delays only its own review, and one that runs past the webhook's
// timeout (or exhausts its thread's memory) gets the failurePolicy answer. CEL's cost limit stops
// a slow or memory-hungry expression at once, so the threads here run a stand-in evaluator that
// never finishes, or fills its heap, for a review carrying a marker annotation, and otherwise
// evaluates as the real one does. The assertions are on order and outcome, none on speed.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { Agent, request as httpsRequest } from 'node:https';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { startApi, type RunningApi } from '../../../infra/local/api.ts';
import { withKeptCertificates } from '../../kept-certs.ts';
import type { KubeObject } from '../../../lib/index.ts';
import { admissionReview } from '../../../lib/testing/index.ts';
import { bundleForThreads, ManualTimer } from '../../helpers.ts';

const work = mkdtempSync(join(process.cwd(), '.klw-test-conditions-pool-'));
const addFunction = (name: string, extra: string, decision = "deny('called')") => {
  mkdirSync(join(work, 'functions', name), { recursive: true });
  writeFileSync(
    join(work, 'functions', name, 'index.ts'),
    `import { allow, deny, defineValidatingWebhook } from 'kube-lambda-webhooks';
const webhook = defineValidatingWebhook({
  name: '${name}',
  auth: 'none',
  rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'] }],
  ${extra}
  validate: () => ${decision},
});
export const handler = webhook.handler;
export default webhook;
`,
  );
};
// The stand-in evaluator: conditions-worker.mjs's messages and evaluator (built once into
// JavaScript, so that each thread starts without tsx), but a review marked `stall: spin` never
// gets past its envelope (its thread blocks for good), and `stall: hoard` allocates until the
// thread's heap is exhausted. The envelope is posted first, as the real evaluator does.
const stallingWorker = (evaluator: string) => `import { parentPort } from 'node:worker_threads';
const evaluator = await import(${JSON.stringify(evaluator)});
const stall = (body) => JSON.parse(Buffer.from(body).toString()).request?.object?.metadata?.annotations?.stall;
parentPort.on('message', (message) => {
  if ('warm' in message) {
    evaluator.warmConditions(message.warm);
    return parentPort.postMessage({ ready: true });
  }
  const mode = stall(message.body);
  evaluator.runConditionsJob(message, (reply) => {
    parentPort.postMessage(reply);
    if (!('envelope' in reply)) return;
    // Blocked for good, as a thread busy with a never-ending expression is, without using a core.
    if (mode === 'spin') Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0);
    if (mode === 'hoard') for (const hoard = []; ; ) hoard.push(new Array(1 << 16).fill(hoard.length));
  });
});
`;
const conditionsWorker = pathToFileURL(join(work, 'stalling-worker.mjs'));
const ANY = `{ name: 'any', expression: 'true' }`;
addFunction('slow', `matchConditions: [${ANY}], timeoutSeconds: 30,`);
addFunction('fast', '', 'allow()');
addFunction('slow-fail', `matchConditions: [${ANY}], timeoutSeconds: 1, failurePolicy: 'Fail',`);
addFunction('slow-ignore', `matchConditions: [${ANY}], timeoutSeconds: 1, failurePolicy: 'Ignore',`);
addFunction('hungry', `matchConditions: [${ANY}], timeoutSeconds: 30, failurePolicy: 'Fail',`);

const pod = (spec: Record<string, unknown> = {}, annotations?: Record<string, string>) =>
  admissionReview(
    {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'web', namespace: 'default', ...(annotations && { annotations }) },
      spec,
    } as KubeObject,
    { namespace: 'default' },
  );
/** A review the stand-in evaluator never finishes. */
const heavy = () => pod({}, { stall: 'spin' });
/** A review whose evaluation exhausts its thread's heap. */
const hoarding = () => pod({}, { stall: 'hoard' });
/** A review evaluated as the real evaluator does (true: the function is called). */
const light = () => pod();

let api: RunningApi;
let bounded: RunningApi;
const logs: string[] = [];
before(async () => {
  const evaluator = new URL('../../../infra/local/back/match-conditions.ts', import.meta.url);
  writeFileSync(conditionsWorker, stallingWorker(await bundleForThreads(evaluator, join(work, 'evaluator.mjs'))));
  // Ten minutes: the slow review is still being evaluated whenever the test looks.
  const log = (l: string) => logs.push(l);
  const state = await withKeptCertificates(join(work, '.state'));
  // The functions' own timeouts never run out: on a loaded machine a cold start takes as long as it takes.
  const invocationTimer = new ManualTimer().timer;
  const common = { root: work, port: 0, stateDir: state, log, functionLog: () => {}, concurrency: 2, invocationTimer };
  api = await startApi({ ...common, conditions: { worker: conditionsWorker, timeoutMs: 600_000 } });
  // The webhooks' own timeouts; a small heap for the conditions, which the hoarding review exhausts.
  bounded = await startApi({ ...common, build: false, conditions: { worker: conditionsWorker, heapMb: 64 } });
});
after(async () => {
  await api?.close();
  await bounded?.close();
  rmSync(work, { recursive: true, force: true });
});

function post(server: RunningApi, path: string, body: unknown): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const agent = new Agent({ ca: readFileSync(server.caPath), keepAlive: false });
    const options = { method: 'POST', headers: { 'content-type': 'application/json' }, agent };
    const req = httpsRequest(`${server.url}${path}`, options, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(Buffer.concat(chunks).toString()) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}

describe("matchConditions run off the emulator's event loop", () => {
  it('serves another function, and another review of the same one, while a slow condition runs', async () => {
    const started = once(api.conditions('slow'), 'evaluating');
    let slowAnswered = false;
    const slow = post(api, '/slow', heavy()).then(
      () => (slowAnswered = true),
      () => {}, // cut when the emulator closes
    );
    await started;
    const fast = await post(api, '/fast', pod());
    assert.equal(fast.status, 200);
    assert.equal(fast.body.response.allowed, true);
    assert.equal(slowAnswered, false, 'the slow review is still being evaluated');
    // The second thread of the same function takes a light review and answers it (true: the function denies).
    const sameFunction = await post(api, '/slow', light());
    assert.equal(sameFunction.body.response.allowed, false);
    assert.equal(sameFunction.body.response.status.message, 'called');
    assert.equal(slowAnswered, false, 'the slow review is still being evaluated');
    void slow;
  });

  it("answers conditions past the webhook's timeout by failurePolicy Fail: the API server's error", async () => {
    const out = await post(bounded, '/slow-fail', heavy());
    assert.equal(out.status, 200);
    assert.equal(out.body.response.allowed, false);
    assert.equal(out.body.response.status.code, 500);
    assert.match(
      out.body.response.status.message,
      new RegExp(
        '^Internal error occurred: failed calling webhook "slow-fail\\.webhooks\\.kube-lambda\\.dev": ' +
          "failed evaluating match conditions: the conditions did not finish within the webhook's timeout \\(1s\\)$",
      ),
    );
    assert.ok(logs.some((l) => l.includes('"function":"slow-fail"') && l.includes('did not finish within')));
    assert.equal(bounded.conditions('slow-fail').size, 0, 'the thread that ran past the timeout is stopped');
    // The thread was stopped; a new one evaluates the next review (true: the function is called).
    const next = await post(bounded, '/slow-fail', light());
    assert.equal(next.body.response.status.message, 'called');
  });

  it("answers conditions past the webhook's timeout by failurePolicy Ignore: allowed, no call", async () => {
    const review = heavy();
    const out = await post(bounded, '/slow-ignore', review);
    const allowed = { uid: review.request.uid, allowed: true };
    assert.deepEqual(out.body, { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response: allowed });
  });

  it("answers conditions that exhaust their thread's memory by failurePolicy, and evaluates the next", async () => {
    const out = await post(bounded, '/hungry', hoarding());
    assert.equal(out.body.response.allowed, false);
    const failed = /failed evaluating match conditions: evaluation failed: .*(ERR_WORKER_OUT_OF_MEMORY|out of memory)/i;
    assert.match(out.body.response.status.message, failed);
    const next = await post(bounded, '/hungry', light());
    assert.equal(next.body.response.status.message, 'called');
  });

  it('queues reviews past the concurrency for the free thread, never more threads', async () => {
    // The first test's slow review still holds one of the two threads: these wait for the other in turn.
    const answers = await Promise.all(Array.from({ length: 4 }, () => post(api, '/slow', light())));
    assert.deepEqual(
      answers.map((a) => a.body.response.status.message),
      ['called', 'called', 'called', 'called'],
    );
    assert.equal(api.conditions('slow').size, 2);
  });
  it('stops evaluating a review whose client went away (the API server gave up on it)', async () => {
    const pool = bounded.conditions('slow');
    const settled = new Promise<void>((resolve) => pool.once('settled', () => resolve()));
    const agent = new Agent({ ca: readFileSync(bounded.caPath), keepAlive: false });
    const options = { method: 'POST', headers: { 'content-type': 'application/json' }, agent };
    const req = httpsRequest(`${bounded.url}/slow`, options);
    req.on('error', () => {});
    pool.once('evaluating', () => req.destroy());
    req.end(JSON.stringify(heavy()));
    await settled;
    const lines = logs.filter((l) => l.includes('"function":"slow"') && l.includes('not invoked'));
    assert.match(lines.at(-1) ?? '', /the client went away/, lines.join('\n'));
    assert.equal(pool.size, 0, 'its thread was stopped');
  });
});
