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
import { namespacedKindsOf, paramSourcesOf } from '../policies/generic/params.ts';
import {
  DEFINITION,
  servePolicy,
  type ValidatingPolicyDefinition,
  type ValidatingPolicyWebhook,
  webhookAuditAnnotations,
} from '../policies/validating/define.ts';
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

/**
 * The Namespace object of a name: the policies' own (their definitions' `namespaces`), else one with
 * the test's labels.
 */
function namespaceObject(
  policies: readonly ValidatingPolicyWebhook[],
  name: string,
  labels: Record<string, string> = {},
): KubeObject {
  for (const p of policies) {
    const own = p.validatingPolicy.namespaces.find((n) => n.metadata?.name === name);
    if (own) return own;
  }
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
      namespace: (name) => namespaceObject(policies, name, options.namespaceLabels),
      equivalents: (resource, sub) => builtinEquivalents(resource, sub),
      params: paramSourcesOf(params, (kind) => {
        const scoped = policies.find((p) => {
          const own = p.validatingPolicy.spec.paramKind;
          return own?.apiVersion === kind.apiVersion && own.kind === kind.kind && definitionOf(p).paramScope;
        });
        return scoped ? definitionOf(scoped).paramScope === 'Namespaced' : namespacedKindsOf(params)(kind);
      }),
      ...(options.authorize ? { authorize: options.authorize } : {}),
    },
  );
}

/** The definition a policy's webhook was made from. */
const definitionOf = (policy: ValidatingPolicyWebhook) =>
  (policy as unknown as { [DEFINITION]: ValidatingPolicyDefinition<unknown> })[DEFINITION];

/** True when the API server sends the policy's webhook this request: its rules and selectors match. */
export function webhookCalled(
  policy: ValidatingPolicyWebhook,
  request: AdmissionRequest,
  namespaceLabels: Record<string, string> = {},
): boolean {
  const reg = policy.registration;
  // The object selector matches the object's labels or the old object's (either).
  const objects = [request.object, request.oldObject].filter((o) => o) as KubeObject[];
  const objectMatches = (objects.length ? objects : [{} as KubeObject]).some((o) =>
    selectorMatches(reg.objectSelector, o.metadata?.labels ?? {}),
  );
  const namespace = request.namespace;
  return (
    reg.rules.some((rule) => ruleMatches(rule, request)) &&
    objectMatches &&
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
  // Served in the same cluster: the request's Namespace and the authorizer the native policy had.
  const namespace = review.request.namespace;
  const served = servePolicy(
    {
      ...definitionOf(policy),
      namespaces: namespace ? [namespaceObject([policy], namespace, options.namespaceLabels)] : [],
    },
    options.authorize ? { authorize: options.authorize } : {},
  );
  const webhook = await invoke(served, review, { matchRules: false, ...options.invoke });
  assertSameAnswer(native, webhook, policy.validatingPolicy.spec.name);
  return { native, webhook };
}

/**
 * Asserts a webhook answered as a native verdict: allowed, status code and reason, the message after
 * the API server's prefix, warnings, and audit annotations (which the API server prefixes with the
 * webhook's name where the native policy's carry the policy's).
 */
export function assertSameAnswer(native: PoliciesVerdict, webhook: AdmissionResult, policyName: string): void {
  assert.equal(webhook.allowed, native.allowed, `allowed: webhook ${webhook.allowed}, native ${native.allowed}`);
  if (!native.allowed) {
    assert.equal(webhook.status?.code, native.status!.code, 'status code');
    assert.equal(webhook.status?.reason, native.status!.reason, 'status reason');
    assert.equal(webhook.status?.message, native.status!.detail, 'message after the prefix');
  }
  assert.deepEqual(webhook.warnings, native.warnings, 'warnings');
  const annotations = webhook.review.response?.auditAnnotations ?? {};
  assert.deepEqual(annotations, webhookAuditAnnotations(native.auditAnnotations, policyName), 'audit annotations');
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
