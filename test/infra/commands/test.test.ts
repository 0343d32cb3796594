// klw test's own options, as a project runs them.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { KEPT_BUILDS_ENV } from '../../../infra/commands/options.ts';
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
