// A node:test reporter that `klw test` adds beside the one it shows: how long each test file ran,
// from the moment the runner started it to the last result it reported, as one JSON object
// { "<absolute file>": milliseconds } written when the run ends. `klw test` keeps these times
// to start the slowest files first next time.
export default async function* timeFiles(source) {
  const started = new Map();
  const last = new Map();
  for await (const event of source) {
    const file = event.data?.file;
    if (typeof file !== 'string') continue;
    const now = performance.now();
    // The file itself is the root's test named after it; its dequeue is the file starting.
    if (event.type === 'test:dequeue' && event.data.name === file && !started.has(file)) started.set(file, now);
    last.set(file, now);
  }
  const times = {};
  for (const [file, start] of started) times[file] = Math.round(last.get(file) - start);
  yield `${JSON.stringify(times)}\n`;
}
