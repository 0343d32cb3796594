// A node:test reporter that `klw test` shows in place of the one asked for when it runs test files
// from their build (infra/test-build.ts): it passes every event on to that reporter with the path
// of the file run (a built file, or the starter of one run through tsx) replaced by the source
// file's, so that file names read as they do when the sources run. Its URL names the reporter
// (`reporter`: spec, tap, dot, junit, lcov, or a module) and the JSON file of the names (`names`:
// { "<run path>": "<source path>" }). Plain JavaScript: node --test loads it without a TypeScript loader.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { dot, junit, lcov, spec, tap } from 'node:test/reporters';
import { fileURLToPath, pathToFileURL } from 'node:url';

const params = new URL(import.meta.url).searchParams;

/** node:test's own reporters, by the names node --test knows them by. */
const BUILTIN = { dot, junit, lcov, spec, tap };

/** The reporter's module: node:test's own by name, else resolved from the working folder as node --test does. */
async function load(name) {
  if (Object.hasOwn(BUILTIN, name)) return BUILTIN[name];
  const base = pathToFileURL(join(process.cwd(), '/'));
  let url;
  if (/^(?:\.{1,2}\/|\/|file:)/.test(name)) url = new URL(name, base).href;
  else {
    try {
      url = pathToFileURL(createRequire(base).resolve(name)).href;
    } catch {
      url = name; // a package only importable as a module: Node resolves it
    }
  }
  const mod = await import(url);
  return mod.default ?? mod;
}

/** The reporter ready to take events: a class is made an instance, as node --test does. */
function instance(reporter) {
  const isClass = reporter?.prototype && Object.getOwnPropertyDescriptor(reporter.prototype, 'constructor');
  return isClass ? new reporter() : reporter;
}

/** The events with each run path in `file` and in a file's own test name replaced by its source's. */
async function* renamed(source, names) {
  const named = (value) => (typeof value === 'string' && Object.hasOwn(names, value) ? names[value] : value);
  for await (const event of source) {
    const data = event.data;
    // A copy: the other reporters (the timer) take the same events.
    if (data && typeof data === 'object' && (named(data.file) !== data.file || named(data.name) !== data.name))
      yield { ...event, data: { ...data, file: named(data.file), name: named(data.name) } };
    else yield event;
  }
}

export default async function* sourceNames(source) {
  const names = JSON.parse(readFileSync(fileURLToPath(params.get('names')), 'utf8'));
  const reporter = instance(await load(params.get('reporter') ?? 'spec'));
  const events = renamed(source, names);
  if (typeof reporter === 'function') yield* reporter(events);
  else yield* Readable.from(events).pipe(reporter);
}
