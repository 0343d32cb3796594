import { AsyncLocalStorage } from 'node:async_hooks';
import { createHash } from 'node:crypto';
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { basename, dirname, isAbsolute, join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { keptBuild } from '../infra/build-kept.ts';
import type { InvocationTimer } from '../infra/local/back/pool.ts';
import { createLogger, type Logger } from '../lib/log.ts';
import type { RuleWithOperations } from '../lib/rule-builder.ts';
import type { Pod } from './fixtures/functions.ts';

export { FIXTURE_FUNCTIONS, FIXTURE_PROJECT } from './fixtures/project.ts';

/**
 * Rules matching every admission request, for webhooks whose tests are about what they answer:
 * the test kit refuses reviews the rules do not match, as the API server never sends those.
 */
export const EVERY_REQUEST: RuleWithOperations[] = [
  { operations: ['*'], apiGroups: ['*'], apiVersions: ['*'], resources: ['*/*'], scope: '*' },
];

const cache = new Map<string, string>();

/** A fresh copy of `test/events/<name>.json`, safe to change in one test. */
export function fixture<T = Record<string, any>>(name: string): T {
  let text = cache.get(name);
  if (text === undefined) {
    text = readFileSync(fileURLToPath(new URL(`./events/${name}.json`, import.meta.url)), 'utf8');
    cache.set(name, text);
  }
  return JSON.parse(text) as T;
}

/** An envelope fixture (`rest`, `http`, `url`, `alb`) carrying `body`. */
export function eventWith(
  source: 'rest' | 'http' | 'url' | 'alb',
  body: unknown,
  changes: (event: Record<string, any>) => void = () => {},
): Record<string, any> {
  const event = fixture(`${source}/post`);
  event.body = typeof body === 'string' ? body : JSON.stringify(body);
  changes(event);
  return event;
}

/** A logger that keeps its lines, parsed, for assertions. */
export function captureLogger(): { logger: Logger; lines: Array<Record<string, any>> } {
  const lines: Array<Record<string, any>> = [];
  return { logger: createLogger({ level: 'debug', sink: (line) => lines.push(JSON.parse(line)) }), lines };
}

/** Parses a Lambda HTTP result's JSON body. */
export function bodyOf(result: unknown): any {
  return JSON.parse((result as { body: string }).body);
}

/** A pod `web` in namespace `shop` with one tagged container, and `spec` merged over it. */
export function testPod(spec: Pod['spec'] = {}): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'web', namespace: 'shop' },
    spec: { containers: [{ name: 'app', image: 'nginx:1.25' }], ...spec },
  };
}

/** What one capture keeps, by stream (a stream left out passes to the enclosing capture), as written. */
interface Capture {
  stdout?: Buffer[];
  stderr?: Buffer[];
  parent?: Capture;
}
const captures = new AsyncLocalStorage<Capture>();

/** A chunk as written to a stream (a string in its encoding, or bytes), as bytes. */
function bytesOf(chunk: unknown, encoding: unknown): Buffer {
  if (typeof chunk === 'string')
    return Buffer.from(chunk, typeof encoding === 'string' ? (encoding as BufferEncoding) : 'utf8');
  return Buffer.from(chunk as Uint8Array);
}

/**
 * Routes writes to stdout and stderr made inside a capture (and whatever it started) to the
 * innermost capture that keeps that stream; every other write passes through, so the test runner's
 * own output stays intact and captures nested or side by side, begun and ended in any order, keep
 * their output apart. Installed once, when this module loads, and never undone.
 */
for (const key of ['stdout', 'stderr'] as const) {
  const stream = process[key];
  const original = stream.write.bind(stream) as (...args: unknown[]) => boolean;
  stream.write = ((chunk: unknown, ...rest: unknown[]) => {
    let capture = captures.getStore();
    while (capture && !capture[key]) capture = capture.parent;
    if (!capture) return original(chunk, ...rest);
    capture[key]!.push(bytesOf(chunk, rest[0]));
    const done = rest.find((r) => typeof r === 'function') as (() => void) | undefined;
    if (done) process.nextTick(done);
    return true;
  }) as typeof stream.write;
}

/** Runs `run` inside a capture of `streams`: what it returned and what it wrote, decoded once at the end. */
async function captured<T>(
  streams: { stdout: boolean; stderr: boolean },
  run: () => Promise<T>,
): Promise<{ result: T; stdout: string; stderr: string }> {
  const capture: Capture = {
    stdout: streams.stdout ? [] : undefined,
    stderr: streams.stderr ? [] : undefined,
    parent: captures.getStore(),
  };
  const result = await captures.run(capture, run);
  const text = (chunks?: Buffer[]) => Buffer.concat(chunks ?? []).toString('utf8');
  return { result, stdout: text(capture.stdout), stderr: text(capture.stderr) };
}

/** Runs `run` with stderr (and, when asked, stdout) captured: what it returned and what was written. */
export function withCapturedOutput<T>(
  run: () => Promise<T>,
  { stdout = false }: { stdout?: boolean } = {},
): Promise<{ result: T; stdout: string; stderr: string }> {
  return captured({ stdout, stderr: true }, run);
}

/**
 * Runs klw in this process as the command line would (`klw ...args`): its exit code, stdout and
 * stderr. Runs may overlap; each gets its own output. For tests about a command's logic: one test
 * per command family still starts the real process.
 */
export async function klwInProcess(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const { main } = await import('../infra/cli.ts');
  const { result, stdout, stderr } = await captured({ stdout: true, stderr: true }, () =>
    main(['node', 'klw', ...args]),
  );
  return { code: result, stdout, stderr };
}

/** Runs klw in-process with the given arguments; its exit code and what it wrote to stderr. */
export async function runKlw(...args: string[]): Promise<{ code: number; stderr: string }> {
  const { main } = await import('../infra/cli.ts');
  const { result, stderr } = await withCapturedOutput(() => main(['node', 'klw', ...args]));
  return { code: result, stderr };
}

/** Thrown values that break `String(value)` or `error.message`, by what they are. */
export function hostileThrowables(): Array<[string, unknown]> {
  const messageThrows = new Error('hidden');
  Object.defineProperty(messageThrows, 'message', {
    get() {
      throw new Error('message getter');
    },
  });
  const { proxy, revoke } = Proxy.revocable({}, {});
  revoke();
  return [
    ['an object without a prototype', Object.create(null)],
    [
      'an object whose toString throws',
      {
        toString() {
          throw new Error('toString');
        },
      },
    ],
    ['an Error whose message getter throws', messageThrows],
    ['a revoked Proxy', proxy],
  ];
}

/**
 * Runs of every property test (fast-check's `numRuns`; its default is 100). 200 is where each
 * property in this suite still fails on the faults it was checked against (an edge value lost, a
 * limit off by one, an escape dropped) while the whole suite's properties cost about a second of
 * CPU; hostile values sit in each arbitrary's constants, so finding them does not take thousands
 * of runs. A deep run sets `KLW_FUZZ_RUNS` (`npm run test:deep`) and explores further, with a
 * new seed each time as always.
 */
export const FUZZ_RUNS = fuzzRunsFrom(process.env.KLW_FUZZ_RUNS);

/** The run count `KLW_FUZZ_RUNS` asks for (a whole number from 1), 200 when it is unset or empty. */
export function fuzzRunsFrom(value: string | undefined): number {
  if (value === undefined || value === '') return 200;
  const runs = Number(value);
  if (!Number.isSafeInteger(runs) || runs < 1)
    throw new Error(`KLW_FUZZ_RUNS=${JSON.stringify(value)}: give a whole number of runs from 1, such as 5000`);
  return runs;
}

/**
 * How long a test waits for something that happens on its own (a file watcher firing, a worker
 * starting) before it fails instead of hanging: far past anything a loaded machine takes, so it
 * bounds a broken test without timing a working one.
 */
export const PATIENCE_MS = 180_000;

/** Resolves once `condition()` holds, asking every 50 ms; rejects naming `what` after `limitMs`. */
export async function until(
  condition: () => boolean | Promise<boolean>,
  what: string,
  limitMs = PATIENCE_MS,
): Promise<void> {
  const start = performance.now();
  while (!(await condition())) {
    if (performance.now() - start > limitMs) throw new Error(`still waiting after ${limitMs} ms for ${what}`);
    await sleep(50);
  }
}

/**
 * The emulator's timeout clocks, moved only by the test: no invocation times out unless the
 * test expires it, so no answer depends on how fast the machine is. Pass `timer` as
 * `invocationTimer` (or a pool's `timer`).
 */
export class ManualTimer {
  private running = new Set<{ ms: number; fire: () => void }>();
  /** Keeps the process alive while a clock runs, as a real timer would (the workers do not). */
  private alive?: NodeJS.Timeout;

  /** The `InvocationTimer` to give the emulator. */
  readonly timer: InvocationTimer = (ms, onTimeout) => {
    const clock = { ms, fire: onTimeout };
    this.running.add(clock);
    this.alive ??= setInterval(() => {}, 60_000);
    return () => this.stop(clock);
  };

  private stop(clock: { ms: number; fire: () => void }): void {
    this.running.delete(clock);
    if (this.running.size === 0) {
      clearInterval(this.alive);
      this.alive = undefined;
    }
  }

  /** The timeouts (ms) of the clocks running now, one per invocation in progress. */
  get pending(): number[] {
    return [...this.running].map((c) => c.ms);
  }

  /** Resolves once at least `count` clocks run (invocations have started); rejects after PATIENCE_MS. */
  async started(count = 1): Promise<void> {
    await until(() => this.running.size >= count, `${count} invocation(s) to start`);
  }

  /** Runs out every clock running now, as if their timeouts had passed; returns how many. */
  expireAll(): number {
    const clocks = [...this.running];
    for (const c of clocks) {
      this.stop(c);
      c.fire();
    }
    return clocks.length;
  }
}

/**
 * The toolkit's `source` (a module of the repository, such as the matchConditions evaluator)
 * built into one JavaScript file `out`, for the threads a test starts: loaded plainly, such a
 * thread starts in a tenth of a second of CPU, where one that registers tsx (a loader thread of
 * its own) and compiles the sources takes one to three seconds.
 */
export async function bundleForThreads(source: URL, out: string): Promise<string> {
  const esbuild = await import('esbuild');
  const root = fileURLToPath(new URL('..', import.meta.url));
  const options = {
    absWorkingDir: root,
    entryPoints: [fileURLToPath(source)],
    // Named inside the repository, so the same build is kept by content under npm test (build-kept.ts).
    outfile: join(root, '.klw', 'threads', basename(out)),
    bundle: true,
    format: 'esm' as const,
    platform: 'node' as const,
    target: 'node20',
    logLevel: 'error' as const,
    // Bundled CommonJS packages require Node's own modules.
    banner: {
      js: "import { createRequire as bannerRequire } from 'node:module'; const require = bannerRequire(import.meta.url);",
    },
    write: false,
    metafile: true,
  };
  const [bundle] = await keptBuild({ ...options, outdir: dirname(options.outfile) }, () => esbuild.build(options));
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(out, bundle!.contents);
  return pathToFileURL(out).href;
}

/**
 * The TypeScript module `source` (a scaffolded function, say) built into one JavaScript file
 * `out`, as bundleForThreads builds it, and imported: a test file that calls such code needs no
 * TypeScript loader of its own at run time.
 */
export async function importBuilt<T>(source: URL, out: string): Promise<T> {
  return (await import(await bundleForThreads(source, out))) as T;
}

/**
 * The emulator's matchConditions thread (conditions-worker.mjs) as the installed package runs it:
 * beside it in `dir`, the evaluator built into JavaScript, which the worker loads where there are
 * no TypeScript sources. Give it as `worker` to a ConditionPool (or startApi's `conditions`) whose
 * test is not about the loading: each thread then starts without tsx. `dir` must lie inside the
 * repository: the evaluator loads the RE2 engine from node_modules when a pattern first needs it.
 */
export async function builtConditionsWorker(dir: string): Promise<URL> {
  const back = new URL('../infra/local/back/', import.meta.url);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'package.json'), '{ "type": "module" }\n');
  copyFileSync(new URL('conditions-worker.mjs', back), join(dir, 'conditions-worker.mjs'));
  await bundleForThreads(new URL('match-conditions.ts', back), join(dir, 'match-conditions.js'));
  return pathToFileURL(join(dir, 'conditions-worker.mjs'));
}

/**
 * A project inside the repository (so `kube-lambda-webhooks` resolves to this package) in a new
 * directory named from `prefix`, with `functions/<name>/index.ts` holding each given source.
 */
export function projectInRepository(prefix: string, functions: Record<string, string>): string {
  const work = mkdtempSync(join(process.cwd(), prefix));
  for (const [name, source] of Object.entries(functions)) {
    mkdirSync(join(work, 'functions', name), { recursive: true });
    writeFileSync(join(work, 'functions', name, 'index.ts'), source);
  }
  return work;
}

/** Adds every file under `dir` (path relative to `base`, and content; a symlink by its target path) to `hash` in a stable order, but node_modules and the paths of `skip`. */
export function hashTree(
  hash: ReturnType<typeof createHash>,
  base: string,
  dir: string,
  skip: ReadonlySet<string> = new Set(),
): void {
  for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
    const path = join(dir, entry.name);
    if (skip.has(relative(base, path)) || entry.name === 'node_modules') continue;
    if (entry.isDirectory()) hashTree(hash, base, path, skip);
    // A symlink by where it points, not followed: changing its target changes the hash.
    else if (entry.isSymbolicLink()) hash.update(`${relative(base, path)}\0->${readlinkSync(path)}\0`);
    else if (entry.isFile())
      hash
        .update(`${relative(base, path)}\0`)
        .update(readFileSync(path))
        .update('\0');
  }
}

const REPO = fileURLToPath(new URL('../', import.meta.url));
const toolkitHashes = new Map<string, string>();

/**
 * A name for what the toolkit does, for results kept across runs: its sources (lib/, infra/,
 * packages/), its settings and the exact versions of the packages it runs on (package-lock.json),
 * and `extra` files (the code that keeps the results). Any change there changes the name.
 */
export function toolkitHash(extra: string[] = []): string {
  const key = extra.join('\0');
  const known = toolkitHashes.get(key);
  if (known) return known;
  const hash = createHash('sha256');
  for (const dir of ['lib', 'infra', 'packages']) hashTree(hash, REPO, join(REPO, dir));
  for (const file of ['package.json', 'package-lock.json', 'tsconfig.json', ...extra]) {
    const path = isAbsolute(file) ? file : join(REPO, file);
    hash
      .update(`${relative(REPO, path)}\0`)
      .update(readFileSync(path))
      .update('\0');
  }
  const name = hash.digest('hex').slice(0, 16);
  toolkitHashes.set(key, name);
  return name;
}

/** A file of the CEL engine as the kube-cel package resolves it (`registry.js`, `evaluator.js`): the code bundles edit. */
export function celEngineFile(name: string): string {
  const packageJson = fileURLToPath(new URL('../packages/kube-cel/package.json', import.meta.url));
  return join(createRequire(packageJson).resolve('@marcbachmann/cel-js'), '..', name);
}
