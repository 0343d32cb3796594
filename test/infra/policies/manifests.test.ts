// A policy's objects per cluster: ValidatingAdmissionPolicy v1 from 1.30, v1beta1 on 1.28-1.29
// where the cluster turns the gate on; MutatingAdmissionPolicy v1 from 1.36, v1beta1 on 1.34-1.35
// with its gate; a webhook elsewhere; `serve` overrides; every object checked against its
// version's schema (kubernetes-models' v1 schema for the VAP too), unknown fields refused.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ValidatingAdmissionPolicy } from 'kubernetes-models/admissionregistration.k8s.io/v1/ValidatingAdmissionPolicy';
import { ValidatingAdmissionPolicyBinding } from 'kubernetes-models/admissionregistration.k8s.io/v1/ValidatingAdmissionPolicyBinding';
import { policyObjects, policyServing } from '../../../infra/policies/manifests.ts';
import type { PolicyRegistration } from '../../../infra/policies/registration.ts';
import { admissionTypeName, schemaProblems } from '../../../infra/policies/schema.ts';
import { samplePolicies } from './project.ts';

const { validating, mutating } = samplePolicies();

const target = (minor: number, featureGates?: Record<string, boolean>) => ({
  version: { major: 1, minor },
  ...(featureGates ? { featureGates } : {}),
});
const where = { file: 'functions/replica-limit/index.ts', cluster: 'cluster old' };
const serving = (p: PolicyRegistration, minor: number, gates?: Record<string, boolean>) =>
  policyServing(p, target(minor, gates), where);

describe('policyServing', () => {
  it('validating: v1 from 1.30, v1beta1 on 1.28-1.29 with the gate, a webhook elsewhere', () => {
    assert.deepEqual(serving(validating, 31), { native: 'v1' });
    assert.deepEqual(serving(validating, 30), { native: 'v1' });
    assert.deepEqual(serving(validating, 29), { webhook: true });
    assert.deepEqual(serving(validating, 29, { ValidatingAdmissionPolicy: true }), { native: 'v1beta1' });
    assert.deepEqual(serving(validating, 28, { ValidatingAdmissionPolicy: true }), { native: 'v1beta1' });
    assert.deepEqual(serving(validating, 27, { ValidatingAdmissionPolicy: true }), { webhook: true });
    assert.deepEqual(serving(validating, 20), { webhook: true });
  });
  it('mutating: v1 from 1.36, v1beta1 on 1.34-1.35 with the gate, a webhook elsewhere', () => {
    assert.deepEqual(serving(mutating, 36), { native: 'v1' });
    assert.deepEqual(serving(mutating, 35), { webhook: true });
    assert.deepEqual(serving(mutating, 35, { MutatingAdmissionPolicy: true }), { native: 'v1beta1' });
    assert.deepEqual(serving(mutating, 34, { MutatingAdmissionPolicy: true }), { native: 'v1beta1' });
    assert.deepEqual(serving(mutating, 33, { MutatingAdmissionPolicy: true }), { webhook: true });
    assert.deepEqual(serving(mutating, 31), { webhook: true });
  });
  it("serve: 'webhook' everywhere; 'native' where the cluster cannot is an error naming file, cluster and fix", () => {
    assert.deepEqual(serving({ ...validating, serve: 'webhook' }, 31), { webhook: true });
    assert.throws(
      () => serving({ ...validating, serve: 'native' }, 20),
      /^KlwError: functions\/replica-limit\/index.ts: serve is 'native', but cluster old \(Kubernetes 1.20\) has no ValidatingAdmissionPolicy.*write serve: 'auto'/,
    );
    assert.throws(
      () => serving({ ...mutating, serve: 'native' }, 35),
      /has no MutatingAdmissionPolicy \(v1 from 1.36; v1beta1 on 1.34-1.35 with featureGates: \{ MutatingAdmissionPolicy: true \}/,
    );
  });
  it('an unknown version: auto is a webhook (every cluster takes it), native is v1', () => {
    assert.deepEqual(policyServing(validating, undefined, where), { webhook: true });
    assert.deepEqual(policyServing({ ...mutating, serve: 'native' }, undefined, where), { native: 'v1' });
  });
});

describe('policyObjects', () => {
  it('v1: valid by kubernetes-models v1 schema and by the generated one, the fields under their names', () => {
    const [vap, binding] = policyObjects(validating, 'v1', where);
    new ValidatingAdmissionPolicy(vap as never).validate();
    new ValidatingAdmissionPolicyBinding(binding as never).validate();
    assert.equal(vap!.apiVersion, 'admissionregistration.k8s.io/v1');
    assert.deepEqual((vap!.spec as { matchConstraints: { resourceRules: unknown[] } }).matchConstraints.resourceRules, [
      {
        operations: ['CREATE'],
        apiGroups: ['apps'],
        apiVersions: ['v1'],
        resources: ['deployments'],
        scope: 'Namespaced',
        resourceNames: ['web'],
      },
    ]);
    assert.deepEqual(binding!.spec, {
      policyName: 'replica-limit',
      validationActions: ['Deny', 'Audit'],
      paramRef: { parameterNotFoundAction: 'Deny', name: 'limits' },
    });
  });
  it("v1beta1: the same objects in v1beta1; a cluster's enforcement becomes the validationActions", () => {
    const [vap, binding] = policyObjects(validating, 'v1beta1', where, { enforcement: 'Warn', labels: { a: 'b' } });
    assert.equal(vap!.apiVersion, 'admissionregistration.k8s.io/v1beta1');
    assert.deepEqual(binding!.spec.validationActions, ['Warn']);
    assert.deepEqual(vap!.metadata.labels, { a: 'b' });
    // The registration itself is left as it was.
    assert.deepEqual(validating.binding.spec.validationActions, ['Deny', 'Audit']);
  });
  it('MAP in v1 and v1beta1, valid by their schemas; enforcement does not touch a mutating binding', () => {
    for (const version of ['v1', 'v1beta1'] as const) {
      const objects = policyObjects(mutating, version, where, { enforcement: 'Warn' });
      assert.deepEqual(
        objects.map((o) => `${o.apiVersion} ${o.kind}`),
        [
          `admissionregistration.k8s.io/${version} MutatingAdmissionPolicy`,
          `admissionregistration.k8s.io/${version} MutatingAdmissionPolicyBinding`,
        ],
      );
      for (const o of objects) assert.deepEqual(schemaProblems(o, admissionTypeName(version, o.kind)!), []);
      assert.equal(objects[1]!.spec.validationActions, undefined);
    }
  });
  it('strict: an unknown field or a wrong type is refused with its path and the file', () => {
    const extra = structuredClone(validating);
    (extra.policy.spec.validations as Array<Record<string, unknown>>)[0]!.severity = 'high';
    assert.throws(
      () => policyObjects(extra, 'v1', where),
      /functions\/replica-limit\/index.ts: ValidatingAdmissionPolicy replica-limit \(admissionregistration.k8s.io\/v1\) is refused by the API: \.spec\.validations\[0\]\.severity: field not declared in schema/,
    );
    const wrong = structuredClone(mutating);
    wrong.binding.spec.paramRef = { name: 7 };
    assert.throws(() => policyObjects(wrong, 'v1beta1', where), /\.spec\.paramRef\.name: expected string/);
    // A kind the version does not serve (ValidatingAdmissionPolicy never was v1alpha2).
    assert.equal(admissionTypeName('v1alpha2', 'ValidatingAdmissionPolicy'), undefined);
  });
});
