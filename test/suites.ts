// Test files a test checks "pass under node --test" (the docs' examples, the tests klw new writes),
// run together in one process of node --import tsx --test: one tsx start (about 2 s of CPU) instead
// of one per file. Each file's tests run in a suite of their own, named by the caller, which also
// fails when the file ran no test; each file's result is its suite's own TAP line.
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';

/** The output of one run of several test files, and each file's result by its suite's name. */
export interface SuitesRun {
  code: number;
  stdout: string;
  stderr: string;
  /** 'ok', 'not ok', or undefined when no suite of that name reported. */
  result(name: string): 'ok' | 'not ok' | undefined;
}

/** Escapes `text` for a RegExp. */
const literal = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * Writes `entry` (an .mjs file) to import each of `suites` (name, absolute path of a test file)
 * inside a suite of that name, and runs it with node --import tsx --test in `cwd`, outside of any
 * test run of this process (NODE_TEST_CONTEXT left out). Files built into JavaScript run without
 * tsx (`tsx: false`), with their source maps, as `klw test` runs its build of them.
 */
export function runSuites(
  entry: string,
  suites: Array<[string, string]>,
  cwd: string,
  { tsx = true }: { tsx?: boolean } = {},
): Promise<SuitesRun> {
  const urls = suites.map(([name, file]) => [name, pathToFileURL(file).href]);
  writeFileSync(
    entry,
    [
      "import assert from 'node:assert/strict';",
      "import { afterEach, describe, it } from 'node:test';",
      `for (const [name, url] of ${JSON.stringify(urls)}) {`,
      '  describe(name, async () => {',
      '    let ran = 0;',
      '    afterEach(() => { ran++; });',
      '    await import(url);',
      "    it('ran a test of the file', () => assert.ok(ran > 0, `${name}: no test ran`));",
      '  });',
      '}',
      '',
    ].join('\n'),
  );
  const { NODE_TEST_CONTEXT: _context, ...env } = process.env;
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [...(tsx ? ['--import', 'tsx'] : ['--enable-source-maps']), '--test', '--test-reporter=tap', entry],
      { cwd, encoding: 'utf8', env, maxBuffer: 16 << 20 },
      (err, stdout, stderr) => {
        const code = err ? Number((err as { code?: number }).code ?? 1) : 0;
        const result = (name: string) => {
          const line = new RegExp(`^(not )?ok \\d+ - ${literal(name)}$`, 'm').exec(stdout);
          return line ? (line[1] ? 'not ok' : 'ok') : undefined;
        };
        resolve({ code, stdout, stderr, result });
      },
    );
  });
}
