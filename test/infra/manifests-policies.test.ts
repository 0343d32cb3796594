// The policy findings of `klw manifests` for one cluster: the version that runs the expressions
// there (the cluster's, else --kube-version, else the policy's own, else the newest), and what the
// API server refuses when the policy is created; each finding names the file and the field.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import type { FleetCluster } from '../../infra/fleet/file.ts';
import { parseKubeVersion } from '../../infra/kube-versions.ts';
import { manifestPolicyFindings } from '../../infra/manifests-policies.ts';
import { policyRegistrationOf } from '../../infra/policies/registration.ts';
import { Deployment, on } from '../../lib/index.ts';
import { defineValidatingPolicy } from '../../lib/policies/index.ts';

const root = '/project';

/** A project function holding a validating policy whose expression needs the ip library (1.30). */
function policyFunction(kubernetesVersion?: string, reason?: string) {
  const webhook = defineValidatingPolicy({
    name: 'ip-check',
    matchConstraints: { resourceRules: [on(Deployment).create()] },
    validations: [{ expression: "isIP('10.0.0.1')", ...(reason ? { reason: reason as 'Invalid' } : {}) }],
    ...(kubernetesVersion ? { kubernetesVersion } : {}),
  });
  const file = 'functions/ip-check/index.ts';
  const registration = { ...webhook.registration, policy: policyRegistrationOf(webhook, file) };
  return { name: 'ip-check', entry: join(root, file), registration };
}

const cluster = (name: string, version?: string): FleetCluster => ({
  name,
  enforcement: {},
  labels: {},
  ...(version ? { kubeVersion: { text: version, version: parseKubeVersion(version) } } : {}),
});
const messages = (found: ReturnType<typeof manifestPolicyFindings>) =>
  found.map((f) => `${f.level} ${f.rule} ${f.subject}: ${f.message}`);

describe('manifestPolicyFindings', () => {
  it("the cluster's version first, naming the cluster in the subject and the message", () => {
    const found = messages(manifestPolicyFindings(root, [policyFunction('1.31')], { cluster: cluster('old', '1.29') }));
    assert.equal(found.length, 1);
    assert.match(
      found[0]!,
      /^error policy-cel old: ip-check: functions\/ip-check\/index\.ts: spec\.validations\[0\]\.expression: .*\(for cluster old\)/s,
    );
    assert.deepEqual(manifestPolicyFindings(root, [policyFunction('1.29')], { cluster: cluster('new', '1.31') }), []);
  });

  it("a cluster without a version takes --kube-version, else the policy's own, else the newest", () => {
    const target = { version: parseKubeVersion('1.29'), featureGates: {} };
    const unversioned = cluster('plain');
    assert.equal(manifestPolicyFindings(root, [policyFunction('1.31')], { cluster: unversioned, target }).length, 1);
    assert.equal(manifestPolicyFindings(root, [policyFunction('1.29')], { cluster: unversioned }).length, 1);
    assert.equal(manifestPolicyFindings(root, [policyFunction()], { cluster: unversioned }).length, 0);
    assert.match(
      messages(manifestPolicyFindings(root, [policyFunction('1.31')], { target }))[0]!,
      /\(for Kubernetes 1\.29\)/,
    );
    assert.match(messages(manifestPolicyFindings(root, [policyFunction('1.29')], {}))[0]!, /\(for Kubernetes 1\.29\)/);
  });

  it('what the API server refuses whatever the version; plain webhooks are not its business', () => {
    const broken = policyFunction(undefined, 'Bogus');
    const found = messages(manifestPolicyFindings(root, [broken], {}));
    assert.match(
      found.join('\n'),
      /error policy-field ip-check: .*spec\.validations\[0\]\.reason: "Bogus" is not supported/,
    );
    const plain = { ...broken, registration: { ...broken.registration, policy: undefined } };
    assert.deepEqual(manifestPolicyFindings(root, [plain], {}), []);
  });
});
