// Validating policies in the test kit's admission chain, in the API server's order: mutating
// webhooks, then validating policies (all evaluated natively, the first denial answers in the API
// server's own words), then validating webhooks.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { defineMutatingWebhook, defineValidatingWebhook, Deployment, deny, on } from '../../../lib/index.ts';
import { defineValidatingPolicy } from '../../../lib/policies/index.ts';
import { runAdmissionChain } from '../../../lib/testing/index.ts';
import type { KubeObject } from '../../../lib/review/schemas.ts';

const deployment = (replicas: number): KubeObject =>
  ({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'web', namespace: 'default' },
    spec: { replicas },
  }) as KubeObject;

const limit = defineValidatingPolicy({
  name: 'replica-limit',
  matchConstraints: { resourceRules: [on(Deployment).create()] },
  validations: [{ expression: 'object.spec.replicas <= 5', message: 'too many replicas', reason: 'Forbidden' }],
});
const warnOnly = defineValidatingPolicy({
  name: 'replica-note',
  matchConstraints: { resourceRules: [on(Deployment).create()] },
  validations: [{ expression: 'object.spec.replicas <= 1', message: 'more than one replica' }],
  validationActions: ['Warn'],
});
const scaleUp = defineMutatingWebhook({
  name: 'scale-up',
  rules: [on(Deployment).create()],
  mutate: (d) => {
    (d as { spec: { replicas: number } }).spec.replicas = 9;
  },
});
const refuseAll = defineValidatingWebhook({
  name: 'refuse-all',
  rules: [on(Deployment).create()],
  validate: () => deny('no'),
});

describe('runAdmissionChain with validating policies', () => {
  const options = { namespace: 'default', name: 'web' };
  it('a policy sees the object after the mutating webhooks, and denies before the validating webhooks', async () => {
    const got = await runAdmissionChain(deployment(1), [refuseAll, limit, scaleUp], options);
    assert.equal(got.allowed, false);
    assert.equal(got.deniedBy, 'replica-limit');
    assert.equal(
      got.message,
      `deployments.apps "web" is forbidden: ValidatingAdmissionPolicy 'replica-limit' with binding 'replica-limit' denied request: too many replicas`,
    );
    assert.deepEqual(
      got.steps.map((s) => [s.phase, s.webhook]),
      [
        ['mutating', 'scale-up.webhooks.kube-lambda.dev'],
        ['policy', 'replica-limit'],
      ],
    );
  });
  it('every policy is evaluated: warnings of the others come with the denial', async () => {
    const got = await runAdmissionChain(deployment(9), [limit, warnOnly], options);
    assert.equal(got.allowed, false);
    assert.deepEqual(got.warnings, [
      "Validation failed for ValidatingAdmissionPolicy 'replica-note' with binding 'replica-note': more than one replica",
    ]);
  });
  it('admitted by the policies, the validating webhooks come next', async () => {
    const got = await runAdmissionChain(deployment(1), [limit, refuseAll], options);
    assert.equal(got.deniedBy, 'refuse-all.webhooks.kube-lambda.dev');
    assert.deepEqual(
      got.steps.map((s) => s.phase),
      ['policy', 'validating'],
    );
  });
});
