// A policy's objects per cluster: ValidatingAdmissionPolicy v1 from 1.30, v1beta1 on 1.28-1.29
// where the cluster turns the gate on; MutatingAdmissionPolicy v1 from 1.36, v1beta1 on 1.34-1.35
// with its gate; a webhook elsewhere; `serve` overrides; every object checked against its
// version's schema (kubernetes-models' v1 schema for the VAP too), unknown fields refused.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ValidatingAdmissionPolicy } from 'kubernetes-models/admissionregistration.k8s.io/v1/ValidatingAdmissionPolicy';
import { ValidatingAdmissionPolicyBinding } from 'kubernetes-models/admissionregistration.k8s.io/v1/ValidatingAdmissionPolicyBinding';
import { policyObjects, policyServing } from '../../infra/policies/manifests.ts';
import { planPolicies } from '../../infra/policies/cluster.ts';
import { policyRegistrationOf, type PolicyRegistration } from '../../infra/policies/registration.ts';
import { admissionTypeName, schemaProblems } from '../../infra/policies/schema.ts';
import { Deployment, on } from '../../lib/index.ts';
import { defineMutatingPolicy } from '../../lib/policies/mutating/define.ts';
import { defineValidatingPolicy } from '../../lib/policies/index.ts';

const validatingWebhook = defineValidatingPolicy({
  name: 'replica-limit',
  matchConstraints: { resourceRules: [{ ...on(Deployment).create(), resourceNames: ['web'] }] },
  matchConditions: [{ name: 'not-canary', expression: "object.metadata.name != 'canary'" }],
  variables: [{ name: 'replicas', expression: 'object.spec.replicas' }],
  validations: [{ expression: 'variables.replicas <= 5', messageExpression: "'too many'", reason: 'Forbidden' }],
  auditAnnotations: [{ key: 'replicas', valueExpression: 'string(variables.replicas)' }],
  paramKind: { apiVersion: 'v1', kind: 'ConfigMap' },
  paramRef: { name: 'limits' },
  validationActions: ['Deny', 'Audit'],
});
const validating = policyRegistrationOf(validatingWebhook, 'functions/replica-limit/index.ts')!;

const mutatingWebhook = defineMutatingPolicy({
  name: 'add-team',
  matchConstraints: { resourceRules: [on(Deployment).create()] },
  mutations: [
    {
      patchType: 'ApplyConfiguration',
      applyConfiguration: { expression: 'Object{metadata: Object.metadata{labels: {"team": "a"}}}' },
    },
  ],
});
const mutating = policyRegistrationOf(mutatingWebhook, 'functions/add-team/index.ts')!;

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

describe('planPolicies', () => {
  const functions = [
    { registration: { ...validatingWebhook.registration, policy: validating } },
    { registration: { ...mutatingWebhook.registration, policy: mutating } },
  ];
  const cluster = (name: string, minor: number) => ({
    name,
    kubeVersion: { text: `1.${minor}`, version: { major: 1, minor } },
    enforcement: { 'replica-limit': 'Audit' as const },
    labels: {},
  });
  it('splits each cluster into webhooks and native objects, with a line per policy', () => {
    const old = planPolicies(functions, { root: '/p', cluster: cluster('old', 20) });
    assert.deepEqual(
      old.webhooks.map((r) => r.name),
      ['replica-limit', 'add-team'],
    );
    assert.deepEqual(old.objects, []);
    assert.deepEqual(old.servedFromLambda, ['replica-limit', 'add-team']);
    const mid = planPolicies(functions, { root: '/p', cluster: cluster('mid', 31) });
    assert.deepEqual(
      mid.webhooks.map((r) => r.name),
      ['add-team'],
    );
    assert.deepEqual(
      mid.objects.map((o) => o.kind),
      ['ValidatingAdmissionPolicy', 'ValidatingAdmissionPolicyBinding'],
    );
    assert.deepEqual(mid.objects[1]!.spec.validationActions, ['Audit']);
    assert.equal(mid.objects[0]!.metadata.labels?.['kube-lambda-webhooks/cluster'], 'mid');
    const next = planPolicies(functions, { root: '/p', cluster: cluster('new', 36) });
    assert.deepEqual(
      next.objects.map((o) => o.kind),
      [
        'MutatingAdmissionPolicy',
        'MutatingAdmissionPolicyBinding',
        'ValidatingAdmissionPolicy',
        'ValidatingAdmissionPolicyBinding',
      ],
    );
    assert.deepEqual(next.webhooks, []);
    assert.match(
      mid.lines.join('\n'),
      /cluster mid \(Kubernetes 1.31\): add-team is served from Lambda as a mutating webhook \(no MutatingAdmissionPolicy there\)/,
    );
  });
});
