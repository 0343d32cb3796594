import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { admissionReview, expectPolicyParity, invoke } from 'kube-lambda-webhooks/testing';
import { policy } from '../../functions/replica-cap/index.ts';

const deployment = (replicas: number) => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'web', namespace: 'shop' },
  spec: { replicas, selector: { matchLabels: { app: 'web' } } },
});
const options = { namespace: 'shop', name: 'web' };

describe('replica-cap', () => {
  it('admits five replicas, natively and from Lambda alike', async () => {
    const { native, webhook } = await expectPolicyParity(policy, deployment(5), options);
    assert.equal(native.allowed, true);
    assert.equal(webhook?.allowed, true);
  });

  it('denies six with 403 Forbidden and the message the API server gives', async () => {
    const { native } = await expectPolicyParity(policy, deployment(6), options);
    assert.equal(native.allowed, false);
    assert.equal(native.status?.code, 403);
    assert.equal(native.status?.reason, 'Forbidden');
    assert.equal(
      native.status?.detail,
      "ValidatingAdmissionPolicy 'replica-cap' with binding 'replica-cap' denied request: at most 5 replicas, got 6",
    );
  });

  it('checks an update too', async () => {
    const result = await invoke(
      policy,
      admissionReview(deployment(9), { ...options, operation: 'UPDATE', oldObject: deployment(3) }),
    );
    assert.equal(result.allowed, false);
  });

  it('leaves a Deployment in kube-system alone, as the binding excludes it', async () => {
    const { native, webhook } = await expectPolicyParity(policy, deployment(9), {
      ...options,
      namespace: 'kube-system',
    });
    assert.equal(native.allowed, true);
    assert.equal(webhook, undefined, 'the API server does not call the webhook there');
  });
});
