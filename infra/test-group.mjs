// What a group of test files runs (see infra/test-groups.ts): each file, in turn, as a suite named
// after its built module (the reporter shows the source's name), so that its top-level hooks
// (before, after, beforeEach) stay its own and its failures are reported under its name. The next
// file is imported only once the suite has ended, so no file's import-time setup runs during
// another's tests. What a file leaves changed in the process, which the files after it would
// feel, fails its suite and is put back. Plain JavaScript: it runs beside the built files.
import { readFileSync } from 'node:fs';
import { after, describe } from 'node:test';
import { pathToFileURL } from 'node:url';

/** The source of the file running, while one runs. */
let running;

// A file that ends the process ends its group: the files after it would not run. The run fails,
// naming it, however the process ends.
process.on('exit', () => {
  if (!running) return;
  process.exitCode = 1;
  process.stderr.write(
    `klw test: the process ended while ${running} ran, so the test files grouped after it did not run: give it a process of its own with a line // klw-test: own-process\n`,
  );
});

/** The state of the process a test file may change and must put back. */
export function processState() {
  const listeners = {};
  for (const name of process.eventNames()) if (typeof name === 'string') listeners[name] = process.listenerCount(name);
  return { cwd: process.cwd(), env: { ...process.env }, listeners };
}

/**
 * What differs between `before` and now, as sentences, the directory and environment put back.
 * `own(name)` says whether a variable set since `imported` (the state once the file was imported,
 * by the file or by the modules it loads, which set some once for the process) is the file's own.
 */
export function restoreProcess(before, imported = before, own = () => true) {
  const changes = [];
  if (process.cwd() !== before.cwd) {
    changes.push(`the working directory (now ${process.cwd()}, was ${before.cwd})`);
    process.chdir(before.cwd);
  }
  const names = new Set([...Object.keys(before.env), ...Object.keys(process.env)]);
  for (const name of [...names].sort()) {
    if (process.env[name] === before.env[name]) continue;
    if (process.env[name] === imported.env[name] && !own(name)) continue;
    changes.push(`process.env.${name}`);
    if (before.env[name] === undefined) delete process.env[name];
    else process.env[name] = before.env[name];
  }
  const now = processState().listeners;
  for (const name of new Set([...Object.keys(imported.listeners), ...Object.keys(now)]))
    if ((now[name] ?? 0) > (imported.listeners[name] ?? 0)) changes.push(`a process '${name}' listener`);
  return changes;
}

/**
 * Runs the test file whose build is `run` (imported by `load`, by default from its path) as a
 * suite of this process, named `run`; resolves once the suite has ended. `source` names the file
 * in what it is told to put back; a variable its text does not name, set while it was imported
 * and left as it was then, is the modules' own (set once for the process, as a process of its own
 * would have it too).
 */
export function runFile(source, run, load = () => import(pathToFileURL(run).href)) {
  return new Promise((done) => {
    describe(run, async () => {
      running = source;
      const before = processState();
      let imported = before;
      try {
        await load();
        imported = processState();
      } finally {
        // Registered last, so that it runs after the file's own after hooks.
        after(() => {
          running = undefined;
          done();
          const text = readFileSync(source, 'utf8');
          const changes = restoreProcess(before, imported, (name) => text.includes(name));
          if (changes.length)
            throw new Error(
              `${source} left the process changed for the test files after it: ${changes.join(', ')}. Put it back in an after hook, or give the file a process of its own with a line // klw-test: own-process`,
            );
        });
      }
    });
  });
}
