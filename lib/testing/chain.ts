import assert from 'node:assert/strict';
import type { AdmissionWebhook } from '../admission/webhook.ts';
import type { ValidatingPolicyWebhook } from '../policies/validating/define.ts';
import type { ConversionWebhook } from '../conversion/webhook.ts';
import { describeRequest, ruleMatches } from '../admission/match.ts';
import { selectorMatches } from '../registration.ts';
import type { AdmissionRequest, KubeObject } from '../review/schemas.ts';
import { invoke, type AdmissionResult, type InvokeOptions } from '../harness/invoke.ts';
import { admissionReview, conversionReview, type AdmissionReviewOptions } from '../harness/reviews.ts';
import { MutatingPolicyPlugin } from './chain-policies.ts';
import type { ChainResult, ChainStep } from './chain-types.ts';
import { isValidatingPolicy, policyResult } from './policies.ts';

/** True when a webhook's rules and selectors send it this request. */
export function webhookMatches(
  webhook: AdmissionWebhook,
  request: AdmissionRequest,
  namespaceLabels: Record<string, string> = {},
): boolean {
  const reg = webhook.registration;
  const labels = (request.object ?? request.oldObject)?.metadata?.labels ?? {};
  return (
    reg.rules.some((rule) => ruleMatches(rule, request)) &&
    selectorMatches(reg.objectSelector, labels) &&
    (!request.namespace ||
      selectorMatches(reg.namespaceSelector, { 'kubernetes.io/metadata.name': request.namespace, ...namespaceLabels }))
  );
}

export type { ChainResult, ChainStep } from './chain-types.ts';

/**
 * Runs a request through admission webhooks as the API server does: the mutating policies
 * (defineMutatingPolicy, evaluated natively as the API server's own plugin unless `policies:
 * 'webhook'` serves them as the webhooks they also are), matching mutating webhooks one at a time in name order (a
 * configuration's webhooks are ordered by name), then once more for `reinvocationPolicy:
 * IfNeeded` policies and webhooks that a later one invalidated, then validating webhooks on the
 * final object. Stops at the first denial.
 */
// size: the API server's admission order in one walk: policies, webhooks, reinvocation, validation.
export async function runAdmissionChain(
  object: KubeObject | null,
  webhooks: AdmissionWebhook[],
  options: AdmissionReviewOptions & {
    namespaceLabels?: Record<string, string>;
    invoke?: InvokeOptions;
    matchRules?: boolean;
    policies?: 'native' | 'webhook';
  } = {},
): Promise<ChainResult> {
  const template = admissionReview(object, options);
  checkChain(webhooks, template.request, options.matchRules !== false);
  const matches = (w: AdmissionWebhook) => webhookMatches(w, template.request, options.namespaceLabels);
  const { plugin, matching } = MutatingPolicyPlugin.split(
    webhooks,
    webhooks.filter(matches),
    options.policies,
    options.namespaceLabels,
  );
  const byName = (a: AdmissionWebhook, b: AdmissionWebhook) =>
    a.registration.webhookName.localeCompare(b.registration.webhookName);
  const mutating = matching.filter((w) => w.registration.type === 'mutating').sort(byName);
  const validating = matching
    .filter((w) => w.registration.type === 'validating' && !isValidatingPolicy(w))
    .sort(byName);
  const validatingPolicyList = webhooks.filter(isValidatingPolicy).sort(byName);
  const steps: ChainStep[] = [];
  let current = object;

  const call = async (webhook: AdmissionWebhook, phase: ChainStep['phase']): Promise<ChainResult | undefined> => {
    const review = admissionReview(current, {
      ...options,
      operation: template.request.operation,
      uid: template.request.uid,
    });
    const result = await invoke(webhook, review, options.invoke);
    const changed = result.patch.length > 0;
    const step: ChainStep = {
      webhook: webhook.registration.webhookName,
      phase,
      allowed: result.allowed,
      changed,
      result,
    };
    if (result.wouldDeny !== undefined) step.wouldDeny = result.wouldDeny;
    steps.push(step);
    if (!result.allowed) return denial(webhook.registration.webhookName, result, current, steps);
    if (changed) current = result.object;
    return undefined;
  };

  let denied: ChainResult | undefined;
  const policies = (phase: ChainStep['phase']) =>
    ({ object: current, denied } = plugin.pass(template.request, current, phase, steps)).denied;
  denied = plugin.active ? policies('mutating') : undefined;
  if (denied) return denied;
  const reinvoke = new Set<AdmissionWebhook>();
  let lastChange = -1;
  for (const [i, webhook] of mutating.entries()) {
    denied = await call(webhook, 'mutating');
    if (denied) return denied;
    if (steps.at(-1)!.changed) {
      lastChange = i;
      for (const earlier of mutating.slice(0, i))
        if (earlier.registration.reinvocationPolicy === 'IfNeeded') reinvoke.add(earlier);
    }
  }
  if (plugin.reinvoked(lastChange >= 0)) {
    denied = policies('reinvocation');
    if (denied) return denied;
    for (const later of plugin.invalidated(mutating, lastChange, steps)) reinvoke.add(later);
  }
  for (const webhook of mutating) {
    if (!reinvoke.has(webhook)) continue;
    const denied = await call(webhook, 'reinvocation');
    if (denied) return denied;
  }
  denied = validatingPolicies(
    validatingPolicyList,
    current,
    { ...options, operation: template.request.operation, uid: template.request.uid },
    steps,
  );
  if (denied) return denied;
  for (const webhook of validating) {
    const denied = await call(webhook, 'validating');
    if (denied) return denied;
  }
  return {
    allowed: true,
    object: current,
    steps,
    warnings: steps.flatMap((s) => s.result.warnings),
    wouldDeny: wouldDenyOf(steps),
  };
}

/**
 * Validating policies, evaluated natively (every one, as the API server does) after the mutating
 * webhooks and before the validating ones; the first denial is the chain's, in the API server's words.
 */
function validatingPolicies(
  policies: ValidatingPolicyWebhook[],
  object: KubeObject | null,
  options: AdmissionReviewOptions & { namespaceLabels?: Record<string, string>; uid?: string },
  steps: ChainStep[],
): ChainResult | undefined {
  let first: ChainStep | undefined;
  for (const policy of policies) {
    const result = policyResult(policy, object, options);
    const step: ChainStep = {
      webhook: policy.validatingPolicy.spec.name,
      phase: 'policy',
      allowed: result.allowed,
      changed: false,
      result,
    };
    steps.push(step);
    first ??= result.allowed ? undefined : step;
  }
  if (!first) return undefined;
  return deniedChain(first.webhook, first.result.status?.message ?? '', object, steps);
}

/**
 * Refuses a chain that would test nothing: a conversion webhook (never called in admission),
 * or, unless `matchRules` is off, a request no webhook's rules match (as invoke refuses it).
 */
function checkChain(webhooks: AdmissionWebhook[], request: AdmissionRequest, matchRules: boolean): void {
  const conversion = webhooks.find((w) => (w?.registration?.type as string) === 'conversion');
  if (conversion) {
    throw new assert.AssertionError({
      message:
        `${conversion.registration.name} is a conversion webhook: the API server never calls it in admission; ` +
        'test it with invoke(webhook, conversionReview(...))',
    });
  }
  const ruled = (w: AdmissionWebhook) => w.registration.rules.some((rule) => ruleMatches(rule, request));
  if (matchRules && webhooks.length && !webhooks.some(ruled)) {
    const names = webhooks.map((w) => w.registration.name).join(', ');
    throw new assert.AssertionError({
      message:
        `the rules of none of ${names} match ${describeRequest(request)}, ` +
        'so the API server would call none of them: send a request their rules match ' +
        '(operation, resource, namespace options), or pass { matchRules: false }',
    });
  }
}

/** The chain's outcome when webhook `name` denied: the message as kubectl shows it. */
function denial(name: string, result: AdmissionResult, object: KubeObject | null, steps: ChainStep[]): ChainResult {
  // A matchCondition that failed under failurePolicy Fail: the API server's own error, no webhook denial.
  const message =
    result.matchConditionError !== undefined
      ? result.status!.message!
      : `admission webhook "${name}" denied the request: ${result.status?.message ?? ''}`;
  return deniedChain(name, message, object, steps);
}

/** A chain stopped by `deniedBy`, with every warning and Warn/Audit denial of the steps so far. */
function deniedChain(deniedBy: string, message: string, object: KubeObject | null, steps: ChainStep[]): ChainResult {
  return {
    allowed: false,
    object,
    steps,
    warnings: steps.flatMap((s) => s.result.warnings),
    wouldDeny: wouldDenyOf(steps),
    deniedBy,
    message,
  };
}

function wouldDenyOf(steps: ChainStep[]): ChainResult['wouldDeny'] {
  return steps.flatMap((s) => (s.wouldDeny === undefined ? [] : [{ webhook: s.webhook, message: s.wouldDeny }]));
}

/**
 * Asserts that a mutating webhook is idempotent: its patch applied, a second call on the
 * result returns no patch. Returns the first call's result.
 */
export async function expectIdempotent(
  webhook: AdmissionWebhook,
  object: KubeObject,
  options: AdmissionReviewOptions = {},
): Promise<AdmissionResult> {
  const first = await invoke(webhook, admissionReview(object, options));
  assert.ok(first.allowed, `first call denied: ${first.status?.message}`);
  const second = await invoke(webhook, admissionReview(first.object, options));
  assert.ok(second.allowed, `second call denied: ${second.status?.message}`);
  assert.deepEqual(second.patch, [], `not idempotent: the second call patched ${JSON.stringify(second.patch)}`);
  return first;
}

/**
 * Asserts that converting `object` through every other version and back gives it back
 * unchanged, both one version at a time and along the whole list.
 */
export async function expectRoundTrip(
  webhook: ConversionWebhook,
  object: KubeObject,
  apiVersions: string[],
): Promise<void> {
  const start = object.apiVersion;
  assert.ok(start, 'object needs an apiVersion');
  const convert = async (obj: KubeObject, to: string): Promise<KubeObject> => {
    const result = await invoke(webhook, conversionReview([obj], to));
    assert.equal(result.status, 'Success', `conversion ${obj.apiVersion} -> ${to} failed: ${result.message}`);
    return result.convertedObjects[0]!;
  };
  for (const version of apiVersions) {
    if (version === start) continue;
    const there = await convert(object, version);
    assert.equal(there.apiVersion, version);
    assert.deepEqual(await convert(there, start), object, `${start} -> ${version} -> ${start} changed the object`);
  }
  let current = object;
  for (const version of [...apiVersions.filter((v) => v !== start), start]) current = await convert(current, version);
  assert.deepEqual(
    current,
    object,
    `${[start, ...apiVersions.filter((v) => v !== start), start].join(' -> ')} changed the object`,
  );
}
