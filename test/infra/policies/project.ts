// A project of two policies for the tests of how policies are served: a validating one
// (replica-limit) and a mutating one (add-team), each in functions/<name>/index.ts.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { policyRegistrationOf, type PolicyRegistration } from '../../../infra/policies/registration.ts';
import { Deployment, on } from '../../../lib/index.ts';
import { defineMutatingPolicy, type MutatingPolicyWebhook as MutatingPolicy } from '../../../lib/policies/index.ts';
import { defineValidatingPolicy, type ValidatingPolicyWebhook } from '../../../lib/policies/index.ts';

/** A validating policy: at most five replicas; `serve` as given. */
export const VALIDATING = (serve = 'auto') => `import { defineValidatingPolicy } from 'kube-lambda-webhooks/policies';
export default defineValidatingPolicy({
  name: 'replica-limit',
  serve: '${serve}',
  matchConstraints: {
    resourceRules: [{ operations: ['CREATE', 'UPDATE'], apiGroups: ['apps'], apiVersions: ['v1'], resources: ['deployments'] }],
  },
  validations: [{ expression: 'object.spec.replicas <= 5', message: 'at most 5 replicas', reason: 'Invalid' }],
});
`;

/** A mutating policy: a team label on every new deployment. */
export const MUTATING = `import { defineMutatingPolicy } from 'kube-lambda-webhooks/policies';
export default defineMutatingPolicy({
  name: 'add-team',
  matchConstraints: {
    resourceRules: [{ operations: ['CREATE'], apiGroups: ['apps'], apiVersions: ['v1'], resources: ['deployments'] }],
  },
  mutations: [
    {
      patchType: 'ApplyConfiguration',
      applyConfiguration: { expression: 'Object{metadata: Object.metadata{labels: {"team": "platform"}}}' },
    },
  ],
});
`;

/** Writes functions/<name>/index.ts of the project at `root`. */
export function writeFunction(root: string, name: string, text: string): void {
  mkdirSync(join(root, 'functions', name), { recursive: true });
  writeFileSync(join(root, 'functions', name, 'index.ts'), text);
}

/** Writes the two policies into the project at `root`. */
export function writePolicyProject(root: string): void {
  writeFunction(root, 'replica-limit', VALIDATING());
  writeFunction(root, 'add-team', MUTATING);
}

/** A validating and a mutating policy as defined, and what each registers. */
export function samplePolicies(): {
  validatingWebhook: ValidatingPolicyWebhook;
  validating: PolicyRegistration;
  mutatingWebhook: MutatingPolicy;
  mutating: PolicyRegistration;
} {
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
  return { validatingWebhook, validating, mutatingWebhook, mutating };
}
