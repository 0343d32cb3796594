// Policies through the real CLI: one `klw manifests --all-clusters` for a fleet of 1.20, 1.31 and
// 1.36 clusters writes webhooks for the first, a native ValidatingAdmissionPolicy and a mutating
// webhook for the second, both policies native for the third; without a fleet --kube-version
// chooses; serve: 'native' on a cluster that cannot is an error naming the file and the fix.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { ValidatingAdmissionPolicy } from 'kubernetes-models/admissionregistration.k8s.io/v1/ValidatingAdmissionPolicy';
import { ValidatingAdmissionPolicyBinding } from 'kubernetes-models/admissionregistration.k8s.io/v1/ValidatingAdmissionPolicyBinding';
import { parseAllDocuments } from 'yaml';
import { admissionTypeName, schemaProblems } from '../../../infra/policies/schema.ts';
import { runKlw } from '../../helpers.ts';
import { keptProject } from '../../kept-projects.ts';
import { VALIDATING, writeFunction, writePolicyProject } from '../policies/project.ts';

const FLEET = `clusters:
  - name: old
    kubeVersion: "1.20"
  - name: mid
    kubeVersion: "1.31"
    enforcement: { replica-limit: Warn }
  - name: new
    kubeVersion: "1.36"
`;

/** Where the tests write manifests: never into a kept project. */
const work = mkdtempSync(join(process.cwd(), '.klw-test-policies-cli-'));
after(() => rmSync(work, { recursive: true, force: true }));

/**
 * The two policies, the validating one as `validating` gives it, with the fleet unless `fleet` is
 * false: kept by content across runs (test/kept-projects.ts), so the functions' load build is too.
 */
const project = (name: string, validating = VALIDATING(), fleet = true) =>
  keptProject(`policies-cli-${name}`, (dir) => {
    writePolicyProject(dir);
    writeFunction(dir, 'replica-limit', validating);
    if (fleet) writeFileSync(join(dir, 'clusters.yaml'), FLEET);
  });
const fleetProject = await project('fleet');

/** Runs klw in the project with the fleet: its exit code and what it wrote to stderr. */
async function klw(...args: string[]): Promise<{ code: number; err: string }> {
  return klwIn(fleetProject, ...args);
}
/** Runs klw in the project at `root`: its exit code and what it wrote to stderr. */
async function klwIn(root: string, ...args: string[]): Promise<{ code: number; err: string }> {
  const { code, stderr } = await runKlw('--root', root, ...args);
  return { code, err: stderr };
}

type Doc = Record<string, any>;
const read = (file: string): Doc[] => parseAllDocuments(readFileSync(file, 'utf8')).map((d) => d.toJS() as Doc);
/** What a file holds: `kind` for policies, `kind: webhook names` for configurations. */
const summary = (docs: Doc[]) =>
  docs.map((d) =>
    d.webhooks ? `${d.kind}: ${d.webhooks.map((w: Doc) => w.name).join(',')}` : `${d.apiVersion} ${d.kind}`,
  );
/** Every policy object valid by its version's schema (and v1 VAP by kubernetes-models'). */
function assertValid(docs: Doc[]): void {
  for (const d of docs.filter((doc) => doc.kind.endsWith('Policy') || doc.kind.endsWith('PolicyBinding'))) {
    const [, version] = d.apiVersion.split('/');
    assert.deepEqual(schemaProblems(d, admissionTypeName(version, d.kind)!), [], `${d.kind} ${version}`);
    if (version === 'v1' && d.kind === 'ValidatingAdmissionPolicy')
      new ValidatingAdmissionPolicy(d as never).validate();
    if (version === 'v1' && d.kind === 'ValidatingAdmissionPolicyBinding')
      new ValidatingAdmissionPolicyBinding(d as never).validate();
  }
}

describe('klw manifests with policies', () => {
  it('--all-clusters: webhooks for 1.20, VAP and a mutating webhook for 1.31, VAP and MAP for 1.36', async () => {
    const out = join(work, 'clusters-out');
    const run = await klw('manifests', '--base-url', 'https://hooks.example.com', '--all-clusters', '--out-dir', out);
    assert.equal(run.code, 0, run.err);
    const old = read(join(out, 'old.yaml'));
    const mid = read(join(out, 'mid.yaml'));
    const next = read(join(out, 'new.yaml'));
    assert.deepEqual(summary(old), [
      'MutatingWebhookConfiguration: add-team.webhooks.kube-lambda.dev',
      'ValidatingWebhookConfiguration: replica-limit.webhooks.kube-lambda.dev',
    ]);
    assert.match(old[1]!.webhooks[0].clientConfig.url, /^https:\/\/hooks\.example\.com\/replica-limit\//);
    assert.deepEqual(summary(mid), [
      'MutatingWebhookConfiguration: add-team.webhooks.kube-lambda.dev',
      'admissionregistration.k8s.io/v1 ValidatingAdmissionPolicy',
      'admissionregistration.k8s.io/v1 ValidatingAdmissionPolicyBinding',
    ]);
    // The cluster's enforcement is the binding's action.
    assert.deepEqual(mid[2]!.spec.validationActions, ['Warn']);
    assert.equal(mid[1]!.metadata.labels['kube-lambda-webhooks/cluster'], 'mid');
    assert.deepEqual(summary(next), [
      'admissionregistration.k8s.io/v1 MutatingAdmissionPolicy',
      'admissionregistration.k8s.io/v1 MutatingAdmissionPolicyBinding',
      'admissionregistration.k8s.io/v1 ValidatingAdmissionPolicy',
      'admissionregistration.k8s.io/v1 ValidatingAdmissionPolicyBinding',
    ]);
    assert.deepEqual(next[2]!.spec.validations, [
      { expression: 'object.spec.replicas <= 5', message: 'at most 5 replicas', reason: 'Invalid' },
    ]);
    for (const docs of [old, mid, next]) assertValid(docs);
    assert.match(
      run.err,
      /cluster old \(Kubernetes 1.20\): replica-limit is served from Lambda as a validating webhook/,
    );
    assert.match(run.err, /cluster new \(Kubernetes 1.36\): add-team is a native MutatingAdmissionPolicy \(v1\)/);
  });

  it('without a fleet: --kube-version chooses, v1beta1 where the gate is on; no version serves from Lambda', async () => {
    const bare = await project('bare', VALIDATING(), false);
    const out = join(work, 'one.yaml');
    const base = ['manifests', '--base-url', 'https://hooks.example.com', '--out', out];
    let run = await klwIn(bare, ...base, '--kube-version', '1.35', '--feature-gates', 'MutatingAdmissionPolicy=true');
    assert.equal(run.code, 0, run.err);
    assert.deepEqual(summary(read(out)), [
      'admissionregistration.k8s.io/v1beta1 MutatingAdmissionPolicy',
      'admissionregistration.k8s.io/v1beta1 MutatingAdmissionPolicyBinding',
      'admissionregistration.k8s.io/v1 ValidatingAdmissionPolicy',
      'admissionregistration.k8s.io/v1 ValidatingAdmissionPolicyBinding',
    ]);
    assertValid(read(out));
    run = await klwIn(bare, ...base, '--kube-version', '1.29', '--feature-gates', 'ValidatingAdmissionPolicy=true');
    assert.equal(run.code, 0, run.err);
    assert.deepEqual(summary(read(out)), [
      'MutatingWebhookConfiguration: add-team.webhooks.kube-lambda.dev',
      'admissionregistration.k8s.io/v1beta1 ValidatingAdmissionPolicy',
      'admissionregistration.k8s.io/v1beta1 ValidatingAdmissionPolicyBinding',
    ]);
    assertValid(read(out));
    run = await klwIn(bare, ...base);
    assert.equal(run.code, 0, run.err);
    assert.equal(summary(read(out)).length, 2);
    assert.match(
      run.err,
      /replica-limit is served from Lambda as a validating webhook \(its Kubernetes version is unknown/,
    );
  });

  it("serve: 'native' on a cluster that cannot: an error naming the file, the cluster and the fix", async () => {
    const native = await project('native', VALIDATING('native'));
    const out = join(work, 'native-out');
    const run = await klwIn(
      native,
      'manifests',
      '--base-url',
      'https://hooks.example.com',
      '--all-clusters',
      '--out-dir',
      out,
    );
    assert.equal(run.code, 1);
    assert.match(
      run.err,
      /functions\/replica-limit\/index.ts: serve is 'native', but cluster old \(Kubernetes 1.20\) has no ValidatingAdmissionPolicy.*write serve: 'auto'/,
    );
    const bad = await klwIn(native, 'manifests', '--base-url', 'https://hooks.example.com', '--cluster', 'mid');
    assert.equal(bad.code, 0, bad.err);
  });

  it('an unknown serve value is an error naming the file and the values', async () => {
    const always = await project('always', VALIDATING('always'));
    const run = await klwIn(always, 'manifests', '--base-url', 'https://hooks.example.com', '--cluster', 'mid');
    assert.equal(run.code, 1);
    assert.match(run.err, /functions\/replica-limit\/index.ts: serve is "always"; write serve: 'auto'/);
  });

  it('klw lint compiles each policy for every cluster: a newer library is an error for the older clusters', async () => {
    const ip = await project('ip', VALIDATING().replace('object.spec.replicas <= 5', 'ip("10.0.0.1").family() == 4'));
    const run = await klwIn(ip, 'lint');
    assert.equal(run.code, 1, run.err);
    assert.match(
      run.err,
      /functions\/replica-limit\/index.ts: spec.validations\[0\].expression: .*undeclared reference to 'ip'.*\(for cluster old\); write the expression/s,
    );
    assert.doesNotMatch(run.err, /for cluster (mid|new)/);
  });
});
