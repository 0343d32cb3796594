import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { allow, defineMutatingWebhook, defineValidatingWebhook, deny } from '../../../lib/index.ts';
import { runAdmissionChain } from '../../../lib/testing/index.ts';
import { selectorMatches } from '../../../lib/registration.ts';
import { applyDefaults, podDefaults, podPolicy, type Pod } from '../../fixtures/functions.ts';
import { testPod } from '../../helpers.ts';

const podRules = [{ operations: ['CREATE' as const], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'] }];
const pod = testPod;

describe('runAdmissionChain', () => {
  it('runs the mutating webhooks, then the validating ones on the result', async () => {
    const result = await runAdmissionChain(pod(), [podPolicy, podDefaults]);
    assert.equal(result.allowed, true);
    assert.deepEqual(
      result.steps.map((s) => [s.webhook, s.phase, s.changed]),
      [
        ['pod-defaults.webhooks.kube-lambda.dev', 'mutating', true],
        ['pod-policy.webhooks.kube-lambda.dev', 'validating', false],
      ],
    );
    assert.equal((result.object as Pod).spec?.securityContext?.runAsNonRoot, true);
  });

  it('reports which webhook denied, as kubectl shows it', async () => {
    const result = await runAdmissionChain(pod({ hostNetwork: true }), [podDefaults, podPolicy]);
    assert.equal(result.allowed, false);
    assert.equal(result.deniedBy, 'pod-policy.webhooks.kube-lambda.dev');
    assert.equal(
      result.message,
      'admission webhook "pod-policy.webhooks.kube-lambda.dev" denied the request: pod "web" is not allowed: spec.hostNetwork is true',
    );
  });

  it('catches a mutation that breaks a validation', async () => {
    const privileger = defineMutatingWebhook<Pod>({
      name: 'privileger',
      rules: podRules,
      mutate: (p) => {
        p.spec!.containers![0]!.securityContext = { privileged: true };
      },
    });
    const result = await runAdmissionChain(pod(), [privileger, podPolicy]);
    assert.equal(result.allowed, false);
    assert.equal(result.deniedBy, 'pod-policy.webhooks.kube-lambda.dev');
  });

  it('reinvokes IfNeeded webhooks once when a later webhook changed the object', async () => {
    // Sorted by name: "a-adder" runs before "z-sidecar", which adds a container without limits.
    const sidecar = defineMutatingWebhook<Pod>({
      name: 'z-sidecar',
      rules: podRules,
      mutate: (p) => {
        if (!p.spec!.containers!.some((c) => c.name === 'proxy'))
          p.spec!.containers!.push({ name: 'proxy', image: 'envoy:1.30' });
      },
    });
    const adder = defineMutatingWebhook<Pod>({
      name: 'a-adder',
      webhookName: 'a-adder.example.com',
      rules: podRules,
      reinvocationPolicy: 'IfNeeded',
      mutate: (p) => applyDefaults(p),
    });
    const result = await runAdmissionChain(pod(), [sidecar, adder]);
    assert.deepEqual(
      result.steps.map((s) => [s.webhook, s.phase]),
      [
        ['a-adder.example.com', 'mutating'],
        ['z-sidecar.webhooks.kube-lambda.dev', 'mutating'],
        ['a-adder.example.com', 'reinvocation'],
      ],
    );
    const containers = (result.object as Pod).spec!.containers!;
    assert.deepEqual(
      containers.map((c) => c.resources?.limits?.cpu),
      ['500m', '500m'],
      'the sidecar got limits on reinvocation',
    );
  });

  it('does not reinvoke webhooks whose policy is Never', async () => {
    const never = defineMutatingWebhook<Pod>({
      name: 'a-never',
      rules: podRules,
      mutate: (p) => void (p.metadata!.labels = { seen: 'yes' }),
    });
    const later = defineMutatingWebhook<Pod>({
      name: 'b-later',
      rules: podRules,
      mutate: (p) => void (p.metadata!.annotations = { x: 'y' }),
    });
    const result = await runAdmissionChain(pod(), [later, never]);
    assert.equal(result.steps.length, 2);
  });

  it('skips webhooks whose rules or selectors do not match', async () => {
    let called = 0;
    const deploymentsOnly = defineValidatingWebhook({
      name: 'deployments',
      rules: [{ operations: ['*'], apiGroups: ['apps'], apiVersions: ['v1'], resources: ['deployments'] }],
      validate: () => (called++, deny('no')),
    });
    const labelled = defineValidatingWebhook({
      name: 'labelled',
      rules: podRules,
      objectSelector: { matchLabels: { checked: 'yes' } },
      validate: () => (called++, deny('no')),
    });
    const result = await runAdmissionChain(pod(), [deploymentsOnly, labelled]);
    assert.equal(result.allowed, true);
    assert.equal(called, 0);
    const system = await runAdmissionChain({ ...pod(), metadata: { name: 'p', namespace: 'kube-system' } }, [
      podPolicy,
      defineValidatingWebhook({ name: 'all', rules: podRules, validate: () => allow() }),
    ]);
    assert.equal(system.steps.length, 0, 'the default namespaceSelector leaves kube-system alone');
  });

  it('evaluates label selectors', () => {
    assert.equal(
      selectorMatches({ matchExpressions: [{ key: 'a', operator: 'In', values: ['1'] }] }, { a: '1' }),
      true,
    );
    assert.equal(selectorMatches({ matchExpressions: [{ key: 'a', operator: 'NotIn', values: ['1'] }] }, {}), true);
    assert.equal(selectorMatches({ matchExpressions: [{ key: 'a', operator: 'Exists' }] }, {}), false);
    assert.equal(selectorMatches({ matchExpressions: [{ key: 'a', operator: 'DoesNotExist' }] }, { a: '' }), false);
  });
});
