import assert from 'node:assert/strict';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { request as httpsRequest, Agent } from 'node:https';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { InvokeCommand, LambdaClient } from '@aws-sdk/client-lambda';
import { parse } from 'yaml';
import { startApi, type RunningApi } from '../../../infra/local/api.ts';
import { startLambda, type RunningLambda } from '../../../infra/local/lambda-api.ts';
import { ensureLocalCertificates } from '../../../infra/local/certs.ts';
import { withKeptCertificates } from '../../kept-certs.ts';
import { httpFromResult } from '../../../infra/local/front/results.ts';
import { localInvoke } from '../../../infra/local/back/invoke.ts';
import { FunctionPool } from '../../../infra/local/back/pool.ts';
import { LocalProject } from '../../../infra/local/back/project.ts';
import { runtimeFor } from '../../../infra/local/back/runtime.ts';
import { toEvent, admissionReview } from '../../../lib/testing/index.ts';
import { eventFromHttp } from '../../../lib/harness/events.ts';
import { FIXTURE_FUNCTIONS, ManualTimer, PATIENCE_MS, fixture, until } from '../../helpers.ts';

const root = process.cwd();
// A project inside the repository (so `kube-lambda-webhooks` resolves) with extra functions
// that misbehave the ways Lambda functions do.
const work = mkdtempSync(join(root, '.klw-test-'));
cpSync(FIXTURE_FUNCTIONS, join(work, 'functions'), { recursive: true });
const addFunction = (name: string, body: string) => {
  mkdirSync(join(work, 'functions', name), { recursive: true });
  writeFileSync(join(work, 'functions', name, 'index.ts'), body);
};
addFunction(
  'sleepy',
  `import { allow, defineValidatingWebhook } from 'kube-lambda-webhooks';
export const webhook = defineValidatingWebhook({ name: 'sleepy', timeoutSeconds: 30, rules: [], validate: (r) => {
  // Blocks the thread for good, as an endless loop does but without using a core: only the Lambda timeout can end this.
  if (r.object?.metadata?.name === 'block') Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0);
  return allow();
} });
export const handler = webhook.handler;
export default webhook;
`,
);
addFunction(
  'crasher',
  `import { allow, defineValidatingWebhook } from 'kube-lambda-webhooks';
export const webhook = defineValidatingWebhook({ name: 'crasher', rules: [], validate: (r) => {
  if (r.object?.metadata?.name === 'exit') process.exit(3);
  return allow('alive');
} });
export const handler = webhook.handler;
export default webhook;
`,
);
addFunction(
  'hungry',
  `import { allow, defineValidatingWebhook } from 'kube-lambda-webhooks';
const kept: string[][] = [];
export const webhook = defineValidatingWebhook({ name: 'hungry', rules: [], lambda: { memorySize: 64 }, validate: (r) => {
  // Holds on to far more than its 64 MB.
  if (r.object?.metadata?.name === 'grow') for (let i = 0; i < 1e6; i++) kept.push(new Array(1000).fill('x'));
  return allow();
} });
export const handler = webhook.handler;
export default webhook;
`,
);
// What the watch tests edit: a handler without the toolkit, so each watch build bundles this file alone.
addFunction(
  'reloader',
  `export const handler = async () => ({ statusCode: 200, body: JSON.stringify({ response: { warnings: ['alive'] } }) });
export default { registration: { type: 'validating', name: 'reloader', path: '/reloader', webhookName: 'reloader.example.com', rules: [], namespaceSelector: {}, failurePolicy: 'Fail', matchPolicy: 'Equivalent', sideEffects: 'None', timeoutSeconds: 5, admissionReviewVersions: ['v1'], auth: 'none', lambda: {} }, handler };
`,
);
addFunction(
  'thrower',
  `export const handler = async () => { throw new TypeError('broken handler'); };
export default { registration: { type: 'validating', name: 'thrower', path: '/thrower', webhookName: 'thrower.example.com', rules: [], namespaceSelector: {}, failurePolicy: 'Fail', matchPolicy: 'Equivalent', sideEffects: 'None', timeoutSeconds: 5, admissionReviewVersions: ['v1'], auth: 'none', lambda: {} }, handler };
`,
);

// The functions' timeouts run out only when a test expires them: a cold start on a loaded
// machine takes as long as it takes.
const clock = new ManualTimer();
const never = new ManualTimer().timer;
let api: RunningApi;
let lambda: RunningLambda;
const logs: string[] = [];
before(async () => {
  api = await startApi({
    root: work,
    port: 0,
    stateDir: await withKeptCertificates(join(work, '.state')),
    log: (l) => logs.push(l),
    concurrency: 2,
    invocationTimer: clock.timer,
  });
  lambda = await startLambda({ root: work, port: 0, build: false, log: (l) => logs.push(l), invocationTimer: never });
});
after(async () => {
  await api?.close();
  await lambda?.close();
  rmSync(work, { recursive: true, force: true });
});

/** `/<name>?query` at the function's URL (with the local path secret when it checks one). */
const urlOf = (path: string, running: RunningApi = api) => {
  const [, name = '', query = ''] = /^\/([^/?]*)(.*)$/.exec(path) ?? [];
  return `${running.functionUrl(name)}${query}`;
};
const agent = () => new Agent({ ca: readFileSync(api.caPath), keepAlive: false });
function post(
  path: string,
  body: unknown,
  headers: Record<string, string> = { 'content-type': 'application/json' },
  method = 'POST',
): Promise<{ status: number; headers: Record<string, unknown>; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(urlOf(path), { method, headers, agent: agent() }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }),
      );
    });
    req.on('error', reject);
    req.end(typeof body === 'string' ? body : JSON.stringify(body));
  });
}
const pod = (name: string) =>
  admissionReview({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'default' },
    spec: { containers: [{ name: 'c', image: 'nginx:1.25' }] },
  });

describe('events built from HTTP requests', () => {
  const request = {
    method: 'POST',
    path: '/pod-policy',
    rawQuery: 'timeout=5s&x=1&x=2',
    headers: [
      ['Content-Type', 'application/json'],
      ['User-Agent', 'kube-apiserver-admission'],
      ['X-Multi', 'a'],
      ['X-Multi', 'b'],
      ['Cookie', 'a=1; b=2'],
    ] as Array<[string, string]>,
    body: '{"a":1}',
  };

  for (const format of ['rest', 'http', 'url', 'alb'] as const) {
    it(`has every field of the AWS example event (${format})`, () => {
      const example = fixture(`${format}/post`);
      const event = eventFromHttp(format, request) as Record<string, any>;
      const keys = (o: object) => Object.keys(o).sort();
      const optional = ['cookies', 'pathParameters', 'stageVariables', 'queryStringParameters'];
      assert.deepEqual(
        keys(event).filter((k) => !optional.includes(k)),
        keys(example).filter((k) => !optional.includes(k)),
      );
      for (const key of keys(example.requestContext)) {
        if (['authentication', 'authorizer', 'deploymentId'].includes(key)) continue;
        assert.ok(key in event.requestContext, `requestContext.${key} missing`);
      }
      if (example.requestContext.http)
        assert.deepEqual(keys(event.requestContext.http), keys(example.requestContext.http));
    });
  }

  it('keeps REST header case with multiValueHeaders and multi-value query strings', () => {
    const event = eventFromHttp('rest', request) as Record<string, any>;
    assert.equal(event.headers['X-Multi'], 'b');
    assert.deepEqual(event.multiValueHeaders['X-Multi'], ['a', 'b']);
    assert.deepEqual(event.queryStringParameters, { timeout: '5s', x: '2' });
    assert.deepEqual(event.multiValueQueryStringParameters, { timeout: ['5s'], x: ['1', '2'] });
    assert.equal(event.requestContext.httpMethod, 'POST');
    assert.equal(event.isBase64Encoded, false);
    assert.equal(event.body, '{"a":1}');
  });

  it('lower-cases and comma-joins 2.0 headers, moves cookies, joins query values', () => {
    const event = eventFromHttp('http', request) as Record<string, any>;
    assert.equal(event.headers['x-multi'], 'a,b');
    assert.equal(event.headers.cookie, undefined);
    assert.deepEqual(event.cookies, ['a=1', 'b=2']);
    assert.deepEqual(event.queryStringParameters, { timeout: '5s', x: '1,2' });
    assert.equal(event.rawQueryString, 'timeout=5s&x=1&x=2');
    assert.equal(event.routeKey, 'POST /pod-policy');
    assert.match(event.requestContext.domainName, /execute-api/);
    const url = eventFromHttp('url', request) as Record<string, any>;
    assert.equal(url.routeKey, '$default');
    assert.match(url.requestContext.domainName, /\.lambda-url\./);
  });

  it('base64-encodes bodies that are not text in 2.0 events', () => {
    const binary = eventFromHttp('http', {
      ...request,
      headers: [['Content-Type', 'application/octet-stream']],
    }) as Record<string, any>;
    assert.equal(binary.isBase64Encoded, true);
    assert.equal(Buffer.from(binary.body, 'base64').toString(), '{"a":1}');
  });

  it('turns results into responses by the source rules', () => {
    assert.equal(httpFromResult('rest', { body: 'x' }).status, 502);
    const bare = httpFromResult('http', { hello: 'world' });
    assert.equal(bare.status, 200);
    assert.equal(bare.body.toString(), '{"hello":"world"}');
    const full = httpFromResult('url', {
      statusCode: 201,
      headers: { A: 'b' },
      cookies: ['c=d'],
      body: Buffer.from('hi').toString('base64'),
      isBase64Encoded: true,
    });
    assert.deepEqual(
      [full.status, full.headers.a, full.headers['set-cookie'], full.body.toString()],
      [201, 'b', ['c=d'], 'hi'],
    );
  });
});

describe('klw local start-api', { timeout: PATIENCE_MS }, () => {
  it('serves HTTPS that verifies against the generated CA for localhost and 127.0.0.1', async () => {
    const result = await post('/pod-policy?timeout=5s', pod('web'));
    assert.equal(result.status, 200);
    assert.equal(JSON.parse(result.body).response.allowed, true);
    const byName = await new Promise<number>((resolve, reject) => {
      httpsRequest(
        urlOf('/pod-policy').replace('127.0.0.1', 'localhost'),
        { method: 'POST', headers: { 'content-type': 'application/json' }, agent: agent() },
        (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        },
      )
        .on('error', reject)
        .end(JSON.stringify(pod('x')));
    });
    assert.equal(byName, 200);
  });

  it('reuses the CA and certificate on the next start', async () => {
    const again = await ensureLocalCertificates(join(work, '.state'));
    assert.equal(again.created, false);
    assert.equal(again.caPem, readFileSync(api.caPath, 'utf8'));
  });

  it('writes manifests that point at it and trust its CA', () => {
    const docs = readFileSync(api.manifestsPath, 'utf8')
      .split(/^---$/m)
      .map((d) => parse(d));
    const validating = docs.find((d) => d.kind === 'ValidatingWebhookConfiguration');
    const hook = validating.webhooks.find((w: any) => w.name === 'pod-policy.webhooks.kube-lambda.dev');
    assert.equal(hook.clientConfig.url, `${api.url}/pod-policy/${api.pathSecret}`);
    assert.equal(Buffer.from(hook.clientConfig.caBundle, 'base64').toString(), readFileSync(api.caPath, 'utf8'));
    const crd = docs.find((d) => d.kind === 'CustomResourceDefinition');
    assert.equal(crd.spec.conversion.webhook.clientConfig.url, `${api.url}/crontab-conversion/${api.pathSecret}`);
  });

  it("passes the function's own 4xx answers through", async () => {
    assert.equal((await post('/pod-policy', pod('x'), { 'content-type': 'text/plain' })).status, 415);
    assert.equal((await post('/pod-policy', '', { 'content-type': 'application/json' }, 'GET')).status, 405);
  });

  it('answers 404 for a path with no function, and logs it, hiding what could be a secret', async () => {
    logs.length = 0;
    const result = await post('/nothing-here', {});
    assert.equal(result.status, 404);
    assert.deepEqual(JSON.parse(result.body), { message: 'Not Found' });
    await post('/pod-polcy/0123456789abcdefghijklmnopqrstuvwxyz', {});
    const lines = logs.map((l) => JSON.parse(l)).filter((l) => l.status === 404);
    assert.deepEqual(
      lines.map((l) => [l.path, l.reason]),
      [
        ['/nothing-here', 'no function at this path'],
        ['/pod-polcy/***', 'no function at this path'],
      ],
    );
    assert.ok(lines[0].functions.includes('pod-policy'), 'the line names the functions there are');
  });

  it('logs a cold start first, then warm invocations', async () => {
    logs.length = 0;
    await post('/crontab-conversion', fixture('reviews/conversion-v1'));
    await post('/crontab-conversion', fixture('reviews/conversion-v1'));
    const lines = logs
      .map((l) => JSON.parse(l))
      .filter((l) => l.msg === 'request' && l.function === 'crontab-conversion');
    assert.deepEqual(
      lines.map((l) => [l.status, l.cold]),
      [
        [200, true],
        [200, false],
      ],
    );
  });

  it('answers a function past its timeout with 504, replaces the worker and keeps serving', async () => {
    // The function never returns: an answer at all is the timeout's, run out here by the test.
    const answer = post('/sleepy', pod('block'));
    await clock.started();
    assert.deepEqual(clock.pending, [30_000], "one clock, of the function's 30 s timeout");
    clock.expireAll();
    const slow = await answer;
    assert.equal(slow.status, 504);
    assert.deepEqual(JSON.parse(slow.body), { message: 'Endpoint request timed out' });
    const next = await post('/sleepy', pod('fine'));
    assert.equal(next.status, 200);
  });

  it('answers a crashed worker with 502 and serves the next request from a new one', async () => {
    const crash = await post('/crasher', pod('exit'));
    assert.equal(crash.status, 502);
    const next = await post('/crasher', pod('fine'));
    assert.equal(next.status, 200);
    assert.deepEqual(JSON.parse(next.body).response.warnings, ['alive']);
  });

  it('answers a function past its memory size with 502 and serves the next request from a new worker', async () => {
    const big = await post('/hungry', pod('grow'));
    assert.equal(big.status, 502);
    assert.ok(
      logs.some((l) => /"function":"hungry".*"outcome":"crash".*(ERR_WORKER_OUT_OF_MEMORY|out of memory)/i.test(l)),
      'logged as out of memory',
    );
    assert.equal((await post('/hungry', pod('small'))).status, 200);
  });

  it('answers a handler that throws with 502, as API Gateway does', async () => {
    const result = await post('/thrower', pod('x'));
    assert.equal(result.status, 502);
    assert.deepEqual(JSON.parse(result.body), { message: 'Internal server error' });
  });

  it('serves waiting invocations first come, first served', async () => {
    const pool = new FunctionPool({
      ...runtimeFor(work, api.project.registration('pod-policy')!),
      concurrency: 1,
      timer: never,
    });
    try {
      const order: number[] = [];
      await Promise.all(
        Array.from({ length: 24 }, (_, i) =>
          pool.invoke(toEvent(pod(`p${i}`), { path: '/pod-policy' })).then(() => order.push(i)),
        ),
      );
      assert.deepEqual(
        order,
        Array.from({ length: 24 }, (_, i) => i),
      );
      assert.equal(pool.size, 1, 'one worker, as asked');
    } finally {
      await pool.close();
    }
  });

  it('swaps workers on reload without dropping in-flight requests', async () => {
    const inFlight = post('/sleepy', pod('fine'));
    api.pools.get('sleepy')!.swap();
    assert.equal((await inFlight).status, 200);
    assert.equal((await post('/sleepy', pod('fine'))).status, 200);
  });
});

describe('klw local start-api --event-format', { timeout: PATIENCE_MS }, () => {
  for (const format of ['rest', 'url', 'alb'] as const) {
    it(`serves ${format} events over HTTPS`, async () => {
      const other = await startApi({
        root: work,
        port: 0,
        stateDir: join(work, '.state'),
        format,
        build: false,
        log: () => {},
        functionLog: () => {},
        invocationTimer: never,
      });
      try {
        const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
          httpsRequest(
            `${other.functionUrl('pod-policy')}?timeout=5s`,
            { method: 'POST', headers: { 'content-type': 'application/json' }, agent: agent() },
            (r) => {
              let b = '';
              r.on('data', (c) => (b += c));
              r.on('end', () => resolve({ status: r.statusCode ?? 0, body: b }));
            },
          )
            .on('error', reject)
            .end(JSON.stringify(pod('web')));
        });
        assert.equal(answer.status, 200);
        assert.equal(JSON.parse(answer.body).response.allowed, true);
      } finally {
        await other.close();
      }
    });
  }
});

describe('klw local start-api --watch', { timeout: PATIENCE_MS }, () => {
  it('rebuilds on change and serves the new code', async () => {
    // A project of the one function it edits, with its bundle: --watch builds every function it
    // watches once more as it starts, and this test is about the one that changes.
    const project = join(work, 'watched');
    for (const dir of ['functions', 'dist/functions'])
      cpSync(join(work, dir, 'reloader'), join(project, dir, 'reloader'), { recursive: true });
    const bundle = join(project, 'dist', 'functions', 'reloader', 'index.mjs');
    const prebuilt = statSync(bundle).ino;
    const watched = await startApi({
      root: project,
      port: 0,
      stateDir: join(work, '.state'),
      watch: true,
      build: false,
      log: () => {},
      invocationTimer: never,
    });
    try {
      // Edited once the watch's first build (done before startApi returns) wrote its bundle.
      await until(() => statSync(bundle).ino !== prebuilt, 'the first watch build');
      const file = join(project, 'functions', 'reloader', 'index.ts');
      writeFileSync(file, readFileSync(file, 'utf8').replace("'alive'", "'reloaded'"));
      let warnings: string[] = [];
      const ask = async () => {
        const res = await new Promise<string>((resolve, reject) => {
          httpsRequest(
            watched.functionUrl('reloader'),
            { method: 'POST', headers: { 'content-type': 'application/json' }, agent: agent() },
            (r) => {
              let b = '';
              r.on('data', (c) => (b += c));
              r.on('end', () => resolve(b));
            },
          )
            .on('error', reject)
            .end(JSON.stringify(pod('fine')));
        });
        warnings = JSON.parse(res).response.warnings;
        return warnings[0] === 'reloaded';
      };
      await until(ask, 'the rebuilt function to answer');
      assert.deepEqual(warnings, ['reloaded']);
    } finally {
      await watched.close();
    }
  });

  it('serves an edit made before it watched once its first build is done', async () => {
    // The bundle on disk is older than the source: a worker started now runs the old code, and
    // watching must swap it for the first build's, whatever moment that build ends at.
    const project = join(work, 'watched-early');
    for (const dir of ['functions', 'dist/functions'])
      cpSync(join(work, dir, 'reloader'), join(project, dir, 'reloader'), { recursive: true });
    const file = join(project, 'functions', 'reloader', 'index.ts');
    writeFileSync(file, readFileSync(file, 'utf8').replace("'alive'", "'early'"));
    const local = await LocalProject.open({
      root: project,
      build: false,
      extraEnv: { KLW_PATH_SECRET: 'early-watch-path-secret-0123' },
      functionLog: () => {},
      log: () => {},
      invocationTimer: never,
    });
    const warnings = async () => {
      const event = toEvent(pod('fine'), { path: '/reloader/early-watch-path-secret-0123' });
      const answer = await local.pools.get('reloader')!.invoke(event);
      assert.equal(answer.kind, 'result');
      return JSON.parse((answer as { result: { body: string } }).result.body).response.warnings;
    };
    try {
      assert.deepEqual(await warnings(), ['alive'], 'a worker runs the bundle built before the edit');
      await local.watch();
      assert.deepEqual(await warnings(), ['early']);
    } finally {
      await local.close();
    }
  });
});

describe('klw local start-lambda', { timeout: PATIENCE_MS }, () => {
  const client = () =>
    new LambdaClient({
      endpoint: lambda.endpoint,
      region: 'us-east-1',
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    });

  it('answers InvokeCommand from @aws-sdk/client-lambda with the function result', async () => {
    const out = await client().send(
      new InvokeCommand({
        FunctionName: 'pod-policy',
        Payload: Buffer.from(JSON.stringify(toEvent(pod('web'), { path: `/pod-policy/${lambda.pathSecret}` }))),
      }),
    );
    assert.equal(out.StatusCode, 200);
    assert.equal(out.FunctionError, undefined);
    const result = JSON.parse(Buffer.from(out.Payload!).toString());
    assert.equal(result.statusCode, 200);
    assert.equal(JSON.parse(result.body).response.allowed, true);
  });

  it('reports a function error with X-Amz-Function-Error', async () => {
    const out = await client().send(new InvokeCommand({ FunctionName: 'thrower', Payload: Buffer.from('{}') }));
    assert.equal(out.FunctionError, 'Unhandled');
    const error = JSON.parse(Buffer.from(out.Payload!).toString());
    assert.equal(error.errorType, 'TypeError');
    assert.equal(error.errorMessage, 'broken handler');
  });

  it('accepts Event invocations with 202 and DryRun with 204', async () => {
    const event = await client().send(
      new InvokeCommand({ FunctionName: 'pod-policy', InvocationType: 'Event', Payload: Buffer.from('{}') }),
    );
    assert.equal(event.StatusCode, 202);
    const dry = await client().send(new InvokeCommand({ FunctionName: 'pod-policy', InvocationType: 'DryRun' }));
    assert.equal(dry.StatusCode, 204);
  });

  it('answers an unknown function with ResourceNotFoundException', async () => {
    await assert.rejects(
      client().send(new InvokeCommand({ FunctionName: 'nope' })),
      (err: Error) => err.name === 'ResourceNotFoundException',
    );
  });
});

describe('klw local invoke', { timeout: PATIENCE_MS }, () => {
  it('runs a bundle once with a wrapped review', async () => {
    const outcome = await localInvoke({
      root: work,
      name: 'pod-policy',
      review: JSON.stringify(pod('web')),
      functionLog: () => {},
      invocationTimer: never,
    });
    assert.equal(outcome.kind, 'result');
    const result = (outcome as { result: { body: string } }).result;
    assert.equal(JSON.parse(result.body).response.allowed, true);
  });

  it('runs a given event as it is', async () => {
    const outcome = await localInvoke({
      root: work,
      name: 'pod-policy',
      event: JSON.stringify({ not: 'an event' }),
      functionLog: () => {},
      invocationTimer: never,
    });
    assert.equal(outcome.kind, 'result');
    assert.equal((outcome as { result: { statusCode: number } }).result.statusCode, 400);
  });
});
