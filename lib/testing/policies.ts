/**
 * Validating policies in the test kit: the native evaluation (as the API server evaluates the
 * policy and its binding, with the namespace, params and equivalent resources the test gives),
 * and the check that the policy served as a webhook answers as the native policy does.
 */
import assert from 'node:assert/strict';
import { invoke, type AdmissionResult, type InvokeOptions } from '../harness/invoke.ts';
import { ruleMatches } from '../admission/match.ts';
import { selectorMatches } from '../registration.ts';
import type { AdmissionRequest } from '../review/schemas.ts';
import { admissionReview, type AdmissionReviewOptions } from '../harness/reviews.ts';
import type { Authorize } from '../policies/cel.ts';
import { builtinEquivalents } from '../policies/generic/equivalent.ts';
import { paramSourcesOf } from '../policies/generic/params.ts';
import type { ValidatingPolicyWebhook } from '../policies/validating/define.ts';
import { webhookAuditAnnotations } from '../policies/validating/define.ts';
import { dispatchValidating, type PoliciesVerdict } from '../policies/validating/dispatcher.ts';
import { compileValidatingPolicy, type CompiledValidatingPolicy } from '../policies/validating/validator.ts';
import type { KubeObject } from '../review/schemas.ts';

/** Options of a native policy evaluation: the review's, and what the cluster holds. */
export interface PolicyEvaluationOptions extends AdmissionReviewOptions {
  /** Labels of the request's namespace (its `kubernetes.io/metadata.name` label is always set). */
  namespaceLabels?: Record<string, string>;
  /** Param objects in the cluster; default the policy's own `params`. */
  params?: KubeObject[];
  /** Answers `authorizer` checks; by default no opinion. */
  authorize?: Authorize;
}

const compiledPolicies = new WeakMap<ValidatingPolicyWebhook, CompiledValidatingPolicy>();

function compiledOf(policy: ValidatingPolicyWebhook): CompiledValidatingPolicy {
  let compiled = compiledPolicies.get(policy);
  if (!compiled) {
    compiled = compileValidatingPolicy(policy.validatingPolicy.spec, {
      kubernetesVersion: policy.registration.kubernetesVersion,
    });
    compiledPolicies.set(policy, compiled);
  }
  return compiled;
}

/** The Namespace object of the request's namespace, with its labels. */
function namespaceObject(name: string, labels: Record<string, string> = {}): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name, labels: { 'kubernetes.io/metadata.name': name, ...labels } },
  } as KubeObject;
}

/**
 * Evaluates policies as the API server does for a request (native ValidatingAdmissionPolicy):
 * every policy's constraints and binding, with the request's namespace and the params.
 */
export function evaluatePolicies(
  policies: readonly ValidatingPolicyWebhook[],
  object: KubeObject | null,
  options: PolicyEvaluationOptions = {},
): PoliciesVerdict {
  const review = admissionReview(object, options);
  const params = options.params ?? policies.flatMap((p) => p.validatingPolicy.params);
  return dispatchValidating(
    policies.map((p) => ({ policy: compiledOf(p), bindings: [p.validatingPolicy.binding] })),
    review.request,
    {
      namespace: (name) => namespaceObject(name, options.namespaceLabels),
      equivalents: (resource, sub) => builtinEquivalents(resource, sub),
      params: paramSourcesOf(params),
      ...(options.authorize ? { authorize: options.authorize } : {}),
    },
  );
}

/** True when the API server sends the policy's webhook this request: its rules and selectors match. */
function webhookCalled(policy: ValidatingPolicyWebhook, request: AdmissionRequest, namespaceLabels = {}): boolean {
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

/** What the native policy and the webhook serving it answered. */
export interface PolicyParity {
  native: PoliciesVerdict;
  /** Unset when the API server would not call the webhook (its rules or selectors do not match). */
  webhook?: AdmissionResult;
}

/**
 * Asserts that the policy served as a webhook answers a request as the native policy does: allowed,
 * status code and reason, the message after the API server's prefix, warnings, and audit
 * annotations (the webhook's, which the API server prefixes with the webhook's name). A request
 * the policy's constraints do not match is one the API server never sends the webhook: only the
 * native answer is checked then (allowed, nothing else).
 */
export async function expectPolicyParity(
  policy: ValidatingPolicyWebhook,
  object: KubeObject | null,
  options: PolicyEvaluationOptions & { invoke?: InvokeOptions } = {},
): Promise<PolicyParity> {
  const native = evaluatePolicies([policy], object, options);
  const review = admissionReview(object, options);
  if (!webhookCalled(policy, review.request, options.namespaceLabels)) {
    assert.ok(native.allowed, 'the API server sends the webhook no such request, yet the native policy denies it');
    return { native };
  }
  const webhook = await invoke(policy, review, { matchRules: false, ...options.invoke });
  assert.equal(webhook.allowed, native.allowed, `allowed: webhook ${webhook.allowed}, native ${native.allowed}`);
  if (!native.allowed) {
    assert.equal(webhook.status?.code, native.status!.code, 'status code');
    assert.equal(webhook.status?.reason, native.status!.reason, 'status reason');
    assert.equal(webhook.status?.message, native.status!.detail, 'message after the prefix');
  }
  assert.deepEqual(webhook.warnings, native.warnings, 'warnings');
  const annotations = webhook.review.response?.auditAnnotations ?? {};
  assert.deepEqual(
    annotations,
    webhookAuditAnnotations(native.auditAnnotations, policy.validatingPolicy.spec.name),
    'audit annotations',
  );
  return { native, webhook };
}

/** One native policy's evaluation as a step of the admission chain, in an AdmissionResult's shape. */
export function policyResult(
  policy: ValidatingPolicyWebhook,
  object: KubeObject | null,
  options: PolicyEvaluationOptions,
): AdmissionResult {
  const verdict = evaluatePolicies([policy], object, options);
  const response = {
    uid: options.uid ?? '',
    allowed: verdict.allowed,
    ...(verdict.status
      ? { status: { code: verdict.status.code, reason: verdict.status.reason, message: verdict.status.message } }
      : {}),
    ...(verdict.warnings.length ? { warnings: verdict.warnings } : {}),
    ...(Object.keys(verdict.auditAnnotations).length ? { auditAnnotations: verdict.auditAnnotations } : {}),
  };
  return {
    allowed: verdict.allowed,
    ...(response.status ? { status: response.status } : {}),
    warnings: verdict.warnings,
    patch: [],
    object,
    review: { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response } as AdmissionResult['review'],
  };
}

/** True for a webhook defined by defineValidatingPolicy. */
export function isValidatingPolicy(webhook: object): webhook is ValidatingPolicyWebhook {
  return 'validatingPolicy' in webhook;
}
