import { Deployment, on } from 'kube-lambda-webhooks';
import { defineMutatingPolicy } from 'kube-lambda-webhooks/policies';

/** The label a Deployment's owning team goes in. */
export const TEAM_LABEL = 'example.com/team';

/**
 * Mutating policy default-team: a new Deployment without a team label gets `unassigned`, so every
 * Deployment says who owns it. A MutatingAdmissionPolicy where the cluster runs one (1.36 and
 * later), a mutating webhook served from Lambda elsewhere, whose patch gives the same object.
 */
export const policy = defineMutatingPolicy({
  name: 'default-team',
  matchConstraints: { resourceRules: [on(Deployment).create()] },
  // Written with the CEL every Kubernetes version has (optional fields came in 1.28).
  matchConditions: [
    { name: 'no-team', expression: `!has(object.metadata.labels) || !('${TEAM_LABEL}' in object.metadata.labels)` },
  ],
  mutations: [
    {
      patchType: 'ApplyConfiguration',
      applyConfiguration: { expression: `Object{metadata: Object.metadata{labels: {"${TEAM_LABEL}": "unassigned"}}}` },
    },
  ],
  // A Deployment left without the default is not worth refusing while the function is down.
  failurePolicy: 'Ignore',
});

export const handler = policy.handler;
export default policy;
