import { Deployment, on } from 'kube-lambda-webhooks';
import { defineValidatingPolicy } from 'kube-lambda-webhooks/policies';

/**
 * Validating policy replica-cap: at most five replicas per Deployment. A ValidatingAdmissionPolicy
 * where the cluster evaluates one (1.30 and later), a validating webhook served from Lambda with
 * the same verdicts elsewhere.
 */
export const policy = defineValidatingPolicy({
  name: 'replica-cap',
  matchConstraints: { resourceRules: [on(Deployment).create().update()] },
  validations: [
    {
      expression: 'object.spec.replicas <= 5',
      messageExpression: "'at most 5 replicas, got ' + string(object.spec.replicas)",
      reason: 'Forbidden',
    },
  ],
});

export const handler = policy.handler;
export default policy;
