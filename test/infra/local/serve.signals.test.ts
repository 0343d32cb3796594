// Stopping the emulator: cleanup runs once however often the signal arrives (npm forwards it).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { spawnSync } from 'node:child_process';
import { pathToFileURL } from 'node:url';
import { FORCED_EXIT_CODE, untilStopped } from '../../../infra/local/serve.ts';

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
    assert.equal(
      process.listenerCount('SIGINT') + process.listenerCount('SIGTERM'),
      0,
      'handlers removed after cleanup',
    );
  });
});

describe('serveUntilStopped', () => {
  // A real SIGINT sent while the server starts (as a test or a quick Ctrl+C would, right after
  // the ready line): with the handlers in place first it stops the server once it is up; had
  // they come after start-up, the signal's default action would kill the process.
  it('has its signal handlers in place before the server starts', () => {
    const commands = pathToFileURL(new URL('../../../infra/local/serve.ts', import.meta.url).pathname).href;
    const script = `
      import { serveUntilStopped } from ${JSON.stringify(commands)};
      await serveUntilStopped(
        async () => {
          process.kill(process.pid, 'SIGINT');
          await new Promise((r) => setTimeout(r, 200));
          console.log('started');
          return 'server';
        },
        async (server) => console.log('stopped ' + server),
      );
      console.log('done');
    `;
    const out = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      encoding: 'utf8',
      env: { ...process.env, NODE_TEST_CONTEXT: undefined },
    });
    assert.equal(out.signal, null, `killed by ${out.signal}: ${out.stderr}`);
    assert.equal(out.status, 0, out.stderr);
    assert.deepEqual(out.stdout.trim().split('\n'), ['started', 'stopped server', 'done']);
  });
});
