// Stopping the emulator: cleanup runs once however often the signal arrives (npm forwards it).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FORCED_EXIT_CODE, untilStopped } from '../../infra/local/commands.ts';

describe('untilStopped', () => {
  it('runs cleanup once for a signal npm delivers twice, and a further one forces the exit', async () => {
    let stops = 0;
    let release!: () => void;
    const exits: number[] = [];
    const stopped = untilStopped(
      () => {
        stops++;
        return new Promise<void>((r) => (release = r));
      },
      (code) => exits.push(code),
    );
    process.emit('SIGTERM', 'SIGTERM');
    process.emit('SIGTERM', 'SIGTERM');
    assert.equal(stops, 1);
    assert.deepEqual(exits, [], 'the repeated signal is ignored');
    process.emit('SIGINT', 'SIGINT');
    assert.deepEqual(exits, [FORCED_EXIT_CODE]);
    release();
    await stopped;
    assert.equal(process.listenerCount('SIGINT') + process.listenerCount('SIGTERM'), 0, 'handlers removed after cleanup');
  });
});
