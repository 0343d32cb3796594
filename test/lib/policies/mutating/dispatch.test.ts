import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { defineMutatingWebhook } from '../../../../lib/admission/webhook.ts';
import { admissionReview } from '../../../../lib/harness/reviews.ts';
import { Deployment } from '../../../../lib/k8s/kinds.ts';
import { paramSourcesOf } from '../../../../lib/policies/generic/params.ts';
import {
  defineMutatingPolicy,
  kindSchemas,
  type MutatingPolicyDefinition,
  type MutatingPolicyWebhook,
} from '../../../../lib/policies/mutating/define.ts';
import { dispatchMutating, PolicyReinvokeContext } from '../../../../lib/policies/mutating/dispatch.ts';
import { defaultObject } from '../../../../lib/policies/mutating/defaults.ts';
import { compileMutatingPolicy } from '../../../../lib/policies/mutating/evaluate.ts';
import type { AdmissionRequest, KubeObject } from '../../../../lib/review/schemas.ts';
import { on } from '../../../../lib/rule-builder.ts';
import { runAdmissionChain } from '../../../../lib/testing/chain.ts';
import { expectMutatingPolicyParity } from '../../../../lib/testing/mutating-policies.ts';

/** A Deployment as the API server holds it: defaulted (as it is when decoded, and after each mutation). */
const deployment = (labels?: Record<string, string>, spec: Record<string, unknown> = {}): KubeObject =>
  defaultObject(
    { group: 'apps', version: 'v1', kind: 'Deployment' },
    {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'd1', namespace: 'default', ...(labels ? { labels } : {}) },
      spec: { template: { spec: { volumes: [{ name: 'x' }] } }, ...spec },
    },
  ) as KubeObject;
const policy = (name: string, expression: string, more: Partial<MutatingPolicyDefinition> = {}) =>
  defineMutatingPolicy({
    name,
    matchConstraints: { resourceRules: [on(Deployment).create().update()] },
    mutations: [{ patchType: 'ApplyConfiguration', applyConfiguration: { expression } }],
    bindingName: 'binding',
    ...more,
  });
/** The policies dispatched natively, in order, with the param objects in the cluster. */
const dispatchMutatingPolicies = (
  policies: MutatingPolicyWebhook[],
  request: AdmissionRequest,
  params: KubeObject[] = [],
) =>
  dispatchMutating(
    policies.map((p) => ({
      policy: compileMutatingPolicy(p.mutatingPolicy.spec),
      bindings: [p.mutatingPolicy.binding],
    })),
    request,
    {
      namespace: (name) => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } }),
      params: paramSourcesOf(params),
      kindSchema: kindSchemas({}),
    },
  );
const labels = (entries: string) => `Object{ metadata: Object.metadata{ labels: {${entries}} } }`;
const request = (object: KubeObject) => admissionReview(object, { namespace: 'default' }).request;
const PRODONLY = [
  { name: 'prodonly', expression: 'object.?metadata.labels["environment"].orValue("") == "production"' },
];

// Restated from k8s.io/apiserver pkg/admission/plugin/policy/mutating/dispatcher_test.go (TestDispatcher).
// The API server's test registers a defaulter of spec.strategy.type; these rows run every Deployment defaulter.
describe('mutating policies dispatched in order (dispatcher_test.go)', () => {
  it('simple patch', () => {
    const p = policy('policy1', 'Object{ spec: Object.spec{ replicas: object.spec.replicas + 100 } }');
    const outcome = dispatchMutatingPolicies([p], request(deployment(undefined, { replicas: 1 })));
    assert.deepEqual(outcome.object, deployment(undefined, { replicas: 101 }));
  });

  it('with param', () => {
    const p = policy(
      'policy1',
      "Object{ spec: Object.spec{ replicas: object.spec.replicas + int(params.data['key']) } }",
      {
        paramKind: { apiVersion: 'v1', kind: 'ConfigMap' },
        paramRef: { name: 'cm1', namespace: 'default' },
      },
    );
    const outcome = dispatchMutatingPolicies([p], request(deployment(undefined, { replicas: 1 })), [
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm1', namespace: 'default' }, data: { key: '10' } },
    ]);
    assert.deepEqual(outcome.object, deployment(undefined, { replicas: 11 }));
  });

  it('both policies reinvoked', () => {
    const count = 'string(int(object.?metadata.labels["count"].orValue("1")) + 1)';
    const outcome = dispatchMutatingPolicies(
      [policy('policy1', labels(`"policy1": ${count}`)), policy('policy2', labels(`"policy2": ${count}`))],
      request(deployment()),
    );
    assert.deepEqual(outcome.object, deployment({ policy1: '2', policy2: '2' }));
    assert.equal(outcome.shouldReinvoke, true);
  });

  it('1st policy sets match condition that 2nd policy matches', () => {
    const outcome = dispatchMutatingPolicies(
      [
        policy('policy1', labels('"environment": "production"')),
        policy('policy2', labels('"policy1invoked": "true"'), { matchConditions: PRODONLY }),
      ],
      request(deployment()),
    );
    assert.deepEqual(outcome.object, deployment({ environment: 'production', policy1invoked: 'true' }));
  });

  it('1st policy still does not match after 2nd policy sets match condition', () => {
    const outcome = dispatchMutatingPolicies(
      [
        policy('policy1', labels('"policy1invoked": "true"'), { matchConditions: PRODONLY }),
        policy('policy2', labels('"environment": "production"')),
      ],
      request(deployment()),
    );
    assert.deepEqual(outcome.object, deployment({ environment: 'production' }));
  });

  it('a failing policy refuses the request with its error, reason Invalid, code 403; Ignore admits', () => {
    const failing = policy(
      'p',
      'Object{ spec: Object.spec{ selector: Object.spec.selector{ matchLabels: {"a": "b"} } } }',
    );
    const outcome = dispatchMutatingPolicies([failing], request(deployment()));
    assert.deepEqual(outcome.status, {
      code: 403,
      reason: 'Invalid',
      message:
        "policy 'p' with binding 'binding' denied request: error applying patch: invalid ApplyConfiguration: may not mutate atomic arrays, maps or structs: .spec.selector",
    });
    const ignored = policy('p', 'Object{ spec: Object.spec{ selector: Object.spec.selector{} } }', {
      failurePolicy: 'Ignore',
    });
    const admitted = dispatchMutatingPolicies([ignored, policy('q', labels('"q": "1"'))], request(deployment()));
    assert.deepEqual(admitted, { allowed: true, object: deployment({ q: '1' }), shouldReinvoke: true });
  });
});

// Restated from k8s.io/apiserver pkg/admission/plugin/policy/mutating/reinvocationcontext_test.go.
describe('the reinvocation context (reinvocationcontext_test.go)', () => {
  const cm = (v: string) => ({ data: { v } });

  it('TestFullReinvocation', () => {
    const rc = new PolicyReinvokeContext();
    rc.setLastPolicyInvocationOutput(cm('1'));
    rc.requireReinvokingPreviouslyInvokedPlugins();
    rc.addReinvocablePolicyToPreviouslyInvoked('p1');
    assert.equal(rc.isOutputChangedSinceLastPolicyInvocation(cm('2')), true);
    rc.setLastPolicyInvocationOutput(cm('2'));
    rc.requireReinvokingPreviouslyInvokedPlugins();
    rc.addReinvocablePolicyToPreviouslyInvoked('p2');
    assert.equal(rc.isOutputChangedSinceLastPolicyInvocation(cm('1')), true);
    rc.addReinvocablePolicyToPreviouslyInvoked('p3');
    assert.equal(rc.isOutputChangedSinceLastPolicyInvocation(cm('2')), false);
    assert.equal(rc.shouldReinvoke('p1'), true);
    rc.addReinvocablePolicyToPreviouslyInvoked('p1');
    rc.setLastPolicyInvocationOutput(cm('1'));
    assert.equal(rc.isOutputChangedSinceLastPolicyInvocation(cm('2')), true);
    rc.requireReinvokingPreviouslyInvokedPlugins();
    assert.equal(rc.shouldReinvoke('p2'), true);
    rc.addReinvocablePolicyToPreviouslyInvoked('p2');
    rc.setLastPolicyInvocationOutput(cm('2'));
    assert.equal(rc.isOutputChangedSinceLastPolicyInvocation(cm('1')), true);
    rc.requireReinvokingPreviouslyInvokedPlugins();
    assert.equal(rc.shouldReinvoke('p3'), true);
  });

  it('TestPartialReinvocation', () => {
    const rc = new PolicyReinvokeContext();
    rc.setLastPolicyInvocationOutput(cm('1'));
    rc.requireReinvokingPreviouslyInvokedPlugins();
    rc.addReinvocablePolicyToPreviouslyInvoked('p1');
    assert.equal(rc.isOutputChangedSinceLastPolicyInvocation(cm('2')), true);
    rc.setLastPolicyInvocationOutput(cm('2'));
    rc.requireReinvokingPreviouslyInvokedPlugins();
    rc.addReinvocablePolicyToPreviouslyInvoked('p2');
    assert.equal(rc.isOutputChangedSinceLastPolicyInvocation(cm('1')), true);
    rc.addReinvocablePolicyToPreviouslyInvoked('p3');
    assert.equal(rc.isOutputChangedSinceLastPolicyInvocation(cm('2')), false);
    assert.equal(rc.shouldReinvoke('p1'), true);
    assert.equal(rc.shouldReinvoke('p2'), false);
    assert.equal(rc.shouldReinvoke('p3'), false);
  });

  it('TestNoReinvocation', () => {
    const rc = new PolicyReinvokeContext();
    for (const key of ['p1', 'p2', 'p3']) {
      rc.addReinvocablePolicyToPreviouslyInvoked(key);
      rc.setLastPolicyInvocationOutput(cm('1'));
      assert.equal(rc.isOutputChangedSinceLastPolicyInvocation(cm('1')), false);
    }
    for (const key of ['p1', 'p2', 'p3']) assert.equal(rc.shouldReinvoke(key), false);
  });
});

describe('mutating policies in runAdmissionChain', () => {
  const sidecar = defineMutatingWebhook({
    name: 'sidecar',
    rules: [on(Deployment).create()],
    mutate: (object) => {
      object.metadata = { ...object.metadata, labels: { ...object.metadata?.labels, webhook: 'seen' } };
    },
  });

  it('runs the policies before the mutating webhooks, which see their change', async () => {
    const stamp = policy('stamp', labels('"stamped": "yes"'));
    const echo = defineMutatingWebhook({
      name: 'echo',
      rules: [on(Deployment).create()],
      mutate: (object) => {
        object.metadata = {
          ...object.metadata,
          labels: { ...object.metadata?.labels, echo: object.metadata?.labels?.stamped ?? 'no' },
        };
      },
    });
    const result = await runAdmissionChain(deployment(), [echo, stamp], { namespace: 'default' });
    assert.deepEqual(result.object?.metadata?.labels, { stamped: 'yes', echo: 'yes' });
    assert.deepEqual(
      result.steps.map((s) => [s.webhook, s.phase]),
      [
        ['stamp', 'mutating'],
        ['echo.webhooks.kube-lambda.dev', 'mutating'],
        ['stamp', 'reinvocation'],
      ],
    );
  });

  it('reinvokes an IfNeeded policy after a webhook changed the object, not a Never one', async () => {
    const count = 'string(int(object.?metadata.labels["runs"].orValue("0")) + 1)';
    for (const [reinvocationPolicy, runs] of [
      ['IfNeeded', '2'],
      ['Never', '1'],
    ] as const) {
      const counting = policy('counting', labels(`"runs": ${count}`), { reinvocationPolicy });
      const result = await runAdmissionChain(deployment(), [counting, sidecar], { namespace: 'default' });
      assert.deepEqual(result.object?.metadata?.labels, { runs, webhook: 'seen' }, reinvocationPolicy);
    }
  });

  it('stops at a policy denial with its error as the message', async () => {
    const failing = policy('failing', 'Object{ spec: Object.spec{ replicasx: 1 } }');
    const result = await runAdmissionChain(deployment(), [failing, sidecar], { namespace: 'default' });
    assert.equal(result.allowed, false);
    assert.equal(result.deniedBy, 'failing');
    assert.equal(
      result.message,
      "policy 'failing' with binding 'binding' denied request: error applying patch: failed to convert patch object to typed object: .spec.replicasx: field not declared in schema",
    );
    assert.equal(result.steps.length, 1);
  });

  it('served as webhooks, the policies give the object they give natively', async () => {
    const stamp = policy('stamp', labels('"stamped": "yes"'));
    const native = await runAdmissionChain(deployment(), [stamp, sidecar], { namespace: 'default' });
    const served = await runAdmissionChain(deployment(), [stamp, sidecar], {
      namespace: 'default',
      policies: 'webhook',
    });
    // Served, the policy is one more webhook in name order (after `sidecar`): the same object, keys in another order.
    assert.deepEqual(served.object, native.object);
    assert.deepEqual(
      served.steps.map((s) => s.kind),
      [undefined, undefined],
    );
  });
});

describe('mutating policies match as validating policies do (the generic matcher)', () => {
  const stamp = (more: Partial<MutatingPolicyDefinition> = {}) => policy('stamp', labels('"stamped": "yes"'), more);
  const stamped = (p: MutatingPolicyWebhook, object: KubeObject, options: Parameters<typeof admissionReview>[1] = {}) =>
    p.evaluate(admissionReview(object, { namespace: 'default', ...options }).request).object?.metadata?.labels
      ?.stamped === 'yes';

  it('applies namespaceSelector, objectSelector and excludeResourceRules', () => {
    const bySelector = stamp({
      matchConstraints: {
        resourceRules: [on(Deployment).create()],
        objectSelector: { matchLabels: { team: 'a' } },
      },
    });
    assert.equal(stamped(bySelector, deployment({ team: 'a' })), true);
    assert.equal(stamped(bySelector, deployment({ team: 'b' })), false);
    assert.equal(stamped(stamp(), deployment(), { namespace: 'kube-system' }), false, 'system namespaces left out');
    const excluded = stamp({
      matchConstraints: {
        resourceRules: [on(Deployment).create()],
        excludeResourceRules: [
          {
            apiGroups: ['apps'],
            apiVersions: ['v1'],
            resources: ['deployments'],
            operations: ['CREATE'],
            resourceNames: ['d1'],
          },
        ],
      },
    });
    assert.equal(stamped(excluded, deployment()), false);
  });

  it('matches an equivalent resource under matchPolicy Equivalent, not under Exact', async () => {
    const hpa: KubeObject = {
      apiVersion: 'autoscaling/v1',
      kind: 'HorizontalPodAutoscaler',
      metadata: { name: 'h', namespace: 'default' },
    };
    const v2Only = {
      apiGroups: ['autoscaling'],
      apiVersions: ['v2'],
      resources: ['horizontalpodautoscalers'],
      operations: ['CREATE' as const],
    };
    const chain = (matchPolicy: 'Exact' | 'Equivalent') =>
      runAdmissionChain(hpa, [stamp({ matchConstraints: { resourceRules: [v2Only], matchPolicy } })], {
        namespace: 'default',
        matchRules: false,
      });
    assert.equal((await chain('Equivalent')).object?.metadata?.labels?.stamped, 'yes');
    assert.equal((await chain('Exact')).object?.metadata?.labels?.stamped, undefined);
  });

  it('a failing matchCondition is the policy error in the filter words; Ignore skips the policy', () => {
    const failing = [{ name: 'boom', expression: 'object.metadata.labels["missing"] == "x"' }];
    const outcome = stamp({ matchConditions: failing }).evaluate(request(deployment({ a: 'b' })));
    assert.deepEqual(outcome.status, {
      code: 403,
      reason: 'Invalid',
      message: `policy 'stamp' with binding 'binding' denied request: expression 'object.metadata.labels["missing"] == "x"' resulted in error: no such key: missing`,
    });
    const ignored = stamp({ matchConditions: failing, failurePolicy: 'Ignore' }).evaluate(
      request(deployment({ a: 'b' })),
    );
    assert.deepEqual(ignored, { allowed: true, object: deployment({ a: 'b' }), shouldReinvoke: false });
  });

  it('runs once per param a paramRef selector finds; no param under Deny is a configuration error', () => {
    const cm = (name: string, value: string) => ({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name, namespace: 'default', labels: { use: 'yes' } },
      data: { value },
    });
    const appending = policy(
      'append',
      labels('"seen": object.?metadata.labels["seen"].orValue("") + params.data.value'),
      {
        paramKind: { apiVersion: 'v1', kind: 'ConfigMap' },
        paramRef: { selector: { matchLabels: { use: 'yes' } } },
        params: [cm('one', '1'), cm('two', '2')],
      },
    );
    assert.equal(appending.evaluate(request(deployment())).object?.metadata?.labels?.seen, '12');
    const none = appending.evaluate(request(deployment()), { params: [] });
    assert.deepEqual(none.status, {
      code: 403,
      reason: 'Forbidden',
      message:
        "policy 'append' with binding 'binding' denied request: failed to configure binding: no params found for policy binding with `Deny` parameterNotFoundAction",
    });
  });
});

describe('each single-policy case above, served from Lambda, answers as natively', () => {
  const cm = {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'cm1', namespace: 'default' },
    data: { key: '10' },
  };
  const cases: Array<[string, MutatingPolicyWebhook, KubeObject]> = [
    [
      'simple patch',
      policy('policy1', 'Object{ spec: Object.spec{ replicas: object.spec.replicas + 100 } }'),
      deployment(undefined, { replicas: 1 }),
    ],
    [
      'with param',
      policy('policy1', "Object{ spec: Object.spec{ replicas: object.spec.replicas + int(params.data['key']) } }", {
        paramKind: { apiVersion: 'v1', kind: 'ConfigMap' },
        paramRef: { name: 'cm1', namespace: 'default' },
        params: [cm],
      }),
      deployment(undefined, { replicas: 1 }),
    ],
    [
      'a policy whose condition is false',
      policy('policy2', labels('"x": "y"'), { matchConditions: PRODONLY }),
      deployment(),
    ],
    [
      'a failing policy',
      policy('p', 'Object{ spec: Object.spec{ selector: Object.spec.selector{ matchLabels: {"a": "b"} } } }'),
      deployment(),
    ],
    [
      'a failing matchCondition',
      policy('stamp', labels('"stamped": "yes"'), {
        matchConditions: [{ name: 'boom', expression: 'object.metadata.labels["missing"] == "x"' }],
      }),
      deployment({ a: 'b' }),
    ],
    [
      'excluded by name',
      policy('stamp', labels('"stamped": "yes"'), {
        matchConstraints: {
          resourceRules: [on(Deployment).create()],
          excludeResourceRules: [
            {
              apiGroups: ['apps'],
              apiVersions: ['v1'],
              resources: ['deployments'],
              operations: ['CREATE'],
              resourceNames: ['d1'],
            },
          ],
        },
      }),
      deployment(),
    ],
  ];
  for (const [name, p, object] of cases)
    it(name, async () => {
      await expectMutatingPolicyParity(p, object, { namespace: 'default', name: 'd1' });
    });
});
