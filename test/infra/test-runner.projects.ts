// Projects for the tests of `klw test` run from the build (infra/test-build.ts, test-names.mjs,
// test-tsx.mjs): folders of files, and klw test run in them as npm test runs it.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after } from 'node:test';
import { testCacheRoot } from '../../infra/test-build.ts';

const root = process.cwd();
const KLW = join(root, 'infra', 'bin', 'klw.mjs');

/**
 * Two scratch folders, removed after the file's tests: `outside` the repository, where neither
 * tsx nor its TypeScript settings are found, and `inside`, where tsx resolves.
 */
export function scratchFolders(): { outside: string; inside: string } {
  const outside = mkdtempSync(join(tmpdir(), 'klw-test-build-'));
  const inside = mkdtempSync(join(root, '.klw-test-build-'));
  after(() => {
    rmSync(outside, { recursive: true, force: true });
    rmSync(inside, { recursive: true, force: true });
  });
  return { outside, inside };
}

/** A project folder under `base` with the given files. */
export function project(base: string, name: string, files: Record<string, string>): string {
  const dir = join(base, name);
  for (const [file, text] of Object.entries(files)) {
    mkdirSync(join(dir, file, '..'), { recursive: true });
    writeFileSync(join(dir, file), text);
  }
  return dir;
}

/** Runs `klw test` in `dir`; returns its exit code and output. */
export function klwTest(dir: string, ...args: string[]): { code: number; out: string } {
  const { NODE_TEST_CONTEXT: _context, ...env } = process.env;
  const run = spawnSync(process.execPath, [KLW, '--root', dir, 'test', ...args], { cwd: dir, env, encoding: 'utf8' });
  return { code: run.status ?? 1, out: `${run.stdout}${run.stderr}` };
}

/**
 * The project `dir` with a tsx of its own (found before any other) that fails whatever loads it:
 * a test that passes there ran from the build. Returns `dir`.
 */
export function withFailingTsx(dir: string): string {
  const tsx = join(dir, 'node_modules', 'tsx');
  mkdirSync(tsx, { recursive: true });
  const exports = { '.': './index.mjs', './package.json': './package.json' };
  writeFileSync(join(tsx, 'package.json'), JSON.stringify({ name: 'tsx', type: 'module', exports }));
  writeFileSync(join(tsx, 'index.mjs'), "throw new Error('tsx loaded');\n");
  return dir;
}

/** The build folders of a project's tests. */
export const builds = (dir: string) => readdirSync(testCacheRoot(dir));

/** A test file that fails at its line 8, importing a helper (test/helper.ts). */
export const FAILING = `import assert from 'node:assert/strict';
import { it } from 'node:test';
import { twice } from './helper.ts';

type Count = number;
it('adds', () => {
  const n: Count = twice(2);
  assert.equal(n, 5);
});
`;

/** The helper FAILING imports. */
export const HELPER = 'export const twice = (n: number): number => n * 2;\n';
