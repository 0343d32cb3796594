import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Deployment } from '../../../../lib/k8s/kinds.ts';
import { defineMutatingPolicy } from '../../../../lib/policies/mutating/define.ts';
import { mutatingPolicyManifests, nativeMutatingPolicyVersion } from '../../../../lib/policies/mutating/manifest.ts';
import { builtinSchema } from '../../../../lib/policies/mutating/smd/schema.ts';
import { validate } from '../../../../lib/policies/mutating/smd/typed.ts';
import type { KubeObject } from '../../../../lib/review/schemas.ts';
import { on } from '../../../../lib/rule-builder.ts';

/** The errors of an object against its kind's schema in Kubernetes' OpenAPI (unknown fields, wrong types). */
const schemaErrors = (o: KubeObject) => {
  const version = (o.apiVersion as string).split('/')[1];
  return validate(builtinSchema(), `io.k8s.api.admissionregistration.${version}.${o.kind}`, o, false);
};

const policy = defineMutatingPolicy({
  name: 'add-team',
  matchConstraints: { resourceRules: [on(Deployment).create().update()], objectSelector: { matchLabels: { a: 'b' } } },
  matchConditions: [{ name: 'not-system', expression: "!object.metadata.namespace.startsWith('kube-')" }],
  variables: [{ name: 'team', expression: "'platform'" }],
  mutations: [
    {
      patchType: 'ApplyConfiguration',
      applyConfiguration: { expression: 'Object{metadata: Object.metadata{labels: {"team": variables.team}}}' },
    },
  ],
  reinvocationPolicy: 'IfNeeded',
  paramKind: { apiVersion: 'v1', kind: 'ConfigMap' },
  paramRef: { name: 'teams', parameterNotFoundAction: 'Allow' },
});

describe('MutatingAdmissionPolicy manifests', () => {
  it('writes the policy and its binding, valid against the v1 schemas', () => {
    const [p, b] = mutatingPolicyManifests(policy.mutatingPolicy);
    assert.deepEqual(schemaErrors(p), []);
    assert.deepEqual(schemaErrors(b), []);
    assert.deepEqual(p.spec, {
      matchConstraints: {
        matchPolicy: 'Equivalent',
        resourceRules: [
          {
            apiGroups: ['apps'],
            apiVersions: ['v1'],
            resources: ['deployments'],
            operations: ['CREATE', 'UPDATE'],
            scope: 'Namespaced',
          },
        ],
        namespaceSelector: {
          matchExpressions: [
            { key: 'kubernetes.io/metadata.name', operator: 'NotIn', values: ['kube-system', 'kube-node-lease'] },
          ],
        },
        objectSelector: { matchLabels: { a: 'b' } },
      },
      failurePolicy: 'Fail',
      reinvocationPolicy: 'IfNeeded',
      mutations: policy.mutatingPolicy.spec.mutations,
      paramKind: { apiVersion: 'v1', kind: 'ConfigMap' },
      matchConditions: policy.mutatingPolicy.spec.matchConditions,
      variables: policy.mutatingPolicy.spec.variables,
    });
    assert.deepEqual(b, {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'MutatingAdmissionPolicyBinding',
      metadata: { name: 'add-team' },
      spec: { policyName: 'add-team', paramRef: { name: 'teams', parameterNotFoundAction: 'Allow' } },
    });
  });

  it('an unknown field is refused by the schema check the test relies on', () => {
    const [p] = mutatingPolicyManifests(policy.mutatingPolicy);
    assert.notDeepEqual(schemaErrors({ ...p, spec: { ...(p.spec as object), failurePolicy: 7 } }), []);
    assert.notDeepEqual(schemaErrors({ ...p, spec: { ...(p.spec as object), unknown: 1 } }), []);
  });

  it('is native as v1 from 1.36, as v1beta1 on 1.34 and 1.35 where the cluster enables it, else a webhook', () => {
    const gate = { MutatingAdmissionPolicy: true };
    assert.equal(nativeMutatingPolicyVersion({ kubeVersion: '1.36' }), 'v1');
    assert.equal(nativeMutatingPolicyVersion({ kubeVersion: 'v1.37.2' }), 'v1');
    assert.equal(
      nativeMutatingPolicyVersion({ kubeVersion: '1.36', featureGates: { MutatingAdmissionPolicy: false } }),
      undefined,
    );
    assert.equal(nativeMutatingPolicyVersion({ kubeVersion: '1.35' }), undefined);
    assert.equal(nativeMutatingPolicyVersion({ kubeVersion: '1.35', featureGates: gate }), 'v1beta1');
    assert.equal(nativeMutatingPolicyVersion({ kubeVersion: '1.34', featureGates: gate }), 'v1beta1');
    assert.equal(nativeMutatingPolicyVersion({ kubeVersion: '1.33', featureGates: gate }), undefined);
    assert.equal(nativeMutatingPolicyVersion({ kubeVersion: '1.20' }), undefined);
    const [p, b] = mutatingPolicyManifests(policy.mutatingPolicy, 'v1beta1');
    assert.equal(p.apiVersion, 'admissionregistration.k8s.io/v1beta1');
    assert.deepEqual(schemaErrors(p), []);
    assert.deepEqual(schemaErrors(b), []);
    assert.equal(b.apiVersion, 'admissionregistration.k8s.io/v1beta1');
  });
});
