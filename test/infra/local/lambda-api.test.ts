// The emulator's HTTP servers against hostile and broken clients: oversized, slow and
// stalled uploads, clients that never read, malformed paths, functions past their memory.
// Raw sockets on 127.0.0.1; every assertion is on behaviour (status, closed sockets,
// bounded memory), none on speed. The functions' timeouts run on a ManualTimer and never run
// out, so a slow cold start cannot turn an answer into a 504.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { connect as netConnect, type Socket } from 'node:net';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { connect as tlsConnect, type TLSSocket } from 'node:tls';
import { after, before, describe, it } from 'node:test';
import { InvokeCommand, LambdaClient } from '@aws-sdk/client-lambda';
import { startApi, type RunningApi } from '../../../infra/local/api.ts';
import { withKeptCertificates } from '../../kept-certs.ts';
import { MAX_PAYLOAD_BYTES, startLambda, type RunningLambda } from '../../../infra/local/lambda-api.ts';
import { ManualTimer, PATIENCE_MS, until } from '../../helpers.ts';

const root = process.cwd();
const work = mkdtempSync(join(root, '.klw-test-server-'));
const addFunction = (name: string, body: string) => {
  mkdirSync(join(work, 'functions', name), { recursive: true });
  writeFileSync(join(work, 'functions', name, 'index.ts'), body);
};
const registration = (name: string, extra = '') =>
  `export default defineValidatingWebhook({ name: '${name}', rules: [], auth: 'none', ${extra} validate: () => allow() });`;
addFunction(
  'echo',
  `import { allow, defineValidatingWebhook } from 'kube-lambda-webhooks';
export const handler = async (event: { body?: string }) => {
  const body = event.body ?? '';
  // 32 MB: more than loopback socket buffers hold, so a client that does not read stalls it.
  if (body.includes('big')) return { statusCode: 200, body: 'x'.repeat(32 * 1024 * 1024) };
  return { statusCode: 200, body: 'ok:' + body.length };
};
${registration('echo')}
`,
);
addFunction(
  'hog',
  `import { allow, defineValidatingWebhook } from 'kube-lambda-webhooks';
export const handler = async (event: { body?: string; grow?: boolean }) => {
  // Holds 400 MB of Buffers (outside the V8 heap) and never returns: only the memory watch ends it.
  if (event.grow || (event.body ?? '').includes('grow')) { const kept: Buffer[] = []; for (let i = 0; i < 40; i++) kept.push(Buffer.alloc(10 * 1024 * 1024, 1)); await new Promise(() => kept); }
  return { statusCode: 200, body: 'fine' };
};
${registration('hog', 'lambda: { memorySize: 256 },')}
`,
);

/**
 * start-api's limits, short so misbehaving clients meet them within seconds, yet far past what
 * a well-behaved client on loopback needs even on a loaded machine (its whole request is
 * written at once). The send limit only ever meets a client that stops reading.
 */
const timeouts = { headersMs: 5_000, requestMs: 5_000, idleMs: 5_000, sendMs: 1_000 };
const never = new ManualTimer();
const apiLog: string[] = [];
let api: RunningApi;
let lambda: RunningLambda;
before(async () => {
  api = await startApi({
    root: work,
    port: 0,
    stateDir: await withKeptCertificates(join(work, '.state')),
    log: (l) => apiLog.push(l),
    functionLog: () => {},
    concurrency: 4,
    timeouts,
    invocationTimer: never.timer,
  });
  lambda = await startLambda({ root: work, port: 0, build: false, log: () => {}, invocationTimer: never.timer });
});
after(async () => {
  await api?.close();
  await lambda?.close();
  rmSync(work, { recursive: true, force: true });
});

/** A TLS connection to the emulator, verified against its CA. */
function tls(): Promise<TLSSocket> {
  return new Promise((resolve, reject) => {
    const socket = tlsConnect(
      { host: '127.0.0.1', port: api.port, ca: readFileSync(api.caPath), servername: 'localhost' },
      () => resolve(socket),
    );
    socket.once('error', reject);
  });
}

/** Resolves with everything read once the server closes the connection (or rejects after `guardMs`, far past any limit). */
function untilClosed(socket: Socket, guardMs = PATIENCE_MS): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const guard = setTimeout(() => reject(new Error('the server kept the connection open')), guardMs);
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('error', () => {}); // a reset also closes
    socket.once('close', () => {
      clearTimeout(guard);
      resolve(Buffer.concat(chunks).toString('latin1'));
    });
  });
}

async function healthy(): Promise<void> {
  const socket = await tls();
  const done = untilClosed(socket);
  socket.write(
    'POST /echo HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}',
  );
  assert.match(await done, /^HTTP\/1\.1 200 [\s\S]*ok:2$/);
}

describe('start-api against slow and huge clients', { timeout: PATIENCE_MS }, () => {
  it('refuses a content-length past the limit with 413 before any of the body is sent, and closes', async () => {
    const socket = await tls();
    const done = untilClosed(socket);
    socket.write(
      `POST /echo HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: ${100 * 1024 * 1024}\r\n\r\n`,
    );
    const answer = await done;
    assert.match(answer, /^HTTP\/1\.1 413 /);
    assert.match(answer, /connection: close/i);
    await healthy();
  });

  it('refuses a chunked body as soon as it passes the limit, keeping none of it', async () => {
    const socket = await tls();
    const done = untilClosed(socket);
    const before = process.memoryUsage.rss();
    socket.write(
      'POST /echo HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n',
    );
    const chunk = Buffer.alloc(1024 * 1024, 'a');
    let sent = 0;
    let closed = false;
    void done.then(() => (closed = true));
    // Up to 200 MiB, unless the server closes first.
    while (!closed && sent < 200 && !socket.destroyed) {
      socket.write(`${chunk.length.toString(16)}\r\n`);
      socket.write(chunk);
      const ok = socket.write('\r\n');
      sent++;
      if (!ok) await new Promise((r) => (socket.once('drain', r), socket.once('close', r)));
    }
    const answer = await done;
    assert.match(answer, /^HTTP\/1\.1 413 /);
    assert.ok(sent < 200, 'closed before the client sent 200 MiB');
    assert.ok(process.memoryUsage.rss() - before < 100 * 1024 * 1024, 'memory stayed bounded');
    await healthy();
  });

  it('drops a client that never reads its answer', async () => {
    const socket = await tls();
    let received = 0;
    let closed = false;
    socket.on('error', () => {});
    socket.once('close', () => (closed = true));
    // Take the first bytes only, then stop reading.
    socket.on('data', (c: Buffer) => {
      received += c.length;
      socket.pause();
    });
    const answered = apiLog.length;
    socket.write(
      'POST /echo HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 5\r\n\r\n"big"',
    );
    // The request line is logged once the answer is written and its send limit set: a timer
    // set after that for longer fires after the server's, whatever the machine's speed. Then
    // read all there is: a server that gave up sent less than the whole answer and closed.
    await until(
      () => apiLog.slice(answered).some((l) => /"msg":"request","function":"echo"/.test(l)),
      'the answer to be written',
    );
    await sleep(timeouts.sendMs + 1);
    socket.removeAllListeners('data');
    socket.on('data', (c: Buffer) => (received += c.length));
    socket.resume();
    await until(() => closed, 'the server to close the connection');
    assert.ok(received < 32 * 1024 * 1024, `the client took ${received} bytes, not the whole answer`);
    await healthy();
  });

  it('routes request targets a URL parser refuses (//%zz/x, //[/x, //a:b/x) to 404 like any unknown path, not 5xx', async () => {
    for (const target of ['//%zz/x', '//[/x', '//a:b/echo', '/%zz', '/echo%']) {
      const socket = await tls();
      const done = untilClosed(socket);
      socket.write(
        `POST ${target} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}`,
      );
      assert.match(await done, /^HTTP\/1\.1 404 /, target);
    }
    await healthy();
  });

  it("answers paths under an auth: 'none' function's route with API Gateway's 404, invoking nothing", async () => {
    // Its route is POST /<name> (a trailing slash is ignored, as API Gateway does); nothing under it is routed.
    const answer = async (target: string) => {
      const socket = await tls();
      const done = untilClosed(socket);
      socket.write(
        `POST ${target} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}`,
      );
      return done;
    };
    const before = apiLog.length;
    for (const target of ['/echo/anything', '/echo/a/b', '/echo//', '/echo/x?y=1', `/echo/${'s'.repeat(43)}`]) {
      const reply = await answer(target);
      assert.match(reply, /^HTTP\/1\.1 404 /, target);
      assert.match(reply, /\{"message":"Not Found"\}$/, target);
    }
    const lines = apiLog.slice(before).map((l) => JSON.parse(l));
    assert.equal(lines.length, 5);
    assert.ok(lines.every((l) => l.status === 404 && l.reason === 'no function at this path' && !l.function));
    for (const target of ['/echo', '/echo/', '/echo?x=1'])
      assert.match(await answer(target), /^HTTP\/1\.1 200 [\s\S]*ok:2$/, target);
  });

  it('answers a function past its memory size with 502, logs Runtime.OutOfMemory and keeps serving', async () => {
    const socket = await tls();
    const done = untilClosed(socket);
    socket.write(
      'POST /hog HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 6\r\nConnection: close\r\n\r\n"grow"',
    );
    const answer = await done;
    assert.match(answer, /^HTTP\/1\.1 502 /);
    assert.match(answer, /\{"message":"Internal server error"\}$/);
    assert.ok(
      apiLog.some((l) => /"function":"hog".*"outcome":"crash".*Runtime\.OutOfMemory/.test(l)),
      apiLog.join('\n'),
    );
    await healthy();
  });
});

// Each of these waits for a limit to pass: run side by side, on connections of their own.
describe('start-api against stalled clients', { concurrency: true, timeout: PATIENCE_MS }, () => {
  it('drops a client that never finishes its headers', async () => {
    const socket = await tls();
    const done = untilClosed(socket);
    socket.write('POST /echo HTTP/1.1\r\nHost: localhost\r\n');
    assert.match(await done, /^(|HTTP\/1\.1 408 [\s\S]*)$/, 'closed without an answer, or with 408');
    await healthy();
  });

  it('drops a client that stops sending its body', async () => {
    const socket = await tls();
    const done = untilClosed(socket);
    socket.write(
      'POST /echo HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"a":',
    );
    const answer = await done;
    assert.doesNotMatch(answer, /^HTTP\/1\.1 200/);
    await healthy();
  });

  it('drops a client that connects and never completes the TLS handshake', async () => {
    const socket = netConnect(api.port, '127.0.0.1');
    await new Promise((r) => socket.once('connect', r));
    await untilClosed(socket);
    await healthy();
  });
});

describe('start-lambda limits', { timeout: PATIENCE_MS }, () => {
  const client = () =>
    new LambdaClient({
      endpoint: lambda.endpoint,
      region: 'us-east-1',
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    });
  const post = (
    path: string,
    body: Buffer | string,
  ): Promise<{ status: number; headers: Record<string, unknown>; body: string }> =>
    new Promise((resolve, reject) => {
      const req = httpRequest(
        `${lambda.endpoint}${path}`,
        { method: 'POST', headers: { 'content-type': 'application/json' } },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () =>
            resolve({
              status: res.statusCode ?? 0,
              headers: res.headers,
              body: Buffer.concat(chunks).toString('utf8'),
            }),
          );
        },
      );
      req.on('error', reject);
      req.end(body);
    });

  it('answers a malformed %-escape in the function name with 400, not 500', async () => {
    const res = await post('/2015-03-31/functions/%E0%A4%A/invocations', '{}');
    assert.equal(res.status, 400);
    assert.equal(res.headers['x-amzn-errortype'], 'InvalidParameterValueException');
    const alone = await post('/2015-03-31/functions/echo%/invocations', '{}');
    assert.equal(alone.status, 400);
  });

  it('answers request targets a URL parser refuses as an unknown operation (404), not 500', async () => {
    const { port } = new URL(lambda.endpoint);
    for (const target of ['//%zz/x', '//[/x', '//a:b/2015-03-31/functions/echo/invocations']) {
      const socket = netConnect({ host: '127.0.0.1', port: Number(port) });
      const done = untilClosed(socket);
      socket.write(
        `POST ${target} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}`,
      );
      const answer = await done;
      assert.match(answer, /^HTTP\/1\.1 404 /, target);
      assert.match(answer, /x-amzn-errortype: UnknownOperationException/i, target);
    }
    assert.equal((await post('/2015-03-31/functions/echo/invocations', '{}')).status, 200);
  });

  it("takes a payload of exactly 6 MB and refuses one byte more, with Lambda's message", async () => {
    assert.equal(MAX_PAYLOAD_BYTES, 6_291_456);
    const json = (size: number) => `"${'a'.repeat(size - 2)}"`;
    const fits = await post('/2015-03-31/functions/echo/invocations', json(MAX_PAYLOAD_BYTES));
    assert.equal(fits.status, 200);
    const over = await post('/2015-03-31/functions/echo/invocations', json(MAX_PAYLOAD_BYTES + 1));
    assert.equal(over.status, 413);
    assert.equal(over.headers['x-amzn-errortype'], 'RequestTooLargeException');
    assert.equal(
      JSON.parse(over.body).message,
      'Request must be smaller than 6291456 bytes for the InvokeFunction operation',
    );
  });

  it('answers a function past its memory size with FunctionError Runtime.OutOfMemory', async () => {
    const out = await client().send(
      new InvokeCommand({ FunctionName: 'hog', Payload: Buffer.from(JSON.stringify({ grow: true })) }),
    );
    assert.equal(out.FunctionError, 'Unhandled');
    const error = JSON.parse(Buffer.from(out.Payload!).toString());
    assert.equal(error.errorType, 'Runtime.OutOfMemory');
    assert.match(error.errorMessage, /Runtime exited with error: signal: killed/);
    const next = await client().send(new InvokeCommand({ FunctionName: 'hog', Payload: Buffer.from('{}') }));
    assert.equal(next.FunctionError, undefined);
  });
});
