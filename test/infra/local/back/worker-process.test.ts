// One worker process of a pool: what its replies and crashes mean as outcomes, and its memory.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  crashOutcome,
  type Pending,
  replyOutcome,
  residentMb,
  type Slot,
} from '../../../../infra/local/back/worker-process.ts';

const head = (started?: number): Pending => ({
  id: 1,
  event: {},
  requestId: 'r',
  cold: true,
  ...(started !== undefined ? { started } : {}),
  resolve: () => {},
});
const slot = (outOfMemory?: number) =>
  ({ generation: 0, invocations: 1, inFlight: [], dead: false, outOfMemory }) as unknown as Slot;

describe('a worker process', () => {
  it('reads its reply as a result or the error the function threw', () => {
    const ok = replyOutcome(head(performance.now()), { id: 1, ok: true, result: { statusCode: 200 } });
    assert.equal(ok.kind, 'result');
    assert.deepEqual(ok.kind === 'result' && ok.result, { statusCode: 200 });
    const error = { errorType: 'TypeError', errorMessage: 'boom', stackTrace: [] };
    const thrown = replyOutcome(head(), { id: 1, ok: false, error });
    assert.ok(thrown.kind === 'error' && thrown.error === error && thrown.cold && thrown.durationMs < 1000);
  });

  it('names its end as Lambda does: out of memory past its size, else an exit', () => {
    const oom = crashOutcome(slot(300.4), head(), 'worker killed by SIGKILL', 128);
    assert.ok(oom.kind === 'crash' && oom.errorType === 'Runtime.OutOfMemory');
    assert.match(
      oom.kind === 'crash' ? oom.message : '',
      /memory size of 128 MB \(300 MB\); worker killed by SIGKILL$/,
    );
    const exit = crashOutcome(slot(), head(), 'worker exited with code 3', 128);
    assert.deepEqual(exit.kind === 'crash' && [exit.errorType, exit.message], [
      'Runtime.ExitError',
      'worker exited with code 3',
    ]);
  });

  it("reads a process's resident memory, and nothing for one that does not exist", () => {
    const mine = residentMb(process.pid);
    if (process.platform === 'linux') assert.ok(mine !== undefined && mine > 1, String(mine));
    assert.equal(residentMb(2 ** 30), undefined);
  });
});
