// `npm test` runs the test files of a few folders (pure library tests) in one process each, through
// the group files of test/groups/, instead of one process per file: each process loads tsx and
// compiles the toolkit's modules again, a second or more of CPU per file, often more than its tests
// take. The files of a group run one after another, each as a suite named after it
// (infra/test-group.mjs, as `klw test --group` runs them); what a test changes in the process it
// restores itself (a file that leaves the directory, environment or process listeners changed
// fails). A file that needs a process of its own (it changes directory, exits, starts child
// processes or threads, or listens for process events) still gets one, from its group.
// A group file imports its files through a template literal (`../lib/${name}.test.ts`), which
// `klw test`'s build bundles as a pattern, so the group runs from the build like any test file.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { it } from 'node:test';
import { runFile } from '../infra/test-group.mjs';
import { groupOrder } from '../infra/test-groups.ts';
import { needsTsx } from '../infra/test-build.ts';
import { fileURLToPath } from 'node:url';

/** The repository. */
const ROOT = fileURLToPath(new URL('../', import.meta.url));

/** What a test file does that others in its process would feel. */
export const NEEDS_OWN_PROCESS =
  /\bprocess\.(?:chdir|exit|on|once|abort)\(|node:child_process|node:worker_threads|node:cluster/;

/** The test files under `dirs` (relative to the repository), sorted, with `/` separators. */
export function testFilesUnder(dirs: string[]): string[] {
  return dirs
    .flatMap((dir) =>
      readdirSync(join(ROOT, dir), { recursive: true, withFileTypes: true })
        .filter((d) => d.isFile() && /\.test\.m?ts$/.test(d.name))
        .map((d) => relative(ROOT, join(d.parentPath, d.name)).split('\\').join('/')),
    )
    .sort();
}

/** Imports a test file, given relative to the repository. */
export type ImportTest = (file: string) => Promise<unknown>;

/**
 * Runs the test files under `dirs` in this process, one after another (groupOrder), each imported by `load`;
 * each in a child through tsx, as `klw test` would, those that need a process of their own
 * (NEEDS_OWN_PROCESS), that load TypeScript at run time, which the group's build cannot give
 * them (needsTsx), or are not .test.ts files (which a group's pattern leaves out).
 */
export async function runGroup(dirs: string[], load: ImportTest): Promise<void> {
  const texts = new Map(testFilesUnder(dirs).map((file) => [file, readFileSync(join(ROOT, file), 'utf8')]));
  for (const file of groupOrder([...texts.keys()], (f) => texts.get(f)!)) {
    const text = texts.get(file)!;
    if (!file.endsWith('.test.ts') || NEEDS_OWN_PROCESS.test(text) || needsTsx(text)) {
      it(`${file} (in a process of its own)`, () => {
        const { NODE_TEST_CONTEXT: _context, ...env } = process.env;
        const run = spawnSync(process.execPath, ['--import', 'tsx', '--test', file], {
          cwd: ROOT,
          env,
          encoding: 'utf8',
        });
        assert.equal(run.status, 0, `${file} failed:\n${run.stdout}\n${run.stderr}`);
      });
    } else await runFile(join(ROOT, file), join(ROOT, file), () => load(file));
  }
}
