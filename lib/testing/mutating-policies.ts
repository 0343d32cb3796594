/**
 * Mutating policies in the test kit: the check that a policy served as a webhook (its answer's
 * JSON patch applied) gives the object the native policy gives, as JSON with numbers exact.
 */
import assert from 'node:assert/strict';
import { ruleMatches } from '../admission/match.ts';
import { invoke, type AdmissionResult, type InvokeOptions } from '../harness/invoke.ts';
import { admissionReview, type AdmissionReviewOptions } from '../harness/reviews.ts';
import { stringifyJson } from '../json.ts';
import type { MutatingPolicyWebhook } from '../policies/mutating/define.ts';
import type { MutatingPolicyOutcome } from '../policies/mutating/dispatch.ts';
import { selectorMatches } from '../registration.ts';
import type { AdmissionRequest, KubeObject } from '../review/schemas.ts';

/** What the native policy and the webhook serving it gave. */
export interface MutatingPolicyParity {
  native: MutatingPolicyOutcome;
  /** Unset when the API server would not call the webhook (its rules or selectors do not match). */
  webhook?: AdmissionResult;
}

/** Options of a parity check: the review's, the namespace's labels, the param objects in the cluster. */
export interface MutatingParityOptions extends AdmissionReviewOptions {
  /** Labels of the request's namespace (its `kubernetes.io/metadata.name` label is always set). */
  namespaceLabels?: Record<string, string>;
  /** Param objects; default the policy's own `params` (what the function is shipped with). */
  params?: KubeObject[];
  invoke?: InvokeOptions;
}

/** A value as JSON with its members in key order and integers exact: equal texts, equal objects. */
export function canonicalJson(value: unknown): string {
  const sorted = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(sorted);
    if (typeof v !== 'object' || v === null) return v;
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(v).sort()) out[key] = sorted((v as Record<string, unknown>)[key]);
    return out;
  };
  return stringifyJson(sorted(value));
}

/** True when the API server sends the policy's webhook this request: its rules and selectors match. */
function webhookCalled(policy: MutatingPolicyWebhook, request: AdmissionRequest, namespaceLabels = {}): boolean {
  const reg = policy.registration;
  const labels = (request.object ?? request.oldObject)?.metadata?.labels ?? {};
  const namespace = request.namespace;
  return (
    reg.rules.some((rule) => ruleMatches(rule, request)) &&
    selectorMatches(reg.objectSelector, labels) &&
    (!namespace ||
      selectorMatches(reg.namespaceSelector, { 'kubernetes.io/metadata.name': namespace, ...namespaceLabels }))
  );
}

/**
 * Asserts that the policy served as a webhook gives what the native policy gives in the same
 * environment (the webhook's: params from the definition, no Namespace object, an authorizer with
 * no opinion): the same denial (code, reason, message), or, its JSON patch applied, the same object
 * as JSON with numbers exact. A request the API server never sends the webhook is checked
 * natively only: admitted unchanged.
 */
export async function expectMutatingPolicyParity(
  policy: MutatingPolicyWebhook,
  object: KubeObject | null,
  options: MutatingParityOptions = {},
): Promise<MutatingPolicyParity> {
  const review = admissionReview(object, options);
  const native = policy.evaluate(review.request, {
    served: true,
    ...(options.namespaceLabels ? { namespaceLabels: options.namespaceLabels } : {}),
    ...(options.params ? { params: options.params } : {}),
  });
  if (!webhookCalled(policy, review.request, options.namespaceLabels)) {
    assert.ok(native.allowed, 'the API server sends the webhook no such request, yet the native policy refuses it');
    assert.equal(canonicalJson(native.object), canonicalJson(object), 'the native policy changed a request never sent');
    return { native };
  }
  const webhook = await invoke(policy, review, { matchRules: false, ...options.invoke });
  assert.equal(webhook.allowed, native.allowed, `allowed: webhook ${webhook.allowed}, native ${native.allowed}`);
  if (!native.allowed) {
    assert.equal(webhook.status?.code, native.status!.code, 'status code');
    assert.equal(webhook.status?.reason, native.status!.reason, 'status reason');
    assert.equal(webhook.status?.message, native.status!.message, 'message');
    return { native, webhook };
  }
  assert.equal(canonicalJson(webhook.object), canonicalJson(native.object), 'the object after the patch');
  return { native, webhook };
}
