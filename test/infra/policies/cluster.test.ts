// A cluster's share of the project's policies: webhooks, native objects (mutating first) and a
// line per policy, with the cluster's enforcement and label on the native objects.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { planPolicies } from '../../../infra/policies/cluster.ts';
import { samplePolicies } from './project.ts';

const { validatingWebhook, validating, mutatingWebhook, mutating } = samplePolicies();

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
