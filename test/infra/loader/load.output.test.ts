// What the loader's child writes (a function module's console output at load) reaches klw's stderr
// before klw has the registrations: the child's last words are never left behind in the pipe,
// however late they are read, and a process a module leaves holding the pipe does not stall klw.
import assert from 'node:assert/strict';
import { fork } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { PassThrough } from 'node:stream';
import { loadFunctions } from '../../../infra/functions.ts';
import type { LoadReply } from '../../../infra/loader/child.ts';
import type { StartLoader } from '../../../infra/loader/load.ts';
import { withCapturedOutput } from '../../helpers.ts';
import { GOOD_WEBHOOK, keptFunctions, scratchProjects } from '../scratch-projects.ts';

const project = scratchProjects();

/** A function `name` that says hello on stderr when it loads. */
const SAYS = (name: string) => `${GOOD_WEBHOOK(name)}console.error('${name} says hello');\n`;

/**
 * Starts the loader as klw does, but hands klw the child's stderr only after klw has had the
 * child's last reply (`done`) and a turn of the event loop: the order a busy machine can give
 * when the reply's channel is read before the output's pipe.
 */
const lateStderr: StartLoader = (module, args, options) => {
  const child = fork(module, args, options);
  const pipe = child.stderr!;
  const late = new PassThrough();
  const held: Buffer[] = [];
  let answered = false;
  let drained = false;
  const release = () => {
    if (answered && drained) setImmediate(() => late.end(Buffer.concat(held)));
  };
  pipe.on('data', (chunk: Buffer) => held.push(chunk));
  pipe.on('end', () => {
    drained = true;
    release();
  });
  child.on('message', (reply: LoadReply) => {
    if ('done' in reply) {
      answered = true;
      release();
    }
  });
  Object.defineProperty(child, 'stderr', { value: late });
  return child;
};

/** The lines of `text` in which a function says something. */
const sayings = (text: string) => text.split('\n').filter((line) => line.includes(' says '));

describe("the loader's output", () => {
  it("is all on klw's stderr before the registrations are, however late the pipe is read", async () => {
    // Only loaded: kept across runs (scratch-projects.ts), the loader's build of it with it.
    const root = await keptFunctions('output-late-pipe', { one: SAYS('one'), two: SAYS('two') });
    const { result, stderr } = await withCapturedOutput(() => loadFunctions(root, undefined, { start: lateStderr }));
    assert.deepEqual(
      result.map((f) => f.name),
      ['one', 'two'],
    );
    assert.deepEqual(sayings(stderr), ['one says hello', 'two says hello']);
  });

  // The grace is given small: what is checked is that klw answers, with the child's own output.
  it('does not wait on a process a module started that holds the pipe open', { timeout: 120_000 }, async () => {
    const root = project({ holder: SAYS('holder') });
    const pidFile = join(root, 'holder.pid');
    // The holder outlives the loader's child on purpose, but never this test's process: it checks
    // every half second that the test is still there, and exits when it is gone (killed, crashed).
    const holder = `const t = ${process.pid}; setInterval(() => { try { process.kill(t, 0); } catch { process.exit(); } }, 500); setTimeout(() => process.exit(), 600000);`;
    writeFileSync(
      join(root, 'functions', 'holder', 'index.ts'),
      "import { spawn } from 'node:child_process';\nimport { writeFileSync } from 'node:fs';\n" +
        `const held = spawn(process.execPath, ['-e', ${JSON.stringify(holder)}], ` +
        "{ stdio: ['ignore', 'ignore', 'inherit'], detached: true });\n" +
        `held.unref();\nwriteFileSync(${JSON.stringify(pidFile)}, String(held.pid));\n${SAYS('holder')}`,
    );
    try {
      const { result, stderr } = await withCapturedOutput(() => loadFunctions(root, undefined, { outputGraceMs: 50 }));
      assert.deepEqual(
        result.map((f) => f.name),
        ['holder'],
      );
      assert.deepEqual(sayings(stderr), ['holder says hello']);
    } finally {
      if (existsSync(pidFile)) process.kill(Number(readFileSync(pidFile, 'utf8')), 'SIGKILL');
    }
  });
});
