// klw test runs TypeScript test files from a cached esbuild build (infra/test-build.ts) and shows
// what it shows when the sources run: the source paths, the .ts lines, the exit code; a file that
// loads TypeScript at run time runs through tsx; a changed source or a tampered cache is rebuilt.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { NEEDS_TSX, testCacheRoot } from '../../infra/test-build.ts';
import { readTestTimes } from '../../infra/test-runner.ts';

const root = process.cwd();
const KLW = join(root, 'infra', 'bin', 'klw.mjs');
// Outside the repository: neither tsx nor the repository's TypeScript settings are found there.
const outside = mkdtempSync(join(tmpdir(), 'klw-test-build-'));
// Inside the repository, so that tsx resolves for the files that need it.
const inside = mkdtempSync(join(root, '.klw-test-build-'));
after(() => {
  rmSync(outside, { recursive: true, force: true });
  rmSync(inside, { recursive: true, force: true });
});

/** A project folder with the given files. */
function project(base: string, name: string, files: Record<string, string>): string {
  const dir = join(base, name);
  for (const [file, text] of Object.entries(files)) {
    mkdirSync(join(dir, file, '..'), { recursive: true });
    writeFileSync(join(dir, file), text);
  }
  return dir;
}

/** Runs `klw test` in `dir`; returns its exit code and output. */
function klwTest(dir: string, ...args: string[]): { code: number; out: string } {
  const { NODE_TEST_CONTEXT: _context, ...env } = process.env;
  const run = spawnSync(process.execPath, [KLW, '--root', dir, 'test', ...args], { cwd: dir, env, encoding: 'utf8' });
  return { code: run.status ?? 1, out: `${run.stdout}${run.stderr}` };
}

/** The build folders of a project's tests. */
const builds = (dir: string) => readdirSync(testCacheRoot(dir));

const FAILING = `import assert from 'node:assert/strict';
import { it } from 'node:test';
import { twice } from './helper.ts';

type Count = number;
it('adds', () => {
  const n: Count = twice(2);
  assert.equal(n, 5);
});
`;

describe('klw test from the build', () => {
  it('reports a failing built file by its source path and .ts line, with the exit code, without tsx', () => {
    const dir = project(outside, 'failing', {
      'test/a.test.ts': FAILING,
      'test/helper.ts': 'export const twice = (n: number): number => n * 2;\n',
      'test/b.test.ts': "throw new Error('broken at load');\n",
    });
    const { code, out } = klwTest(dir, '--reporter', 'spec');
    assert.equal(code, 1, out);
    assert.match(out, /klw: tests failed \(node --test exited with 1\)/);
    assert.match(out, /^test at test\/a\.test\.ts:6:1$/m, 'the failing test, at its .ts line');
    assert.match(out, new RegExp(`\\(${join(dir, 'test', 'a.test.ts')}:8:10\\)`), 'the stack, at the assertion');
    assert.match(out, new RegExp(`✖ ${join(dir, 'test', 'b.test.ts')} `), 'a file failing to load, by its source');
    assert.match(out, /Error: broken at load/);
    assert.doesNotMatch(out, /node_modules\/\.cache|\.mjs/, 'no built path is shown');
    assert.deepEqual(Object.keys(readTestTimes(dir)).sort(), ['test/a.test.ts', 'test/b.test.ts']);
  });

  it('passes a custom reporter the source paths, and filters by test name', () => {
    const dir = project(outside, 'reporter', {
      'test/a.test.ts': "import { it } from 'node:test';\nit('one', () => {});\nit('two', () => {});\n",
      'files.mjs':
        "export default async function* (source) { for await (const e of source) if ((e.type === 'test:pass' && !e.data.skip) || e.type === 'test:dequeue') yield `${e.type === 'test:pass' ? 'pass' : 'start'} ${e.data.name} ${e.data.file}\\n`; }\n",
    });
    const { code, out } = klwTest(dir, '--reporter', './files.mjs', '--name-pattern', 'two');
    assert.equal(code, 0, out);
    const file = join(dir, 'test', 'a.test.ts');
    assert.match(out, new RegExp(`^pass two ${file}$`, 'm'));
    assert.match(out, new RegExp(`^start ${file} ${file}$`, 'm'), 'the file itself, named after its source');
    assert.doesNotMatch(out, /^pass one /m, 'left out by its name');
  });

  it('builds again when a source changes, and reuses the build while none does', () => {
    const dir = project(outside, 'rebuild', {
      'test/a.test.ts': FAILING,
      'test/helper.ts': 'export const twice = (n: number): number => n * 2;\n',
    });
    assert.equal(klwTest(dir).code, 1);
    const [build] = builds(dir);
    const built = readdirSync(join(testCacheRoot(dir), build!));
    writeFileSync(join(dir, 'test', 'helper.ts'), 'export const twice = (n: number): number => n * 2 + 1;\n');
    const { code, out } = klwTest(dir);
    assert.equal(code, 0, out);
    assert.deepEqual(builds(dir), [build], 'one build folder per set of files');
    assert.notDeepEqual(readdirSync(join(testCacheRoot(dir), build!)), built, 'a new build beside the old');
    const again = readdirSync(join(testCacheRoot(dir), build!));
    assert.equal(klwTest(dir).code, 0);
    assert.deepEqual(readdirSync(join(testCacheRoot(dir), build!)), again, 'reused');
  });

  it('builds the files of a test pattern-imported from a folder, a file added there too', () => {
    const passing = (name: string) => `import { it } from 'node:test';\nit('${name}', () => {});\n`;
    const dir = project(outside, 'pattern', {
      'test/group.test.ts': "for (const name of ['a', 'b']) await import(`./grouped/${name}.test.ts`);\n",
      'test/grouped/a.test.ts': passing('from a'),
    });
    const first = klwTest(dir, '--reporter', 'tap', 'test/group.test.ts');
    assert.notEqual(first.code, 0, 'b.test.ts is missing');
    writeFileSync(join(dir, 'test', 'grouped', 'b.test.ts'), passing('from b'));
    const { code, out } = klwTest(dir, '--reporter', 'tap', 'test/group.test.ts');
    assert.equal(code, 0, out);
    assert.match(out, /ok \d+ - from a/);
    assert.match(out, /ok \d+ - from b/);
  });

  it('builds again over a tampered build, and over a link planted as the cache folder', () => {
    const dir = project(outside, 'hostile', {
      'test/a.test.ts': "import { it } from 'node:test';\nit('passes', () => {});\n",
    });
    assert.equal(klwTest(dir).code, 0);
    const [build] = builds(dir);
    const content = readdirSync(join(testCacheRoot(dir), build!)).find((n) => /^[0-9a-f]{16}$/.test(n))!;
    // Of the same size, so that only its hash tells.
    const file = join(testCacheRoot(dir), build!, content, 'test', 'a.test.mjs');
    writeFileSync(file, 'process.exit(3);'.padEnd(readFileSync(file).length));
    let run = klwTest(dir);
    assert.equal(run.code, 0, run.out);
    const elsewhere = project(outside, 'elsewhere', { 'keep.txt': 'kept' });
    rmSync(testCacheRoot(dir), { recursive: true });
    symlinkSync(elsewhere, testCacheRoot(dir));
    run = klwTest(dir);
    assert.equal(run.code, 0, run.out);
    assert.deepEqual(readdirSync(elsewhere), ['keep.txt'], 'the link is not followed');
  });

  it('says why when the tests do not build and tsx is not there to show it', () => {
    const dir = project(outside, 'syntax', { 'test/a.test.ts': 'const = ;\n' });
    const { code, out } = klwTest(dir);
    assert.equal(code, 1, out);
    assert.match(out, /klw: the TypeScript tests do not build: .*test\/a\.test\.ts:1:6: ERROR/s);
  });
});

describe('klw test through tsx', () => {
  it('runs a file that imports TypeScript at run time through tsx, as the source file, beside built ones', () => {
    const dir = project(inside, 'tsx', {
      'test/dynamic.test.ts': `import assert from 'node:assert/strict';
import { it } from 'node:test';
import { pathToFileURL } from 'node:url';
it('imports a .ts file named at run time', async () => {
  const name = ['helper', 'ts'].join('.');
  const { twice } = await import(pathToFileURL(\`\${process.cwd()}/test/\${name}\`).href);
  assert.equal(twice(3), 6);
  assert.equal(process.argv[1], \`\${process.cwd()}/test/dynamic.test.ts\`);
});
`,
      'test/static.test.ts': `import assert from 'node:assert/strict';
import { it } from 'node:test';
import { twice } from './helper.ts';
it('is built', () => {
  assert.equal(twice(2), 4);
  assert.match(process.argv[1]!, /node_modules\\/\\.cache\\/klw-test\\/.*\\/test\\/static\\.test\\.mjs$/);
  assert.equal(import.meta.filename, \`\${process.cwd()}/test/static.test.ts\`);
});
`,
      'test/helper.ts': 'export const twice = (n: number): number => n * 2;\n',
    });
    const { code, out } = klwTest(dir, '--reporter', 'tap');
    assert.equal(code, 0, out);
    assert.match(out, /^# pass 2$/m);
    assert.deepEqual(Object.keys(readTestTimes(dir)).sort(), ['test/dynamic.test.ts', 'test/static.test.ts']);
  });

  it('runs all files through tsx when the build fails, which shows the error in its file', () => {
    const dir = project(inside, 'broken', {
      'test/a.test.ts': "import { it } from 'node:test';\nit('still runs', () => {});\n",
      'test/b.test.ts': 'const = ;\n',
    });
    const { code, out } = klwTest(dir, '--reporter', 'tap');
    assert.equal(code, 1, out);
    assert.match(out, /ok \d+ - still runs/);
    assert.match(out, /b\.test\.ts/);
  });

  it('is what a file that loads TypeScript at run time does', () => {
    for (const text of [
      'await import(file)',
      'await import(pathToFileURL(x).href)',
      'import(`${base}/x.ts`)',
      "require('./x.ts')",
      "require.resolve('x')",
      "createRequire(import.meta.url).resolve('kube-lambda-webhooks/testing')",
      'const here = __dirname;',
      "import.meta.resolve('./x.ts')",
      'void describeConformance();',
    ])
      assert.match(text, NEEDS_TSX, text);
    for (const text of [
      "await import('./x.ts')",
      'await import("node:fs")',
      "await import('./x.ts', { with: {} })",
      'import(`./grouped/${name}.test.ts`)',
      'import(`../lib/${name}.test.ts`)',
      "import { it } from 'node:test';",
      'import.meta.dirname',
      'const requirement = 1;',
    ])
      assert.doesNotMatch(text, NEEDS_TSX, text);
  });
});
