// A node:test reporter that `klw test` adds beside the one it shows: how long each test file ran,
// from the moment the runner started it to the last result it reported, as one JSON object
// { "<absolute file>": milliseconds } written when the run ends. `klw test` keeps these times
// to start the slowest files first next time. A file run in a group (infra/test-group.mjs) is a
// top-level suite named after the file: it is timed from that suite's start.
import { isAbsolute } from 'node:path';

/** The file an event is of: a top-level test named by an absolute path is a file's, else the event's file. */
function fileOf(data) {
  return data.nesting === 0 && typeof data.name === 'string' && isAbsolute(data.name) ? data.name : data.file;
}

export default async function* timeFiles(source) {
  const started = new Map();
  const last = new Map();
  for await (const event of source) {
    if (typeof event.data?.file !== 'string') continue;
    const file = fileOf(event.data);
    const now = performance.now();
    // A file's root test (or its suite in a group) is named after it; its dequeue is the file starting.
    if (event.type === 'test:dequeue' && event.data.name === file && !started.has(file)) started.set(file, now);
    last.set(file, now);
  }
  const times = {};
  for (const [file, start] of started) times[file] = Math.round(last.get(file) - start);
  yield `${JSON.stringify(times)}\n`;
}
