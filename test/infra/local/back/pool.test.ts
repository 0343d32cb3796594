// The emulator's execution environments: dispatch, isolation and limits, with plain bundles
// (no build) so each behaviour is the only thing under test. Timeouts run on a ManualTimer: an
// invocation times out when the test says so, never because the machine is slow.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import type { FunctionRuntime } from '../../../../infra/local/back/environment.ts';
import { FunctionPool, realTimer } from '../../../../infra/local/back/pool.ts';
import { ManualTimer, PATIENCE_MS } from '../../../helpers.ts';

const dir = mkdtempSync(join(tmpdir(), 'klw-pool-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** A bundle exporting `handler` with the given body (an async function of event, context). */
function bundle(name: string, body: string): string {
  const file = join(dir, `${name}.mjs`);
  writeFileSync(file, `export const handler = async (event, context) => {\n${body}\n};\n`);
  return file;
}

/**
 * A handler's statement that blocks its worker for good, as an endless loop does, without using a
 * core while the test goes on: only a kill ends it.
 */
const BLOCK = 'Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0);';

/** A pool of `body`; its timeouts never run out unless the test expires them (pass `timer` to watch them). */
function pool(name: string, body: string, options: Partial<FunctionRuntime> = {}): FunctionPool {
  return new FunctionPool({
    name,
    bundle: bundle(name, body),
    env: {},
    memoryMb: 256,
    timeoutMs: 60_000,
    concurrency: 2,
    onLog: () => {},
    timer: new ManualTimer().timer,
    ...options,
  });
}

describe('emulator dispatch', { timeout: PATIENCE_MS }, () => {
  it('never queues a request behind a stuck invocation while another worker can run it', async () => {
    // `block` blocks until the worker is killed (its timeout never runs out here); the rest answer at once.
    const p = pool('stuck', `if (event.block) { ${BLOCK} } return event.n;`, { concurrency: 2 });
    try {
      const order: string[] = [];
      const stuck = p.invoke({ block: true }).then((o) => {
        order.push('stuck');
        return o;
      });
      const quick = await Promise.all(
        Array.from({ length: 6 }, (_, n) =>
          p.invoke({ n }).then((o) => {
            order.push(`quick-${n}`);
            return o;
          }),
        ),
      );
      assert.deepEqual(
        quick.map((o) => (o.kind === 'result' ? o.result : o.kind)),
        [0, 1, 2, 3, 4, 5],
      );
      assert.deepEqual(
        order,
        ['quick-0', 'quick-1', 'quick-2', 'quick-3', 'quick-4', 'quick-5'],
        'every quick request answered while the stuck one still runs',
      );
      await p.close();
      assert.equal((await stuck).kind, 'crash');
    } finally {
      await p.close();
    }
  });

  it('serves waiting requests first come, first served from a central queue', async () => {
    const p = pool('fifo', `await new Promise((r) => setTimeout(r, 1)); return event.n;`, { concurrency: 1 });
    try {
      const order: number[] = [];
      await Promise.all(Array.from({ length: 40 }, (_, n) => p.invoke({ n }).then(() => order.push(n))));
      assert.deepEqual(
        order,
        Array.from({ length: 40 }, (_, n) => n),
      );
      assert.equal(p.size, 1);
    } finally {
      await p.close();
    }
  });
});

describe('emulator timeout', { timeout: PATIENCE_MS }, () => {
  it('answers an invocation past its timeout as timed out, kills its worker and serves the next from a new one', async () => {
    const manual = new ManualTimer();
    const p = pool('late', `if (event.block) { ${BLOCK} } return 'fine';`, {
      timeoutMs: 3_000,
      concurrency: 1,
      timer: manual.timer,
    });
    try {
      const blocked = p.invoke({ block: true });
      await manual.started();
      assert.deepEqual(manual.pending, [3_000], "one clock, of the function's timeout");
      assert.equal(manual.expireAll(), 1);
      const outcome = await blocked;
      assert.equal(outcome.kind, 'timeout');
      assert.equal(p.size, 0, 'the worker is gone');
      const next = await p.invoke({});
      assert.deepEqual(next.kind === 'result' ? [next.result, next.cold] : next, ['fine', true], 'a new worker, cold');
    } finally {
      await p.close();
    }
  });

  it("starts an invocation's clock when a worker begins it, not while it waits", async () => {
    const manual = new ManualTimer();
    const p = pool('queued', `if (event.block) { ${BLOCK} } return event.n;`, {
      timeoutMs: 3_000,
      concurrency: 1,
      timer: manual.timer,
    });
    try {
      const first = p.invoke({ block: true });
      await manual.started();
      const second = p.invoke({ n: 2 });
      assert.equal(manual.pending.length, 1, 'the waiting invocation has no clock yet');
      manual.expireAll();
      assert.equal((await first).kind, 'timeout');
      const outcome = await second;
      assert.deepEqual(
        outcome.kind === 'result' ? outcome.result : outcome,
        2,
        'answered, its own clock still running',
      );
    } finally {
      await p.close();
    }
  });

  it('times out on the wall clock by default', async () => {
    // Never answers: whatever ends it is the timeout.
    const p = pool('never', `await new Promise(() => {});`, { timeoutMs: 200, concurrency: 1, timer: realTimer });
    try {
      assert.equal((await p.invoke({})).kind, 'timeout');
    } finally {
      await p.close();
    }
  });
});

describe('emulator memory size', { timeout: PATIENCE_MS }, () => {
  it('kills a 256 MB function that holds 400 MB of Buffers, answers out of memory, stays small and keeps serving', async () => {
    // Buffers live outside the V8 heap: a heap limit alone would let them through. The function
    // never returns (and its timeout never runs out): only the memory watch can end it.
    const p = pool(
      'buffers',
      `if (event.grow) { const kept = []; for (let i = 0; i < 40; i++) kept.push(Buffer.alloc(10 * 1024 * 1024, 1)); await new Promise(() => {}); } return 'fine';`,
      { memoryMb: 256, concurrency: 1 },
    );
    try {
      const before = process.memoryUsage.rss();
      let peak = 0;
      const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage.rss())), 5);
      const outcome = await p.invoke({ grow: true });
      clearInterval(sampler);
      assert.equal(outcome.kind, 'crash');
      assert.equal((outcome as { errorType?: string }).errorType, 'Runtime.OutOfMemory');
      assert.match((outcome as { message: string }).message, /out of memory.*256 MB/);
      assert.ok(peak - before < 200 * 1024 * 1024, `the emulator grew by ${Math.round((peak - before) / 1048576)} MB`);
      const next = await p.invoke({});
      assert.deepEqual(next.kind === 'result' ? next.result : next, 'fine');
    } finally {
      await p.close();
    }
  });

  it('answers a heap past the memory size as out of memory too', async () => {
    const p = pool(
      'heap',
      `if (event.grow) { const kept = []; for (;;) kept.push(new Array(1000).fill({ a: 1 })); } return 'fine';`,
      { memoryMb: 128, concurrency: 1 },
    );
    try {
      const outcome = await p.invoke({ grow: true });
      assert.equal(outcome.kind, 'crash');
      assert.equal((outcome as { errorType?: string }).errorType, 'Runtime.OutOfMemory');
      assert.equal((await p.invoke({})).kind, 'result');
    } finally {
      await p.close();
    }
  });

  it('answers a process that exits on its own as Runtime.ExitError, not out of memory', async () => {
    const p = pool('exits', `process.exit(3);`, { concurrency: 1 });
    try {
      const outcome = await p.invoke({});
      assert.equal(outcome.kind, 'crash');
      assert.equal((outcome as { errorType?: string }).errorType, 'Runtime.ExitError');
      assert.match((outcome as { message: string }).message, /code 3/);
    } finally {
      await p.close();
    }
  });

  it("gives functions only Lambda's environment, not the emulator's", async () => {
    process.env.KLW_POOL_TEST_SECRET = 'host-only';
    const p = pool(
      'env',
      `return { name: process.env.AWS_LAMBDA_FUNCTION_NAME, memory: process.env.AWS_LAMBDA_FUNCTION_MEMORY_SIZE, version: process.env.AWS_LAMBDA_FUNCTION_VERSION, handler: process.env._HANDLER, region: process.env.AWS_REGION, own: process.env.OWN, host: process.env.KLW_POOL_TEST_SECRET ?? null };`,
      { env: { OWN: 'yes', AWS_REGION: 'eu-west-1' }, memoryMb: 512, concurrency: 1 },
    );
    try {
      const outcome = await p.invoke({});
      assert.deepEqual(outcome.kind === 'result' ? outcome.result : outcome, {
        name: 'env',
        memory: '512',
        version: '$LATEST',
        handler: 'index.handler',
        region: 'eu-west-1',
        own: 'yes',
        host: null,
      });
    } finally {
      delete process.env.KLW_POOL_TEST_SECRET;
      await p.close();
    }
  });
});
