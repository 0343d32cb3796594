// Every function's registration is linted as `klw lint` lints it: a rule the API server would
// never match, or a registration it would refuse, fails the tests with the file, the field and
// the fix. Warnings are shown, not failed on.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { test } from 'node:test';

/** The klw of the kube-lambda-webhooks this project uses: the package folder above its test kit. */
function klw(root: string): string {
  let dir = dirname(createRequire(join(root, 'package.json')).resolve('kube-lambda-webhooks/testing'));
  while (!existsSync(join(dir, 'infra', 'bin', 'klw.mjs'))) {
    assert.notEqual(dirname(dir), dir, 'kube-lambda-webhooks has no infra/bin/klw.mjs: run npm install');
    dir = dirname(dir);
  }
  return join(dir, 'infra', 'bin', 'klw.mjs');
}

test('klw lint: the API server takes every registration and its rules match', (t) => {
  const root = process.cwd();
  // A run of klw lint, not a test run of its own.
  const { NODE_TEST_CONTEXT: _context, ...env } = process.env;
  const run = spawnSync(process.execPath, [klw(root), 'lint'], { cwd: root, env, encoding: 'utf8' });
  const out = `${run.stdout ?? ''}${run.stderr ?? ''}`.trim();
  assert.equal(run.status, 0, `klw lint found what the API server would refuse or never match:\n${out}`);
  if (!/^lint: no findings$/m.test(out)) t.diagnostic(out);
});
