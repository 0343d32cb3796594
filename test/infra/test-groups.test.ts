// klw test --group runs built test files several to a process (infra/test-groups.ts): each file
// exactly once, in groups of about equal time; a file that fails fails the run under its source's
// name; a file that ends the process, or says so, keeps a process of its own.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import {
  groupEntry,
  groupOrder,
  NEEDS_OWN_PROCESS,
  OWN_PROCESS_MARKER,
  PATCHES_BUILTINS,
  planGroups,
} from '../../infra/test-groups.ts';
import { readTestTimes, TIMES_FILE } from '../../infra/test-runner.ts';
import { FAILING, HELPER, klwTest, project, scratchFolders } from './test-runner.projects.ts';

const { outside } = scratchFolders();

/** A test file that writes this process's id to `name` under the project's `pids` folder. */
const pidOf = (name: string) =>
  `import { writeFileSync } from 'node:fs';\nimport { it } from 'node:test';\nit('${name}', () => writeFileSync(new URL('../pids/${name}', import.meta.url), String(process.pid)));\n`;

describe('groups of test files', () => {
  it('put every shareable file in exactly one group, of about equal time, longest first', () => {
    const times = { a: 50, b: 40, c: 30, d: 20, e: 10, long: 100 };
    const groups = planGroups({
      shareable: ['a', 'b', 'c', 'd', 'e'],
      all: ['a', 'b', 'c', 'd', 'e', 'long'],
      times,
      concurrency: 2,
    });
    assert.deepEqual(groups.flat().sort(), ['a', 'b', 'c', 'd', 'e']);
    assert.deepEqual(
      groups,
      [
        ['a', 'd', 'e'],
        ['b', 'c'],
      ],
      'two groups, as no longer than the longest file',
    );
    for (const group of groups) assert.ok(group.reduce((s, f) => s + times[f as keyof typeof times], 0) <= 100);
  });

  it('make more groups when the run is long against its longest file, and assume the typical time of a new file', () => {
    const files = Array.from({ length: 12 }, (_, i) => `f${i}`);
    const times = Object.fromEntries(files.slice(1).map((f) => [f, 10]));
    const groups = planGroups({ shareable: files, all: files, times, concurrency: 2 });
    assert.equal(groups.length, 6, 'a group takes a third of each worker share: 120 / 6 = 20');
    assert.deepEqual(groups.flat().sort(), [...files].sort());
    assert.ok(groups.every((g) => g.length === 2));
    assert.deepEqual(planGroups({ shareable: ['x'], all: ['x', 'y'], times: {}, concurrency: 2 }), [['x']]);
    assert.deepEqual(planGroups({ shareable: [], all: ['y'], times: {}, concurrency: 2 }), []);
  });

  it('leave out a file that says it needs its own process', () => {
    for (const text of [OWN_PROCESS_MARKER, `import x from 'y';\n  ${OWN_PROCESS_MARKER} (it exits)\n`])
      assert.match(text, NEEDS_OWN_PROCESS, text);
    for (const text of [
      "process.exit(1); process.chdir('/')",
      "const script = '// klw-test: own-process';",
      '// klw-test: own-processes',
      '// klw-test: own-process-x',
    ])
      assert.doesNotMatch(text, NEEDS_OWN_PROCESS, text);
  });

  it('run last the files that say they replace a built-in of every array', () => {
    const texts: Record<string, string> = {
      'a.test.ts': '',
      'b.test.ts': '// klw-test: patches-builtins (counts steps)\n',
      'c.test.ts': 'Array.prototype.map;\n// klw-test: patches-builtinsX\n',
      'd.test.ts': '',
    };
    assert.deepEqual(
      groupOrder(Object.keys(texts), (f) => texts[f]!),
      ['a.test.ts', 'c.test.ts', 'd.test.ts', 'b.test.ts'],
    );
    assert.doesNotMatch('// klw-test: own-process', PATCHES_BUILTINS);
  });

  it('are modules running their files in turn, by the built path', () => {
    const entry = groupEntry([
      { source: '/p/test/a.test.ts', run: '/p/build/a.test.mjs' },
      { source: '/p/test/b.test.ts', run: '/p/build/b.test.mjs' },
    ]);
    const runs = [...entry.matchAll(/await runFile\(("[^"]*"), ("[^"]*")\);/g)].map((m) => [
      JSON.parse(m[1]!),
      JSON.parse(m[2]!),
    ]);
    assert.deepEqual(runs, [
      ['/p/test/a.test.ts', '/p/build/a.test.mjs'],
      ['/p/test/b.test.ts', '/p/build/b.test.mjs'],
    ]);
  });

  // One run of klw test --group over a project with the files of the three tests below, all in
  // one group (the own-process file is long): each test reads its part.
  let grouped: { dir: string; code: number; out: string } | undefined;
  /** The run, started by the first test that reads it. */
  const groupedRun = () => {
    if (grouped) return grouped;
    const runtime = JSON.stringify(join(process.cwd(), 'infra', 'test-group.mjs'));
    const dir = project(outside, 'grouped', {
      'package.json': '{ "type": "module" }',
      'test/a.test.ts': pidOf('a'),
      'test/b.test.ts': pidOf('b'),
      'test/failing.test.ts': FAILING,
      'test/helper.ts': HELPER,
      'test/own.test.ts': `${OWN_PROCESS_MARKER}\n${pidOf('own')}`,
      'test/a-leaks.test.ts': `import { it } from 'node:test';\nit('leaks', () => { process.env.KLW_GROUP_LEAK = 'set'; process.chdir('/'); });\n`,
      'test/b-sees.test.ts': `import assert from 'node:assert/strict';\nimport { it } from 'node:test';\nit('sees none of it', () => { assert.equal(process.env.KLW_GROUP_LEAK, undefined); assert.notEqual(process.cwd(), '/'); });\n`,
      'test/a-group.test.ts': `import { runFile } from ${runtime};\nawait runFile('/inner.test.ts', '/inner.test.ts', async () => {});\n`,
      // The longest of the group, so first by time, but it says it replaces array built-ins.
      'test/a-patches.test.ts': `// klw-test: patches-builtins\nimport { existsSync, writeFileSync } from 'node:fs';\nimport { it } from 'node:test';\nit('patches', () => writeFileSync(new URL('../pids/patches', import.meta.url), ['a', 'b', 'own'].filter((n) => existsSync(new URL(\`../pids/\${n}\`, import.meta.url))).join()));\n`,
      'pids/.keep': '',
      // The own-process file is long: every other file fits one group, where the longest run
      // first: the leaking file before the file that looks for the leak, the group inside the
      // group before b. The typical file (that a file never timed is taken for) is no longer
      // than the file that looks for the leak, as the times of files no longer there say.
      [TIMES_FILE]: JSON.stringify({
        'test/own.test.ts': 1e6,
        'test/a-patches.test.ts': 600,
        'test/a-leaks.test.ts': 500,
        'test/a-group.test.ts': 400,
        'test/b-sees.test.ts': 300,
        'test/gone.test.ts': 1,
        'test/gone-too.test.ts': 1,
        'test/gone-three.test.ts': 1,
      }),
    });
    grouped = { dir, ...klwTest(dir, '--group', '--concurrency', '2') };
    return grouped;
  };

  it('run in one process, fail the run with the failing file named, and keep each file its time', () => {
    const { dir, code, out } = groupedRun();
    assert.equal(code, 1, out);
    const pid = (name: string) => readFileSync(join(dir, 'pids', name), 'utf8');
    assert.equal(pid('a'), pid('b'), 'a and b shared a process');
    assert.notEqual(pid('own'), pid('a'), 'the file marked own-process had its own');
    assert.match(
      readFileSync(join(dir, 'pids', 'patches'), 'utf8'),
      /^a,b/,
      'the file replacing built-ins ran after a and b',
    );
    assert.match(out, new RegExp(`✖ ${join(dir, 'test', 'failing.test.ts')}`), 'the failing file is named');
    assert.match(out, /✖ adds/);
    assert.doesNotMatch(out, /node_modules\/\.cache\/klw-test/, 'no built path shown');
    const times = readTestTimes(dir);
    for (const file of ['test/a.test.ts', 'test/b.test.ts', 'test/failing.test.ts', 'test/own.test.ts'])
      assert.ok(Object.hasOwn(times, file), `${file} timed: ${JSON.stringify(times)}`);
  });

  it('fail a file that leaves the process changed, and put it back for the files after it', () => {
    const { dir, code, out } = groupedRun();
    assert.equal(code, 1, out);
    assert.match(
      out,
      new RegExp(
        `${join(dir, 'test', 'a-leaks.test.ts')} left the process changed for the test files after it: the working directory \\(now /, was ${dir}\\), process\\.env\\.KLW_GROUP_LEAK`,
      ),
    );
    assert.match(out, /✔ sees none of it/);
  });

  it('refuse a group inside a group, which would wait for itself, naming both', () => {
    const { dir, code, out } = groupedRun();
    assert.equal(code, 1, out);
    assert.match(
      out,
      new RegExp(
        `${join(dir, 'test', 'a-group.test.ts')} runs a group of test files \\(/inner\\.test\\.ts\\), which cannot`,
      ),
    );
    assert.ok(readFileSync(join(dir, 'pids', 'b'), 'utf8'), 'the file after it ran');
  });

  it('fail the run when a file ends the process, naming it, though it exits with 0', () => {
    const dir = project(outside, 'exits', {
      'package.json': '{ "type": "module" }',
      'test/a-exits.test.ts': `import { it } from 'node:test';\nit('exits', () => process.exit(0));\n`,
      'test/b-after.test.ts': pidOf('b'),
      'test/own.test.ts': `${OWN_PROCESS_MARKER}\nimport { it } from 'node:test';\nit('alone', () => {});\n`,
      'pids/.keep': '',
      [TIMES_FILE]: JSON.stringify({ 'test/a-exits.test.ts': 10, 'test/b-after.test.ts': 1, 'test/own.test.ts': 1e6 }),
    });
    const { code, out } = klwTest(dir, '--group', '--concurrency', '1');
    assert.equal(code, 1, out);
    assert.match(
      out,
      new RegExp(
        `the process ended while ${join(dir, 'test', 'a-exits.test.ts')} ran, so the test files grouped after it`,
      ),
    );
  });
});
