// klw test runs TypeScript test files from a cached esbuild build (infra/test-build.ts): rebuilt
// when a source changes or the cache is tampered with; a file that loads TypeScript at run time,
// or a build that fails, runs through tsx.
// klw-test: no-tsx (its import() calls are text of the files it writes)
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { NEEDS_TSX, NO_TSX_MARKER, needsTsx, testCacheRoot } from '../../infra/test-build.ts';
import { findTestFiles } from '../../infra/test-runner.ts';
import { builds, FAILING, HELPER, klwTest, project, scratchFolders } from './test-runner.projects.ts';

const { outside, inside } = scratchFolders();

describe('the build of the test files', () => {
  it('builds again when a source changes, and reuses the build while none does', () => {
    const dir = project(outside, 'rebuild', {
      'test/a.test.ts': FAILING,
      'test/helper.ts': HELPER,
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

  // A project whose test file says it loads only JavaScript at run time: its first run, which
  // builds it, shows that file run from the build; the project, built, is then tampered with.
  let marked: { dir: string; code: number; out: string } | undefined;
  /** The project and its first run, made by the first test that reads them. */
  const markedRun = () => {
    if (marked) return marked;
    const dir = project(outside, 'marked', {
      'test/bundle.mjs': 'export const answer = 42;\n',
      'test/a.test.ts': `${NO_TSX_MARKER}
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { pathToFileURL } from 'node:url';
it('imports a bundle named at run time', async () => {
  const { answer } = await import(pathToFileURL(\`\${process.cwd()}/test/bundle.mjs\`).href);
  assert.equal(answer, 42);
  assert.match(process.argv[1]!, /node_modules\\/\\.cache\\/klw-test\\/.*\\/test\\/a\\.test\\.mjs$/);
});
`,
    });
    marked = { dir, ...klwTest(dir) };
    return marked;
  };

  it('builds again over a tampered build, and over a link planted as the cache folder', () => {
    const { dir, code, out } = markedRun();
    assert.equal(code, 0, out);
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
  it('runs all files through tsx when the build fails, which shows the error in its file', () => {
    const dir = project(inside, 'broken', {
      'test/a.test.ts': "import { it } from 'node:test';\nit('still runs', () => {});\n",
      'test/b.test.ts': 'const = ;\n',
    });
    const { code, out } = klwTest(dir, '--reporter', 'tap');
    assert.equal(code, 1, out);
    assert.match(
      out,
      /^klw: the TypeScript tests do not build \(test\/b\.test\.ts:1:6: ERROR: .*\); running them through tsx$/m,
    );
    assert.match(out, /ok \d+ - still runs/);
    assert.match(out, /b\.test\.ts/);
  });

  it('runs from the build a file that says it loads only JavaScript at run time', () => {
    const { code, out } = markedRun();
    assert.equal(code, 0, out);
    assert.ok(needsTsx('await import(file)'));
    assert.ok(!needsTsx(`${NO_TSX_MARKER}\nawait import(file)`));
    assert.ok(!needsTsx(`const a = 1;\n  // klw-test: no-tsx\nawait import(file)`));
    assert.ok(needsTsx(`// klw-test: no-tsx-please\nawait import(file)`));
  });

  it('runs every TypeScript test file of npm test from the build, none through tsx', () => {
    const root = process.cwd();
    const files = findTestFiles(root, {
      dirs: ['test', 'functions', 'packages'],
      exclude: ['test/e2e', 'test/journey'],
    }).filter((f) => /\.m?ts$/.test(f));
    assert.ok(files.length > 100, files.join(', '));
    assert.deepEqual(
      files.filter((f) => needsTsx(readFileSync(join(root, f), 'utf8'))),
      [],
      'a file that loads only JavaScript at run time says so with // klw-test: no-tsx; one that loads TypeScript builds it first',
    );
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
    ])
      assert.match(text, NEEDS_TSX, text);
    for (const text of [
      "await import('./x.ts')",
      'await import("node:fs")',
      "await import('./x.ts', { with: {} })",
      'import(`./grouped/${name}.test.ts`)',
      'import(`../lib/${name}.test.ts`)',
      // The functions it imports are built with the file (BUILT_FUNCTIONS_ENV).
      'void describeConformance();',
      "import { it } from 'node:test';",
      'import.meta.dirname',
      'const requirement = 1;',
      'const script = `const m = await import(${JSON.stringify(file)});`;',
    ])
      assert.doesNotMatch(text, NEEDS_TSX, text);
  });
});
