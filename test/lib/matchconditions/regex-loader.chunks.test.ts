// What in-function evaluation runs once its chunks are loaded: at once when nothing is loading, after
// the load otherwise, and again once the CEL engine is loaded where an evaluation was left to it
// before it was.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { afterChunks } from '../../../lib/matchconditions/regex-loader.ts';
import { CelEngineNotLoaded } from '../../../packages/kube-cel/src/index.ts';

describe('afterChunks', () => {
  it('runs at once when nothing is loading, after the load otherwise', async () => {
    assert.equal(
      afterChunks(
        () => undefined,
        () => 1,
      ),
      1,
    );
    const order: string[] = [];
    const loading = new Promise<void>((r) => setImmediate(() => (order.push('loaded'), r())));
    const ran = afterChunks(
      () => loading,
      () => (order.push('ran'), 2),
    );
    assert.ok(ran instanceof Promise);
    assert.equal(await ran, 2);
    assert.deepEqual(order, ['loaded', 'ran']);
  });

  it('runs again once the engine is loaded where an evaluation was left to it', async () => {
    let runs = 0;
    const run = () => {
      if (runs++ === 0) throw new CelEngineNotLoaded();
      return 'answered';
    };
    const answer = afterChunks(() => undefined, run);
    assert.ok(answer instanceof Promise);
    assert.equal(await answer, 'answered');
    assert.equal(runs, 2);
  });

  it('throws what else the run throws, once', () => {
    let runs = 0;
    assert.throws(
      () =>
        afterChunks(
          () => undefined,
          () => {
            runs++;
            throw new TypeError('nonsense');
          },
        ),
      /nonsense/,
    );
    assert.equal(runs, 1);
  });
});
