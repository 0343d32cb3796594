// klw-test: no-tsx (what it imports at run time is the JavaScript it built)
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { Agent, request as httpsRequest } from 'node:https';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { buildFunction, bundlePath } from '../../../../infra/build.ts';
import { startApi, type RunningApi } from '../../../../infra/local/api.ts';
import { withKeptCertificates } from '../../../kept-certs.ts';
import { answerByMatchConditions } from '../../../../infra/local/back/match-conditions.ts';
import { defineValidatingWebhook, deny, type KubeObject } from '../../../../lib/index.ts';
import { admissionReview, toEvent } from '../../../../lib/testing/index.ts';
import { FIXTURE_FUNCTIONS, ManualTimer } from '../../../helpers.ts';

/** The functions' timeouts never run out: a cold start on a loaded machine takes as long as it takes. */
const never = new ManualTimer().timer;

// A project inside the repository, so `kube-lambda-webhooks` resolves to this package.
const work = mkdtempSync(join(process.cwd(), '.klw-test-conditions-'));
const source = (
  name: string,
  enforce: boolean,
) => `import { deny, defineValidatingWebhook } from 'kube-lambda-webhooks';
${enforce ? "import { enforceMatchConditions } from 'kube-lambda-webhooks/matchconditions';\n" : ''}const definition = {
  name: '${name}',
  auth: 'none' as const,
  rules: [{ operations: ['CREATE' as const], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'] }],
  matchConditions: [
    { name: 'has-team', expression: "has(object.metadata.labels) && 'team' in object.metadata.labels" },
    { name: 'known-team', expression: "!has(object.metadata.labels) || !('team' in object.metadata.labels) || object.metadata.labels['team'] != 'broken' || object.metadata.labels['owner'] == 'x'" },
  ],
  validate: () => deny('frozen'),
};
const webhook = defineValidatingWebhook(${enforce ? 'enforceMatchConditions(definition)' : 'definition'});
export const handler = webhook.handler;
export default webhook;
`;
for (const [name, enforce] of [
  ['plain', false],
  ['enforced', true],
] as const) {
  mkdirSync(join(work, 'functions', name), { recursive: true });
  writeFileSync(join(work, 'functions', name, 'index.ts'), source(name, enforce));
}
const pod = (labels?: Record<string, string>) =>
  admissionReview(
    {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'web', namespace: 'default', ...(labels ? { labels } : {}) },
    } as KubeObject,
    { namespace: 'default' },
  );
/** Strings only the CEL engine's code holds: one from the engine, one from the Kubernetes environment. */
const CEL_MARKERS = ['exists_one', 'kubernetes.authorization.Authorizer'];
/** A bundle and its chunks as text: the CEL engine is a chunk of its own, loaded when needed. */
const withChunks = (bundle: string) => {
  const chunks = join(dirname(bundle), 'chunks');
  const files = existsSync(chunks) ? readdirSync(chunks).filter((f) => f.endsWith('.mjs')) : [];
  return [bundle, ...files.map((f) => join(chunks, f))].map((f) => readFileSync(f, 'utf8')).join('\n');
};

let api: RunningApi;
const logs: string[] = [];
before(async () => {
  api = await startApi({
    root: work,
    port: 0,
    stateDir: await withKeptCertificates(join(work, '.state')),
    log: (l) => logs.push(l),
    functionLog: () => {},
    concurrency: 1,
    invocationTimer: never,
  });
});
after(async () => {
  await api?.close();
  rmSync(work, { recursive: true, force: true });
});

function post(path: string, body: unknown): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      `${api.url}${path}`,
      {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        agent: new Agent({ ca: readFileSync(api.caPath), keepAlive: false }),
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) }),
        );
      },
    );
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}

describe('start-api evaluates matchConditions', () => {
  it('answers a review the conditions exclude as allowed, without invoking the function', async () => {
    const review = pod();
    const result = await post('/plain', review);
    assert.equal(result.status, 200);
    assert.deepEqual(result.body, {
      apiVersion: 'admission.k8s.io/v1',
      kind: 'AdmissionReview',
      response: { uid: review.request.uid, allowed: true },
    });
    assert.ok(
      logs.some(
        (l) => l.includes('"msg":"not invoked: matchConditions"') && l.includes('skipped by matchCondition has-team'),
      ),
    );
  });

  it('invokes the function when the conditions hold', async () => {
    const result = await post('/plain', pod({ team: 'a' }));
    assert.equal(result.body.response.allowed, false);
    assert.equal(result.body.response.status.message, 'frozen');
  });

  it("rejects with the API server's error when a condition fails under failurePolicy Fail", async () => {
    const result = await post('/plain', pod({ team: 'broken' }));
    assert.equal(result.body.response.allowed, false);
    assert.equal(result.body.response.status.code, 403);
    assert.match(
      result.body.response.status.message,
      / is forbidden: expression '.*' resulted in error: no such key: owner$/,
    );
  });

  it('leaves bodies that are no review to the function', () => {
    const plain = defineValidatingWebhook({
      name: 'p',
      rules: [],
      matchConditions: [{ name: 'f', expression: 'false' }],
      validate: () => deny('x'),
    });
    assert.equal(
      answerByMatchConditions(plain.registration, Buffer.from('not json'), () => {}),
      undefined,
    );
    assert.equal(
      answerByMatchConditions(plain.registration, Buffer.from('{"kind":"Nope"}'), () => {}),
      undefined,
    );
    assert.equal(
      answerByMatchConditions(undefined, Buffer.from('{}'), () => {}),
      undefined,
    );
    assert.ok(answerByMatchConditions(plain.registration, Buffer.from(JSON.stringify(pod())), () => {}));
  });
});

describe('bundles and in-function enforcement', () => {
  it('only functions that enforce conditions bundle the CEL engine', () => {
    const plain = withChunks(bundlePath(work, 'plain'));
    const enforced = withChunks(bundlePath(work, 'enforced'));
    for (const marker of CEL_MARKERS) {
      assert.ok(!plain.includes(marker), `the plain bundle holds ${marker}`);
      assert.ok(enforced.includes(marker), `the enforcing bundle lacks ${marker}`);
    }
  });

  it('the example functions carry no CEL code', async () => {
    for (const name of ['pod-policy', 'pod-defaults', 'crontab-conversion']) {
      const out = join(work, 'examples');
      await buildFunction(out, { name, entry: join(FIXTURE_FUNCTIONS, name, 'index.ts') });
      const code = withChunks(bundlePath(out, name));
      for (const marker of CEL_MARKERS) assert.ok(!code.includes(marker), `${name} bundles ${marker}`);
    }
  });

  it('the enforcing bundle answers what its conditions exclude by itself', async () => {
    process.env.KLW_LOG_LEVEL = 'silent';
    const mod = await import(bundlePath(work, 'enforced'));
    delete process.env.KLW_LOG_LEVEL;
    const skipped = JSON.parse((await mod.handler(toEvent(pod()))).body);
    assert.equal(skipped.response.allowed, true);
    const called = JSON.parse((await mod.handler(toEvent(pod({ team: 'a' })))).body);
    assert.equal(called.response.allowed, false);
    assert.equal(called.response.status.message, 'frozen');
  });
});
