import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { allow, defineConversionWebhook, defineValidatingWebhook, type KubeObject } from '../../../lib/index.ts';
import { ruleMismatch, type RuleAttributes } from '../../../lib/admission/match.ts';
import type { RuleWithOperations } from '../../../lib/rule-builder.ts';
import { admissionReview, conversionReview, invoke, runAdmissionChain } from '../../../lib/testing/index.ts';

const rule = (changes: Partial<RuleWithOperations> = {}): RuleWithOperations => ({
  operations: ['CREATE'],
  apiGroups: [''],
  apiVersions: ['v1'],
  resources: ['pods'],
  ...changes,
});
const request = (
  changes: Partial<Omit<RuleAttributes, 'resource'>> & { resource?: Partial<RuleAttributes['resource']> } = {},
): RuleAttributes => ({
  operation: 'CREATE',
  namespace: 'default',
  ...changes,
  resource: { group: '', version: 'v1', resource: 'pods', ...changes.resource },
});

describe('rule matching, as the API server does it', () => {
  it('matches operation, group, version and resource, exactly or by "*"', () => {
    assert.equal(ruleMismatch(rule(), request()), undefined);
    assert.equal(
      ruleMismatch(
        rule({ operations: ['*'], apiGroups: ['*'], apiVersions: ['*'], resources: ['*'] }),
        request({ operation: 'DELETE', resource: { group: 'apps', resource: 'deployments' } }),
      ),
      undefined,
    );
    assert.equal(ruleMismatch(rule(), request({ operation: 'UPDATE' })), 'operations ["CREATE"] do not include UPDATE');
    assert.equal(ruleMismatch(rule({ apiGroups: ['apps'] }), request()), 'apiGroups ["apps"] do not include ""');
    assert.equal(
      ruleMismatch(rule({ apiGroups: ['core'] }), request()),
      'apiGroups ["core"] do not include "" (the core group is "", not "core")',
    );
    assert.equal(
      ruleMismatch(rule(), request({ resource: { version: 'v2' } })),
      'apiVersions ["v1"] do not include "v2"',
    );
    assert.equal(
      ruleMismatch(rule({ resources: ['configmaps'] }), request()),
      'resources ["configmaps"] do not include "pods"',
    );
    assert.equal(
      ruleMismatch(rule({ resources: ['Pods'] }), request()),
      'resources ["Pods"] do not include "pods" (resource names are lower-case plurals)',
    );
  });

  it('matches subresources only by name, "<resource>/*", "*/<sub>" or "*/*"; "*" and "pods" match none', () => {
    const status = request({ subResource: 'status' });
    for (const resources of [['pods/status'], ['pods/*'], ['*/status'], ['*/*']])
      assert.equal(ruleMismatch(rule({ resources }), status), undefined, resources[0]);
    for (const resources of [['*'], ['pods'], ['pods/log']])
      assert.match(ruleMismatch(rule({ resources }), status)!, /do not include "pods\/status"/, resources[0]);
    // "pods/*" splits into pods and "*", and "*" matches the empty subresource too (as "*/*" matches every resource).
    assert.equal(ruleMismatch(rule({ resources: ['pods/*'] }), request()), undefined);
    assert.match(ruleMismatch(rule({ resources: ['*/status'] }), request())!, /do not include "pods"/);
  });

  it('matches scope by the namespace of the request, with namespaces themselves cluster-scoped', () => {
    assert.equal(ruleMismatch(rule({ scope: 'Namespaced' }), request()), undefined);
    assert.match(
      ruleMismatch(rule({ scope: 'Namespaced' }), request({ namespace: undefined }))!,
      /scope Namespaced matches only requests in a namespace, and the review has none/,
    );
    assert.match(
      ruleMismatch(rule({ scope: 'Cluster' }), request())!,
      /scope Cluster does not match a request in namespace "default"/,
    );
    assert.equal(ruleMismatch(rule({ scope: 'Cluster' }), request({ namespace: undefined })), undefined);
    // A namespace's own request carries its name as the namespace; it is cluster-scoped all the same.
    const namespace = request({ namespace: 'team-a', resource: { resource: 'namespaces' } });
    assert.equal(ruleMismatch(rule({ resources: ['namespaces'], scope: 'Cluster' }), namespace), undefined);
    assert.match(
      ruleMismatch(rule({ resources: ['namespaces'], scope: 'Namespaced' }), namespace)!,
      /never matches namespaces/,
    );
    assert.equal(ruleMismatch(rule({ resources: ['namespaces'], scope: '*' }), namespace), undefined);
  });
});

describe('the test kit refuses reviews the API server would never send', () => {
  let calls = 0;
  // A pod policy left registered on configmaps, the mistake `klw new` makes easy.
  const misregistered = defineValidatingWebhook({
    name: 'pod-policy',
    rules: [
      {
        operations: ['CREATE', 'UPDATE'],
        apiGroups: [''],
        apiVersions: ['v1'],
        resources: ['configmaps'],
        scope: 'Namespaced',
      },
    ],
    validate: () => (calls++, allow()),
  });
  const pod: KubeObject = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'default' } };

  it('invoke() names the webhook, the review and the rule that does not match, and calls nothing', async () => {
    calls = 0;
    await assert.rejects(invoke(misregistered, admissionReview(pod)), (err: Error) => {
      assert.match(
        err.message,
        /^pod-policy: the API server never sends this review: CREATE pods \(group "", version v1\) in namespace "default"/,
      );
      assert.match(err.message, /rules\[0\]: resources \["configmaps"\] do not include "pods"/);
      assert.match(err.message, /\{ matchRules: false \}/);
      return true;
    });
    await assert.rejects(
      invoke(
        misregistered,
        admissionReview(
          { ...pod, kind: 'ConfigMap' },
          { operation: 'DELETE', oldObject: { ...pod, kind: 'ConfigMap' } },
        ),
      ),
      /rules\[0\]: operations \["CREATE", "UPDATE"\] do not include DELETE/,
    );
    await assert.rejects(
      invoke(misregistered, admissionReview({ ...pod, kind: 'ConfigMap', metadata: { name: 'c' } })),
      /rules\[0\]: scope Namespaced matches only requests in a namespace/,
    );
    assert.equal(calls, 0, 'the function ran on a review its rules do not match');
    const matched = await invoke(misregistered, admissionReview({ ...pod, kind: 'ConfigMap' }));
    assert.equal(matched.allowed, true);
    assert.equal(calls, 1);
  });

  it('invoke() sends it anyway with { matchRules: false }', async () => {
    calls = 0;
    assert.equal((await invoke(misregistered, admissionReview(pod), { matchRules: false })).allowed, true);
    assert.equal(calls, 1);
  });

  it("runAdmissionChain refuses a request none of its webhooks' rules match, unless told", async () => {
    await assert.rejects(
      runAdmissionChain(pod, [misregistered]),
      /the rules of none of pod-policy match CREATE pods \(group "", version v1\) in namespace "default"/,
    );
    const anyway = await runAdmissionChain(pod, [misregistered], { matchRules: false });
    assert.equal(anyway.allowed, true);
    assert.equal(anyway.steps.length, 0, 'the API server calls no webhook whose rules do not match');
  });
});

describe('the test kit refuses a review of the other kind of webhook', () => {
  const validating = defineValidatingWebhook({
    name: 'pod-check',
    rules: [{ operations: ['*'], apiGroups: ['*'], apiVersions: ['*'], resources: ['*'] }],
    validate: () => allow(),
  });
  const conversion = defineConversionWebhook({
    name: 'widget-conversion',
    crd: 'widgets.example.com',
    convert: (o) => o,
  });
  const pod: KubeObject = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'default' } };

  it('invoke() names the webhook, its kind and the review to send', async () => {
    await assert.rejects(
      invoke(conversion as never, admissionReview(pod) as never),
      /^AssertionError.*widget-conversion is a conversion webhook: the API server sends it ConversionReviews, not an AdmissionReview; send conversionReview\(objects, desiredAPIVersion\)/,
    );
    await assert.rejects(
      invoke(validating as never, conversionReview([pod], 'v2') as never),
      /pod-check is a validating webhook: the API server sends it AdmissionReviews, not a ConversionReview; send admissionReview\(object, options\)/,
    );
  });

  it('runAdmissionChain names a conversion webhook among admission ones', async () => {
    await assert.rejects(
      runAdmissionChain(pod, [validating, conversion as never]),
      /widget-conversion is a conversion webhook: the API server never calls it in admission; test it with invoke\(webhook, conversionReview\(\.\.\.\)\)/,
    );
  });
});
