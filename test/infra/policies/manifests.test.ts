// A validating policy's objects per cluster: ValidatingAdmissionPolicy and its binding in v1 from
// 1.30, v1beta1 on 1.28-1.29 where the cluster turns the feature gate on, a webhook elsewhere;
// `serve` overrides; every object checked against kubernetes-models' v1 schema and field by field.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ValidatingAdmissionPolicy } from 'kubernetes-models/admissionregistration.k8s.io/v1/ValidatingAdmissionPolicy';
import { ValidatingAdmissionPolicyBinding } from 'kubernetes-models/admissionregistration.k8s.io/v1/ValidatingAdmissionPolicyBinding';
import { policyObjects, policyServing, unknownFields, OBJECT_FIELDS } from '../../../infra/policies/manifests.ts';
import { Deployment, on } from '../../../lib/index.ts';
import { defineValidatingPolicy } from '../../../lib/policies/index.ts';

const policy = defineValidatingPolicy({
  name: 'replica-limit',
  matchConstraints: { resourceRules: [{ ...on(Deployment).create(), resourceNames: ['web'] }] },
  matchConditions: [{ name: 'not-canary', expression: "object.metadata.name != 'canary'" }],
  variables: [{ name: 'replicas', expression: 'object.spec.replicas' }],
  validations: [{ expression: 'variables.replicas <= 5', messageExpression: "'too many'", reason: 'Forbidden' }],
  auditAnnotations: [{ key: 'replicas', valueExpression: 'string(variables.replicas)' }],
  paramKind: { apiVersion: 'v1', kind: 'ConfigMap' },
  paramRef: { name: 'limits' },
  validationActions: ['Deny', 'Audit'],
}).validatingPolicy;

const target = (minor: number, featureGates?: Record<string, boolean>) => ({
  version: { major: 1, minor },
  featureGates,
});

describe('policyServing', () => {
  it('v1 from 1.30, v1beta1 on 1.28-1.29 with the gate, a webhook elsewhere', () => {
    assert.deepEqual(policyServing(policy, target(31)), { native: 'v1' });
    assert.deepEqual(policyServing(policy, target(30)), { native: 'v1' });
    assert.deepEqual(policyServing(policy, target(29)), { webhook: true });
    assert.deepEqual(policyServing(policy, target(29, { ValidatingAdmissionPolicy: true })), { native: 'v1beta1' });
    assert.deepEqual(policyServing(policy, target(28, { ValidatingAdmissionPolicy: true })), { native: 'v1beta1' });
    assert.deepEqual(policyServing(policy, target(27, { ValidatingAdmissionPolicy: true })), { webhook: true });
    assert.deepEqual(policyServing(policy, target(20)), { webhook: true });
  });
  it("serve: 'webhook' everywhere; 'native' where the cluster cannot is an error naming the fix", () => {
    assert.deepEqual(policyServing({ ...policy, serve: 'webhook' }, target(31)), { webhook: true });
    assert.throws(
      () => policyServing({ ...policy, serve: 'native' }, target(20), 'cluster old'),
      /cluster old \(Kubernetes 1.20\) has no ValidatingAdmissionPolicy.*serve: 'auto'/,
    );
  });
});

describe('policyObjects', () => {
  it('v1: valid by the v1 schema, the fields under their names', () => {
    const [vap, binding] = policyObjects(policy, 'v1');
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
  it('v1beta1: the same objects in v1beta1', () => {
    const [vap] = policyObjects(policy, 'v1beta1');
    assert.equal(vap!.apiVersion, 'admissionregistration.k8s.io/v1beta1');
  });
  it('strict: an unknown field is refused with its path', () => {
    const extra = {
      ...policy,
      spec: { ...policy.spec, validations: [{ expression: 'true', severity: 'high' } as never] },
    };
    assert.throws(() => policyObjects(extra, 'v1'), /validations\[0\]\.severity/);
    assert.deepEqual(
      unknownFields({ spec: { paramRef: { nam: 'x' } } }, OBJECT_FIELDS.ValidatingAdmissionPolicyBinding!),
      ['spec.paramRef.nam'],
    );
  });
});
