import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { type ScaffoldOptions, type ScaffoldType, scaffold } from '../../infra/scaffold.ts';
import { resolveResource, resourceFromName } from '../../infra/scaffold-resource.ts';
import { runKlw } from '../helpers.ts';
import { keptProject } from '../kept-projects.ts';

const repo = process.cwd();
// Inside the repository, so `kube-lambda-webhooks` resolves to this package.
const work = mkdtempSync(join(repo, '.klw-test-'));
after(() => rmSync(work, { recursive: true, force: true }));

/** The functions of klw new --resource whose tests run below: scaffold's arguments. */
const SCAFFOLDED = [
  ['validating', 'owner-check', { resource: 'deployments.apps' }],
  ['mutating', 'ns-labels', { resource: 'namespaces' }],
] as const satisfies ReadonlyArray<readonly [ScaffoldType, string, ScaffoldOptions]>;

/** Runs the project's tests as npm test does (klw test, from its build); returns the TAP output. */
function runTests(dir: string): string {
  // A nested test run must not think it is part of this one (it would skip its files).
  const { NODE_TEST_CONTEXT: _context, ...env } = process.env;
  const run = spawnSync(
    process.execPath,
    [join(repo, 'infra', 'bin', 'klw.mjs'), '--root', dir, 'test', '--reporter', 'tap'],
    {
      cwd: dir,
      encoding: 'utf8',
      env,
    },
  );
  return `${run.stdout}${run.stderr}`;
}

/** The TAP of the top-level suite `name` in `out`, from its start through its result line; empty when it did not run. */
function suiteOf(out: string, name: string): string {
  const start = out.indexOf(`# Subtest: ${name}\n`);
  const result = new RegExp(`^(not )?ok \\d+ - ${name}$`, 'm').exec(out.slice(Math.max(start, 0)));
  return start < 0 || !result ? '' : out.slice(start, start + result.index + result[0].length);
}

describe('klw new --resource', () => {
  // The functions of SCAFFOLDED, written into `work` (for the lint below) and into a project kept
  // by content (test/kept-projects.ts), where klw test finds its build of an earlier run; one run
  // of their tests, of which each test below reads its function's suite.
  let dir: string;
  let out: string;
  before(async () => {
    for (const [type, name, options] of SCAFFOLDED) scaffold(work, type, name, options);
    dir = await keptProject('scaffold-resource', (dir) => {
      for (const [type, name, options] of SCAFFOLDED) scaffold(dir, type, name, options);
    });
    out = runTests(dir);
  });

  it('writes a validating function on the resource given, typed by it, whose test passes', () => {
    const source = readFileSync(join(dir, 'functions/owner-check/index.ts'), 'utf8');
    assert.match(source, /import \{ .*on, Deployment \} from 'kube-lambda-webhooks'/);
    assert.match(source, /rules: \[on\(Deployment\)\.create\(\)\.update\(\)\]/);
    assert.doesNotMatch(source, /configmaps|ConfigMap/i);
    const suite = suiteOf(out, 'owner-check');
    assert.match(suite, /^ok \d+ - owner-check$/m, out);
    assert.match(suite, /^ {4}1\.\.2$/m, `its two tests: ${out}`);
  });

  it('writes a mutating function on a cluster-scoped resource, whose test passes', () => {
    const source = readFileSync(join(dir, 'functions/ns-labels/index.ts'), 'utf8');
    assert.match(source, /rules: \[on\(Namespace\)\.create\(\)\]/);
    assert.doesNotMatch(readFileSync(join(dir, 'test/functions/ns-labels.test.ts'), 'utf8'), /namespace: 'default'/);
    assert.match(suiteOf(out, 'ns-labels'), /^ok \d+ - ns-labels$/m, out);
  });

  it('takes the resource from the function name, so a pod policy is on pods; configmaps when the name says none', () => {
    scaffold(work, 'validating', 'pod-policy');
    assert.match(
      readFileSync(join(work, 'functions/pod-policy/index.ts'), 'utf8'),
      /on\(Pod\)\.create\(\)\.update\(\)/,
    );
    scaffold(work, 'validating', 'require-owner');
    assert.match(readFileSync(join(work, 'functions/require-owner/index.ts'), 'utf8'), /on\(ConfigMap\)/);
    assert.equal(resourceFromName('deployment-replicas')?.descriptor.resource, 'deployments');
    assert.equal(resourceFromName('my-validating'), undefined);
  });

  it('passes klw lint: the scaffolded rules name real resources', async () => {
    const { code, stderr } = await runKlw('--root', work, 'lint');
    assert.equal(code, 0, stderr);
    assert.doesNotMatch(stderr, /rule-/);
  });

  it('refuses a kind, a singular, an unknown resource and a resource without the operations', () => {
    assert.throws(() => resolveResource('Pods'), /did you mean --resource pods\?/);
    assert.throws(() => resolveResource('Deployment'), /did you mean --resource deployments\?/);
    assert.throws(
      () => resolveResource('ingress.networking.k8s.io'),
      /did you mean --resource ingresses\.networking\.k8s\.io\?/,
    );
    assert.throws(() => resolveResource('widgets'), /has no resource "widgets"; for a CRD's resources/);
    assert.throws(() => resolveResource('pods.apps'), /has no resource "pods" in group "apps"/);
    assert.throws(
      () => resolveResource('widgets.example.com'),
      /no resource "widgets" in group "example\.com"; for a CRD's resources, scaffold one and write the rule by hand/,
    );
    assert.equal(resolveResource('pods.core').descriptor.group, '');
    assert.throws(
      () => scaffold(work, 'validating', 'status-check', { resource: 'componentstatuses' }),
      /takes no CREATE or UPDATE/,
    );
    assert.throws(
      () => scaffold(work, 'conversion', 'widget-conversion', { resource: 'pods' }),
      /--resource is for admission functions/,
    );
    assert.equal(existsSync(join(work, 'functions/status-check')), false);
    assert.equal(existsSync(join(work, 'functions/widget-conversion')), false);
  });

  it('is an option of klw new', async () => {
    const { code, stderr } = await runKlw('--root', work, 'new', 'validating', 'cli-made', '--resource', 'Pods');
    assert.equal(code, 1);
    assert.match(stderr, /did you mean --resource pods\?/);
    const ok = await runKlw('--root', work, 'new', 'validating', 'cli-made', '--resource', 'services');
    assert.equal(ok.code, 0, ok.stderr);
    assert.match(readFileSync(join(work, 'functions/cli-made/index.ts'), 'utf8'), /on\(Service\)/);
  });
});
