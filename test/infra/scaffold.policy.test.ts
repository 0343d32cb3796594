// klw new policy: a validating policy (or with --mutating a mutating one) on a resource, with its
// tests; the scaffolded project's `npm test` (klw test, with the conformance test klw init writes)
// passes, through the real CLI.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { projectInRepository, runKlw } from '../helpers.ts';
import { keptProject } from '../kept-projects.ts';

const KLW = join(process.cwd(), 'infra', 'bin', 'klw.mjs');
const work = projectInRepository('.klw-test-new-policy-', {});
after(() => rmSync(work, { recursive: true, force: true }));

/** Runs `klw test` in the project `dir` the way `npm test` does: its exit code and output. */
function npmTest(dir: string): { code: number; out: string } {
  const { NODE_TEST_CONTEXT: _context, ...env } = process.env;
  const run = spawnSync(process.execPath, [KLW, '--root', dir, 'test', '--reporter', 'tap'], {
    cwd: dir,
    env,
    encoding: 'utf8',
  });
  return { code: run.status ?? 1, out: `${run.stdout}${run.stderr}` };
}

describe('klw new policy', () => {
  it('scaffolds a validating and a mutating policy on deployments whose tests pass in npm test', async () => {
    // The project, with the conformance test, kept by content (test/kept-projects.ts): klw test finds its build of an earlier run.
    let validating = { code: 1, stderr: '' };
    let mutating = { code: 1, stderr: '' };
    const dir = await keptProject('new-policy', async (dir) => {
      cpSync(
        join(process.cwd(), 'test', 'functions', 'conformance.test.ts'),
        join(dir, 'test', 'functions', 'conformance.test.ts'),
      );
      validating = await runKlw('--root', dir, 'new', 'policy', 'replica-owner', '--resource', 'deployments');
      mutating = await runKlw('--root', dir, 'new', 'policy', 'add-managed', '--resource', 'deployments', '--mutating');
    });
    assert.equal(validating.code, 0, validating.stderr);
    assert.match(validating.stderr, /created functions\/replica-owner\/index.ts/);
    assert.match(validating.stderr, /created test\/functions\/replica-owner.test.ts/);
    const source = readFileSync(join(dir, 'functions', 'replica-owner', 'index.ts'), 'utf8');
    assert.match(source, /defineValidatingPolicy\(/);
    assert.match(source, /on\(Deployment\)\.create\(\)\.update\(\)/);
    assert.equal(mutating.code, 0, mutating.stderr);
    assert.match(readFileSync(join(dir, 'functions', 'add-managed', 'index.ts'), 'utf8'), /defineMutatingPolicy\(/);
    const { code, out } = npmTest(dir);
    assert.equal(code, 0, out);
    assert.match(out, /^# fail 0$/m, out);
    for (const test of [
      'denies a Deployment without an owner, with the message and code the API server gives',
      'adds the label, keeping the others',
      'replica-owner conformance',
      'add-managed conformance',
    ])
      assert.match(out, new RegExp(`# Subtest: ${test}`), out);
  });

  it('--mutating goes with policy only; a name is checked as for any function', async () => {
    const run = await runKlw('--root', work, 'new', 'validating', 'x-check', '--mutating');
    assert.equal(run.code, 1);
    assert.match(run.stderr, /--mutating goes with klw new policy; klw new mutating x-check writes a mutating webhook/);
    assert.ok(!existsSync(join(work, 'functions', 'x-check')));
    const bad = await runKlw('--root', work, 'new', 'policy', 'Bad_Name');
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /not a valid function name/);
  });
});
