// How the handler logs a failure: an error id, the kind for the metrics, a thrown value described safely.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DeadlineExceeded } from '../../../lib/deadline.ts';
import { describeThrown, logFailure, newErrorId } from '../../../lib/handler/failure.ts';
import type { RunContext } from '../../../lib/handler/types.ts';
import { captureLogger, hostileThrowables } from '../../helpers.ts';

describe('logging a failure', () => {
  it('logs the error under a fresh id and names its kind: timeout for a deadline, error otherwise', () => {
    const { logger, lines } = captureLogger();
    const ctx = { requestId: 'r1', log: logger } as RunContext;
    const late = logFailure(ctx, 'user function too slow', new DeadlineExceeded(5));
    const thrown = logFailure(ctx, 'user function failed', new TypeError('boom'));
    assert.equal(late.failure, 'timeout');
    assert.equal(thrown.failure, 'error');
    assert.match(late.errorId, /^[0-9a-f]{8}$/);
    assert.notEqual(late.errorId, thrown.errorId);
    assert.deepEqual(
      lines.map((l) => [l.msg, l.requestId, l.errorId, l.error]),
      [
        ['user function too slow', 'r1', late.errorId, 'DeadlineExceeded: webhook did not answer within 5 ms'],
        ['user function failed', 'r1', thrown.errorId, 'TypeError: boom'],
      ],
    );
    assert.match(newErrorId(), /^[0-9a-f]{8}$/);
  });

  it('describes any thrown value without throwing itself', () => {
    for (const [name, value] of hostileThrowables()) {
      const described = describeThrown(value);
      assert.equal(typeof described.error, 'string', name);
    }
    assert.deepEqual(describeThrown('plain'), { error: 'plain' });
  });
});
