import { spawn } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, relative, resolve, sep } from 'node:path';
import { KlwError } from './errors.ts';

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

/**
 * The `node --test` command line for the project's tests: TypeScript files are loaded
 * through tsx, which the project must have installed (a devDependency of every klw project).
 */
export function testCommand(root: string, options: RunTestsOptions = {}): string[] {
  const files = options.files?.length
    ? expandTestPaths(root, options.files, options.exclude)
    : findTestFiles(root, options);
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
  if (options.concurrency) args.push(`--test-concurrency=${options.concurrency}`);
  if (options.namePattern) args.push(`--test-name-pattern=${options.namePattern}`);
  return [...args, ...files];
}

/** Runs the project's tests with `node --test`, output passed through; resolves to the exit code. */
export function runTests(root: string, options: RunTestsOptions = {}): Promise<number> {
  const args = testCommand(root, options);
  // A test run started from inside another one must not report to it.
  const { NODE_TEST_CONTEXT: _context, ...env } = process.env;
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, args, { cwd: root, env, stdio: 'inherit' });
    child.on('error', reject);
    child.on('exit', (code, signal) => resolvePromise(code ?? (signal ? 1 : 0)));
  });
}
