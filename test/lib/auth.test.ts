import assert from 'node:assert/strict';
import { once } from 'node:events';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it, mock } from 'node:test';
import { allow, defineConversionWebhook, defineValidatingWebhook } from '../../lib/index.ts';
import { GetParameterCommand, SSMClient } from '@aws-sdk/client-ssm';
import { mockClient } from 'aws-sdk-client-mock';
import { checkBearer, expectedToken, PATH_SECRET_REFRESH_ON_MISS_MS } from '../../lib/auth.ts';
import { PARAMETER_FAILURE_RETRY_MS, PARAMETER_READ_MAX_MS, parameterReadMs } from '../../lib/parameters.ts';
import { createLogger } from '../../lib/log.ts';
import { admissionReview, conversionReview, toEvent } from '../../lib/testing/index.ts';
import { invokeRaw } from '../../lib/harness/invoke.ts';
import { emfProblems } from './emf.ts';

const secured = defineValidatingWebhook({ name: 'secured', auth: 'bearer', rules: [], validate: () => allow() });
const review = admissionReview({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' } });
const env = { KLW_BEARER_TOKEN: 'correct-horse' };

describe('bearer token', () => {
  it('accepts the configured token', async () => {
    const raw = await invokeRaw(secured, review, {
      headers: { authorization: 'Bearer correct-horse' },
      handlerOptions: { env },
    });
    assert.equal(raw.statusCode, 200);
  });

  for (const [name, header] of [
    ['a wrong token', 'Bearer wrong'],
    ['a prefix of the token', 'Bearer correct'],
    ['another scheme', 'Basic Y29ycmVjdC1ob3JzZQ=='],
    ['an empty bearer', 'Bearer '],
  ] as const) {
    it(`answers 401 for ${name}`, async () => {
      const raw = await invokeRaw(secured, review, { headers: { authorization: header }, handlerOptions: { env } });
      assert.equal(raw.statusCode, 401);
      assert.equal(raw.headers['www-authenticate'], 'Bearer');
      assert.deepEqual(JSON.parse(raw.body), { error: 'missing or wrong bearer token' });
    });
  }

  it('answers 401 without an Authorization header', async () => {
    assert.equal((await invokeRaw(secured, review, { handlerOptions: { env } })).statusCode, 401);
  });

  it('reads the token from a file', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'klw-token-'));
    const file = join(dir, 'token');
    writeFileSync(file, 'from-file\n');
    const fileEnv = { KLW_BEARER_TOKEN_FILE: file };
    assert.equal(expectedToken(fileEnv), 'from-file');
    const raw = await invokeRaw(secured, review, {
      headers: { authorization: 'Bearer from-file' },
      handlerOptions: { env: fileEnv },
    });
    assert.equal(raw.statusCode, 200);
  });

  it('answers 500 without saying why when auth is on but no token is configured', async () => {
    const raw = await invokeRaw(secured, review, {
      headers: { authorization: 'Bearer x' },
      handlerOptions: { env: {} },
    });
    assert.equal(raw.statusCode, 500);
    assert.doesNotMatch(raw.body, /KLW_/);
  });

  it('by default checks whenever a token is configured, and not otherwise', async () => {
    const auto = defineValidatingWebhook({ name: 'auto', rules: [], validate: () => allow() });
    assert.equal(auto.registration.auth, 'auto');
    assert.equal((await invokeRaw(auto, review, { handlerOptions: { env } })).statusCode, 401);
    assert.equal(
      (await invokeRaw(auto, review, { headers: { authorization: 'Bearer correct-horse' }, handlerOptions: { env } }))
        .statusCode,
      200,
    );
    assert.equal((await invokeRaw(auto, review, { handlerOptions: { env: {} } })).statusCode, 200);
  });

  it('never checks with auth none, nor for conversion (the API server sends no credentials)', async () => {
    const open = defineValidatingWebhook({ name: 'open', auth: 'none', rules: [], validate: () => allow() });
    assert.equal((await invokeRaw(open, review, { handlerOptions: { env } })).statusCode, 200);
    const conv = defineConversionWebhook({
      name: 'conv',
      crd: 'x.example.com',
      convert: (o, d) => ({ ...o, apiVersion: d }),
    });
    assert.equal(
      (await invokeRaw(conv, conversionReview([], 'example.com/v1'), { handlerOptions: { env } })).statusCode,
      200,
    );
  });

  it('reads the token from SSM once per environment, and tries again once a failure is older than the retry interval', async () => {
    const ssm = mockClient(SSMClient);
    mock.timers.enable({ apis: ['Date'], now: 1_000_000 });
    try {
      ssm
        .on(GetParameterCommand, { Name: '/klw/test/token', WithDecryption: true })
        .resolvesOnce({ Parameter: { Value: 'from-ssm' } });
      const ssmEnv = { KLW_BEARER_TOKEN_SSM: '/klw/test/token' };
      for (const [header, status] of [
        ['Bearer from-ssm', 200],
        ['Bearer nope', 401],
        ['Bearer from-ssm', 200],
      ] as const) {
        assert.equal(
          (await invokeRaw(secured, review, { headers: { authorization: header }, handlerOptions: { env: ssmEnv } }))
            .statusCode,
          status,
        );
      }
      assert.equal(ssm.commandCalls(GetParameterCommand).length, 1, 'fetched once');

      ssm
        .on(GetParameterCommand, { Name: '/klw/test/flaky' })
        .rejectsOnce(new Error('throttled'))
        .resolves({ Parameter: { Value: 'second-try' } });
      const flaky = { KLW_BEARER_TOKEN_SSM: '/klw/test/flaky' };
      const first = await invokeRaw(secured, review, {
        headers: { authorization: 'Bearer second-try' },
        handlerOptions: { env: flaky },
      });
      assert.equal(first.statusCode, 500);
      assert.doesNotMatch(first.body, /throttled/);
      const again = await invokeRaw(secured, review, {
        headers: { authorization: 'Bearer second-try' },
        handlerOptions: { env: flaky },
      });
      assert.equal(again.statusCode, 500, 'the failure stands within the retry interval');
      assert.equal(ssm.commandCalls(GetParameterCommand, { Name: '/klw/test/flaky' }).length, 1);
      mock.timers.tick(PARAMETER_FAILURE_RETRY_MS + 1);
      const second = await invokeRaw(secured, review, {
        headers: { authorization: 'Bearer second-try' },
        handlerOptions: { env: flaky },
      });
      assert.equal(second.statusCode, 200);
    } finally {
      mock.timers.reset();
      ssm.restore();
    }
  });

  it('compares case-insensitively on the scheme only', async () => {
    assert.equal(await checkBearer('bearer tok', 'tok'), true);
    assert.equal(await checkBearer('Bearer TOK', 'tok'), false);
    assert.equal(await checkBearer(undefined, 'tok'), false);
  });
});

describe('an SSM endpoint that accepts and never answers', () => {
  it('the read bound: half the time budget, at most PARAMETER_READ_MAX_MS', () => {
    assert.equal(parameterReadMs(undefined), PARAMETER_READ_MAX_MS);
    assert.equal(parameterReadMs(Number.NaN), PARAMETER_READ_MAX_MS);
    assert.equal(parameterReadMs(300), 150);
    assert.equal(parameterReadMs(9_000), PARAMETER_READ_MAX_MS);
    assert.equal(parameterReadMs(1), 1);
  });

  // Settings of the AWS SDK pointing the SSM client at the fake endpoint, with credentials and
  // a region from the environment so it asks nothing else (no files, no instance metadata).
  const dir = mkdtempSync(join(tmpdir(), 'klw-ssm-'));
  const sdkEnv = (endpoint: string): Record<string, string> => ({
    AWS_ENDPOINT_URL_SSM: endpoint,
    AWS_REGION: 'eu-west-1',
    AWS_ACCESS_KEY_ID: 'AKIAFAKEFAKEFAKEFAKE',
    AWS_SECRET_ACCESS_KEY: 'fake-secret-access-key',
    AWS_CONFIG_FILE: join(dir, 'no-config'),
    AWS_SHARED_CREDENTIALS_FILE: join(dir, 'no-credentials'),
    AWS_EC2_METADATA_DISABLED: 'true',
  });

  const allowAll = () => allow();
  const pathGuarded = defineValidatingWebhook({
    name: 'path-guarded',
    auth: 'path-secret',
    rules: [],
    validate: allowAll,
  });
  const SECRET = 'Zk3n8yq0tXW1b2c3d4e5f6g7h8i9j0kLmNoPqRsTuVw';
  const cases = [
    {
      name: 'the bearer token',
      webhook: secured,
      path: '/secured',
      env: { KLW_BEARER_TOKEN_SSM: '/klw/test/silent-token' },
    },
    {
      name: 'the path secret',
      webhook: pathGuarded,
      path: `/path-guarded/${SECRET}`,
      env: { KLW_PATH_SECRET_SSM: '/klw/test/silent-secret' },
    },
  ];

  /**
   * A fake SSM endpoint on loopback, the SDK pointed at it through the environment for the length
   * of `body`, with setTimeout and Date mocked. `answer(n)` gives the value the nth request is
   * answered with; undefined leaves it unanswered for good.
   */
  async function withFakeSsm(
    answer: (n: number) => string | undefined,
    body: (fake: { requests: IncomingMessage[]; reached: (n: number) => Promise<void> }) => Promise<void>,
  ): Promise<void> {
    const requests: IncomingMessage[] = [];
    let arrived = () => {};
    const server = createServer((req, res) => {
      requests.push(req);
      arrived();
      const value = answer(requests.length);
      if (value === undefined) return;
      res.writeHead(200, { 'content-type': 'application/x-amz-json-1.1' });
      res.end(JSON.stringify({ Parameter: { Name: 'p', Type: 'SecureString', Value: value, Version: 1 } }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const reached = (n: number) =>
      new Promise<void>((resolve) => {
        arrived = () => requests.length >= n && resolve();
        arrived();
      });
    const settings = sdkEnv(`http://127.0.0.1:${(server.address() as { port: number }).port}`);
    const saved = Object.fromEntries(Object.keys(settings).map((k) => [k, process.env[k]]));
    Object.assign(process.env, settings);
    // The read's timer runs on mocked time: it fires when the test says, once the request is at the fake.
    mock.timers.enable({ apis: ['setTimeout', 'Date'], now: 7_000_000 });
    try {
      await body({ requests, reached });
    } finally {
      mock.timers.reset();
      for (const [k, v] of Object.entries(saved)) {
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
      }
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  }

  // 400 ms left: a budget of 300 ms (less the 100 ms margin), so 150 ms for the reads.
  const context = { awsRequestId: 'r', getRemainingTimeInMillis: () => 400 };

  for (const c of cases) {
    // The timeout is a hang guard only: a read that is never aborted fails the test instead of hanging the run.
    it(`${c.name}: aborted after its bound, 500, counted AuthMisconfigured, kept`, { timeout: 120_000 }, async () => {
      await withFakeSsm(
        () => undefined,
        async ({ requests, reached }) => {
          const lines: string[] = [];
          const logger = createLogger({ level: 'debug', sink: (l) => lines.push(l) });
          const handler = c.webhook.withOptions({ env: c.env, logger });
          const event = toEvent(review, { path: c.path, headers: { authorization: 'Bearer anything' } });

          const first = handler(event, context);
          await reached(1);
          assert.equal(requests[0]!.headers['x-amz-target'], 'AmazonSSM.GetParameter');
          mock.timers.tick(150);
          assert.equal((await first).statusCode, 500);
          // Aborted: the SDK closed its connection.
          if (!requests[0]!.socket.destroyed) await once(requests[0]!.socket, 'close');
          const line = JSON.parse(lines.at(-1)!) as Record<string, any>;
          assert.deepEqual(emfProblems(lines.at(-1)!), []);
          assert.equal(line.level, 'error');
          assert.match(line.msg, /misconfigured: could not read the SSM parameter/);
          const within = /^ParameterTimeout: SSM parameter \S+ not read within (\d+) ms$/.exec(line.error);
          assert.ok(within, line.error);
          // The bound comes from the time left, not the cap.
          assert.ok(Number(within[1]) <= 150 && PARAMETER_READ_MAX_MS > 150, line.error);
          assert.equal(line.AuthMisconfigured, 1);
          assert.equal(line.status, 500);

          // The failure stands: the next request is answered at once, without another read.
          assert.equal((await handler(event, context)).statusCode, 500);
          assert.equal(JSON.parse(lines.at(-1)!).AuthMisconfigured, 1);
          assert.equal(requests.length, 1);

          // Once it is older than the retry interval, a request reads again (and is bounded again).
          mock.timers.tick(PARAMETER_FAILURE_RETRY_MS + 1);
          const third = handler(event, context);
          await reached(2);
          mock.timers.tick(150);
          assert.equal((await third).statusCode, 500);
          assert.equal(requests.length, 2);
        },
      );
    });
  }

  it('a reread after a mismatch that never answers keeps the old secret (404)', { timeout: 120_000 }, async () => {
    await withFakeSsm(
      (n) => (n === 1 ? SECRET : undefined),
      async ({ requests, reached }) => {
        const lines: string[] = [];
        const logger = createLogger({ level: 'debug', sink: (l) => lines.push(l) });
        const handler = pathGuarded.withOptions({ env: { KLW_PATH_SECRET_SSM: '/klw/test/rotating-secret' }, logger });
        const call = (secret: string) => handler(toEvent(review, { path: `/path-guarded/${secret}` }), context);
        assert.equal((await call(SECRET)).statusCode, 200);
        assert.equal(requests.length, 1);

        // A wrong secret once the value is old enough to look again: the reread hangs and is cut off.
        mock.timers.tick(PATH_SECRET_REFRESH_ON_MISS_MS + 1);
        const wrong = call('A'.repeat(43));
        await reached(2);
        mock.timers.tick(150);
        assert.equal((await wrong).statusCode, 404);
        const line = JSON.parse(lines.at(-1)!) as Record<string, any>;
        assert.equal(line.Unauthenticated, 1);
        assert.equal(line.AuthMisconfigured, 0);

        // The secret it had still works, and the failed reread stands: no third read.
        assert.equal((await call(SECRET)).statusCode, 200);
        assert.equal((await call('B'.repeat(43))).statusCode, 404);
        assert.equal(requests.length, 2);
      },
    );
  });
});
