// A function that throws, stalls or answers nonsense fails invoke and the conformance checks,
// naming the function, the review and the user's own source line, unless the test asks for it.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import {
  allow,
  ConversionError,
  defineConversionWebhook,
  defineMutatingWebhook,
  defineValidatingWebhook,
  type KubeObject,
} from '../../../lib/index.ts';
import {
  admissionReview,
  conversionReview,
  expectConformance,
  expectRoundTrip,
  invoke,
  runAdmissionChain,
} from '../../../lib/testing/index.ts';
import { userFrame } from '../../../lib/harness/failures.ts';
import { captureLogger } from '../../helpers.ts';

type Obj = KubeObject & { spec?: any };
const pod = (): Obj => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'web', namespace: 'shop' },
  spec: { containers: [{ name: 'c', image: 'nginx' }] },
});
const podRules = [
  {
    operations: ['CREATE' as const, 'UPDATE' as const],
    apiGroups: [''],
    apiVersions: ['v1'],
    resources: ['pods'],
    scope: 'Namespaced' as const,
  },
];

/** This file's line (1-based) holding `marker`, as a source-mapped stack names it. */
function lineOf(marker: string): number {
  const lines = readFileSync(fileURLToPath(import.meta.url), 'utf8').split('\n');
  const index = lines.findIndex((l) => l.includes(marker) && !l.includes('lineOf('));
  assert.ok(index >= 0, marker);
  return index + 1;
}

const typo = defineMutatingWebhook<Obj>({
  name: 'pod-resources',
  rules: podRules,
  mutate: (pod) => {
    (pod.spec as any).container.forEach(() => {}); // the typo: containers
  },
});

describe('invoke fails when the function fails', () => {
  it('names the function, the review, the error and the line of the user code that threw', async () => {
    const review = admissionReview(pod(), { uid: 'uid-typo' });
    const err = await invoke(typo, review).then(
      () => assert.fail('invoke passed a function that throws on every review'),
      (e: Error) => e,
    );
    assert.ok(err instanceof assert.AssertionError, String(err));
    const line = lineOf('the typo: containers');
    assert.match(err.message, /^pod-resources: the function threw on the AdmissionReview uid-typo: CREATE pods/);
    assert.match(err.message, /object shop\/web/);
    assert.match(err.message, /TypeError: Cannot read properties of undefined \(reading 'forEach'\)/);
    // The TypeScript line (source maps), relative to the working directory; no library or node_modules line.
    assert.match(err.message, new RegExp(`\\n    at test/lib/harness/failures\\.test\\.ts:${line}:\\d+\\n`));
    assert.doesNotMatch(err.message, /node_modules|lib\/admission/);
    assert.match(err.message, /failurePolicy is Ignore: the API server admits the request unchecked and unmutated/);
    assert.match(err.message, /\{ expectFailure: true \}/);
  });

  it('with expectFailure, returns the answer the API server takes and the failure', async () => {
    const result = await invoke(typo, admissionReview(pod()), { expectFailure: true });
    assert.equal(result.allowed, true);
    assert.deepEqual(result.patch, []);
    assert.match(result.warnings[0]!, /admitted because failurePolicy is Ignore/);
    assert.equal(result.failure?.kind, 'error');
    assert.equal(
      result.failure?.at?.replace(/:\d+$/, ''),
      `test/lib/harness/failures.test.ts:${lineOf('the typo: containers')}`,
    );
    assert.match(result.failure!.stack!, /forEach/);
  });

  it('with expectFailure, fails when the function answered', async () => {
    const fine = defineValidatingWebhook({ name: 'fine', rules: podRules, validate: () => allow() });
    await assert.rejects(invoke(fine, admissionReview(pod()), { expectFailure: true }), (err: Error) => {
      assert.ok(err instanceof assert.AssertionError);
      assert.match(
        err.message,
        /^fine: expectFailure was set, but the function answered the AdmissionReview .* without failing \(allowed\)/,
      );
      return true;
    });
  });

  it('names an answer that is no answer, and says what failurePolicy Fail does', async () => {
    const sloppy = defineValidatingWebhook({
      name: 'sloppy',
      failurePolicy: 'Fail',
      rules: podRules,
      validate: () => 42 as never,
    });
    await assert.rejects(invoke(sloppy, admissionReview(pod())), (err: Error) => {
      assert.match(err.message, /validate returned number/);
      assert.match(err.message, /failurePolicy is Fail: the API server refuses every such request/);
      return true;
    });
  });

  it('names a function that does not answer in time (the clock injected)', async () => {
    let time = 0;
    const stalls = defineValidatingWebhook({
      name: 'stalls',
      timeoutSeconds: 1,
      rules: podRules,
      validate: () => new Promise<never>(() => {}),
    });
    // Each reading of the clock is a second later: the 800 ms budget is gone before the function runs.
    const options = { handlerOptions: { clock: () => (time += 1000) } };
    await assert.rejects(invoke(stalls, admissionReview(pod()), options), (err: Error) => {
      assert.match(err.message, /^stalls: the function did not answer in time on the AdmissionReview/);
      assert.match(err.message, /DeadlineExceeded: webhook did not answer within 800 ms/);
      return true;
    });
    const expected = await invoke(stalls, admissionReview(pod()), { ...options, expectFailure: true });
    assert.equal(expected.failure?.kind, 'timeout');
  });

  it("does not count the function's own error lines as failures, and still passes them on", async () => {
    const { logger, lines } = captureLogger();
    const logs = defineValidatingWebhook({
      name: 'logs',
      rules: podRules,
      validate: (_request, ctx) => {
        ctx.log.error('upstream said no', { error: 'Error: 503', errorId: 'mine' });
        return allow();
      },
    });
    const result = await invoke(logs, admissionReview(pod()), { handlerOptions: { logger } });
    assert.equal(result.allowed, true);
    assert.ok(lines.some((l) => l.msg === 'upstream said no'));
  });

  it('keeps the failures of invokes running at once apart', async () => {
    const fine = defineValidatingWebhook({ name: 'fine-too', rules: podRules, validate: () => allow() });
    const [failed, passed] = await Promise.allSettled([
      invoke(typo, admissionReview(pod())),
      invoke(fine, admissionReview(pod())),
    ]);
    assert.equal(failed.status, 'rejected');
    assert.equal(passed.status, 'fulfilled');
  });

  it('fails runAdmissionChain on a function that throws', async () => {
    await assert.rejects(runAdmissionChain(pod(), [typo]), /pod-resources: the function threw/);
  });
});

describe('the conformance checks fail when the function fails', () => {
  it('a mutating function that throws on every review', async () => {
    await assert.rejects(expectConformance(typo), (err: Error) => {
      assert.ok(err instanceof assert.AssertionError);
      assert.match(err.message, /^pod-resources: CREATE core\/v1 pods \(admission\.k8s\.io\/v1\): the function threw/);
      assert.match(err.message, /test\/lib\/harness\/failures\.test\.ts:\d+:\d+/);
      return true;
    });
  });

  it('a validating function that throws on the generated object', async () => {
    const strict = defineValidatingWebhook<Obj>({
      name: 'needs-owner',
      rules: podRules,
      validate: (request) => (request.object!.metadata!.labels!.owner ? allow() : allow()),
    });
    await assert.rejects(
      expectConformance(strict),
      /needs-owner: .*the function threw .*\n {4}TypeError: Cannot read properties of undefined \(reading 'owner'\)/s,
    );
  });
});

describe('conversion functions', () => {
  const versions = ['example.com/v1', 'example.com/v2'];
  const converter = (fail: 'throw' | 'refuse') =>
    defineConversionWebhook({
      name: `converter-${fail}`,
      crd: 'widgets.example.com',
      convert: (object, to) => {
        if (fail === 'refuse') throw new ConversionError('v2 has no place for spec.legacy');
        (object as Obj).spec.size.toFixed(); // the converter's bug: no spec
        return { ...object, apiVersion: to };
      },
    });
  const widget: KubeObject = {
    apiVersion: 'example.com/v1',
    kind: 'Widget',
    metadata: { name: 'w', namespace: 'shop' },
  };

  it('a converter that throws fails invoke and expectRoundTrip, naming the object', async () => {
    await assert.rejects(invoke(converter('throw'), conversionReview([widget], 'example.com/v2')), (err: Error) => {
      assert.match(
        err.message,
        /^converter-throw: the function threw on the ConversionReview of 1 object, the first Widget shop\/w \(example\.com\/v1\), to example\.com\/v2/,
      );
      assert.match(err.message, /test\/lib\/harness\/failures\.test\.ts:\d+:\d+/);
      return true;
    });
    await assert.rejects(expectRoundTrip(converter('throw'), widget, versions), /converter-throw: the function threw/);
  });

  it('every way a converter fails is a failure: a stall, an answer that cannot be written as JSON', async () => {
    let time = 0;
    const stalls = defineConversionWebhook({
      name: 'converter-stalls',
      crd: 'widgets.example.com',
      convert: () => new Promise<never>(() => {}),
    });
    // Each reading of the clock is a minute later: the budget is gone before the converter runs.
    const clock = { handlerOptions: { clock: () => (time += 60_000) } };
    await assert.rejects(
      invoke(stalls, conversionReview([widget], 'example.com/v2'), clock),
      /converter-stalls: the function did not answer in time on the ConversionReview/,
    );
    const cyclic = defineConversionWebhook({
      name: 'converter-cycle',
      crd: 'widgets.example.com',
      convert: (object, to) => {
        const out: Record<string, unknown> = { ...object, apiVersion: to };
        out.self = out;
        return out as KubeObject;
      },
    });
    await assert.rejects(
      invoke(cyclic, conversionReview([widget], 'example.com/v2')),
      /converter-cycle: the function threw on the ConversionReview .*\n {4}TypeError: Converting circular structure to JSON/,
    );
  });

  it('a ConversionError is the converter’s own answer, not a failure', async () => {
    const result = await invoke(converter('refuse'), conversionReview([widget], 'example.com/v2'));
    assert.equal(result.status, 'Failed');
    assert.match(result.message!, /no place for spec\.legacy/);
  });
});

describe('userFrame', () => {
  it("takes the first frame outside Node, node_modules and this library's folder", () => {
    const lib = fileURLToPath(new URL('../../../lib/', import.meta.url));
    const stack = [
      'TypeError: x',
      '    at next (node:internal/process/task_queues:95:5)',
      '    at parse (/p/node_modules/zod/index.js:1:2)',
      `    at run (${lib}admission/webhook.ts:3:4)`,
      '    at mutate (file:///p/functions/pods/index.ts:12:31)',
      '    at other (/p/functions/pods/more.ts:1:1)',
    ].join('\n');
    assert.equal(userFrame(stack, '/p'), 'functions/pods/index.ts:12:31');
    assert.equal(userFrame(stack, '/elsewhere'), '/p/functions/pods/index.ts:12:31');
    assert.equal(userFrame('Error: x\n    at f (/p/node_modules/a.js:1:1)', '/p'), undefined);
  });
});
