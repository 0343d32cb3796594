import assert from 'node:assert/strict';
import { describe, it, mock } from 'node:test';
import { GetParameterCommand, ParameterNotFound, SSMClient } from '@aws-sdk/client-ssm';
import { mockClient } from 'aws-sdk-client-mock';
import { allow, defineConversionWebhook, defineValidatingWebhook } from '../../lib/index.ts';
import {
  checkPathSecret,
  parsePathSecrets,
  pathSecretOf,
  redactPath,
  AuthConfigError,
  PATH_SECRET_MAX_AGE_MS,
  PATH_SECRET_REFRESH_ON_MISS_MS,
} from '../../lib/auth.ts';
import { PARAMETER_FAILURE_RETRY_MS } from '../../lib/parameters.ts';
import { type EventSource, sourceNames } from '../../lib/gateway/sources.ts';
import { createLogger } from '../../lib/log.ts';
import { admissionReview, conversionReview, toEvent } from '../../lib/testing/index.ts';
import { lambdaContext } from '../../lib/harness/events.ts';
import { emfProblems } from './emf.ts';

const CURRENT = 'Zk3n8yq0tXW1b2c3d4e5f6g7h8i9j0kLmNoPqRsTuVw';
const PREVIOUS = 'AAAAbbbbCCCCddddEEEEffffGGGGhhhhIIIIjjjjKKK';
const secured = defineValidatingWebhook({ name: 'pod-policy', rules: [], validate: () => allow() });
const review = admissionReview({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' } });

interface CallOptions {
  path: string;
  env: NodeJS.ProcessEnv;
  format?: EventSource;
  body?: unknown;
  base64?: boolean;
  pathParameters?: Record<string, string>;
  webhook?: typeof secured | ReturnType<typeof defineConversionWebhook>;
}

/** One call through the handler; returns the status, body and every log line (raw and parsed). */
async function call(o: CallOptions) {
  const raw: string[] = [];
  const handler = (o.webhook ?? secured).withOptions({
    env: o.env,
    logger: createLogger({ level: 'debug', sink: (l) => raw.push(l) }),
  });
  const event = toEvent(o.body ?? review, {
    path: o.path,
    format: o.format ?? 'http',
    ...(o.base64 ? { base64: true } : {}),
  });
  if (o.pathParameters) event.pathParameters = o.pathParameters;
  const result = await handler(event, lambdaContext());
  return {
    status: result.statusCode,
    body: result.body,
    headers: result.headers,
    raw,
    lines: raw.map((l) => JSON.parse(l) as Record<string, unknown>),
  };
}

const env = { KLW_PATH_SECRET: CURRENT };

describe('path-secret authentication', () => {
  for (const format of sourceNames()) {
    it(`accepts the right secret as the last path segment (${format} events)`, async () => {
      assert.equal((await call({ path: `/pod-policy/${CURRENT}`, env, format })).status, 200);
      assert.equal((await call({ path: `/prod/pod-policy/${CURRENT}`, env, format })).status, 200);
    });
  }

  it('reads the secret from the `secret` path parameter of an API Gateway route', async () => {
    assert.equal((await call({ path: '/pod-policy/ignored', env, pathParameters: { secret: CURRENT } })).status, 200);
    assert.equal(
      (await call({ path: `/pod-policy/${CURRENT}`, env, pathParameters: { secret: 'wrong-secret-wrong-secret' } }))
        .status,
      404,
    );
  });

  for (const [name, path] of [
    ['a wrong secret', '/pod-policy/wrong-secret-of-enough-length-0000000'],
    ['a missing secret', '/pod-policy'],
    ['a trailing slash and no secret', '/pod-policy/'],
    ['a prefix of the secret', `/pod-policy/${CURRENT.slice(0, -1)}`],
    ['the secret plus more', `/pod-policy/${CURRENT}x`],
  ] as const) {
    it(`answers ${name} with 404 exactly like an unknown route, and never logs the secret`, async () => {
      const out = await call({ path, env });
      assert.equal(out.status, 404);
      assert.equal(out.body, '{"message":"Not Found"}');
      assert.deepEqual(out.headers, { 'content-type': 'application/json' });
      const line = out.lines.find((l) => l.status === 404);
      assert.ok(line, 'the refusal is logged');
      assert.equal(line.reason, 'missing or wrong path secret');
      assert.match(String(line.path), /^\/pod-policy(\/\*\*\*)?\/?$/);
      for (const l of out.raw)
        assert.ok(!l.includes(CURRENT) && !l.includes(CURRENT.slice(0, 20)), `secret in log line ${l}`);
    });
  }

  it('keeps the previous secret valid during a rotation, and refuses it once retired', async () => {
    const rotating = { KLW_PATH_SECRET: `${CURRENT},${PREVIOUS}` };
    assert.equal((await call({ path: `/pod-policy/${CURRENT}`, env: rotating })).status, 200);
    assert.equal((await call({ path: `/pod-policy/${PREVIOUS}`, env: rotating })).status, 200);
    assert.equal((await call({ path: '/pod-policy/neither-of-the-two-secrets-000', env: rotating })).status, 404);
    const retired = { KLW_PATH_SECRET: CURRENT };
    assert.equal((await call({ path: `/pod-policy/${PREVIOUS}`, env: retired })).status, 404);
    assert.equal((await call({ path: `/pod-policy/${CURRENT}`, env: retired })).status, 200);
  });

  it('refuses a wrong secret before the body is decoded or parsed', async () => {
    const parse = mock.method(JSON, 'parse');
    const from = mock.method(Buffer, 'from');
    try {
      const huge = `{"a":"${'x'.repeat(7 * 1024 * 1024)}"}`;
      for (const body of ['{ not json', huge]) {
        const out = await handlerCall(body, false);
        assert.equal(out.statusCode, 404);
      }
      assert.equal((await handlerCall('!!!not base64!!!', true)).statusCode, 404);
      assert.equal(parse.mock.callCount(), 0, 'JSON.parse never ran');
      assert.equal(
        from.mock.calls.filter((c) => (c.arguments as unknown[])[1] === 'base64').length,
        0,
        'base64 was never decoded',
      );
      // The same bodies with the right secret do reach the body checks.
      const right = await secured.withOptions({ env, logger: createLogger({ level: 'silent' }) })(
        toEvent('{ not json', { path: `/pod-policy/${CURRENT}` }),
        lambdaContext(),
      );
      assert.equal(right.statusCode, 400);
      assert.ok(parse.mock.callCount() > 0);
    } finally {
      parse.mock.restore();
      from.mock.restore();
    }
  });

  it('protects conversion webhooks the same way', async () => {
    const conv = defineConversionWebhook({
      name: 'crontab-conversion',
      crd: 'crontabs.example.com',
      convert: (o, d) => ({ ...o, apiVersion: d }),
    });
    const body = conversionReview([], 'example.com/v1');
    assert.equal(conv.registration.auth, 'auto');
    assert.equal((await call({ webhook: conv, body, path: `/crontab-conversion/${CURRENT}`, env })).status, 200);
    assert.equal(
      (await call({ webhook: conv, body, path: '/crontab-conversion/nope-nope-nope-nope-nope', env })).status,
      404,
    );
    assert.equal((await call({ webhook: conv, body, path: '/crontab-conversion', env })).status, 404);
  });

  it('by default (auto) uses the bearer token when one is configured, else the path secret', async () => {
    assert.equal(secured.registration.auth, 'auto');
    const both = { ...env, KLW_BEARER_TOKEN: 'tok' };
    assert.equal((await call({ path: `/pod-policy/${CURRENT}`, env: both })).status, 401, 'bearer decides');
    assert.equal((await call({ path: '/pod-policy', env })).status, 404, 'path secret decides');
  });

  it('inside Lambda with neither configured, auto is a misconfiguration (500), never an open endpoint', async () => {
    const lambdaEnv = { AWS_LAMBDA_FUNCTION_NAME: 'svc-dev-pod-policy' };
    const out = await call({ path: '/pod-policy', env: lambdaEnv });
    assert.equal(out.status, 500);
    assert.deepEqual(JSON.parse(out.body), { error: 'webhook authentication is misconfigured' });
    assert.match(
      String(out.lines.find((l) => l.level === 'error')?.msg),
      /no caller authentication is configured.*KLW_PATH_SECRET/,
    );
    const open = defineValidatingWebhook({ name: 'open', auth: 'none', rules: [], validate: () => allow() });
    assert.equal(
      (await call({ webhook: open, path: '/open', env: lambdaEnv })).status,
      200,
      'auth: none stays possible explicitly',
    );
  });

  it('explicit path-secret without a secret, an empty one or a short one is a misconfiguration', async () => {
    const strict = defineValidatingWebhook({ name: 'strict', auth: 'path-secret', rules: [], validate: () => allow() });
    for (const e of [
      {},
      { KLW_PATH_SECRET: '' },
      { KLW_PATH_SECRET: ' , ' },
      { KLW_PATH_SECRET: 'short' },
      { KLW_PATH_SECRET: `${CURRENT},${PREVIOUS},${CURRENT}` },
      { KLW_PATH_SECRET: `${CURRENT}/x` },
    ]) {
      const out = await call({ webhook: strict, path: `/strict/${CURRENT}`, env: e });
      assert.equal(out.status, 500, JSON.stringify(e));
      assert.ok(out.lines.some((l) => l.level === 'error' && /misconfigured/.test(String(l.msg))));
      for (const l of out.raw) assert.ok(!l.includes(CURRENT), 'secret in a log line');
    }
    // path-secret ignores a bearer token.
    assert.equal(
      (await call({ webhook: strict, path: `/strict/${CURRENT}`, env: { ...env, KLW_BEARER_TOKEN: 'tok' } })).status,
      200,
    );
  });

  it('reads the secrets from SSM once per environment, and tries again after a failure', async () => {
    const ssm = mockClient(SSMClient);
    mock.timers.enable({ apis: ['Date'], now: 2_000_000 });
    try {
      ssm
        .on(GetParameterCommand, { Name: '/klw/test/path-secret', WithDecryption: true })
        .resolvesOnce({ Parameter: { Value: `${CURRENT},${PREVIOUS}\n` } });
      const ssmEnv = { KLW_PATH_SECRET_SSM: '/klw/test/path-secret' };
      for (const [path, status] of [
        [`/pod-policy/${CURRENT}`, 200],
        [`/pod-policy/${PREVIOUS}`, 200],
        ['/pod-policy/x', 404],
      ] as const) {
        assert.equal((await call({ path, env: ssmEnv })).status, status);
      }
      assert.equal(ssm.commandCalls(GetParameterCommand).length, 1, 'fetched once');

      ssm
        .on(GetParameterCommand, { Name: '/klw/test/flaky-secret' })
        .rejectsOnce(new Error('throttled'))
        .resolves({ Parameter: { Value: CURRENT } });
      const flaky = { KLW_PATH_SECRET_SSM: '/klw/test/flaky-secret' };
      const first = await call({ path: `/pod-policy/${CURRENT}`, env: flaky });
      assert.equal(first.status, 500);
      assert.doesNotMatch(first.body, /throttled/);
      mock.timers.tick(PARAMETER_FAILURE_RETRY_MS + 1);
      assert.equal((await call({ path: `/pod-policy/${CURRENT}`, env: flaky })).status, 200);
    } finally {
      mock.timers.reset();
      ssm.restore();
    }
  });
});

describe('a missing or unreadable SSM parameter', () => {
  /** The refusal line of one call, raw and parsed. */
  const refusal = (out: Awaited<ReturnType<typeof call>>) => {
    const raw = out.raw.find((l) => JSON.parse(l).msg !== 'review' && typeof JSON.parse(l).status === 'number');
    assert.ok(raw, `no refusal line in ${out.raw.join('\n')}`);
    return { raw, line: JSON.parse(raw) as Record<string, any> };
  };

  it('is read once per retry interval, not per request, and every refusal carries AuthMisconfigured=1 in valid EMF', async () => {
    const ssm = mockClient(SSMClient);
    mock.timers.enable({ apis: ['Date'], now: 3_000_000 });
    try {
      const name = '/klw/test/missing-secret';
      ssm
        .on(GetParameterCommand, { Name: name })
        .rejects(new ParameterNotFound({ message: 'Parameter not found', $metadata: {} }));
      const ssmEnv = { KLW_PATH_SECRET_SSM: name };
      for (let i = 0; i < 5; i++) {
        const out = await call({ path: `/pod-policy/${CURRENT}`, env: ssmEnv });
        assert.equal(out.status, 500);
        const { raw, line } = refusal(out);
        assert.deepEqual(emfProblems(raw), []);
        assert.equal(line.level, 'error');
        assert.match(line.msg, /misconfigured: could not read the SSM parameter/);
        assert.equal(line.AuthMisconfigured, 1);
        assert.equal(line.Unauthenticated, 0);
        assert.equal(line.webhook, 'pod-policy');
        assert.deepEqual(line._aws.CloudWatchMetrics[0].Dimensions, [['webhook']]);
      }
      assert.equal(ssm.commandCalls(GetParameterCommand).length, 1, 'one SSM call for five requests');

      // The parameter is created: it is read again once the failure is older than the retry interval.
      ssm.on(GetParameterCommand, { Name: name }).resolves({ Parameter: { Value: CURRENT } });
      mock.timers.tick(PARAMETER_FAILURE_RETRY_MS - 1);
      assert.equal((await call({ path: `/pod-policy/${CURRENT}`, env: ssmEnv })).status, 500);
      assert.equal(ssm.commandCalls(GetParameterCommand).length, 1);
      mock.timers.tick(2);
      assert.equal((await call({ path: `/pod-policy/${CURRENT}`, env: ssmEnv })).status, 200);
      assert.equal(ssm.commandCalls(GetParameterCommand).length, 2);
    } finally {
      mock.timers.reset();
      ssm.restore();
    }
  });

  it('counts a missing or wrong secret or token as Unauthenticated, and a configuration that cannot work as AuthMisconfigured', async () => {
    const wrongSecret = refusal(await call({ path: '/pod-policy/wrong-secret-wrong-secret-00', env }));
    assert.deepEqual(emfProblems(wrongSecret.raw), []);
    assert.deepEqual(
      [wrongSecret.line.status, wrongSecret.line.Unauthenticated, wrongSecret.line.AuthMisconfigured],
      [404, 1, 0],
    );
    const wrongToken = refusal(await call({ path: '/pod-policy', env: { KLW_BEARER_TOKEN: 'tok' } }));
    assert.deepEqual(
      [wrongToken.line.status, wrongToken.line.Unauthenticated, wrongToken.line.AuthMisconfigured],
      [401, 1, 0],
    );
    const open = refusal(await call({ path: '/pod-policy', env: { AWS_LAMBDA_FUNCTION_NAME: 'svc-dev-pod-policy' } }));
    assert.deepEqual([open.line.status, open.line.Unauthenticated, open.line.AuthMisconfigured], [500, 0, 1]);
    const off = refusal(await call({ path: '/pod-policy/x', env: { ...env, KLW_METRICS_NAMESPACE: 'off' } }));
    assert.equal(off.line._aws, undefined);
    assert.equal(off.line.Unauthenticated, undefined);
  });
});

async function handlerCall(body: string, base64: boolean) {
  const handler = secured.withOptions({ env, logger: createLogger({ level: 'silent' }) });
  const event = toEvent(body, { path: '/pod-policy/wrong-secret-wrong-secret-wrong' });
  if (base64) {
    event.body = body;
    event.isBase64Encoded = true;
  }
  return handler(event, lambdaContext());
}

describe('path-secret rotation in running execution environments', () => {
  it('picks up a rotated secret on a miss (rate-limited), drops a retired one after the maximum age, and keeps the old value when a refresh fails', async () => {
    const ssm = mockClient(SSMClient);
    mock.timers.enable({ apis: ['Date'], now: 1_000_000 });
    try {
      const name = '/klw/test/rotating-secret';
      const ssmEnv = { KLW_PATH_SECRET_SSM: name };
      const status = async (secret: string) => (await call({ path: `/pod-policy/${secret}`, env: ssmEnv })).status;
      ssm.on(GetParameterCommand, { Name: name }).resolves({ Parameter: { Value: PREVIOUS } });
      assert.equal(await status(PREVIOUS), 200);

      // klw secret rotate: the parameter now holds current,previous.
      ssm.on(GetParameterCommand, { Name: name }).resolves({ Parameter: { Value: `${CURRENT},${PREVIOUS}` } });
      assert.equal(await status(CURRENT), 404, 'not refetched within the refresh interval');
      assert.equal(ssm.commandCalls(GetParameterCommand).length, 1);
      mock.timers.tick(PATH_SECRET_REFRESH_ON_MISS_MS + 1);
      assert.equal(await status(CURRENT), 200, 'refetched on a miss');
      assert.equal(await status(PREVIOUS), 200);
      assert.equal(await status('still-wrong-still-wrong-00'), 404);
      assert.equal(ssm.commandCalls(GetParameterCommand).length, 2, 'one refetch, not one per wrong request');

      // klw secret retire: only the current secret is left.
      ssm.on(GetParameterCommand, { Name: name }).resolves({ Parameter: { Value: CURRENT } });
      assert.equal(await status(PREVIOUS), 200, 'still cached');
      mock.timers.tick(PATH_SECRET_MAX_AGE_MS + 1);
      assert.equal(await status(PREVIOUS), 404, 'retired once the cached value expired');
      assert.equal(await status(CURRENT), 200);

      ssm.on(GetParameterCommand, { Name: name }).rejects(new Error('throttled'));
      mock.timers.tick(PATH_SECRET_MAX_AGE_MS + 1);
      const calls = ssm.commandCalls(GetParameterCommand).length;
      assert.equal(await status(CURRENT), 200, 'a failed refresh keeps the value it was to replace');
      assert.equal(await status(CURRENT), 200);
      assert.equal(ssm.commandCalls(GetParameterCommand).length, calls + 1, 'and is not retried on every request');
      mock.timers.tick(PARAMETER_FAILURE_RETRY_MS + 1);
      assert.equal(await status(CURRENT), 200);
      assert.equal(ssm.commandCalls(GetParameterCommand).length, calls + 2, 'retried after the retry interval');
    } finally {
      mock.timers.reset();
      ssm.restore();
    }
  });
});

describe('path-secret helpers', () => {
  it('redacts everything after the function segment', () => {
    assert.equal(redactPath(`/pod-policy/${CURRENT}`, 'pod-policy'), '/pod-policy/***');
    assert.equal(redactPath(`/prod/pod-policy/${CURRENT}`, 'pod-policy'), '/prod/pod-policy/***');
    assert.equal(redactPath('/pod-policy', 'pod-policy'), '/pod-policy');
    assert.equal(redactPath(`/elsewhere/${CURRENT}/more`, 'pod-policy'), '/***');
    assert.equal(redactPath(`/${CURRENT}`, 'pod-policy'), '/***', 'a function URL path is the secret alone');
    assert.equal(redactPath('/', 'pod-policy'), '/');
  });

  it('redacts a secret before the function segment too (a function URL called as /<secret>/<name>)', () => {
    assert.equal(redactPath(`/${CURRENT}/pod-policy`, 'pod-policy'), '/***/pod-policy');
    assert.equal(redactPath(`/${CURRENT}/prod/pod-policy/${PREVIOUS}`, 'pod-policy'), '/***/prod/pod-policy/***');
    assert.equal(
      redactPath(`/prod/${CURRENT}x/pod-policy`, 'pod-policy'),
      '/prod/***/pod-policy',
      'any segment of 22 characters or more, URL-safe or not',
    );
    assert.equal(
      redactPath('/stage-name/pod-policy', 'pod-policy'),
      '/stage-name/pod-policy',
      'a stage or prefix stays readable',
    );
  });

  it('never logs a secret that precedes the function segment', async () => {
    for (const format of sourceNames()) {
      const out = await call({ path: `/${CURRENT}/pod-policy`, env, format });
      assert.equal(out.status, 404, 'the last segment is what is checked');
      assert.equal(out.lines.find((l) => l.status === 404)?.path, '/***/pod-policy');
      for (const l of out.raw) assert.ok(!l.includes(CURRENT), `secret in log line ${l}`);
    }
  });

  it('reads the secret from the path parameter or the last segment', () => {
    assert.equal(pathSecretOf('/a/b', { secret: 's' }), 's');
    assert.equal(pathSecretOf('/a/b'), 'b');
    assert.equal(pathSecretOf('/a/'), undefined);
  });

  it('compares against every valid secret', async () => {
    assert.equal(await checkPathSecret(CURRENT, [CURRENT, PREVIOUS]), true);
    assert.equal(await checkPathSecret(PREVIOUS, [CURRENT, PREVIOUS]), true);
    assert.equal(await checkPathSecret('', ['']), false);
    assert.equal(await checkPathSecret(undefined, [CURRENT]), false);
  });

  it('parses current,previous and refuses malformed settings', () => {
    assert.deepEqual(parsePathSecrets(` ${CURRENT} , ${PREVIOUS} `, 'X'), [CURRENT, PREVIOUS]);
    assert.throws(() => parsePathSecrets('', 'X'), AuthConfigError);
    assert.throws(() => parsePathSecrets('a'.repeat(21), 'X'), /URL-safe/);
  });
});
