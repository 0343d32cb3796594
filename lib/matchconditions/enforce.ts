/**
 * In-function enforcement of matchConditions, for clusters older than the field (before
 * 1.28, or 1.27 without its feature gate), whose API servers drop it and call the webhook
 * for everything its rules match. The function then answers what the conditions exclude
 * itself, without running the user's code. Conditions that use `authorizer` need the API
 * server and are left out (lint says so).
 */
import { allow, errored } from '../admission/decision.ts';
import type { MutatingWebhookDefinition, ValidatingWebhookDefinition } from '../admission/webhook.ts';
import { servedCompiler } from '../handler/served-versions.ts';
import { completeAdmissionRegistration } from '../registration.ts';
import type { AdmissionRequest } from '../review/schemas.ts';
import type { WebhookContext } from '../webhook.ts';
import { createMatcher, forbiddenByConditions, skipReason, type Matcher } from './matcher.ts';
import { kubeVersionFromText } from '../../packages/kube-cel/src/index.ts';
import { afterChunks, chunkLoader } from './regex-loader.ts';

// biome-ignore lint/suspicious/noExplicitAny: a definition of any object type (T is both read and returned, so no one type fits all).
type AnyObject = any;
type Definition = ValidatingWebhookDefinition<AnyObject> | MutatingWebhookDefinition<AnyObject>;

/** The decision when conditions exclude the request, or undefined when the function is to run. */
function gate(matcher: Matcher, request: AdmissionRequest, ctx: WebhookContext) {
  const outcome = matcher.evaluate(request);
  if ('matched' in outcome && outcome.matched) return undefined;
  if (!('matched' in outcome)) {
    ctx.log.warn('matchConditions failed to evaluate; rejected by failurePolicy Fail', {
      requestId: ctx.requestId,
      condition: outcome.name,
      error: outcome.error,
    });
    return errored(403, forbiddenByConditions(request, outcome.error).message);
  }
  ctx.log.debug(skipReason(outcome)!, { requestId: ctx.requestId });
  return allow();
}

/**
 * Wraps a webhook definition so its function evaluates the matchConditions first, as the
 * API server would: a false condition admits without running `validate`/`mutate`; an
 * evaluation error follows failurePolicy. Use it as
 * `defineValidatingWebhook(enforceMatchConditions({ ..., matchConditions, validate }))`.
 */
export function enforceMatchConditions<D extends Definition>(definition: D): D & { enforceMatchConditions: true } {
  const isMutating = 'mutate' in definition;
  // The failurePolicy the registration will get (by type when unset).
  const { failurePolicy } = completeAdmissionRegistration(isMutating ? 'mutating' : 'validating', definition);
  // The CEL engine, the RE2 engine and the Kubernetes libraries are chunks of their own in the
  // bundle, loaded only when a condition needs them, before any is compiled.
  const expressions = (definition.matchConditions ?? []).map((c) => c.expression);
  const chunksReady = chunkLoader(
    expressions,
    false,
    expressions.map((e) => e.trim()),
  );
  // One matcher per Kubernetes version, by the rule of served expressions (the calling fleet
  // cluster's, else the registration's, else the newest): compiled while the module loads inside
  // Lambda (the init phase, done ahead of time with provisioned concurrency), elsewhere (lint,
  // manifests, the emulator's loading of registrations, tests) on the first review, so loading
  // the function compiles nothing. An expression that does not compile never throws here:
  // evaluating it is an error under failurePolicy.
  const conditions = servedCompiler(
    definition.kubernetesVersion,
    (version): Matcher =>
      createMatcher(definition.matchConditions ?? [], failurePolicy, {
        skipAuthorizer: true,
        typeCheck: false,
        kubeVersion: kubeVersionFromText(version),
      }),
    chunksReady,
  );
  /** `then` with the gate's decision, once the chunks it needs are loaded. */
  const gated = <T>(
    request: AdmissionRequest,
    ctx: WebhookContext,
    then: (d: ReturnType<typeof gate>) => T | Promise<T>,
  ): T | Promise<T> => {
    const decision = afterChunks(chunksReady, () => gate(conditions(ctx.kubeVersion), request, ctx));
    return decision instanceof Promise ? decision.then(then) : then(decision);
  };
  type Enforcing = D & { enforceMatchConditions: true };
  if (isMutating) {
    const { mutate } = definition as MutatingWebhookDefinition<AnyObject>;
    const wrapped: MutatingWebhookDefinition<AnyObject>['mutate'] = (object, request, ctx) =>
      gated(request as AdmissionRequest, ctx, (decision) => decision ?? mutate(object, request, ctx));
    return { ...definition, enforceMatchConditions: true, mutate: wrapped } as Enforcing;
  }
  const { validate } = definition as ValidatingWebhookDefinition<AnyObject>;
  const wrapped: ValidatingWebhookDefinition<AnyObject>['validate'] = (request, ctx) =>
    gated(request as AdmissionRequest, ctx, (decision) => decision ?? validate(request, ctx));
  return { ...definition, enforceMatchConditions: true, validate: wrapped } as Enforcing;
}
