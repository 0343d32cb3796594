// defineValidatingPolicy: the defaults, what it refuses, and the policy served from Lambda as a
// validating webhook. Every case runs twice, natively (as the API server evaluates the policy and
// its binding) and through the function's handler, and the two answers must be equal: allowed,
// code, reason, the message after its prefix, warnings and audit annotations.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Deployment, on } from '../../../../lib/index.ts';
import { defineValidatingPolicy, type ValidatingPolicyDefinition } from '../../../../lib/policies/index.ts';
import { admissionReview, invoke } from '../../../../lib/testing/index.ts';
import { expectPolicyParity } from '../../../../lib/testing/policies.ts';
import { lambdaContext, toEvent } from '../../../../lib/harness/events.ts';
import { createLogger } from '../../../../lib/log.ts';
import type { KubeObject } from '../../../../lib/review/schemas.ts';

const deployment = (replicas: number, labels: Record<string, string> = { team: 'a' }, name = 'web'): KubeObject =>
  ({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace: 'default', labels },
    spec: { replicas },
  }) as KubeObject;

const base: ValidatingPolicyDefinition = {
  name: 'replica-limit',
  matchConstraints: { resourceRules: [on(Deployment).create().update()] },
  variables: [{ name: 'replicas', expression: 'object.spec.replicas' }],
  validations: [
    {
      expression: 'variables.replicas <= 5',
      messageExpression: "'replicas must be at most 5, got ' + string(variables.replicas)",
      reason: 'Forbidden',
    },
    {
      expression: "has(object.metadata.labels) && 'team' in object.metadata.labels",
      message: 'a team label is required',
    },
  ],
  auditAnnotations: [{ key: 'replicas', valueExpression: 'string(variables.replicas)' }],
};

describe('defineValidatingPolicy: defaults', () => {
  const policy = defineValidatingPolicy(base).validatingPolicy;
  it('the policy: Fail, Equivalent, every namespace but the system ones, the typed rules as plain rules', () => {
    assert.equal(policy.spec.name, 'replica-limit');
    assert.equal(policy.spec.failurePolicy, 'Fail');
    assert.equal(policy.spec.matchConstraints?.matchPolicy, 'Equivalent');
    assert.deepEqual(policy.spec.matchConstraints?.namespaceSelector?.matchExpressions?.[0]?.values, [
      'kube-system',
      'kube-node-lease',
    ]);
    assert.deepEqual(policy.spec.matchConstraints?.resourceRules, [
      {
        operations: ['CREATE', 'UPDATE'],
        apiGroups: ['apps'],
        apiVersions: ['v1'],
        resources: ['deployments'],
        scope: 'Namespaced',
      },
    ]);
  });
  it('the binding: its name, Deny, parameterNotFoundAction Deny', () => {
    assert.deepEqual(policy.binding, {
      name: 'replica-limit',
      policyName: 'replica-limit',
      validationActions: ['Deny'],
    });
    const withParams = defineValidatingPolicy({
      ...base,
      paramKind: { apiVersion: 'v1', kind: 'ConfigMap' },
      paramRef: { name: 'limits' },
    });
    assert.equal(withParams.validatingPolicy.binding.paramRef?.parameterNotFoundAction, 'Deny');
  });
  it('the webhook: validating, Fail, the same rules and namespaceSelector', () => {
    const reg = defineValidatingPolicy(base).registration;
    assert.equal(reg.type, 'validating');
    assert.equal(reg.failurePolicy, 'Fail');
    assert.deepEqual(reg.namespaceSelector, policy.spec.matchConstraints?.namespaceSelector);
    assert.deepEqual(reg.rules, policy.spec.matchConstraints?.resourceRules);
  });
  for (const [what, change, words] of [
    ['no rule', { matchConstraints: { resourceRules: [] } }, /matchConstraints.resourceRules/],
    ['no validation', { validations: [], auditAnnotations: [] }, /validations must hold/],
    ['an empty expression', { validations: [{ expression: ' ' }] }, /validations\[0\].expression/],
    ['Deny with Warn', { validationActions: ['Deny', 'Warn'] }, /both Deny and Warn/],
    ['an unknown action', { validationActions: ['Block'] }, /validationActions must be distinct values/],
    ['paramRef without paramKind', { paramRef: { name: 'x' } }, /paramRef needs the policy's paramKind/],
  ] as const) {
    it(`refuses ${what}, naming the field`, () => {
      assert.throws(
        () => defineValidatingPolicy({ ...base, ...(change as object) } as ValidatingPolicyDefinition),
        words,
      );
    });
  }
});

interface Case {
  name: string;
  change?: Partial<ValidatingPolicyDefinition>;
  object: KubeObject | null;
  options?: Parameters<typeof expectPolicyParity>[2];
  allowed: boolean;
  message?: string;
  code?: number;
  warnings?: number;
  annotations?: string[];
}

const cases: Case[] = [
  {
    name: 'admits what passes, with its audit annotation',
    object: deployment(3),
    allowed: true,
    annotations: ['replica-limit/replicas'],
  },
  {
    name: 'denies with the messageExpression and the reason code',
    object: deployment(7),
    allowed: false,
    code: 403,
    message:
      "ValidatingAdmissionPolicy 'replica-limit' with binding 'replica-limit' denied request: replicas must be at most 5, got 7",
  },
  {
    name: 'the second validation: its message, Invalid 422',
    object: deployment(1, {}),
    allowed: false,
    code: 422,
    message:
      "ValidatingAdmissionPolicy 'replica-limit' with binding 'replica-limit' denied request: a team label is required",
  },
  {
    name: 'Warn: admitted with a warning per failed validation',
    change: { validationActions: ['Warn'] },
    object: deployment(9, {}),
    allowed: true,
    warnings: 2,
  },
  {
    name: 'Audit: admitted, the failures in the annotation',
    change: { validationActions: ['Audit'] },
    object: deployment(9),
    allowed: true,
    annotations: ['replica-limit/replicas', 'validation.policy.admission.k8s.io/validation_failure'],
  },
  {
    name: 'Deny and Audit: denied and audited',
    change: { validationActions: ['Deny', 'Audit'] },
    object: deployment(9),
    allowed: false,
    code: 403,
  },
  {
    name: 'a matchCondition excludes',
    change: { matchConditions: [{ name: 'not-canary', expression: "object.metadata.name != 'canary'" }] },
    object: deployment(9, { team: 'a' }, 'canary'),
    allowed: true,
  },
  {
    name: 'resourceNames: only the named objects',
    change: { matchConstraints: { resourceRules: [{ ...on(Deployment).create(), resourceNames: ['db'] }] } },
    object: deployment(9),
    allowed: true,
  },
  {
    name: 'an error follows failurePolicy Fail',
    change: { validations: [{ expression: 'object.spec.nope > 1' }] },
    object: deployment(1),
    allowed: false,
    code: 422,
  },
  {
    name: 'an error under Ignore admits',
    change: { failurePolicy: 'Ignore', validations: [{ expression: 'object.spec.nope > 1' }] },
    object: deployment(1),
    allowed: true,
  },
  {
    name: 'params from a ConfigMap shipped with the policy',
    change: {
      paramKind: { apiVersion: 'v1', kind: 'ConfigMap' },
      paramRef: { name: 'limits' },
      params: [
        {
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: { name: 'limits', namespace: 'default' },
          data: { max: '2' },
        } as KubeObject,
      ],
      validations: [
        {
          expression: 'object.spec.replicas <= int(params.data.max)',
          messageExpression: "'at most ' + params.data.max",
        },
      ],
    },
    object: deployment(3),
    allowed: false,
    message: "ValidatingAdmissionPolicy 'replica-limit' with binding 'replica-limit' denied request: at most 2",
  },
  {
    name: 'a missing param under Deny fails to configure the binding',
    change: {
      paramKind: { apiVersion: 'v1', kind: 'ConfigMap' },
      paramRef: { name: 'nope' },
      validations: [{ expression: 'true' }],
    },
    object: deployment(3),
    allowed: false,
    message:
      "ValidatingAdmissionPolicy 'replica-limit' with binding 'replica-limit' denied request: failed to configure binding: no params found for policy binding with `Deny` parameterNotFoundAction",
  },
  {
    name: 'namespaceObject: the Namespace the test gives, the same in-function',
    change: {
      validations: [
        {
          expression: "namespaceObject.metadata.labels.tier == 'prod' && object.spec.replicas > 1",
          messageExpression: "'tier ' + namespaceObject.metadata.labels.tier",
        },
      ],
    },
    object: deployment(1),
    options: { namespaceLabels: { tier: 'dev' } },
    allowed: false,
    message: "ValidatingAdmissionPolicy 'replica-limit' with binding 'replica-limit' denied request: tier dev",
  },
  {
    name: "namespaceObject: the definition's namespaces",
    change: {
      namespaces: [
        { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'default', labels: { tier: 'prod' } } } as KubeObject,
      ],
      validations: [{ expression: "namespaceObject.metadata.labels.tier == 'prod'" }],
    },
    object: deployment(1),
    allowed: true,
  },
  {
    name: 'the authorizer: the one the native policy has, in-function too',
    change: {
      validations: [
        {
          expression: "authorizer.group('apps').resource('deployments').check('scale').allowed()",
          message: 'may not scale',
        },
      ],
    },
    object: deployment(1),
    options: { authorize: () => ({ decision: 'Allow' }) },
    allowed: true,
  },
  {
    name: 'the authorizer: no opinion by default, both ways',
    change: {
      validations: [
        { expression: "authorizer.group('apps').resource('deployments').check('scale').allowed()", message: 'm' },
      ],
    },
    object: deployment(1),
    allowed: false,
    message: "ValidatingAdmissionPolicy 'replica-limit' with binding 'replica-limit' denied request: m",
  },
  {
    name: 'messageExpression fallbacks: multi-line, then the message, then the expression',
    change: {
      validationActions: ['Warn'],
      validations: [
        { expression: 'false', messageExpression: "'two\\nlines'", message: ' the message ' },
        { expression: 'false', messageExpression: "' '" },
        { expression: ' 1 > 2 ', messageExpression: 'string(1/0)' },
      ],
    },
    object: deployment(1),
    allowed: true,
    warnings: 3,
  },
  {
    name: 'kube-system is not gated (namespaceSelector)',
    object: deployment(9),
    options: { namespace: 'kube-system' },
    allowed: true,
  },
  {
    name: 'DELETE is not in the rules',
    object: null,
    options: { operation: 'DELETE', oldObject: deployment(9) },
    allowed: true,
  },
];

describe('defineValidatingPolicy: native and in-function answers are equal', () => {
  for (const c of cases) {
    it(c.name, async () => {
      const policy = defineValidatingPolicy({ ...base, ...c.change });
      const options = { namespace: 'default', name: c.object?.metadata?.name ?? 'web', ...c.options };
      const { native } = await expectPolicyParity(policy, c.object, options);
      assert.equal(native.allowed, c.allowed);
      if (c.code !== undefined) assert.equal(native.status?.code, c.code);
      if (c.message !== undefined) assert.equal(native.status?.detail, c.message);
      if (c.warnings !== undefined) assert.equal(native.warnings.length, c.warnings);
      if (c.annotations !== undefined) assert.deepEqual(Object.keys(native.auditAnnotations).sort(), c.annotations);
    });
  }
});

describe('defineValidatingPolicy: served from Lambda', () => {
  it('the review answer carries the webhook audit annotations', async () => {
    const policy = defineValidatingPolicy({ ...base, validationActions: ['Audit'] });
    const got = await invoke(policy, admissionReview(deployment(9), { namespace: 'default', name: 'web' }));
    const annotations = got.review.response?.auditAnnotations ?? {};
    assert.equal(annotations.replicas, '9');
    assert.equal(JSON.parse(annotations.validation_failure!)[0].message, 'replicas must be at most 5, got 9');
  });
  it("a fleet cluster's enforcement replaces the binding's actions", async () => {
    const policy = defineValidatingPolicy({ ...base, auth: 'path-secret' });
    const east = 'e'.repeat(43);
    const west = 'w'.repeat(43);
    const env = {
      KLW_FLEET: JSON.stringify({ east: { enforcement: 'Deny' }, west: { enforcement: 'Warn' } }),
      KLW_FLEET_PATH_SECRETS: JSON.stringify({ east, west }),
    };
    const handler = policy.withOptions({ env, logger: createLogger({ level: 'error', sink: () => {} }) });
    const review = admissionReview(deployment(9), { namespace: 'default', name: 'web' });
    const answer = async (secret: string) =>
      JSON.parse(
        (await handler(toEvent(review, { path: `/replica-limit/${secret}`, format: 'http' }), lambdaContext()))
          .body as string,
      ).response;
    assert.equal((await answer(east)).allowed, false);
    const warned = await answer(west);
    assert.equal(warned.allowed, true);
    assert.match(
      warned.warnings[0],
      /^Validation failed for ValidatingAdmissionPolicy 'replica-limit' with binding 'replica-limit': replicas must be at most 5/,
    );
  });
});
