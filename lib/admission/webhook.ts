import { DeadlineExceeded, withDeadline } from '../deadline.ts';
import {
  completeAdmissionRegistration,
  type AdmissionRegistration,
  type AdmissionRegistrationInput,
  type Enforcement,
} from '../registration.ts';
import { completeAdmissionReview, readAdmissionReview } from '../review/envelope.ts';
import type { AdmissionRequest, AdmissionResponse, AdmissionReview, KubeObject } from '../review/schemas.ts';
import {
  defineWebhook,
  isInstance,
  logFailure,
  userContext,
  type DefinedWebhook,
  type EngineAnswer,
  type ReviewEngine,
  type RunContext,
  type UnsendableAnswer,
  type WebhookContext,
} from '../webhook.ts';
import {
  allow,
  errored,
  isDecision,
  isErrored,
  replacedCode,
  sanitizeWarnings,
  WarningList,
  type Decision,
} from './decision.ts';
import { callerEnforcement, isAuditAnnotationKey, WOULD_DENY_ANNOTATION, wouldDenyWarning } from './enforcement.ts';
import { checkPatch, diffPatch, encodePatch, type PatchOperation } from './patch.ts';
import { cloneJson } from '../json.ts';
import { deepFreeze } from './freeze.ts';
import type { FailureKind } from '../metrics.ts';
import { WebhookError } from '../errors.ts';

/**
 * An AdmissionRequest whose objects have the type the webhook works on, read-only to the
 * function: the answer is what it returns, never what it writes to the request (the test kit
 * freezes the request, so a write throws there).
 */
export type TypedAdmissionRequest<T> = Readonly<Omit<AdmissionRequest, 'object' | 'oldObject'>> & {
  readonly object?: T | null;
  readonly oldObject?: T | null;
};

/** A validating function: look at the request, answer with `allow()` or `deny()`. */
export type ValidateFn<T> = (request: TypedAdmissionRequest<T>, ctx: WebhookContext) => Decision | Promise<Decision>;

/**
 * A mutating function: change `object` (a private copy, also `request.object`) in place or
 * return a new one; or return a decision: `deny(...)`, `allow(warnings)` (after changing
 * the copy), or `patched(ops)`.
 */
export type MutateFn<T> = (
  object: T,
  request: TypedAdmissionRequest<T>,
  ctx: WebhookContext,
  // biome-ignore lint/suspicious/noConfusingVoidType: a mutate function that changes nothing may return nothing.
) => void | T | Decision | Promise<void | T | Decision>;

/** A validating webhook: its registration and its function. */
export interface ValidatingWebhookDefinition<T> extends AdmissionRegistrationInput<T> {
  validate: ValidateFn<T>;
}

/** A mutating webhook: its registration and its function. */
export interface MutatingWebhookDefinition<T> extends AdmissionRegistrationInput<T> {
  mutate: MutateFn<T>;
}

/** A defined admission webhook: the Lambda handler and the registration infra reads. */
export type AdmissionWebhook = DefinedWebhook<AdmissionRegistration>;

/** What the engine did with the user's answer, before it becomes a response. */
interface Outcome {
  decision: Decision;
  patch?: PatchOperation[];
  /** The message of a denial that `Warn` or `Audit` turned into an admission. */
  wouldDeny?: string;
  /** The enforcement mode, when it is not `Deny`, or a refused override. */
  enforcement?: Enforcement;
  enforcementProblem?: string;
  /** How the user function failed, when it did. */
  failure?: FailureKind;
}

/**
 * Applies the webhook's enforcement to the function's decision: under `Warn` or `Audit` a
 * denial (not an `errored` failure) admits the request, unpatched, with the denial as the
 * first warning or in the `would-deny` audit annotation. The calling cluster's enforcement, as
 * its fleet sets it, comes first.
 */
function enforce(reg: AdmissionRegistration, outcome: Outcome, ctx: RunContext): Outcome {
  const { decision } = outcome;
  if (decision.allowed) return outcome;
  const { mode, problem } = callerEnforcement(reg, ctx.caller, ctx.env);
  if (problem) return { ...outcome, enforcementProblem: problem };
  if (mode === 'Deny' || isErrored(decision)) return outcome;
  const message = decision.status?.message ?? '';
  let admitted = allow(mode === 'Warn' ? wouldDenyWarning(reg.webhookName, message) : [], decision.warnings);
  const annotations = {
    ...decision.auditAnnotations,
    ...(mode === 'Audit' ? { [WOULD_DENY_ANNOTATION]: message } : {}),
  };
  if (Object.keys(annotations).length) admitted = admitted.withAuditAnnotations(annotations);
  return { decision: admitted, wouldDeny: message, enforcement: mode };
}

class UserFunctionError extends WebhookError {
  override name = 'UserFunctionError';
  readonly code = 'USER_FUNCTION_FAILED';
}

/**
 * Turns a failed or late user function into the answer its failurePolicy asks for:
 * Fail denies with 500 (504 when late); Ignore admits with a warning, as the API server
 * itself would had the call failed.
 */
function failureOutcome(reg: AdmissionRegistration, err: unknown, ctx: RunContext): Outcome {
  const late = isInstance(err, DeadlineExceeded);
  const { errorId, failure } = logFailure(ctx, late ? 'user function too slow' : 'user function failed', err);
  const message = late
    ? `webhook ${reg.webhookName} did not answer within ${err.budgetMs} ms (error id ${errorId})`
    : `internal error in webhook ${reg.webhookName} (error id ${errorId})`;
  const decision =
    reg.failurePolicy === 'Ignore'
      ? allow(`${message}; admitted because failurePolicy is Ignore`)
      : errored(late ? 504 : 500, message);
  return { decision, failure };
}

/** Why an answer cannot be sent, as the log of the function's failure says it. */
function unsendableReason(why: UnsendableAnswer): string {
  return why.kind === 'oversized'
    ? `answer of ${why.bytes} bytes (as Lambda returns it) is larger than Lambda can return`
    : `answer cannot be written as JSON: ${String(why.error)}`;
}

/** The items of one list, then of the other. */
function* concat<T>(first: Iterable<T>, second: Iterable<T>): Generator<T> {
  yield* first;
  yield* second;
}

function toResponse(
  outcome: Outcome,
  extraWarnings: readonly string[],
  dropped: string[] = [],
): Omit<AdmissionResponse, 'uid'> {
  const { decision, patch } = outcome;
  const response: Omit<AdmissionResponse, 'uid'> = { allowed: decision.allowed };
  if (!decision.allowed && decision.status) response.status = { ...decision.status };
  if (decision.allowed && patch && patch.length > 0) {
    response.patch = encodePatch(patch);
    response.patchType = 'JSONPatch';
  }
  if (decision.warnings.length || extraWarnings.length) {
    const warnings = sanitizeWarnings(
      extraWarnings.length ? concat(decision.warnings, extraWarnings) : decision.warnings,
    );
    if (warnings.length) response.warnings = warnings;
  }
  if (decision.auditAnnotations) {
    // The API server drops (and logs) an annotation whose key is not a qualified name part.
    const kept: Record<string, string> = {};
    for (const [key, value] of Object.entries(decision.auditAnnotations)) {
      if (isAuditAnnotationKey(key)) kept[key] = value;
      else dropped.push(key);
    }
    if (Object.keys(kept).length) response.auditAnnotations = kept;
  }
  return response;
}

function logFields(
  review: AdmissionReview,
  response: Omit<AdmissionResponse, 'uid'>,
  patchOps: number,
  outcome?: Outcome,
  dropped: string[] = [],
): Record<string, unknown> {
  const request = review.request;
  const fields: Record<string, unknown> = {
    reviewVersion: review.apiVersion,
    uid: request.uid,
    kind: `${request.kind.group ? `${request.kind.group}/` : ''}${request.kind.version}/${request.kind.kind}`,
    operation: request.operation,
    namespace: request.namespace,
    name: request.name,
    dryRun: request.dryRun ?? false,
    decision: !response.allowed ? 'denied' : response.patch ? 'patched' : 'allowed',
    code: response.status?.code,
    patchOps,
    warnings: response.warnings?.length ?? 0,
    // What the API server tells the client a denial is about.
    ...(response.allowed ? {} : { message: response.status?.message ?? '' }),
  };
  if (outcome?.wouldDeny !== undefined) {
    fields.enforcement = outcome.enforcement;
    fields.wouldDeny = true;
    fields.wouldDenyMessage = outcome.wouldDeny;
  }
  if (outcome?.enforcementProblem) fields.enforcementProblem = outcome.enforcementProblem;
  const replaced = outcome && replacedCode(outcome.decision);
  if (replaced !== undefined) fields.replacedCode = replaced;
  if (dropped.length) fields.droppedAuditAnnotations = dropped;
  return fields;
}

function admissionEngine(
  reg: AdmissionRegistration,
  decide: (request: AdmissionRequest, ctx: WebhookContext) => Promise<Outcome>,
): ReviewEngine<AdmissionReview> {
  return {
    parse: readAdmissionReview,
    async run(review, ctx): Promise<EngineAnswer> {
      // What ctx.warn is given, kept as the decision's warnings are (any number costs what can be shown).
      const warnings = new WarningList();
      const dropped: string[] = [];
      let outcome: Outcome;
      let response: Omit<AdmissionResponse, 'uid'>;
      if (ctx.freezeRequest) deepFreeze(review.request);
      try {
        // The response is built inside the budget too: warnings and the patch are the user's
        // output, and the time they take counts as the function's.
        [outcome, response] = await withDeadline(
          async () => {
            const decision = await decide(
              review.request,
              userContext(ctx, (message) => warnings.add(message)),
            );
            const decided = enforce(reg, decision, ctx);
            return [decided, toResponse(decided, warnings.items, dropped)] as const;
          },
          ctx.budgetMs,
          ctx.startedAt,
          ctx.now,
        );
      } catch (err) {
        outcome = failureOutcome(reg, err, ctx);
        response = toResponse(outcome, warnings.items, dropped);
      }
      return {
        body: completeAdmissionReview(review, response),
        fields: logFields(review, response, response.patch ? (outcome.patch?.length ?? 0) : 0, outcome, dropped),
        failure: outcome.failure,
      };
    },
    unsendable(review, why, ctx) {
      const { decision, failure } = failureOutcome(reg, new UserFunctionError(unsendableReason(why)), ctx);
      const response = toResponse({ decision }, []);
      return { body: completeAdmissionReview(review, response), fields: logFields(review, response, 0), failure };
    },
  };
}

function build(
  reg: AdmissionRegistration,
  decide: (request: AdmissionRequest, ctx: WebhookContext) => Promise<Outcome>,
): AdmissionWebhook {
  return defineWebhook(reg, admissionEngine(reg, decide));
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'a plain object' : typeof value;
}

/** Defines a validating webhook: the registration (rules, selectors, policies) and `validate`. */
export function defineValidatingWebhook<T extends KubeObject = KubeObject>(
  definition: ValidatingWebhookDefinition<T>,
): AdmissionWebhook {
  const { validate, ...input } = definition;
  const reg = completeAdmissionRegistration('validating', input);
  return build(reg, async (request, ctx) => {
    const decision = await validate(request as TypedAdmissionRequest<T>, ctx);
    if (!isDecision(decision))
      throw new UserFunctionError(`validate returned ${describe(decision)}; expected allow() or deny()`);
    if (decision.patch) throw new UserFunctionError('a validating webhook may not return a patch');
    return { decision };
  });
}

/**
 * Defines a mutating webhook. The adapter diffs the object before and after `mutate` and
 * returns a JSONPatch only when something changed. DELETE and CONNECT carry no object
 * to patch: they are admitted without calling `mutate`.
 */
export function defineMutatingWebhook<T extends KubeObject = KubeObject>(
  definition: MutatingWebhookDefinition<T>,
): AdmissionWebhook {
  const { mutate, ...input } = definition;
  const reg = completeAdmissionRegistration('mutating', input);
  return build(reg, async (request, ctx) => {
    const original = request.object;
    if (!original || request.operation === 'DELETE' || request.operation === 'CONNECT') return { decision: allow() };
    // `object` and `request.object` are one working copy: whatever the function writes to,
    // the diff (or a raw patch) is taken against the object as it came.
    const working = cloneJson(original) as T;
    const view = { ...request, object: working } as TypedAdmissionRequest<T>;
    // The copy stays writable; the rest of the request is as read-only as the request it comes from.
    if (Object.isFrozen(request)) Object.freeze(view);
    const result = await mutate(working, view, ctx);
    if (isDecision(result)) {
      if (!result.allowed) return { decision: result };
      if (result.patch) {
        const problem = checkPatch(original, result.patch);
        if (problem) throw new UserFunctionError(problem);
        return { decision: result, patch: [...result.patch] };
      }
      return { decision: result, patch: diffPatch(original, working) };
    }
    if (result === undefined) return { decision: allow(), patch: diffPatch(original, working) };
    if (typeof result !== 'object' || result === null || Array.isArray(result)) {
      throw new UserFunctionError(`mutate returned ${describe(result)}; expected nothing, an object or a decision`);
    }
    return { decision: allow(), patch: diffPatch(original, result) };
  });
}

/** Per-operation handlers for `byOperation`; an operation without one is allowed. */
export interface OperationHandlers<T> {
  onCreate?(object: T, request: TypedAdmissionRequest<T>, ctx: WebhookContext): Decision | Promise<Decision>;
  onUpdate?(
    oldObject: T,
    object: T,
    request: TypedAdmissionRequest<T>,
    ctx: WebhookContext,
  ): Decision | Promise<Decision>;
  onDelete?(
    oldObject: T | undefined,
    request: TypedAdmissionRequest<T>,
    ctx: WebhookContext,
  ): Decision | Promise<Decision>;
  onConnect?(request: TypedAdmissionRequest<T>, ctx: WebhookContext): Decision | Promise<Decision>;
}

function required<T>(value: T | null | undefined, what: string): T {
  if (value === null || value === undefined) throw new UserFunctionError(`request has no ${what}`);
  return value;
}

/** Builds a `validate` from per-operation handlers, so no one switches on `operation` by hand. */
export function byOperation<T extends KubeObject = KubeObject>(handlers: OperationHandlers<T>): ValidateFn<T> {
  return (request, ctx) => {
    switch (request.operation) {
      case 'CREATE':
        return handlers.onCreate ? handlers.onCreate(required(request.object, 'object'), request, ctx) : allow();
      case 'UPDATE':
        return handlers.onUpdate
          ? handlers.onUpdate(
              required(request.oldObject, 'oldObject'),
              required(request.object, 'object'),
              request,
              ctx,
            )
          : allow();
      case 'DELETE':
        return handlers.onDelete ? handlers.onDelete(request.oldObject ?? undefined, request, ctx) : allow();
      case 'CONNECT':
        return handlers.onConnect ? handlers.onConnect(request, ctx) : allow();
    }
  };
}
