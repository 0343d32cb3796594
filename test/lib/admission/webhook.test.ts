import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  allow,
  byOperation,
  defineMutatingWebhook,
  defineValidatingWebhook,
  deny,
  errored,
  patched,
  type KubeObject,
} from '../../../lib/index.ts';
import { sanitizeWarnings, WARNINGS_TOTAL_LIMIT } from '../../../lib/admission/decision.ts';
import { admissionReview, invoke, readAnswer } from '../../../lib/testing/index.ts';
import { invokeRaw } from '../../../lib/harness/invoke.ts';
import { bodyOf, captureLogger, eventWith, EVERY_REQUEST, fixture, hostileThrowables } from '../../helpers.ts';

type Obj = KubeObject & { spec?: any };
const pod = (name = 'p', extra: Record<string, unknown> = {}): Obj => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: 'default', labels: { app: 'x' } },
  spec: { containers: [{ name: 'c', image: 'nginx:1.25' }] },
  ...extra,
});

describe('validating webhooks', () => {
  const webhook = defineValidatingWebhook<Obj>({
    name: 'names',
    rules: EVERY_REQUEST,
    validate: (request) =>
      request.object?.metadata?.name === 'bad'
        ? deny('name "bad" is not allowed', { code: 422, reason: 'Invalid' })
        : allow('looked at it'),
  });

  for (const version of ['v1', 'v1beta1'] as const) {
    it(`answers in the request's version (${version}) and echoes the uid`, async () => {
      const review = admissionReview(pod(), { version, uid: 'uid-123' });
      const result = await invoke(webhook, review);
      assert.equal(result.review.apiVersion, `admission.k8s.io/${version}`);
      assert.equal(result.review.kind, 'AdmissionReview');
      assert.equal(result.review.response.uid, 'uid-123');
      assert.equal(result.allowed, true);
      assert.deepEqual(result.warnings, ['looked at it']);
      assert.equal(result.review.response.patch, undefined);
    });
  }

  it('denies with the given code, reason and message', async () => {
    const result = await invoke(webhook, admissionReview(pod('bad')));
    assert.equal(result.allowed, false);
    assert.deepEqual(result.status, { code: 422, message: 'name "bad" is not allowed', reason: 'Invalid' });
  });

  it('answers the reference example (UPDATE of deployments/scale, v1 and v1beta1)', async () => {
    for (const name of ['reviews/admission-v1', 'reviews/admission-v1beta1']) {
      const review = fixture(name);
      const raw = await invokeRaw(webhook, review);
      assert.equal(raw.statusCode, 200);
      assert.deepEqual(JSON.parse(raw.body), {
        apiVersion: review.apiVersion,
        kind: 'AdmissionReview',
        response: { uid: '705ab4f5-6393-11e8-b7cc-42010a800002', allowed: true, warnings: ['looked at it'] },
      });
    }
  });

  it('uses 403 Forbidden by default', async () => {
    const w = defineValidatingWebhook({ name: 'no', rules: EVERY_REQUEST, validate: () => deny('never') });
    const result = await invoke(w, admissionReview(pod()));
    assert.deepEqual(result.status, { code: 403, message: 'never', reason: 'Forbidden' });
  });

  it('answers a status code Status.code cannot carry with the default code, and logs the code it was given', async () => {
    const cases: Array<[string, () => ReturnType<typeof deny>, number]> = [
      ['1099511627776', () => deny('too big', { code: 2 ** 40 }), 403],
      ['1.5', () => deny('a fraction', { code: 1.5 }), 403],
      ['99', () => deny('no HTTP status', { code: 99 }), 403],
      ['600', () => deny('no HTTP status', { code: 600 }), 403],
      ['NaN', () => errored(NaN, 'not a number'), 500],
      ['-1', () => errored(-1, 'negative'), 500],
    ];
    for (const [given, decide, expected] of cases) {
      const { logger, lines } = captureLogger();
      const w = defineValidatingWebhook({ name: 'bad-code', rules: EVERY_REQUEST, validate: decide });
      const result = await invoke(w, admissionReview(pod()), { handlerOptions: { logger } });
      assert.equal(result.allowed, false, given);
      assert.equal(result.status?.code, expected, given);
      assert.equal(result.status?.reason, expected === 403 ? 'Forbidden' : 'InternalError', given);
      assert.equal(lines.find((l) => l.msg === 'review')?.replacedCode, given);
    }
  });

  it('keeps a valid status code as given', async () => {
    const { logger, lines } = captureLogger();
    const w = defineValidatingWebhook({
      name: 'teapot',
      rules: EVERY_REQUEST,
      validate: () => deny('short and stout', { code: 418 }),
    });
    const result = await invoke(w, admissionReview(pod()), { handlerOptions: { logger } });
    assert.equal(result.status?.code, 418);
    assert.equal(lines.find((l) => l.msg === 'review')?.replacedCode, undefined);
  });

  it('the test kit refuses a status code beyond int32, as the API server does', () => {
    const review = admissionReview(pod());
    const body = (code: number) =>
      JSON.stringify({
        apiVersion: review.apiVersion,
        kind: 'AdmissionReview',
        response: { uid: review.request.uid, allowed: false, status: { code, message: 'no' } },
      });
    assert.equal(readAnswer('validating', review, { statusCode: 200, body: body(403) }).status?.code, 403);
    assert.throws(() => readAnswer('validating', review, { statusCode: 200, body: body(2 ** 40) }), /status\.code/);
  });

  it('collects warnings from the decision and ctx.warn as the API server keeps them', async () => {
    const w = defineValidatingWebhook({
      name: 'warns',
      rules: EVERY_REQUEST,
      validate: (_r, ctx) => {
        ctx.warn('first\u0007 warning');
        ctx.warn('first warning');
        return allow('second\nwarning', '   ');
      },
    });
    const result = await invoke(w, admissionReview(pod()));
    // A warning with a control character is refused by the API server: dropped, not cleaned.
    assert.deepEqual(result.warnings, ['   ', 'first warning']);
  });

  it('treats a returned value that is not a decision as a failure', async () => {
    const w = defineValidatingWebhook({
      name: 'sloppy',
      rules: EVERY_REQUEST,
      validate: () => ({ allowed: true }) as never,
    });
    const result = await invoke(w, admissionReview(pod()), { expectFailure: true });
    assert.match(result.failure!.error, /validate returned a plain object; expected allow\(\) or deny\(\)/);
    assert.equal(result.allowed, false);
    assert.equal(result.status?.code, 500);
  });

  it('does not let a validating webhook return a patch', async () => {
    const w = defineValidatingWebhook({
      name: 'patcher',
      rules: EVERY_REQUEST,
      validate: () => patched([{ op: 'add', path: '/x', value: 1 }]),
    });
    const result = await invoke(w, admissionReview(pod()), { expectFailure: true });
    assert.equal(result.allowed, false);
    assert.equal(result.review.response.patch, undefined);
  });
});

describe('byOperation', () => {
  const calls: string[] = [];
  const webhook = defineValidatingWebhook<Obj>({
    name: 'ops',
    rules: EVERY_REQUEST,
    validate: byOperation<Obj>({
      onCreate: (obj) => (calls.push(`create ${obj.metadata?.name}`), allow()),
      onUpdate: (old, obj) =>
        old.spec.containers[0].image === obj.spec.containers[0].image ? allow() : deny('image may not change'),
      onDelete: (old) => (calls.push(`delete ${old?.metadata?.name}`), allow()),
    }),
  });

  it('routes each operation to its handler, with old and new objects', async () => {
    await invoke(webhook, admissionReview(pod('a')));
    const changed = pod('a');
    changed.spec.containers[0].image = 'nginx:1.26';
    const update = await invoke(webhook, admissionReview(changed, { oldObject: pod('a') }));
    assert.equal(update.allowed, false);
    assert.equal(update.status?.message, 'image may not change');
    assert.equal((await invoke(webhook, admissionReview(pod('a'), { oldObject: pod('a') }))).allowed, true);
    await invoke(webhook, admissionReview(null, { oldObject: pod('gone') }));
    assert.deepEqual(calls, ['create a', 'delete gone']);
  });

  it('allows operations without a handler', async () => {
    const review = admissionReview(pod(), { operation: 'CONNECT' });
    assert.equal((await invoke(webhook, review)).allowed, true);
  });
});

describe('mutating webhooks', () => {
  const webhook = defineMutatingWebhook<Obj>({
    name: 'labels',
    rules: EVERY_REQUEST,
    mutate: (obj) => {
      obj.metadata ??= {};
      obj.metadata.labels ??= {};
      if (obj.metadata.labels.team === undefined) obj.metadata.labels.team = 'platform';
    },
  });

  it('returns a base64 JSONPatch of the change, with patchType JSONPatch', async () => {
    const result = await invoke(webhook, admissionReview(pod()));
    assert.equal(result.review.response.patchType, 'JSONPatch');
    assert.deepEqual(result.patch, [{ op: 'add', path: '/metadata/labels/team', value: 'platform' }]);
    assert.equal(result.object?.metadata?.labels?.team, 'platform');
  });

  it('returns no patch when nothing changed', async () => {
    const object = pod();
    object.metadata!.labels!.team = 'mine';
    const result = await invoke(webhook, admissionReview(object, { version: 'v1beta1' }));
    assert.equal(result.review.response.patch, undefined);
    assert.equal(result.review.response.patchType, undefined);
    assert.equal(result.review.apiVersion, 'admission.k8s.io/v1beta1');
  });

  it('does not call mutate for DELETE or CONNECT and sends no patch', async () => {
    let called = 0;
    const w = defineMutatingWebhook({ name: 'counter', rules: EVERY_REQUEST, mutate: () => void called++ });
    const del = await invoke(w, admissionReview(null, { oldObject: pod() }));
    const connect = await invoke(w, admissionReview(pod(), { operation: 'CONNECT' }));
    assert.equal(called, 0);
    assert.equal(del.review.response.patch, undefined);
    assert.equal(connect.review.response.patch, undefined);
    assert.equal(del.allowed && connect.allowed, true);
  });

  it('accepts a returned new object', async () => {
    const w = defineMutatingWebhook<Obj>({
      name: 'replace',
      rules: EVERY_REQUEST,
      mutate: (obj) => ({ ...obj, spec: { ...obj.spec, priority: 5 } }),
    });
    const result = await invoke(w, admissionReview(pod()));
    assert.deepEqual(result.patch, [{ op: 'add', path: '/spec/priority', value: 5 }]);
  });

  it('may deny instead of mutating, and sends no patch then', async () => {
    const w = defineMutatingWebhook<Obj>({
      name: 'deny-mut',
      rules: EVERY_REQUEST,
      mutate: (obj) => {
        obj.metadata!.labels!.x = 'y';
        return deny('no thanks');
      },
    });
    const result = await invoke(w, admissionReview(pod()));
    assert.equal(result.allowed, false);
    assert.equal(result.review.response.patch, undefined);
  });

  it('keeps warnings of a returned allow() with the diff', async () => {
    const w = defineMutatingWebhook<Obj>({
      name: 'warn-mut',
      rules: EVERY_REQUEST,
      mutate: (obj) => {
        obj.spec.paused = true;
        return allow('paused it');
      },
    });
    const result = await invoke(w, admissionReview(pod()));
    assert.deepEqual(result.warnings, ['paused it']);
    assert.deepEqual(result.patch, [{ op: 'add', path: '/spec/paused', value: true }]);
  });

  it('sends a patch that applies for any change, as JSON carries the changed object', async () => {
    const w = defineMutatingWebhook<Obj>({
      name: 'sparse',
      rules: EVERY_REQUEST,
      mutate: (obj) => {
        obj.spec.containers[2] = { name: 'sidecar', image: 'envoy:1.30' };
        obj.metadata!.labels!.app = (() => 'x') as never;
        obj.metadata!.labels!.team = undefined as never;
        obj.spec.at = { toJSON: () => undefined };
      },
    });
    const result = await invoke(w, admissionReview(pod()));
    assert.equal(result.allowed, true);
    assert.deepEqual(result.patch, [
      { op: 'add', path: '/spec/containers/1', value: null },
      { op: 'add', path: '/spec/containers/2', value: { name: 'sidecar', image: 'envoy:1.30' } },
      { op: 'remove', path: '/metadata/labels/app' },
    ]);
    assert.deepEqual((result.object as Obj | null)?.spec.containers, [
      { name: 'c', image: 'nginx:1.25' },
      null,
      { name: 'sidecar', image: 'envoy:1.30' },
    ]);
  });

  it('sends a raw patch that applies', async () => {
    const w = defineMutatingWebhook({
      name: 'raw',
      rules: EVERY_REQUEST,
      mutate: () => patched([{ op: 'add', path: '/metadata/labels/raw', value: 'yes' }]),
    });
    const result = await invoke(w, admissionReview(pod()));
    assert.equal(result.object?.metadata?.labels?.raw, 'yes');
  });

  it('never sends an invalid patch: it fails by failurePolicy instead', async () => {
    const bad = [{ op: 'replace', path: '/spec/nothing/here', value: 1 }] as const;
    const failClosed = defineMutatingWebhook({
      name: 'raw-bad',
      failurePolicy: 'Fail',
      rules: EVERY_REQUEST,
      mutate: () => patched([...bad]),
    });
    const closed = await invoke(failClosed, admissionReview(pod()), { expectFailure: true });
    // The log and the test kit name the operation, its path and where it stops resolving.
    assert.equal(
      closed.failure?.error,
      'UserFunctionError: invalid patch operation 0 (replace "/spec/nothing/here"): the object has no ' +
        '/spec/nothing, so /spec/nothing/here cannot be reached [OPERATION_PATH_UNRESOLVABLE]',
    );
    assert.equal(closed.allowed, false);
    assert.equal(closed.status?.code, 500);
    assert.equal(closed.review.response.patch, undefined);
    const failOpen = defineMutatingWebhook({
      name: 'raw-bad-open',
      rules: EVERY_REQUEST,
      mutate: () => patched([...bad]),
    });
    const open = await invoke(failOpen, admissionReview(pod()), { expectFailure: true });
    assert.equal(open.allowed, true);
    assert.equal(open.review.response.patch, undefined);
    assert.match(
      open.warnings[0]!,
      /internal error in webhook raw-bad-open\.webhooks\.kube-lambda\.dev .*failurePolicy is Ignore/,
    );
  });

  it('rejects a mutate that returns something other than an object or decision', async () => {
    const w = defineMutatingWebhook({
      name: 'odd',
      failurePolicy: 'Fail',
      rules: EVERY_REQUEST,
      mutate: () => 42 as never,
    });
    assert.equal((await invoke(w, admissionReview(pod()), { expectFailure: true })).status?.code, 500);
  });

  it('gives mutate request.object as the same working copy as object', async () => {
    let same = false;
    const w = defineMutatingWebhook<Obj>({
      name: 'sees',
      rules: EVERY_REQUEST,
      mutate: (obj, request) => {
        same = request.object === obj;
      },
    });
    await invoke(w, admissionReview(pod()));
    assert.equal(same, true);
  });

  it('diffs changes made through request.object against the object as it came', async () => {
    const viaRequest = defineMutatingWebhook<Obj>({
      name: 'via-request',
      rules: EVERY_REQUEST,
      mutate: (_obj, request) => {
        request.object!.metadata!.labels!.team = 'platform';
      },
    });
    const added = await invoke(viaRequest, admissionReview(pod()));
    assert.deepEqual(added.patch, [{ op: 'add', path: '/metadata/labels/team', value: 'platform' }]);
    assert.equal(added.object?.metadata?.labels?.team, 'platform');

    const returnsRequestObject = defineMutatingWebhook<Obj>({
      name: 'returns-request-object',
      rules: EVERY_REQUEST,
      mutate: (_obj, request) => {
        request.object!.spec.priority = 5;
        return request.object!;
      },
    });
    const returned = await invoke(returnsRequestObject, admissionReview(pod()));
    assert.deepEqual(returned.patch, [{ op: 'add', path: '/spec/priority', value: 5 }]);
  });

  it('checks a raw patch against the object as it came, whatever mutate did to request.object', async () => {
    const w = defineMutatingWebhook<Obj>({
      name: 'raw-after-change',
      failurePolicy: 'Fail',
      rules: EVERY_REQUEST,
      mutate: (_obj, request) => {
        delete request.object!.metadata!.labels!.app;
        return patched([{ op: 'remove', path: '/metadata/labels/app' }]);
      },
    });
    const result = await invoke(w, admissionReview(pod()));
    assert.equal(result.allowed, true, result.status?.message);
    assert.deepEqual(result.object?.metadata?.labels, {});
  });
});

describe('failures of the user function', () => {
  const throwing = (failurePolicy: 'Fail' | 'Ignore') =>
    defineValidatingWebhook({
      name: `throws-${failurePolicy.toLowerCase()}`,
      failurePolicy,
      rules: EVERY_REQUEST,
      validate: () => {
        throw new Error('secret detail at /srv/app.js:12');
      },
    });

  it('fails closed with 500 and an error id, no stack or detail (failurePolicy Fail)', async () => {
    const { logger, lines } = captureLogger();
    const raw = await invokeRaw(throwing('Fail'), admissionReview(pod()), { handlerOptions: { logger } });
    assert.equal(raw.statusCode, 200);
    assert.doesNotMatch(raw.body, /secret detail|app\.js|at /);
    const response = JSON.parse(raw.body).response;
    assert.equal(response.allowed, false);
    assert.equal(response.status.code, 500);
    assert.equal(response.status.reason, 'InternalError');
    const id = /error id ([0-9a-f]{8})/.exec(response.status.message)?.[1];
    assert.ok(id, response.status.message);
    const logged = lines.find((l) => l.errorId === id);
    assert.ok(logged, 'the error is logged with the same id');
    assert.match(logged.stack, /secret detail/);
  });

  it('fails open with a warning (failurePolicy Ignore)', async () => {
    const result = await invoke(throwing('Ignore'), admissionReview(pod()), { expectFailure: true });
    assert.equal(result.allowed, true);
    assert.match(result.warnings[0]!, /internal error .*error id [0-9a-f]{8}.*failurePolicy is Ignore/);
  });

  for (const [what, thrown] of hostileThrowables()) {
    it(`answers by failurePolicy with an error id when the function throws ${what}`, async () => {
      for (const failurePolicy of ['Fail', 'Ignore'] as const) {
        const { logger, lines } = captureLogger();
        const w = defineValidatingWebhook({
          name: 'throws-odd',
          failurePolicy,
          rules: EVERY_REQUEST,
          validate: () => {
            throw thrown;
          },
        });
        const raw = await invokeRaw(w, admissionReview(pod()), { handlerOptions: { logger } });
        assert.equal(raw.statusCode, 200, `${failurePolicy}: ${raw.body}`);
        const response = JSON.parse(raw.body).response;
        const text = failurePolicy === 'Fail' ? response.status.message : response.warnings[0];
        assert.equal(response.allowed, failurePolicy === 'Ignore');
        if (failurePolicy === 'Fail') assert.equal(response.status.code, 500);
        const id = /error id ([0-9a-f]{8})/.exec(text)?.[1];
        assert.ok(id, text);
        const logged = lines.find((l) => l.errorId === id);
        assert.equal(typeof logged?.error, 'string', 'the failure is logged with a description');
      }
    });
  }

  it('a rejected promise is a failure too', async () => {
    const w = defineValidatingWebhook({
      name: 'rejects',
      rules: EVERY_REQUEST,
      validate: async () => Promise.reject(new TypeError('boom')),
    });
    assert.equal((await invoke(w, admissionReview(pod()), { expectFailure: true })).status?.code, 500);
  });

  const slow = (failurePolicy: 'Fail' | 'Ignore') =>
    defineValidatingWebhook({
      name: `slow-${failurePolicy.toLowerCase()}`,
      failurePolicy,
      timeoutSeconds: 1,
      rules: EVERY_REQUEST,
      // Never answers: whatever answer comes is the deadline's.
      validate: () => new Promise<never>(() => {}),
    });

  it('answers a slow function before the API server gives up: 504 when failurePolicy is Fail', async () => {
    const result = await invoke(slow('Fail'), admissionReview(pod()), { expectFailure: true });
    assert.equal(result.failure?.kind, 'timeout');
    assert.equal(result.allowed, false);
    assert.equal(result.status?.code, 504);
    assert.equal(result.status?.reason, 'Timeout');
    // 80% of the webhook's 1 s timeout, so the answer reaches the API server before it gives up.
    assert.match(result.status?.message ?? '', /did not answer within 800 ms/);
  });

  it('answers a slow function with an allow and a warning when failurePolicy is Ignore', async () => {
    const result = await invoke(slow('Ignore'), admissionReview(pod()), { expectFailure: true });
    assert.equal(result.allowed, true);
    assert.match(result.warnings[0]!, /did not answer within \d+ ms/);
  });

  it('takes the tighter of timeoutSeconds, the URL timeout and the Lambda time left', async () => {
    const w = slow('Fail');
    const handler = w.withOptions({ logger: captureLogger().logger });
    const event = eventWith('http', admissionReview(pod()), (e) => {
      e.queryStringParameters = { timeout: '1s' };
    });
    // Lambda time left (500 ms → a 400 ms budget) is tighter than the URL's 1 s (an 800 ms budget).
    const result = await handler(event, { awsRequestId: 'r', getRemainingTimeInMillis: () => 500 });
    assert.equal(bodyOf(result).response.status.code, 504);
    assert.match(bodyOf(result).response.status.message, /did not answer within 400 ms/);
  });
});

describe('the time budget covers building the answer', () => {
  /**
   * A mutating webhook (timeoutSeconds 1: an 800 ms budget) that adds a value whose one
   * property the adapter reads only when it writes the patch, after `mutate` has returned:
   * reading it moves the injected clock on by `costMs`.
   */
  function slowPatch(failurePolicy: 'Fail' | 'Ignore', costMs: number) {
    let time = 1_000;
    const reads = { count: 0 };
    const webhook = defineMutatingWebhook<Obj>({
      name: `slow-patch-${failurePolicy.toLowerCase()}`,
      failurePolicy,
      timeoutSeconds: 1,
      rules: EVERY_REQUEST,
      mutate: (o) => {
        o.spec.extra = {
          get costly() {
            reads.count++;
            time += costMs;
            return 'written';
          },
        };
      },
    });
    return { webhook, reads, clock: () => time };
  }

  async function run(failurePolicy: 'Fail' | 'Ignore', costMs: number) {
    const { webhook, reads, clock } = slowPatch(failurePolicy, costMs);
    const { logger, lines } = captureLogger();
    const expectFailure = costMs > 800;
    const result = await invoke(webhook, admissionReview(pod()), { handlerOptions: { logger, clock }, expectFailure });
    return { result, reads, line: lines.find((l) => l.msg === 'review')! };
  }

  it('patches when writing the patch stays within the budget', async () => {
    const { result, reads, line } = await run('Fail', 100);
    assert.equal(reads.count, 1);
    assert.equal(result.allowed, true);
    assert.deepEqual(result.patch, [{ op: 'add', path: '/spec/extra', value: { costly: 'written' } }]);
    assert.equal(line.TimedOut, 0);
  });

  it('refuses a patch whose writing goes past the budget: 504 when failurePolicy is Fail', async () => {
    const { result, reads, line } = await run('Fail', 10_000);
    assert.equal(reads.count, 1);
    assert.equal(result.allowed, false);
    assert.equal(result.status?.code, 504);
    assert.match(result.status!.message!, /did not answer within 800 ms/);
    assert.deepEqual(result.patch, []);
    assert.equal(line.TimedOut, 1);
  });

  it('admits unpatched, with a warning, when failurePolicy is Ignore', async () => {
    const { result } = await run('Ignore', 10_000);
    assert.equal(result.allowed, true);
    assert.deepEqual(result.patch, []);
    assert.match(result.warnings[0]!, /did not answer within 800 ms.*failurePolicy is Ignore/);
  });
});

describe('warnings as the API server takes them', () => {
  it('drops warnings with control characters and keeps short lists as they are', () => {
    assert.deepEqual(sanitizeWarnings(['a\u0000b\u001bc', 'tab\there', 'ok', 'fine']), ['ok', 'fine']);
  });

  it('cuts each to 256 characters past 4096 in total, then drops what does not fit', () => {
    const long = Array.from({ length: 40 }, (_, i) => `${i}:${'w'.repeat(300)}`);
    const out = sanitizeWarnings(long);
    assert.ok(out.every((w) => [...w].length <= 256));
    assert.ok(out.reduce((n, w) => n + w.length, 0) <= WARNINGS_TOTAL_LIMIT);
    assert.equal(out.length, Math.floor(WARNINGS_TOTAL_LIMIT / 256));
    assert.ok(out[0]!.startsWith('0:'));
  });
});

describe('the review log line', () => {
  it('writes one line per review with the decision and no object contents', async () => {
    const { logger, lines } = captureLogger();
    const w = defineMutatingWebhook<Obj>({
      name: 'logged',
      rules: EVERY_REQUEST,
      mutate: (o) => void (o.spec.secret = 'hunter2'),
    });
    const object = pod('logged-pod', { data: { password: 's3cr3t' } });
    await invokeRaw(w, admissionReview(object, { uid: 'log-uid' }), { handlerOptions: { logger } });
    assert.equal(lines.length, 1);
    const line = lines[0]!;
    assert.equal(line.msg, 'review');
    assert.equal(line.uid, 'log-uid');
    assert.equal(line.kind, 'v1/Pod');
    assert.equal(line.operation, 'CREATE');
    assert.equal(line.namespace, 'default');
    assert.equal(line.name, 'logged-pod');
    assert.equal(line.decision, 'patched');
    assert.equal(line.patchOps, 1);
    assert.equal(typeof line.durationMs, 'number');
    assert.doesNotMatch(JSON.stringify(lines), /s3cr3t|hunter2/);
  });
});
