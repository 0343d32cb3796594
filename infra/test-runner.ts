import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { availableParallelism, tmpdir } from 'node:os';
import { isAbsolute, join, relative, resolve, sep } from 'node:path';
import { BUILT_FUNCTIONS_ENV } from '../lib/harness/discover.ts';
import { describeThrown, KlwError } from './errors.ts';
import { writeFileSafely } from './files.ts';
import { isRecord } from './json.ts';
import { importsFunctions, namingReporter, type PreparedTests, prepareTests } from './test-build.ts';
import { groupEntry, groupOrder, NEEDS_OWN_PROCESS, planGroups, typicalTime } from './test-groups.ts';

/** Test file names `klw test` runs, as `node --test` would if Node 20 globbed TypeScript. */
export const TEST_FILE = /\.test\.(ts|mts|js|mjs)$/;
/** Folders never searched: dependencies, build output, local state. */
const SKIPPED_DIRS = new Set(['node_modules', 'dist', 'pkg', 'coverage']);

/** Options of `findTestFiles`. */
export interface FindTestsOptions {
  /** Folders (relative to root) to search; default `test` and `functions`. */
  dirs?: string[];
  /** Folders (relative to root) to leave out, such as `test/e2e`. */
  exclude?: string[];
}

/** The test files under the project's test folders, relative to root, sorted, with `/` separators. */
export function findTestFiles(root: string, options: FindTestsOptions = {}): string[] {
  const exclude = new Set((options.exclude ?? []).map((d) => resolve(root, d)));
  const found: string[] = [];
  const walk = (dir: string) => {
    if (exclude.has(dir)) return;
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) {
        if (!entry.name.startsWith('.') && !SKIPPED_DIRS.has(entry.name)) walk(path);
      } else if (TEST_FILE.test(entry.name) && !exclude.has(path))
        found.push(relative(root, path).split(sep).join('/'));
    }
  };
  for (const dir of options.dirs ?? ['test', 'functions']) {
    const abs = resolve(root, dir);
    if (existsSync(abs)) walk(abs);
  }
  return [...new Set(found)].sort();
}

/**
 * The files `klw test <paths...>` runs: a folder stands for the test files under it (found as
 * `findTestFiles` finds them, `exclude` applied), a file for itself. A path that does not exist,
 * or paths that hold no test file, are an error saying so.
 */
export function expandTestPaths(root: string, paths: string[], exclude: string[] = []): string[] {
  const files: string[] = [];
  for (const path of paths) {
    const abs = resolve(root, path);
    if (!existsSync(abs)) throw new KlwError(`${path}: no such test file or folder in ${resolve(root)}`);
    if (statSync(abs).isDirectory()) files.push(...findTestFiles(root, { dirs: [path], exclude }));
    else files.push(path);
  }
  if (!files.length) throw new KlwError(`no test files (*.test.ts, .mts, .js, .mjs) in ${paths.join(', ')}`);
  return [...new Set(files)];
}

/** Options of `runTests`. */
export interface RunTestsOptions extends FindTestsOptions {
  /** Test files running at once (`--test-concurrency`). */
  concurrency?: number;
  /** node:test reporter; default `spec`. */
  reporter?: string;
  /** Only tests whose name matches (`--test-name-pattern`). */
  namePattern?: string;
  /** Files or folders (their test files) to run instead of those found. */
  files?: string[];
  /** Run the built test files several to a process (infra/test-groups.ts). */
  group?: boolean;
  /** A times file (relative to root) whose times order the files no run kept a time of. */
  timesFrom?: string;
}

/** Where `klw test` keeps how long each test file ran (ms), relative to the project's root. */
export const TIMES_FILE = join('.klw', 'test-times.json');
/** The reporter that times the test files (infra/test-timer.mjs). */
const TIMER = new URL('./test-timer.mjs', import.meta.url).href;

/** The times (ms) by file in a times file; undefined when it is missing, unreadable or not times. */
export function readTimesFile(path: string): Record<string, number> | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, 'utf8'));
  } catch {
    return undefined;
  }
  if (!isRecord(parsed)) return undefined;
  return Object.fromEntries(
    Object.entries(parsed).filter((e): e is [string, number] => typeof e[1] === 'number' && e[1] >= 0),
  );
}

/**
 * The times of earlier runs, by file relative to root (none when the file is missing or
 * unreadable); with `timesFrom` (relative to root), its times stand for the files no run kept a
 * time of: times committed with a project whose clean clones (CI) have kept none.
 */
export function readTestTimes(root: string, timesFrom?: string): Record<string, number> {
  const kept = readTimesFile(join(root, TIMES_FILE)) ?? {};
  return timesFrom ? { ...(readTimesFile(resolve(root, timesFrom)) ?? {}), ...kept } : kept;
}

/**
 * The files slowest first: the files never timed (a new file may be a slow one), then the slowest
 * of the earlier runs; otherwise in the order given. `node --test` (Node 20 to 24) sorts the
 * paths it is given before it starts them, so on the command line this order decides nothing:
 * the times shape the groups (planGroups), whose planning takes files longest first.
 */
export function slowestFirst(files: string[], times: Record<string, number>): string[] {
  const known = (f: string) => Object.hasOwn(times, f);
  const rank = (f: string) => (known(f) ? times[f]! : Number.POSITIVE_INFINITY);
  return files
    .map((file, index) => ({ file, index }))
    .sort((a, b) => rank(b.file) - rank(a.file) || a.index - b.index)
    .map((e) => e.file);
}

/**
 * Adds the times `report` (the timer's output: absolute paths) to those kept under root; `names`
 * maps a path run (a built file) to its source's.
 */
export function keepTestTimes(root: string, report: string, names: Record<string, string> = {}): void {
  let measured: unknown;
  try {
    measured = JSON.parse(report);
  } catch {
    return; // the run ended before the timer wrote: nothing to keep
  }
  if (!isRecord(measured)) return;
  const times = readTestTimes(root);
  for (const [run, ms] of Object.entries(measured)) {
    const file = Object.hasOwn(names, run) ? names[run]! : run;
    const rel = isAbsolute(file) ? relative(resolve(root), file).split(sep).join('/') : file;
    if (typeof ms === 'number' && !rel.startsWith('..')) times[rel] = ms;
  }
  writeFileSafely(join(root, TIMES_FILE), `${JSON.stringify(times, null, 1)}\n`, { parents: true });
}

/** The files a run takes, found or given, slowest first (see `slowestFirst`). */
export function testFiles(root: string, options: RunTestsOptions = {}): string[] {
  const found = options.files?.length
    ? expandTestPaths(root, options.files, options.exclude)
    : findTestFiles(root, options);
  if (!found.length) {
    throw new KlwError(
      `no test files (*.test.ts, .mts, .js, .mjs) under ${(options.dirs ?? ['test', 'functions']).map((d) => resolve(root, d)).join(' or ')}`,
    );
  }
  return slowestFirst(found, readTestTimes(root, options.timesFrom));
}

/** Fails with how to install tsx when the project cannot load it. */
function requireTsx(root: string): void {
  try {
    createRequire(join(resolve(root), 'package.json')).resolve('tsx/package.json');
  } catch {
    throw new KlwError('TypeScript tests need tsx: npm install --save-dev tsx');
  }
}

/**
 * The `node --test` command line for the project's tests. With `prepared` (infra/test-build.ts),
 * TypeScript files run from their build, with source maps, and the reporter shown through
 * infra/test-names.mjs (`namesFile` holds the names) so that it names the sources; without, they
 * load through tsx, which the project must have installed (a devDependency of every klw
 * project). The files are listed slowest first, by the times kept from earlier runs
 * (`TIMES_FILE`; see slowestFirst); with `timesTo`, a second reporter writes this run's times to
 * that file.
 */
export function testCommand(
  root: string,
  options: RunTestsOptions = {},
  timesTo?: string,
  prepared?: { tests: PreparedTests; namesFile: string },
): string[] {
  return commandFor(root, testFiles(root, options), options, timesTo, prepared);
}

/** True for a TypeScript file, which runs from its build or through tsx. */
const isTypeScript = (file: string) => /\.m?ts$/.test(file);

/** testCommand for `files`, the run's files as testFiles gives them. */
function commandFor(
  root: string,
  files: string[],
  options: RunTestsOptions,
  timesTo?: string,
  prepared?: { tests: PreparedTests; namesFile: string },
): string[] {
  const args: string[] = [];
  const reporter = options.reporter ?? 'spec';
  if (prepared) {
    if (prepared.tests.tsx) requireTsx(root);
    args.push('--enable-source-maps', '--test', `--test-reporter=${namingReporter(reporter, prepared.namesFile)}`);
  } else {
    if (files.some(isTypeScript)) {
      requireTsx(root);
      args.push('--import', 'tsx');
    }
    args.push('--test', `--test-reporter=${reporter}`);
  }
  if (timesTo)
    args.push(
      '--test-reporter-destination=stdout',
      `--test-reporter=${TIMER}`,
      `--test-reporter-destination=${timesTo}`,
    );
  if (options.concurrency) args.push(`--test-concurrency=${options.concurrency}`);
  if (options.namePattern) args.push(`--test-name-pattern=${options.namePattern}`);
  return [...args, ...files.map((f) => prepared?.tests.run[f] ?? f)];
}

/**
 * The run's files with those that run from the build and may share a process (NEEDS_OWN_PROCESS)
 * in groups (planGroups, each in groupOrder), each group a module written under scratch and added
 * to `tests.run` under its own name; slowest first, a group taking the time of its files.
 */
function grouped(
  root: string,
  files: string[],
  tests: PreparedTests,
  { concurrency, timesFrom }: RunTestsOptions,
  scratch: string,
): string[] {
  const times = readTestTimes(root, timesFrom);
  const texts = new Map<string, string>();
  const textOf = (f: string) => texts.get(f) ?? texts.set(f, readFileSync(resolve(root, f), 'utf8')).get(f)!;
  const shareable = tests.built.filter((f) => {
    if (!files.includes(f)) return false;
    const text = textOf(f);
    return !NEEDS_OWN_PROCESS.test(text) && !importsFunctions(text);
  });
  const workers = concurrency ?? Math.max(1, availableParallelism() - 1);
  const groups = planGroups({ shareable, all: files, times, concurrency: workers })
    .filter((g) => g.length > 1)
    .map((g) => groupOrder(g, textOf));
  const inGroup = new Set(groups.flat());
  const typical = typicalTime(Object.values(times));
  const unitTimes: Record<string, number> = { ...times };
  const units = files.filter((f) => !inGroup.has(f));
  groups.forEach((group, index) => {
    const name = `group-${index + 1}`;
    const entry = join(scratch, 'groups', `${name}.mjs`);
    writeFileSafely(entry, groupEntry(group.map((f) => ({ source: resolve(root, f), run: tests.run[f]! }))), {
      parents: true,
    });
    tests.run[name] = entry;
    unitTimes[name] = group.reduce((sum, f) => sum + (Object.hasOwn(times, f) ? times[f]! : typical), 0);
    units.push(name);
  });
  return slowestFirst(units, unitTimes);
}

/**
 * The command line of the run: TypeScript files from their build when it builds; when it does
 * not (a syntax error, say), all through tsx, which shows the error in its file.
 */
async function preparedCommand(root: string, options: RunTestsOptions, scratch: string, timesTo?: string) {
  const files = testFiles(root, options);
  const none = { names: {}, functions: {} };
  if (!files.some(isTypeScript)) return { args: commandFor(root, files, options, timesTo), ...none };
  let tests: PreparedTests;
  try {
    tests = await prepareTests(root, files, scratch);
  } catch (error) {
    try {
      requireTsx(root);
    } catch {
      throw new KlwError(`the TypeScript tests do not build: ${describeThrown(error)}`);
    }
    const first =
      describeThrown(error)
        .split('\n')
        .find((l) => / ERROR: /.test(l)) ?? describeThrown(error);
    process.stderr.write(`klw: the TypeScript tests do not build (${first}); running them through tsx\n`);
    return { args: commandFor(root, files, options, timesTo), ...none };
  }
  const namesFile = join(scratch, 'names.json');
  writeFileSafely(namesFile, JSON.stringify(tests.names));
  const units = options.group ? grouped(root, files, tests, options, scratch) : files;
  const args = commandFor(root, units, options, timesTo, { tests, namesFile });
  return { args, names: tests.names, functions: tests.functions };
}

/**
 * Runs the project's tests with `node --test`, output passed through; resolves to the exit code.
 * A run of whole files (no `namePattern`) keeps their times under root for the next run's order.
 */
export async function runTests(root: string, options: RunTestsOptions = {}): Promise<number> {
  const scratch = mkdtempSync(join(tmpdir(), 'klw-test-'));
  const timesTo = options.namePattern ? undefined : join(scratch, 'times.json');
  try {
    const { args, names, functions } = await preparedCommand(root, options, scratch, timesTo);
    // A test run started from inside another one must not report to it, nor take its functions.
    const { NODE_TEST_CONTEXT: _context, [BUILT_FUNCTIONS_ENV]: _functions, ...env } = process.env;
    // describeConformance imports the functions' builds (none: their sources, through tsx).
    if (Object.keys(functions).length) env[BUILT_FUNCTIONS_ENV] = JSON.stringify(functions);
    const code = await new Promise<number>((resolvePromise, reject) => {
      const child = spawn(process.execPath, args, { cwd: root, env, stdio: 'inherit' });
      child.on('error', reject);
      child.on('exit', (code, signal) => resolvePromise(code ?? (signal ? 1 : 0)));
    });
    try {
      if (timesTo && existsSync(timesTo)) keepTestTimes(root, readFileSync(timesTo, 'utf8'), names);
    } catch {
      // The times only order the next run; a project that cannot keep them runs in name order.
    }
    return code;
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}
