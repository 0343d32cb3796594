// The output captures of test/helpers.ts: in-process klw runs and withCapturedOutput share one
// router, so each keeps its own output however they nest or overlap, and a character split across
// writes is decoded whole.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { klwInProcess, runKlw, withCapturedOutput } from '../helpers.ts';

const version = (
  JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }
).version;

describe('captured output of in-process runs', () => {
  it('keeps a run inside withCapturedOutput, and a run after it, each to itself', async () => {
    const outer = await withCapturedOutput(
      async () => {
        process.stdout.write('outer\n');
        return klwInProcess('--version');
      },
      { stdout: true },
    );
    assert.equal(outer.result.stdout.trim(), version);
    assert.equal(outer.stdout, 'outer\n', 'the inner run kept its own output');
    const later = await klwInProcess('--version');
    assert.equal(later.stdout.trim(), version, 'the router outlives withCapturedOutput');
  });

  it('keeps overlapping runs apart, whichever ends first', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const long = withCapturedOutput(
      async () => {
        process.stderr.write('long before\n');
        await gate;
        process.stderr.write('long after\n');
      },
      { stdout: true },
    );
    const short = await runKlw('no-such-command');
    const inProcess = await klwInProcess('--version');
    release();
    const { stderr, stdout } = await long;
    assert.equal(stderr, 'long before\nlong after\n');
    assert.equal(stdout, '');
    assert.match(short.stderr, /no-such-command/);
    assert.equal(inProcess.stdout.trim(), version);
  });

  it('decodes a character split across two writes', async () => {
    const euro = Buffer.from('a€b', 'utf8');
    const { stdout, stderr } = await withCapturedOutput(
      async () => {
        process.stdout.write(euro.subarray(0, 2));
        process.stdout.write(euro.subarray(2));
        process.stderr.write(euro.subarray(0, 3));
        process.stderr.write(euro.subarray(3));
      },
      { stdout: true },
    );
    assert.equal(stdout, 'a€b');
    assert.equal(stderr, 'a€b');
  });
});
