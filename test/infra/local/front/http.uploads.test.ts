// Uploads the emulator's servers refuse or hold: a body one byte over the limit always gets its
// 413 (never a reset while the client is still sending), and the bytes of unfinished uploads are
// capped across all connections. Real sockets on 127.0.0.1; generous client timeouts, so that
// nothing here depends on how fast the machine is.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { Agent, request as httpsRequest } from 'node:https';
import { connect as netConnect, type Socket } from 'node:net';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { connect as tlsConnect } from 'node:tls';
import { after, before, describe, it } from 'node:test';
import { MAX_REQUEST_BYTES } from '../../../../infra/local/front/api-request.ts';
import { startApi, type RunningApi } from '../../../../infra/local/api.ts';
import { BodyBudget, DEFAULT_MAX_BUFFERED_BYTES } from '../../../../infra/local/front/http.ts';
import { MAX_PAYLOAD_BYTES, startLambda, type RunningLambda } from '../../../../infra/local/lambda-api.ts';
import { withKeptCertificates } from '../../../kept-certs.ts';

const work = mkdtempSync(join(process.cwd(), '.klw-test-uploads-'));
mkdirSync(join(work, 'functions', 'echo'), { recursive: true });
writeFileSync(
  join(work, 'functions', 'echo', 'index.ts'),
  `import { allow, defineValidatingWebhook } from 'kube-lambda-webhooks';
export const handler = async (event: { body?: string }) =>
  ({ statusCode: 200, body: 'ok:' + (event?.body ?? JSON.stringify(event)).length });
export default defineValidatingWebhook({ name: 'echo', rules: [], auth: 'none', validate: () => allow() });
`,
);

// Far past anything a test waits for: no client here is dropped for being slow.
const timeouts = { headersMs: 120_000, requestMs: 120_000, idleMs: 120_000, sendMs: 120_000 };
/** The small budget of the `tight` server (4 MiB). */
const TIGHT = 4 * 1024 * 1024;
const MiB = 1024 * 1024;
let api: RunningApi;
let lambda: RunningLambda;
let tight: RunningLambda;
before(async () => {
  const quiet = { log: () => {}, functionLog: () => {} };
  const common = {
    root: work,
    port: 0,
    stateDir: await withKeptCertificates(join(work, '.state')),
    ...quiet,
    concurrency: 1,
    timeouts,
  };
  api = await startApi(common);
  lambda = await startLambda({ ...common, build: false });
  tight = await startLambda({ ...common, build: false, maxBufferedBytes: TIGHT });
});
after(async () => {
  await api?.close();
  await lambda?.close();
  await tight?.close();
  rmSync(work, { recursive: true, force: true });
});

const INVOKE = '/2015-03-31/functions/echo/invocations';
/** One chunk of a chunked body. */
const chunked = (data: Buffer) =>
  Buffer.concat([Buffer.from(`${data.length.toString(16)}\r\n`), data, Buffer.from('\r\n')]);
type Outcome = { status: number; body: string } | { error: string };

/** POSTs a whole body with Node's client; the outcome is the status, or the error the client saw instead. */
function post(url: string, body: Buffer, https = false): Promise<Outcome> {
  return new Promise((resolve) => {
    const agent = https ? { agent: new Agent({ ca: readFileSync(api.caPath), keepAlive: false }) } : {};
    const options = { method: 'POST', headers: { 'content-type': 'application/json' }, ...agent };
    const req = (https ? httpsRequest : httpRequest)(url, options, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', (err: NodeJS.ErrnoException) => resolve({ error: err.code ?? err.message }));
    });
    req.on('error', (err: NodeJS.ErrnoException) => resolve({ error: err.code ?? err.message }));
    req.end(body);
  });
}

/** A raw connection to a server (TLS for start-api), and the first status it answers with, if any. */
async function open(server: 'api' | RunningLambda): Promise<{ socket: Socket; status: Promise<number | undefined> }> {
  const socket: Socket =
    server === 'api'
      ? await new Promise((resolve, reject) => {
          const options = { host: '127.0.0.1', port: api.port, ca: readFileSync(api.caPath), servername: 'localhost' };
          const s = tlsConnect(options, () => resolve(s));
          s.once('error', reject);
        })
      : await new Promise((resolve, reject) => {
          const s = netConnect(server.port, '127.0.0.1', () => resolve(s));
          s.once('error', reject);
        });
  socket.on('error', () => {});
  const status = new Promise<number | undefined>((resolve) => {
    let seen = '';
    socket.on('data', (c: Buffer) => {
      seen += c.toString('latin1');
      const m = /^HTTP\/1\.1 (\d{3}) /.exec(seen);
      if (m) resolve(Number(m[1]));
    });
    socket.once('close', () => resolve(undefined));
  });
  return { socket, status };
}

/** Resolves once `count` of the promises have settled with a value other than undefined (rejects after `guardMs`). */
async function settledCount<T>(promises: Array<Promise<T | undefined>>, count: number, guardMs = 90_000): Promise<T[]> {
  const got: T[] = [];
  return new Promise((resolve, reject) => {
    const guard = setTimeout(() => reject(new Error(`only ${got.length} of ${count} expected answers came`)), guardMs);
    for (const p of promises)
      void p.then((v) => {
        if (v === undefined) return;
        got.push(v);
        if (got.length === count) {
          clearTimeout(guard);
          resolve(got);
        }
      });
  });
}

/** Waits until a budget holds nothing (the server has let go of every body), or fails after `guardMs`. */
async function drained(budget: BodyBudget, guardMs = 60_000): Promise<void> {
  const until = Date.now() + guardMs;
  while (budget.held !== 0) {
    if (Date.now() > until) assert.fail(`the server still holds ${budget.held} bytes`);
    await sleep(20);
  }
}

/** What a client that sends a whole request saw: the status, and the socket's error. */
type Whole = { status?: number; error?: string };

/**
 * Sends a whole request at once, as a client that writes before it reads does, and reads until the
 * server closes: the first status line seen, and the error the socket met (EPIPE when the server
 * closed while the body was still being sent, ECONNRESET when it reset the connection), if any.
 */
async function sendWhole(server: 'api' | RunningLambda, path: string, body: Buffer): Promise<Whole> {
  const { socket, status } = await open(server);
  let error: string | undefined;
  socket.on('error', (err: NodeJS.ErrnoException) => (error ??= err.code ?? err.message));
  socket.write(`POST ${path} HTTP/1.1\r\nHost: localhost\r\nContent-Length: ${body.length}\r\n\r\n`);
  socket.end(body);
  await new Promise((resolve) => socket.once('close', resolve));
  const seen = await status;
  return { ...(seen !== undefined ? { status: seen } : {}), ...(error ? { error } : {}) };
}

describe('an upload one byte over the limit', () => {
  it('start-lambda answers 6 MB + 1 byte with 413 every time, and reads it all before closing (40 tries)', async () => {
    const over = Buffer.alloc(MAX_PAYLOAD_BYTES + 1, 'a');
    const outcomes: Array<{ status?: number; error?: string }> = [];
    for (let i = 0; i < 40; i++) outcomes.push(await sendWhole(lambda, INVOKE, over));
    const wrong = outcomes.filter((o) => o.status !== 413 || o.error !== undefined);
    assert.deepEqual(wrong, [], `${wrong.length} of 40 uploads did not get a clean 413`);
    assert.equal(lambda.bodies.held, 0);
  });

  it("start-lambda: Node's own client gets 413 and Lambda's message for 6 MB + 1 byte (20 tries)", async () => {
    const over = Buffer.alloc(MAX_PAYLOAD_BYTES + 1, 'a');
    for (let i = 0; i < 20; i++) {
      const out = await post(`${lambda.endpoint}${INVOKE}`, over);
      assert.ok('status' in out && out.status === 413, `try ${i}: ${JSON.stringify(out)}`);
      assert.match(out.body, /Request must be smaller than 6291456 bytes/);
    }
  });

  it('start-lambda answers a chunked upload past the limit with 413 every time (20 tries)', async () => {
    // One framed chunk of 1 MiB, written 7 times a try.
    const chunk = chunked(Buffer.alloc(MiB, 'a'));
    for (let i = 0; i < 20; i++) {
      const { socket, status } = await open(lambda);
      socket.write(`POST ${INVOKE} HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n`);
      for (let n = 0; n < 7; n++) socket.write(chunk);
      socket.write('0\r\n\r\n');
      assert.equal(await status, 413, `try ${i}`);
      socket.destroy();
    }
  });

  it('start-api answers 10 MB + 1 byte with 413 every time, and reads it all before closing (15 tries)', async () => {
    const over = Buffer.alloc(MAX_REQUEST_BYTES + 1, 'a');
    const outcomes: Array<{ status?: number; error?: string }> = [];
    for (let i = 0; i < 15; i++) outcomes.push(await sendWhole('api', '/echo', over));
    const wrong = outcomes.filter((o) => o.status !== 413 || o.error !== undefined);
    assert.deepEqual(wrong, [], `${wrong.length} of 15 uploads did not get a clean 413`);
    assert.equal(api.bodies.held, 0);
  });
});

describe('the bytes of unfinished uploads are capped across connections', () => {
  it('has a default of 64 MiB and refuses a budget that is no positive whole number', () => {
    assert.equal(DEFAULT_MAX_BUFFERED_BYTES, 64 * MiB);
    for (const bad of [0, -1, 1.5, NaN, Infinity]) assert.throws(() => new BodyBudget(bad), RangeError);
  });

  it('start-api: 60 connections announcing 9 MiB each and stalling hold at most the cap; others get 503', async () => {
    const size = 9 * MiB;
    const fits = Math.floor(DEFAULT_MAX_BUFFERED_BYTES / size);
    const conns = await Promise.all(Array.from({ length: 60 }, () => open('api')));
    for (const { socket } of conns) {
      socket.write(`POST /echo HTTP/1.1\r\nHost: localhost\r\nContent-Length: ${size}\r\n\r\n`);
      socket.write(Buffer.alloc(64 * 1024, 'a'));
    }
    const refused = await settledCount(
      conns.map((c) => c.status),
      60 - fits,
    );
    assert.ok(
      refused.every((s) => s === 503),
      `statuses ${refused}`,
    );
    assert.equal(api.bodies.held, fits * size);
    assert.ok(api.bodies.peak <= DEFAULT_MAX_BUFFERED_BYTES);
    for (const { socket } of conns) socket.destroy();
    await drained(api.bodies);
    const out = await post(`${api.url}/echo`, Buffer.from('{}'), true);
    assert.ok('status' in out && out.status === 200, JSON.stringify(out));
  });

  it('start-lambda: chunked uploads that stall after 1 MiB each hold at most the cap; the rest get 503', async () => {
    const conns = await Promise.all(Array.from({ length: 10 }, () => open(tight)));
    const chunk = chunked(Buffer.alloc(MiB, 'a'));
    for (const { socket } of conns) {
      socket.write(`POST ${INVOKE} HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n`);
      socket.write(chunk);
    }
    // At most 4 whole MiB fit: at least 6 uploads are refused, each as soon as its bytes do not fit.
    const refused = await settledCount(
      conns.map((c) => c.status),
      6,
    );
    assert.ok(
      refused.every((s) => s === 503),
      `statuses ${refused}`,
    );
    const { held, peak } = tight.bodies;
    assert.ok(held <= TIGHT && peak <= TIGHT, `held ${held}, peak ${peak}`);
    for (const { socket } of conns) socket.destroy();
    await drained(tight.bodies);
  });

  it('start-lambda: a body announced larger than the whole cap gets 413, one that does not fit now 503', async () => {
    const whole = await open(tight);
    whole.socket.write(`POST ${INVOKE} HTTP/1.1\r\nHost: x\r\nContent-Length: ${TIGHT + 1}\r\n\r\n`);
    assert.equal(await whole.status, 413);
    whole.socket.destroy();
    const holder = await open(tight);
    holder.socket.write(`POST ${INVOKE} HTTP/1.1\r\nHost: x\r\nContent-Length: ${3 * MiB}\r\n\r\n"`);
    const other = await open(tight);
    // The holder's announced length is taken as soon as its request arrives; wait for that.
    for (let i = 0; i < 3000 && tight.bodies.held === 0; i++) await sleep(20);
    assert.equal(tight.bodies.held, 3 * MiB);
    other.socket.write(`POST ${INVOKE} HTTP/1.1\r\nHost: x\r\nContent-Length: ${2 * MiB}\r\n\r\n`);
    assert.equal(await other.status, 503);
    other.socket.destroy();
    holder.socket.destroy();
    await drained(tight.bodies);
  });

  it('a trickling client holds only its own bytes; others are served meanwhile; its body is taken', async () => {
    const body = `"${'a'.repeat(200)}"`;
    const trickler = await open(tight);
    trickler.socket.write(`POST ${INVOKE} HTTP/1.1\r\nHost: x\r\nContent-Length: ${body.length}\r\n\r\n`);
    let answered = false;
    void trickler.status.then(() => (answered = true));
    for (let i = 0; i < 100; i++) {
      trickler.socket.write(body[i]!);
      // Every tenth byte, another client is served in full while the trickler is still sending.
      if (i % 10 === 0) {
        const out = await post(`${tight.endpoint}${INVOKE}`, Buffer.from('{"x":1}'));
        assert.ok('status' in out && out.status === 200, JSON.stringify(out));
      }
      await sleep(5);
    }
    assert.equal(answered, false, 'the trickler is still unanswered');
    assert.equal(tight.bodies.held, body.length);
    trickler.socket.write(body.slice(100));
    assert.equal(await trickler.status, 200);
    await drained(tight.bodies);
  });

  it('a client that goes away mid-upload gives its bytes back', async () => {
    const { socket } = await open(tight);
    socket.write(`POST ${INVOKE} HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n`);
    socket.write(`100000\r\n${'a'.repeat(0x80000)}`);
    for (let i = 0; i < 3000 && tight.bodies.held < 0x80000; i++) await sleep(20);
    assert.equal(tight.bodies.held, 0x80000);
    socket.destroy();
    await drained(tight.bodies);
  });
});
