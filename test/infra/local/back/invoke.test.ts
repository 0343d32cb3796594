// `klw local invoke --review`: the review reaches the function with every digit of its numbers;
// a bundle is rebuilt when its sources changed, and only then.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { bundlePath } from '../../../../infra/build.ts';
import { localInvoke } from '../../../../infra/local/back/invoke.ts';
import { ManualTimer } from '../../../helpers.ts';

/** The functions' timeouts never run out: a cold start on a loaded machine takes as long as it takes. */
const never = new ManualTimer().timer;

// A project inside the repository, so that `kube-lambda-webhooks` resolves when it is built.
const work = mkdtempSync(join(process.cwd(), '.klw-test-'));
after(() => rmSync(work, { recursive: true, force: true }));
mkdirSync(join(work, 'functions', 'int64-echo'), { recursive: true });
writeFileSync(
  join(work, 'functions', 'int64-echo', 'index.ts'),
  `import { allow, defineValidatingWebhook } from 'kube-lambda-webhooks';
// Warns with the value of spec.n as the function sees it.
export const webhook = defineValidatingWebhook({ name: 'int64-echo', rules: [], validate: (r) => allow(\`n=\${(r.object as any).spec.n}\`) });
export const handler = webhook.handler;
export default webhook;
`,
);

describe('klw local invoke --review', () => {
  it('passes int64 numbers of the review to the function digit for digit', async () => {
    const review = `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u1","kind":{"group":"example.com","version":"v1","kind":"Widget"},"resource":{"group":"example.com","version":"v1","resource":"widgets"},"operation":"CREATE","userInfo":{},"object":{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w"},"spec":{"n":9223372036854775807}}}}`;
    const outcome = await localInvoke({
      root: work,
      name: 'int64-echo',
      review,
      functionLog: () => {},
      say: () => {},
      invocationTimer: never,
    });
    assert.equal(outcome.kind, 'result');
    const body = JSON.parse((outcome as { result: { body: string } }).result.body);
    assert.deepEqual(body.response.warnings, ['n=9223372036854775807']);
  });

  it('rebuilds once, and again only after a source changed', async () => {
    const review = `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u2","kind":{"group":"example.com","version":"v1","kind":"Widget"},"resource":{"group":"example.com","version":"v1","resource":"widgets"},"operation":"CREATE","userInfo":{},"object":{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w"},"spec":{"n":1}}}}`;
    const invoke = async () => {
      const said: string[] = [];
      const outcome = await localInvoke({
        root: work,
        name: 'int64-echo',
        review,
        functionLog: () => {},
        say: (line) => said.push(line),
        invocationTimer: never,
      });
      assert.equal(outcome.kind, 'result');
      return said.filter((line) => line.includes('rebuilding'));
    };
    await invoke();
    assert.deepEqual(await invoke(), [], 'the bundle is as new as its sources: no rebuild');
    // The source edited after the build: the bundle dated before it.
    const source = join(work, 'functions', 'int64-echo', 'index.ts');
    const before = new Date(statSync(source).mtimeMs - 60_000);
    utimesSync(bundlePath(work, 'int64-echo'), before, before);
    assert.match((await invoke()).join('\n'), /int64-echo: sources are newer than the bundle; rebuilding/);
    assert.deepEqual(await invoke(), []);
  });
});
