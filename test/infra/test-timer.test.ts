// klw test times each file (infra/test-timer.mjs) and keeps the times, by which it lists and groups files.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import {
  keepTestTimes,
  readTestTimes,
  readTimesFile,
  slowestFirst,
  testCommand,
  TIMES_FILE,
} from '../../infra/test-runner.ts';
import { project } from './test-runner.projects.ts';

const KLW = join(process.cwd(), 'infra', 'bin', 'klw.mjs');
const scratch = mkdtempSync(join(tmpdir(), 'klw-test-times-'));
after(() => rmSync(scratch, { recursive: true, force: true }));

const passing = (name: string) => `import { it } from 'node:test';\nit('${name}', () => {});\n`;

describe('the order of test files', () => {
  it('lists files never timed, then the slowest, keeping the given order between equals', () => {
    const files = ['a.test.ts', 'b.test.ts', 'c.test.ts', 'd.test.ts', 'e.test.ts'];
    assert.deepEqual(slowestFirst(files, { 'a.test.ts': 5, 'b.test.ts': 90, 'd.test.ts': 5, 'e.test.ts': 40 }), [
      'c.test.ts',
      'b.test.ts',
      'e.test.ts',
      'a.test.ts',
      'd.test.ts',
    ]);
    assert.deepEqual(slowestFirst(files, {}), files);
  });

  it('reads no times from a missing, unparsable or wrongly shaped file, and skips bad entries', () => {
    const dir = project(scratch, 'read', {});
    assert.deepEqual(readTestTimes(dir), {});
    for (const text of ['{not json', '[1, 2]', 'null', '"text"']) {
      writeFileSync(join(project(scratch, 'read', { [TIMES_FILE]: '' }), TIMES_FILE), text);
      assert.deepEqual(readTestTimes(dir), {}, text);
    }
    writeFileSync(join(dir, TIMES_FILE), JSON.stringify({ 'a.test.ts': 12, b: -1, c: '3', d: null, e: 0 }));
    assert.deepEqual(readTestTimes(dir), { 'a.test.ts': 12, e: 0 });
  });

  it('takes the times of a file given for the files no run kept a time of', () => {
    const dir = project(scratch, 'from', {
      [TIMES_FILE]: JSON.stringify({ 'test/a.test.ts': 10 }),
      'seed.json': JSON.stringify({ 'test/a.test.ts': 500, 'test/b.test.ts': 70, c: 'x' }),
      'bad.json': '{not json',
      'test/.keep': '',
    });
    assert.deepEqual(readTestTimes(dir, 'seed.json'), { 'test/a.test.ts': 10, 'test/b.test.ts': 70 });
    assert.deepEqual(readTestTimes(dir, 'bad.json'), { 'test/a.test.ts': 10 });
    assert.deepEqual(readTestTimes(dir, 'missing.json'), { 'test/a.test.ts': 10 });
    assert.equal(readTimesFile(join(dir, 'bad.json')), undefined);
    rmSync(join(dir, TIMES_FILE));
    assert.deepEqual(readTestTimes(dir, join(dir, 'seed.json')), { 'test/a.test.ts': 500, 'test/b.test.ts': 70 });
    for (const f of ['test/a.test.mjs', 'test/b.test.mjs']) writeFileSync(join(dir, f), passing(f), { flag: 'w' });
    writeFileSync(join(dir, 'seed.json'), JSON.stringify({ 'test/a.test.mjs': 5, 'test/b.test.mjs': 70 }));
    assert.deepEqual(testCommand(dir).slice(-2), ['test/a.test.mjs', 'test/b.test.mjs'], 'in name order without');
    assert.deepEqual(testCommand(dir, { timesFrom: 'seed.json' }).slice(-2), ['test/b.test.mjs', 'test/a.test.mjs']);
  });

  it('keeps the times of a run beside those of files it did not run, relative to the root', () => {
    const dir = project(scratch, 'keep', {
      [TIMES_FILE]: JSON.stringify({ 'test/a.test.ts': 10, 'test/b.test.ts': 20 }),
    });
    keepTestTimes(dir, JSON.stringify({ [join(dir, 'test/b.test.ts')]: 70, '/elsewhere/c.test.ts': 5 }));
    assert.deepEqual(readTestTimes(dir), { 'test/a.test.ts': 10, 'test/b.test.ts': 70 });
    keepTestTimes(dir, 'cut short');
    keepTestTimes(dir, '[3]');
    assert.deepEqual(readTestTimes(dir), { 'test/a.test.ts': 10, 'test/b.test.ts': 70 });
  });

  it('klw test times every file it runs and lists the slowest first on the next run', () => {
    const dir = project(scratch, 'run', {
      'package.json': '{ "type": "module" }',
      'test/fast.test.mjs': passing('fast'),
      'test/slow.test.mjs': passing('slow'),
    });
    const { NODE_TEST_CONTEXT: _context, ...env } = process.env;
    const run = spawnSync(process.execPath, [KLW, '--root', dir, 'test', '--reporter', 'tap'], {
      env,
      encoding: 'utf8',
    });
    assert.equal(run.status, 0, run.stderr);
    assert.match(run.stdout, /ok \d+ - slow/, 'the shown reporter still writes to stdout');
    const times = readTestTimes(dir);
    assert.deepEqual(Object.keys(times).sort(), ['test/fast.test.mjs', 'test/slow.test.mjs']);
    writeFileSync(join(dir, TIMES_FILE), JSON.stringify({ ...times, 'test/slow.test.mjs': 1e6 }));
    assert.deepEqual(testCommand(dir).slice(-2), ['test/slow.test.mjs', 'test/fast.test.mjs']);
    assert.ok(readFileSync(join(dir, TIMES_FILE), 'utf8').includes('1000000'));
  });
});
