import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { expectMutatingPolicyParity, runAdmissionChain } from 'kube-lambda-webhooks/testing';
import { TEAM_LABEL, policy } from '../../functions/default-team/index.ts';

const deployment = (labels?: Record<string, string>) => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'web', namespace: 'shop', ...(labels ? { labels } : {}) },
  spec: {
    selector: { matchLabels: { app: 'web' } },
    template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'app', image: 'nginx:1.25' }] } },
  },
});
const options = { namespace: 'shop', name: 'web' };

describe('default-team', () => {
  it('labels a Deployment without a team, keeping its labels, natively and from Lambda alike', async () => {
    const result = await runAdmissionChain(deployment({ app: 'web' }), [policy], options);
    assert.deepEqual(result.object?.metadata?.labels, { app: 'web', [TEAM_LABEL]: 'unassigned' });
    await expectMutatingPolicyParity(policy, deployment({ app: 'web' }), options);
  });

  it('labels a Deployment that has no labels at all', async () => {
    const result = await runAdmissionChain(deployment(), [policy], options);
    assert.deepEqual(result.object?.metadata?.labels, { [TEAM_LABEL]: 'unassigned' });
    await expectMutatingPolicyParity(policy, deployment(), options);
  });

  it('leaves a team that is set as it is', async () => {
    const result = await runAdmissionChain(deployment({ [TEAM_LABEL]: 'shop' }), [policy], options);
    assert.deepEqual(result.object?.metadata?.labels, { [TEAM_LABEL]: 'shop' });
    await expectMutatingPolicyParity(policy, deployment({ [TEAM_LABEL]: 'shop' }), options);
  });
});
