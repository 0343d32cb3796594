// `klw manifests` refuses a policy the API server would refuse or whose expressions do not compile
// for the Kubernetes version that runs them there: exit code 1, every error naming the file, the
// field and the fix, nothing written; a warning alone exits 0. Single cluster, --cluster and
// --all-clusters, through the CLI's command function, and once as a real process.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { runKlw } from '../../helpers.ts';
import { keptProject } from '../../kept-projects.ts';
import { writeFunction } from '../policies/project.ts';

const work = mkdtempSync(join(process.cwd(), '.klw-test-manifests-errors-'));
after(() => rmSync(work, { recursive: true, force: true }));

// The ip library came with Kubernetes 1.30.
const RULES = `resourceRules: [{ operations: ['CREATE'], apiGroups: ['apps'], apiVersions: ['v1'], resources: ['deployments'] }]`;
const validating = (
  version: string,
  extra = '',
) => `import { defineValidatingPolicy } from 'kube-lambda-webhooks/policies';
export default defineValidatingPolicy({
  name: 'ip-check',
  kubernetesVersion: '${version}',
  matchConstraints: { ${RULES} },
  ${extra}
  validations: [{ expression: "isIP('10.0.0.1')", message: 'not an IP' }],
});
`;
const mutating = (version: string) => `import { defineMutatingPolicy } from 'kube-lambda-webhooks/policies';
export default defineMutatingPolicy({
  name: 'ip-label',
  kubernetesVersion: '${version}',
  matchConstraints: { ${RULES} },
  mutations: [{
    patchType: 'JSONPatch',
    jsonPatch: { expression: "isIP('10.0.0.1') ? [JSONPatch{op: 'add', path: '/metadata/labels', value: {'ip': 'yes'}}] : []" },
  }],
});
`;
const FLEET = `clusters:
  - name: old
    kubeVersion: "1.29"
  - name: new
    kubeVersion: "1.31"
`;

/**
 * A project whose two policies use the ip library, each defined for `version`; with a fleet when
 * asked. Kept by content across runs (test/kept-projects.ts), so its functions' load build is too:
 * the tests write their manifests into `work`, never into it.
 */
function project(name: string, version: string, fleet = false): Promise<string> {
  return keptProject(`manifests-errors-${name}`, (root) => {
    writeFunction(root, 'ip-check', validating(version));
    writeFunction(root, 'ip-label', mutating(version));
    if (fleet) writeFileSync(join(root, 'clusters.yaml'), FLEET);
  });
}

const old = await project('old', '1.29');
const current = await project('current', '1.31');
const fleet = await project('fleet', '1.31', true);
/** Where a run writes `name`: the scratch folder, never a kept project. */
const out = (name: string) => join(work, name);
const BASE = ['--base-url', 'https://hooks.example.com'];

async function manifests(root: string, ...args: string[]) {
  return runKlw('--root', root, 'manifests', ...BASE, ...args);
}

/** Asserts a run failed for both policies' expressions, naming file, field and fix, and `where`. */
function assertRefused(run: { code: number; stderr: string }, where: string): void {
  assert.equal(run.code, 1, run.stderr);
  for (const [file, field] of [
    ['functions/ip-check/index.ts', 'spec.validations[0].expression'],
    ['functions/ip-label/index.ts', 'spec.mutations[0].jsonPatch.expression'],
  ] as const)
    assert.match(run.stderr, new RegExp(`error policy-cel .*${file}: ${field.replace(/[.[\]]/g, '\\$&')}: .*isIP`));
  assert.match(run.stderr, new RegExp(`\\(for ${where}\\); write the expression .*or raise the version`));
  assert.match(run.stderr, /klw: 2 lint errors; fix them before registering/);
}

describe('klw manifests exits 1 on a policy expression the version cannot compile', () => {
  it("single cluster: the registration's version", async () => {
    assertRefused(await manifests(old, '--out', out('old.yaml')), 'Kubernetes 1.29');
    assert.equal(existsSync(out('old.yaml')), false, 'nothing written');
    const ok = await manifests(current, '--out', out('current.yaml'));
    assert.equal(ok.code, 0, ok.stderr);
    assert.ok(existsSync(out('current.yaml')));
  });

  it('single cluster: --kube-version replaces it', async () => {
    assertRefused(
      await manifests(current, '--kube-version', '1.29', '--out', out('current-k.yaml')),
      'Kubernetes 1.29',
    );
    const ok = await manifests(old, '--kube-version', '1.31', '--out', out('old-k.yaml'));
    assert.equal(ok.code, 0, ok.stderr);
  });

  it('--all-clusters: the cluster too old is named, the other is not, no file is written', async () => {
    const dir = out('fleet');
    const run = await manifests(fleet, '--all-clusters', '--out-dir', dir);
    assertRefused(run, 'cluster old');
    assert.doesNotMatch(run.stderr, /cluster new\)/);
    assert.match(run.stderr, /error policy-cel old: ip-check: /, 'the subject names the cluster');
    assert.equal(existsSync(dir), false, 'no cluster written');
  });

  it('--cluster: only that cluster decides', async () => {
    assertRefused(await manifests(fleet, '--cluster', 'old', '--out', out('fleet-old.yaml')), 'cluster old');
    const ok = await manifests(fleet, '--cluster', 'new', '--out', out('fleet-new.yaml'));
    assert.equal(ok.code, 0, ok.stderr);
  });

  const twice = `variables: [{ name: 'a', expression: '1' }, { name: 'a', expression: '2' }],`;
  it('a warning alone exits 0 and is printed', async () => {
    const root = await keptProject('manifests-errors-warning', (dir) =>
      writeFunction(dir, 'ip-check', validating('1.31', `serve: 'webhook', ${twice}`)),
    );
    const run = await manifests(root, '--out', out('warning.yaml'));
    assert.equal(run.code, 0, run.stderr);
    assert.match(
      run.stderr,
      /warning policy-field ip-check: functions\/ip-check\/index\.ts: spec\.variables\[1\]\.name/,
    );
    assert.ok(existsSync(out('warning.yaml')));
  });

  it('a native policy its API refuses exits 1, naming the file, the field and the fix', async () => {
    const root = await keptProject('manifests-errors-refused', (dir) =>
      writeFunction(dir, 'ip-check', validating('1.31', twice)),
    );
    const run = await manifests(root, '--out', out('refused.yaml'));
    assert.equal(run.code, 1, run.stderr);
    assert.match(run.stderr, /klw: functions\/ip-check\/index\.ts: .*spec\.variables: duplicate .*; remove or correct/);
    assert.equal(existsSync(out('refused.yaml')), false);
  });

  it('as a process: exit status 1', () => {
    // A run of klw, not a test run of its own.
    const { NODE_TEST_CONTEXT: _context, ...env } = process.env;
    const bin = join(process.cwd(), 'infra', 'bin', 'klw.mjs');
    const run = spawnSync(process.execPath, [bin, '--root', old, 'manifests', ...BASE, '--out', out('p.yaml')], {
      env,
      encoding: 'utf8',
    });
    assert.equal(run.status, 1, run.stderr);
    assert.match(run.stderr, /functions\/ip-check\/index\.ts: spec\.validations\[0\]\.expression/);
    assert.equal(existsSync(out('p.yaml')), false);
  });
});
