// klw test's own options, as a project runs them.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { KEPT_BUILDS_ENV } from '../../../infra/commands/options.ts';
import { readTestTimes, TIMES_FILE } from '../../../infra/test-runner.ts';
import { runKlw } from '../../helpers.ts';
import { project, scratchFolders } from '../test-runner.projects.ts';

const KLW = join(process.cwd(), 'infra', 'bin', 'klw.mjs');
const { outside } = scratchFolders();

/** Runs `klw test` in `dir` without the kept-builds variable of the run around it. */
function klwTest(dir: string, ...args: string[]): { code: number; out: string } {
  const { NODE_TEST_CONTEXT: _context, [KEPT_BUILDS_ENV]: _kept, ...env } = process.env;
  const run = spawnSync(process.execPath, [KLW, '--root', dir, 'test', '--reporter', 'tap', ...args], {
    cwd: dir,
    env,
    encoding: 'utf8',
  });
  return { code: run.status ?? 1, out: `${run.stdout}${run.stderr}` };
}

describe('klw test --keep-builds', () => {
  const dir = project(outside, 'kept', {
    'test/env.test.mjs': `import { test } from 'node:test';
test('names the folder', (t) => t.diagnostic('kept=' + (process.env.${KEPT_BUILDS_ENV} ?? 'none')));
`,
  });

  it('names the folder, resolved from the project, to the test processes', () => {
    const { code, out } = klwTest(dir, '--keep-builds', 'cache/kept');
    assert.equal(code, 0, out);
    assert.match(out, new RegExp(`# kept=${join(dir, 'cache', 'kept').replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`, 'm'));
  });

  it('names none without it', () => {
    const { code, out } = klwTest(dir);
    assert.equal(code, 0, out);
    assert.match(out, /# kept=none$/m);
  });
});

describe('klw test --times-from', () => {
  /** A test file that writes the pid of its process to pids/<name>. */
  const pidOf = (name: string) =>
    `import { writeFileSync } from 'node:fs';\nimport { it } from 'node:test';\nit('${name}', () => writeFileSync(new URL('../pids/${name}', import.meta.url), String(process.pid)));\n`;
  const dir = project(outside, 'times-from', {
    'package.json': '{ "type": "module" }',
    'test/a.test.ts': pidOf('a'),
    'test/b.test.ts': pidOf('b'),
    'test/c.test.ts': pidOf('c'),
    'pids/.keep': '',
    // b is long: a and c fit one group beside it. Files never timed are alike: a group each.
    'times/seed.json': JSON.stringify({ 'test/b.test.ts': 9000, 'test/a.test.ts': 1, 'test/c.test.ts': 1 }),
    'times/bad.json': '[1, 2]',
  });
  const pid = (name: string) => readFileSync(join(dir, 'pids', name), 'utf8');

  it('groups the files by the times of the file given while the project has kept none', () => {
    const alike = klwTest(dir, '--group', '--concurrency', '2');
    assert.equal(alike.code, 0, alike.out);
    assert.notEqual(pid('a'), pid('c'), 'files never timed: a process each');
    rmSync(join(dir, TIMES_FILE));
    const { code, out } = klwTest(dir, '--group', '--concurrency', '2', '--times-from', 'times/seed.json');
    assert.equal(code, 0, out);
    assert.equal(pid('a'), pid('c'), 'a and c shared a process, by the times of the file');
    assert.notEqual(pid('b'), pid('a'));
    // The run kept times of its own: the file's stay out of .klw/test-times.json.
    assert.deepEqual(Object.keys(readTestTimes(dir)).sort(), ['test/a.test.ts', 'test/b.test.ts', 'test/c.test.ts']);
    assert.notEqual(readTestTimes(dir)['test/b.test.ts'], 9000);
  });

  it('refuses a file that is not there, or holds no times, naming it', async () => {
    for (const [file, message] of [
      ['times/none.json', /--times-from times\/none\.json: no such file in /],
      [
        'times/bad.json',
        /--times-from times\/bad\.json: not a times file: give a JSON object of milliseconds by test file/,
      ],
    ] as const) {
      const { code, stderr } = await runKlw('--root', dir, 'test', '--times-from', file);
      assert.notEqual(code, 0, file);
      assert.match(stderr, message);
    }
  });
});
