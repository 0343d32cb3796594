// The completion defineValidatingPolicy and defineMutatingPolicy share: the same defaults and
// checks of the matching fields and of paramRef, and the spec and binding built in the API's
// field order, which is the order `klw manifests` writes them in.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfigMap, Deployment, on } from '../../../../lib/index.ts';
import { defineMutatingPolicy, defineValidatingPolicy } from '../../../../lib/policies/index.ts';

const every = {
  name: 'every-field',
  matchConstraints: {
    resourceRules: [{ ...on(Deployment).create(), resourceNames: ['web'] }],
    excludeResourceRules: [
      { operations: ['CREATE' as const], apiGroups: ['apps'], apiVersions: ['v1'], resources: ['deployments/scale'] },
    ],
  },
  matchConditions: [{ name: 'labelled', expression: 'has(object.metadata.labels)' }],
  variables: [{ name: 'one', expression: '1' }],
  paramKind: { apiVersion: 'v1', kind: 'ConfigMap' },
  paramRef: { name: 'settings', namespace: 'default' },
  matchResources: { namespaceSelector: { matchLabels: { env: 'prod' } } },
};

const validating = () =>
  defineValidatingPolicy({
    ...every,
    validations: [{ expression: 'true' }],
    auditAnnotations: [{ key: 'k', valueExpression: "'v'" }],
    validationActions: ['Warn'],
  }).validatingPolicy;
const mutating = () =>
  defineMutatingPolicy({
    ...every,
    mutations: [{ patchType: 'JSONPatch', jsonPatch: { expression: '[]' } }],
  }).mutatingPolicy;

describe('the shared completion of policy definitions', () => {
  it("writes a validating policy's spec and binding in the API's field order", () => {
    const { spec, binding } = validating();
    assert.deepEqual(Object.keys(spec), [
      'name',
      'failurePolicy',
      'matchConstraints',
      'validations',
      'paramKind',
      'matchConditions',
      'variables',
      'auditAnnotations',
    ]);
    assert.deepEqual(Object.keys(spec.matchConstraints!), [
      'resourceRules',
      'excludeResourceRules',
      'namespaceSelector',
      'objectSelector',
      'matchPolicy',
    ]);
    assert.deepEqual(Object.keys(binding), ['name', 'policyName', 'validationActions', 'paramRef', 'matchResources']);
  });

  it("writes a mutating policy's spec and binding in the API's field order", () => {
    const { spec, binding } = mutating();
    assert.deepEqual(Object.keys(spec), [
      'name',
      'failurePolicy',
      'matchConstraints',
      'mutations',
      'reinvocationPolicy',
      'paramKind',
      'matchConditions',
      'variables',
    ]);
    assert.deepEqual(Object.keys(binding), ['name', 'policyName', 'paramRef', 'matchResources']);
  });

  it('applies the same defaults to both kinds', () => {
    for (const { spec, binding } of [validating(), mutating()]) {
      assert.equal(spec.failurePolicy, 'Fail');
      assert.equal(spec.matchConstraints?.matchPolicy, 'Equivalent');
      assert.deepEqual(spec.matchConstraints?.objectSelector, {});
      assert.deepEqual(spec.matchConstraints?.namespaceSelector, {
        matchExpressions: [
          { key: 'kubernetes.io/metadata.name', operator: 'NotIn', values: ['kube-system', 'kube-node-lease'] },
        ],
      });
      assert.deepEqual(spec.matchConstraints?.resourceRules?.[0]?.resourceNames, ['web']);
      assert.deepEqual(binding.paramRef, { parameterNotFoundAction: 'Deny', name: 'settings', namespace: 'default' });
      assert.deepEqual(binding.matchResources, {
        matchPolicy: 'Equivalent',
        namespaceSelector: { matchLabels: { env: 'prod' } },
      });
      assert.deepEqual([binding.name, binding.policyName], ['every-field', 'every-field']);
    }
  });

  it('leaves out what is not given, and names the policy and binding as asked', () => {
    const plain = defineMutatingPolicy({
      name: 'plain',
      policyName: 'the-policy',
      bindingName: 'the-binding',
      matchConstraints: { resourceRules: [on(ConfigMap).create()] },
      mutations: [{ patchType: 'JSONPatch', jsonPatch: { expression: '[]' } }],
    }).mutatingPolicy;
    assert.deepEqual(Object.keys(plain.spec), [
      'name',
      'failurePolicy',
      'matchConstraints',
      'mutations',
      'reinvocationPolicy',
    ]);
    assert.deepEqual(plain.binding, { name: 'the-binding', policyName: 'the-policy' });
    assert.equal(plain.spec.name, 'the-policy');
  });

  it('refuses what the API server refuses of either kind, in the same words', () => {
    const kinds = [
      (extra: object) =>
        defineValidatingPolicy({ name: 'p', validations: [{ expression: 'true' }], ...extra } as never),
      (extra: object) =>
        defineMutatingPolicy({
          name: 'p',
          mutations: [{ patchType: 'JSONPatch', jsonPatch: { expression: '[]' } }],
          ...extra,
        } as never),
    ];
    const rules = { matchConstraints: { resourceRules: [on(ConfigMap).create()] } };
    for (const define of kinds) {
      assert.throws(() => define({ matchConstraints: { resourceRules: [] } }), {
        message:
          'policy p: matchConstraints.resourceRules must hold at least one rule, such as on(Deployment).create()',
      });
      assert.throws(() => define({ ...rules, paramRef: { name: 'x' } }), {
        message: "policy p: paramRef needs the policy's paramKind",
      });
      assert.throws(
        () =>
          define({
            ...rules,
            paramKind: { apiVersion: 'v1', kind: 'ConfigMap' },
            paramRef: { name: 'x', selector: {} },
          }),
        { message: 'policy p: paramRef takes a name or a selector, not both' },
      );
    }
  });
});
