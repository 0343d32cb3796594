// Every function's registration is linted as `klw lint` lints it: a rule the API server would
// never match, or a registration it would refuse, fails the tests with the file, the field and
// the fix. Warnings are shown, not failed on.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { test } from 'node:test';

/** True when `dir` holds the kube-lambda-webhooks package. */
function isToolkit(dir: string): boolean {
  try {
    return JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')).name === 'kube-lambda-webhooks';
  } catch {
    return false;
  }
}

/**
 * The klw of the kube-lambda-webhooks this project uses, found as Node finds the package: in the
 * node_modules of the project or a folder above it (or the package's own checkout).
 */
function klw(root: string): string {
  for (let dir = root; ; dir = dirname(dir)) {
    for (const pkg of [join(dir, 'node_modules', 'kube-lambda-webhooks'), dir]) {
      const bin = join(pkg, 'infra', 'bin', 'klw.mjs');
      if (isToolkit(pkg) && existsSync(bin)) return bin;
    }
    assert.notEqual(dirname(dir), dir, 'kube-lambda-webhooks has no infra/bin/klw.mjs here: run npm install');
  }
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
