import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { KlwError } from '../errors.ts';
import { readTimesFile, runTests } from '../test-runner.ts';
import type { CommandContext } from './context.ts';
import { KEPT_BUILDS_ENV, nodeOption } from './options.ts';

/** The options of `klw test`. */
interface TestCommandOptions {
  exclude?: string[];
  concurrency?: number;
  reporter: string;
  namePattern?: string;
  group?: boolean;
  keepBuilds?: string;
  timesFrom?: string;
}

/** Adds `klw test`. */
export function register(cli: Command, { root }: CommandContext): void {
  cli
    .command('test')
    .description(
      'run the tests under test/ and functions/ (*.test.ts, .mts, .js, .mjs) with node --test; TypeScript from a cached esbuild build, or through tsx when a file loads TypeScript at run time',
    )
    .argument('[files...]', 'only these test files, or the test files under these folders')
    .option('--exclude <dirs...>', 'leave these folders out (test/e2e, say)')
    .option('--concurrency <n>', 'test files run at once', (v: string) => Number.parseInt(v, 10))
    .option('--reporter <name>', 'node:test reporter', 'spec')
    .option('--name-pattern <regex>', 'only tests whose name matches')
    .option(
      '--group',
      'run built test files several to a process, each as a suite named after it (a file with the line // klw-test: own-process keeps its own)',
    )
    .option(
      '--keep-builds <dir>',
      'keep the function bundles the tests build in this folder (relative to the project) and reuse them while every file they read is unchanged',
    )
    .option(
      '--times-from <file>',
      'order the files no run has timed here by the times in this file (relative to the project; a copy of .klw/test-times.json committed for clean clones such as CI)',
    )
    .addOption(nodeOption())
    .action(async (files: string[], options: TestCommandOptions) => {
      // The test processes inherit it: buildFunction (infra/build-kept.ts) reads it there.
      if (options.keepBuilds) process.env[KEPT_BUILDS_ENV] = resolve(root(), options.keepBuilds);
      if (options.timesFrom) {
        const file = resolve(root(), options.timesFrom);
        if (!existsSync(file)) throw new KlwError(`--times-from ${options.timesFrom}: no such file in ${root()}`);
        if (!readTimesFile(file))
          throw new KlwError(
            `--times-from ${options.timesFrom}: not a times file: give a JSON object of milliseconds by test file, as .klw/test-times.json holds`,
          );
      }
      const code = await runTests(root(), {
        files,
        reporter: options.reporter,
        ...(options.exclude ? { exclude: options.exclude } : {}),
        ...(options.concurrency ? { concurrency: options.concurrency } : {}),
        ...(options.namePattern ? { namePattern: options.namePattern } : {}),
        ...(options.group ? { group: true } : {}),
        ...(options.timesFrom ? { timesFrom: options.timesFrom } : {}),
      });
      if (code !== 0) throw new KlwError(`tests failed (node --test exited with ${code})`);
    });
}
