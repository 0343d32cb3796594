// The emulator checks a function's path secret before it reads the body: without the right
// secret nothing about the function (not even its matchConditions' answer) is reachable.
import assert from 'node:assert/strict';
import { readFileSync, rmSync } from 'node:fs';
import { Agent, request as httpsRequest } from 'node:https';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { MAX_REQUEST_BYTES } from '../../../../infra/local/front/api-request.ts';
import type { RunningApi } from '../../../../infra/local/api.ts';
import type { KubeObject } from '../../../../lib/index.ts';
import { admissionReview } from '../../../../lib/testing/index.ts';
import { projectInRepository } from '../../../helpers.ts';
import { startEmulator, writePathSecret } from './emulator.ts';

const work = projectInRepository('.klw-test-local-secret-', {
  guarded: `import { deny, defineValidatingWebhook } from 'kube-lambda-webhooks';
// auth is left at its default (auto): with no bearer token the path secret is checked.
const webhook = defineValidatingWebhook({
  name: 'guarded',
  rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'] }],
  matchConditions: [{ name: 'has-team', expression: "has(object.metadata.labels) && 'team' in object.metadata.labels" }],
  validate: () => deny('frozen'),
});
export const handler = webhook.handler;
export default webhook;
`,
});
const CURRENT = 'C'.repeat(43);
const PREVIOUS = 'P'.repeat(43);
const stateDir = join(work, '.state');
/** A review the matchCondition excludes: the emulator answers it itself once the secret is right. */
const excluded = admissionReview(
  { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'web', namespace: 'default' } } as KubeObject,
  { namespace: 'default' },
);

let api: RunningApi;
const logs: string[] = [];
before(async () => {
  // A rotation under way: both secrets are valid.
  writePathSecret(stateDir, `${CURRENT},${PREVIOUS}`);
  api = await startEmulator(work, stateDir, logs);
});
after(async () => {
  await api?.close();
  rmSync(work, { recursive: true, force: true });
});

const agent = () => new Agent({ ca: readFileSync(api.caPath), keepAlive: false });

function post(path: string, body: unknown): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      `${api.url}${path}`,
      { method: 'POST', headers: { 'content-type': 'application/json' }, agent: agent() },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
      },
    );
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}

/** Sends only the headers of a request announcing a body past the emulator's limit; resolves with the status. */
function announceHuge(path: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      `${api.url}${path}`,
      {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'content-length': String(MAX_REQUEST_BYTES + 1) },
        agent: agent(),
      },
      (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
        req.destroy();
      },
    );
    req.on('error', (err) => ((err as NodeJS.ErrnoException).code === 'ECONNRESET' ? undefined : reject(err)));
    req.flushHeaders();
  });
}

describe('start-api and the path secret', () => {
  it('answers a missing or wrong secret with 404 like an unknown route, even for a review the matchConditions would answer', async () => {
    const wrong = `${CURRENT.slice(0, -1)}D`;
    for (const path of [
      '/guarded',
      '/guarded/',
      `/guarded/${wrong}`,
      `/guarded/${CURRENT}/more`,
      `/guarded/${CURRENT.slice(0, 22)}`,
    ]) {
      const out = await post(path, excluded);
      assert.equal(out.status, 404, path);
      assert.deepEqual(JSON.parse(out.text), { message: 'Not Found' }, path);
    }
    assert.ok(!logs.some((l) => l.includes('not invoked: matchConditions')), 'the body was never evaluated');
    assert.ok(!logs.some((l) => l.includes(CURRENT.slice(0, 22))), 'no secret in the log');
  });

  it('refuses a wrong secret before reading the body: a body past the limit gets 404, not 413', async () => {
    assert.equal(await announceHuge('/guarded/not-the-secret-not-the-secret-0'), 404);
    assert.equal(
      await announceHuge(`/guarded/${CURRENT}`),
      413,
      'with the right secret the body is read, and refused for its size',
    );
  });

  it('answers with the current or the previous secret', async () => {
    for (const secret of [CURRENT, PREVIOUS]) {
      const out = await post(`/guarded/${secret}`, excluded);
      assert.equal(out.status, 200);
      assert.deepEqual(JSON.parse(out.text).response, { uid: excluded.request.uid, allowed: true });
    }
    assert.equal(api.functionUrl('guarded'), `${api.url}/guarded/${CURRENT}`);
  });
});
