import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { isAbsolute, join, relative, resolve, sep } from 'node:path';
import { KlwError } from './errors.ts';
import { writeFileSafely } from './files.ts';
import { isRecord } from './json.ts';

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
}

/** Where `klw test` keeps how long each test file ran (ms), relative to the project's root. */
export const TIMES_FILE = join('.klw', 'test-times.json');
/** The reporter that times the test files (infra/test-timer.mjs). */
const TIMER = new URL('./test-timer.mjs', import.meta.url).href;

/** The times of earlier runs, by file relative to root; none when the file is missing or unreadable. */
export function readTestTimes(root: string): Record<string, number> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(join(root, TIMES_FILE), 'utf8'));
  } catch {
    return {};
  }
  if (!isRecord(parsed)) return {};
  return Object.fromEntries(
    Object.entries(parsed).filter((e): e is [string, number] => typeof e[1] === 'number' && e[1] >= 0),
  );
}

/**
 * The files in the order to start them, so that both workers stay busy to the end rather than
 * one running a long file started last: the slowest of the earlier runs first, and before them
 * the files never timed (a new file may be a slow one); otherwise in the order given.
 */
export function slowestFirst(files: string[], times: Record<string, number>): string[] {
  const known = (f: string) => Object.hasOwn(times, f);
  const rank = (f: string) => (known(f) ? times[f]! : Number.POSITIVE_INFINITY);
  return files
    .map((file, index) => ({ file, index }))
    .sort((a, b) => rank(b.file) - rank(a.file) || a.index - b.index)
    .map((e) => e.file);
}

/** Adds the times `report` (the timer's output: absolute paths) to those kept under root. */
export function keepTestTimes(root: string, report: string): void {
  let measured: unknown;
  try {
    measured = JSON.parse(report);
  } catch {
    return; // the run ended before the timer wrote: nothing to keep
  }
  if (!isRecord(measured)) return;
  const times = readTestTimes(root);
  for (const [file, ms] of Object.entries(measured)) {
    const rel = isAbsolute(file) ? relative(resolve(root), file).split(sep).join('/') : file;
    if (typeof ms === 'number' && !rel.startsWith('..')) times[rel] = ms;
  }
  writeFileSafely(join(root, TIMES_FILE), `${JSON.stringify(times, null, 1)}\n`, { parents: true });
}

/**
 * The `node --test` command line for the project's tests: TypeScript files are loaded
 * through tsx, which the project must have installed (a devDependency of every klw project).
 * The files start slowest first, by the times kept from earlier runs (`TIMES_FILE`); with
 * `timesTo`, a second reporter writes this run's times to that file.
 */
export function testCommand(root: string, options: RunTestsOptions = {}, timesTo?: string): string[] {
  const found = options.files?.length
    ? expandTestPaths(root, options.files, options.exclude)
    : findTestFiles(root, options);
  const files = slowestFirst(found, readTestTimes(root));
  if (!files.length) {
    throw new KlwError(
      `no test files (*.test.ts, .mts, .js, .mjs) under ${(options.dirs ?? ['test', 'functions']).map((d) => resolve(root, d)).join(' or ')}`,
    );
  }
  const args: string[] = [];
  if (files.some((f) => /\.m?ts$/.test(f))) {
    try {
      createRequire(join(resolve(root), 'package.json')).resolve('tsx/package.json');
    } catch {
      throw new KlwError('TypeScript tests need tsx: npm install --save-dev tsx');
    }
    args.push('--import', 'tsx');
  }
  args.push('--test', `--test-reporter=${options.reporter ?? 'spec'}`);
  if (timesTo)
    args.push(
      '--test-reporter-destination=stdout',
      `--test-reporter=${TIMER}`,
      `--test-reporter-destination=${timesTo}`,
    );
  if (options.concurrency) args.push(`--test-concurrency=${options.concurrency}`);
  if (options.namePattern) args.push(`--test-name-pattern=${options.namePattern}`);
  return [...args, ...files];
}

/**
 * Runs the project's tests with `node --test`, output passed through; resolves to the exit code.
 * A run of whole files (no `namePattern`) keeps their times under root for the next run's order.
 */
export async function runTests(root: string, options: RunTestsOptions = {}): Promise<number> {
  const scratch = options.namePattern ? undefined : mkdtempSync(join(tmpdir(), 'klw-test-times-'));
  const timesTo = scratch && join(scratch, 'times.json');
  const args = testCommand(root, options, timesTo);
  // A test run started from inside another one must not report to it.
  const { NODE_TEST_CONTEXT: _context, ...env } = process.env;
  try {
    const code = await new Promise<number>((resolvePromise, reject) => {
      const child = spawn(process.execPath, args, { cwd: root, env, stdio: 'inherit' });
      child.on('error', reject);
      child.on('exit', (code, signal) => resolvePromise(code ?? (signal ? 1 : 0)));
    });
    try {
      if (timesTo && existsSync(timesTo)) keepTestTimes(root, readFileSync(timesTo, 'utf8'));
    } catch {
      // The times only order the next run; a project that cannot keep them runs in name order.
    }
    return code;
  } finally {
    if (scratch) rmSync(scratch, { recursive: true, force: true });
  }
}
