// The docs' type-check (type-check.mjs) reports what a user would see of the examples: their own
// errors, the configuration's and any file that does not parse, not the errors inside the code
// they import; it lists every file the program read, and exits 1 on any error.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { listedFiles } from './kept-check.ts';

const TYPE_CHECK = fileURLToPath(new URL('./type-check.mjs', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'klw-type-check-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** Writes `files` (relative path to text) under a new folder of `dir`; the folder. */
function project(files: Record<string, string>): string {
  const root = mkdtempSync(join(dir, 'case-'));
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(join(root, name, '..'), { recursive: true });
    writeFileSync(join(root, name), text);
  }
  return root;
}

/** The examples' project: its own files only (`include`), the smallest standard library. */
const tsconfig = (extra: Record<string, unknown> = {}) =>
  JSON.stringify({
    compilerOptions: {
      strict: true,
      noEmit: true,
      lib: ['es5'],
      types: [],
      allowImportingTsExtensions: true,
      ...extra,
    },
    include: ['./**/*.ts'],
  });

/** Runs the check of `root`/examples from `root`: its exit code and output. */
function check(root: string): Promise<{ code: number; stdout: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [TYPE_CHECK, join(root, 'examples', 'tsconfig.json')],
      { cwd: root, encoding: 'utf8' },
      (err, stdout) => resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout }),
    );
  });
}

/** A package whose code holds an error of its own, which the examples import. */
const PACKAGE = 'export function double(n: number): number {\n  const text: string = n;\n  return n * 2;\n}\n';

describe("the docs' type-check", () => {
  it("passes examples that use the package correctly, whatever the package's own code holds, and lists what it read", async () => {
    const root = project({
      'examples/tsconfig.json': tsconfig(),
      'examples/a.ts': "import { double } from '../pkg/index.ts';\nexport const four: number = double(2);\n",
      'pkg/index.ts': PACKAGE,
    });
    const out = await check(root);
    assert.equal(out.code, 0, out.stdout);
    const listed = listedFiles(out.stdout);
    assert.ok(listed.includes(join(root, 'examples', 'a.ts')), out.stdout);
    assert.ok(listed.includes(join(root, 'pkg', 'index.ts')), out.stdout);
    assert.deepEqual(
      out.stdout.split('\n').filter((line) => line && !listed.includes(line)),
      [],
      'nothing but the files read',
    );
  });

  it("reports the examples' errors, a file that does not parse and the configuration's, not the package's", async () => {
    const root = project({
      'examples/tsconfig.json': tsconfig({ noSuchOption: true }),
      'examples/a.ts': "import { double } from '../pkg/index.ts';\nexport const four: string = double(2);\n",
      'examples/b.ts': "import '../pkg/broken.ts';\n",
      'pkg/index.ts': PACKAGE,
      'pkg/broken.ts': 'export const one = ;\n',
    });
    const out = await check(root);
    assert.equal(out.code, 1);
    const listed = listedFiles(out.stdout);
    const errors = out.stdout.split('\n').filter((line) => /error TS/.test(line) && !listed.includes(line));
    assert.equal(errors.length, 3, out.stdout);
    assert.match(
      out.stdout,
      /^examples\/a\.ts\(2,14\): error TS2322: Type 'number' is not assignable to type 'string'/m,
    );
    assert.match(out.stdout, /^pkg\/broken\.ts\(1,20\): error TS1109: Expression expected/m);
    assert.match(
      out.stdout,
      /^examples\/tsconfig\.json\(1,\d+\): error TS5023: Unknown compiler option 'noSuchOption'/m,
    );
    assert.doesNotMatch(out.stdout, /pkg\/index\.ts\(/, "the package's own error is left to its own check");
  });
});
