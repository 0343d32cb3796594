// What a group of test files runs (see infra/test-groups.ts): each file, in turn, as a suite named
// after its built module (the reporter shows the source's name), so that its top-level hooks
// (before, after, beforeEach) stay its own and its failures are reported under its name. The next
// file is imported only once the suite has ended, so no file's import-time setup runs during
// another's tests. What a file leaves changed in the process, which the files after it would
// feel, fails its suite and is put back. Plain JavaScript: it runs beside the built files.
import { readFileSync } from 'node:fs';
import { after, describe } from 'node:test';
import { pathToFileURL } from 'node:url';

/**
 * The source of the file running, while one runs: kept on the global object, as a test build may
 * bundle its own copy of this module beside the one a group imports.
 */
const RUNNING = Symbol.for('klw.test-group.running');

// A file that ends the process ends its group: the files after it would not run. The run fails,
// naming it, however the process ends. One listener, however many copies of this module load.
if (!Object.hasOwn(globalThis, RUNNING)) {
  globalThis[RUNNING] = undefined;
  process.on('exit', () => {
    if (!globalThis[RUNNING]) return;
    process.exitCode = 1;
    process.stderr.write(
      `klw test: the process ended while ${globalThis[RUNNING]} ran, so the test files grouped after it did not run: give it a process of its own with a line // klw-test: own-process\n`,
    );
  });
}

/** The state of the process a test file may change and must put back. */
export function processState() {
  const listeners = {};
  for (const name of process.eventNames()) if (typeof name === 'string') listeners[name] = process.listenerCount(name);
  return { cwd: process.cwd(), env: { ...process.env }, listeners };
}

/**
 * What differs between `before` and now, as sentences, the directory and environment put back. A
 * variable set that was not there before counts only when `own(name)`, and a process listener
 * added only when `own('process.on')`: the file's own, not what the modules it loads keep for the
 * process (set once, or until a piece of work they started ends).
 */
export function restoreProcess(before, own = () => true) {
  const changes = [];
  if (process.cwd() !== before.cwd) {
    changes.push(`the working directory (now ${process.cwd()}, was ${before.cwd})`);
    process.chdir(before.cwd);
  }
  const names = new Set([...Object.keys(before.env), ...Object.keys(process.env)]);
  for (const name of [...names].sort()) {
    if (process.env[name] === before.env[name]) continue;
    if (before.env[name] === undefined && !own(name)) continue;
    changes.push(`process.env.${name}`);
    if (before.env[name] === undefined) delete process.env[name];
    else process.env[name] = before.env[name];
  }
  const now = processState().listeners;
  for (const name of new Set([...Object.keys(before.listeners), ...Object.keys(now)]))
    if ((now[name] ?? 0) > (before.listeners[name] ?? 0) && own('process.on'))
      changes.push(`a process '${name}' listener`);
  return changes;
}

/**
 * Runs the test file whose build is `run` (imported by `load`, by default from its path) as a
 * suite of this process, named `run`; resolves once the suite has ended. `source` names the file
 * in what it is told to put back; a variable its text does not name, newly set, and a listener
 * added by a file that adds none itself, are the modules' own (restoreProcess).
 */
export function runFile(source, run, load = () => import(pathToFileURL(run).href)) {
  // Its suite would run only once the running file's suite is built, which waits for it.
  const running = globalThis[RUNNING];
  if (running)
    throw new Error(
      `${running} runs a group of test files (${source}), which cannot run inside another group: give it a process of its own with a line // klw-test: own-process`,
    );
  return new Promise((done) => {
    describe(run, async () => {
      globalThis[RUNNING] = source;
      const before = processState();
      try {
        await load();
      } finally {
        // Registered last, so that it runs after the file's own after hooks.
        after(() => {
          globalThis[RUNNING] = undefined;
          done();
          const text = readFileSync(source, 'utf8');
          const listens = /\bprocess\.(?:on|once|addListener|prependListener|prependOnceListener)\(/.test(text);
          const changes = restoreProcess(before, (name) => (name === 'process.on' ? listens : text.includes(name)));
          if (changes.length)
            throw new Error(
              `${source} left the process changed for the test files after it: ${changes.join(', ')}. Put it back in an after hook, or give the file a process of its own with a line // klw-test: own-process`,
            );
        });
      }
    });
  });
}
