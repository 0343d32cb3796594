// The test kit's parity check of a mutating policy: the webhook's patch against the native object.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Deployment, on } from '../../../lib/index.ts';
import { defineMutatingPolicy } from '../../../lib/policies/index.ts';
import type { KubeObject } from '../../../lib/review/schemas.ts';
import { expectMutatingPolicyParity } from '../../../lib/testing/index.ts';
import { canonicalJson } from '../../../lib/testing/mutating-policies.ts';

const deployment: KubeObject = {
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'web', namespace: 'default' },
  spec: { replicas: 2, strategy: { type: 'Recreate' }, revisionHistoryLimit: 10, progressDeadlineSeconds: 600 },
};
const stamp = defineMutatingPolicy({
  name: 'stamp',
  matchConstraints: { resourceRules: [on(Deployment).create()] },
  mutations: [
    {
      patchType: 'ApplyConfiguration',
      applyConfiguration: { expression: 'Object{metadata: Object.metadata{labels: {"stamped": "yes"}}}' },
    },
  ],
});

describe('expectMutatingPolicyParity', () => {
  it('passes when the patch gives the native object, and returns both answers', async () => {
    const { native, webhook } = await expectMutatingPolicyParity(stamp, deployment, { namespace: 'default' });
    assert.equal(native.object?.metadata?.labels?.stamped, 'yes');
    assert.deepEqual(webhook?.patch, [{ op: 'add', path: '/metadata/labels', value: { stamped: 'yes' } }]);
  });

  it('fails when the webhook gives another object or another answer than the native policy', async () => {
    const other = { ...stamp, evaluate: () => ({ allowed: true, object: deployment, shouldReinvoke: false }) };
    await assert.rejects(
      expectMutatingPolicyParity(other, deployment, { namespace: 'default' }),
      /the object after the patch/,
    );
    const refusing = {
      ...stamp,
      evaluate: () => ({
        allowed: false,
        object: deployment,
        shouldReinvoke: false,
        status: { code: 403, reason: 'Invalid', message: 'no' },
      }),
    };
    await assert.rejects(expectMutatingPolicyParity(refusing, deployment, { namespace: 'default' }), /allowed/);
  });

  it('checks only the native answer for a request the API server never sends the webhook', async () => {
    const parity = await expectMutatingPolicyParity(stamp, deployment, { namespace: 'kube-system' });
    assert.equal(parity.webhook, undefined);
    assert.deepEqual(parity.native.object, deployment);
  });

  it('compares JSON with members in key order and integers exact', () => {
    assert.equal(
      canonicalJson({ b: 1, a: { d: [2n ** 64n], c: null } }),
      '{"a":{"c":null,"d":[18446744073709551616]},"b":1}',
    );
    assert.equal(canonicalJson({ a: 1, b: 2 }), canonicalJson({ b: 2, a: 1 }));
  });
});
