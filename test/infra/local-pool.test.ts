// The emulator's execution environments: dispatch, isolation and limits, with plain bundles
// (no build) so each behaviour is the only thing under test.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { FunctionPool, type FunctionRuntime } from '../../infra/local/pool.ts';

const dir = mkdtempSync(join(tmpdir(), 'klw-pool-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** A bundle exporting `handler` with the given body (an async function of event, context). */
function bundle(name: string, body: string): string {
  const file = join(dir, `${name}.mjs`);
  writeFileSync(file, `export const handler = async (event, context) => {\n${body}\n};\n`);
  return file;
}

function pool(name: string, body: string, options: Partial<FunctionRuntime> = {}): FunctionPool {
  return new FunctionPool({ name, bundle: bundle(name, body), env: {}, memoryMb: 256, timeoutMs: 60_000, concurrency: 2, onLog: () => {}, ...options });
}

describe('emulator dispatch', () => {
  it('never queues a request behind a stuck invocation while another worker can run it', async () => {
    // `block` spins until the worker is killed at its timeout; the rest answer at once.
    const p = pool('stuck', `if (event.block) { for (;;) {} } return event.n;`, { timeoutMs: 20_000, concurrency: 2 });
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
      assert.deepEqual(quick.map((o) => (o.kind === 'result' ? o.result : o.kind)), [0, 1, 2, 3, 4, 5]);
      assert.deepEqual(order, ['quick-0', 'quick-1', 'quick-2', 'quick-3', 'quick-4', 'quick-5'], 'every quick request answered while the stuck one still runs');
      await p.close();
      assert.equal((await stuck).kind, 'crash');
    } finally {
      await p.close();
    }
  });

  it('serves waiting requests first come, first served from a central queue', async () => {
    const p = pool('fifo', `await new Promise((r) => setTimeout(r, 1)); return event.n;`, { concurrency: 2 });
    try {
      const order: number[] = [];
      await Promise.all(Array.from({ length: 40 }, (_, n) => p.invoke({ n }).then(() => order.push(n))));
      // Two workers: an answer may overtake only the one request running beside it.
      for (let i = 0; i < order.length; i++) assert.ok(Math.abs(order[i]! - i) <= 1, `request ${order[i]} answered at position ${i}`);
      assert.ok(p.size <= 2);
    } finally {
      await p.close();
    }
  });
});
