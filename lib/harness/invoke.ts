import assert from 'node:assert/strict';
import type fastJsonPatch from 'fast-json-patch';
import type { AdmissionWebhook } from '../admission/webhook.ts';
import { readWouldDeny } from '../admission/enforcement.ts';
import { applyPatchCopy } from '../admission/patch.ts';
import { unmatchedByRules } from '../admission/match.ts';
import { parseJson } from '../json.ts';
import type { ConversionWebhook } from '../conversion/webhook.ts';
import type { EventSource } from '../gateway/sources.ts';
import { createLogger } from '../log.ts';
import { completeAdmissionReview } from '../review/envelope.ts';
import { AdmissionReviewResponseSchema, ConversionReviewResponseSchema } from '../review/response-schemas.ts';
import {
  describeIssue,
  type AdmissionReview,
  type AdmissionReviewResponse,
  type ConversionReview,
  type ConversionReviewResponse,
  type KubeObject,
} from '../review/schemas.ts';
import type { HandlerOptions, WebhookHandler } from '../webhook.ts';
import type { Authorize } from '../../packages/kube-cel/src/index.ts';
import { answerWithoutCalling, skipReason } from '../matchconditions/matcher.ts';
import { lambdaContext, toEvent } from './events.ts';
import { failureRecorder, recordingFailures, type FunctionFailure } from './failures.ts';
import { failureMessage, unexpectedAnswer } from './failure-message.ts';
import { refusedMutation } from './mutation-checks.ts';

/** Options of `invoke`. */
export interface InvokeOptions {
  /** Event source to wrap the review in; default `http`. */
  format?: EventSource;
  /** Send the body base64-encoded. */
  base64?: boolean;
  /** Extra headers (an Authorization header, say). */
  headers?: Record<string, string>;
  /** Handler options; by default the handler logs nothing. */
  handlerOptions?: HandlerOptions;
  /**
   * Refuse a review that none of the webhook's rules match (operation, resource, scope), as the
   * API server would never send it (default true); false sends it anyway.
   */
  matchRules?: boolean;
  /**
   * Evaluate the webhook's matchConditions first, as the API server does (default true);
   * false calls the function whatever they say.
   */
  matchConditions?: boolean;
  /** Answers `authorizer` checks in matchConditions; by default no opinion (not allowed). */
  authorize?: Authorize;
  /**
   * The test expects the function to fail: to throw, to time out, or to answer what is no
   * answer. invoke then returns what the API server would take instead (per failurePolicy),
   * with `failure` set, and throws when the function did not fail. Without it, a failing
   * function is an AssertionError naming the function, the review and the line that threw.
   */
  expectFailure?: boolean;
}

/** The decoded answer of an admission webhook. */
export interface AdmissionResult {
  allowed: boolean;
  status?: { code: number; message?: string; reason?: string };
  warnings: string[];
  /** The decoded JSONPatch; empty when the webhook sent none. */
  patch: fastJsonPatch.Operation[];
  /** The request object with the patch applied (the request object itself when unpatched). */
  object: KubeObject | null;
  /** The AdmissionReview as the webhook returned it (as the API server takes it when the call was skipped). */
  review: AdmissionReviewResponse;
  /** Set when matchConditions skipped the call: `skipped by matchCondition <name>`. */
  skipped?: string;
  /** Set when a matchCondition failed to evaluate under failurePolicy Fail: the API server rejected the request without calling. */
  matchConditionError?: string;
  /** Set when the webhook denied under `enforcement: Warn` or `Audit` and so admitted: the denial message. */
  wouldDeny?: string;
  /** Set (with `expectFailure` only) when the function failed and the adapter answered for it. */
  failure?: FunctionFailure;
}

/** The decoded answer of a conversion webhook. */
export interface ConversionResult {
  status: 'Success' | 'Failed';
  message?: string;
  convertedObjects: KubeObject[];
  review: ConversionReviewResponse;
  /** Set (with `expectFailure` only) when the converter failed and the adapter answered for it. */
  failure?: FunctionFailure;
}

const silent = createLogger({ level: 'silent' });
const quietHandlers = new WeakMap<object, WebhookHandler>();

/** The handler invoke calls: its logger records the function's failures (and passes lines on to the one given). */
function handlerFor(webhook: AdmissionWebhook | ConversionWebhook, options: InvokeOptions): WebhookHandler {
  if (options.handlerOptions) {
    const logger = failureRecorder(options.handlerOptions.logger ?? silent);
    return webhook.withOptions({ ...options.handlerOptions, logger, freezeRequest: true });
  }
  let handler = quietHandlers.get(webhook);
  if (!handler) {
    handler = webhook.withOptions({ logger: failureRecorder(silent), freezeRequest: true });
    quietHandlers.set(webhook, handler);
  }
  return handler;
}

/** Sends a review through a webhook's Lambda handler exactly as API Gateway would, and returns the raw HTTP result. */
export async function invokeRaw(
  webhook: AdmissionWebhook | ConversionWebhook,
  body: unknown,
  options: InvokeOptions = {},
): Promise<{ statusCode: number; headers: Record<string, string>; body: string }> {
  const event = toEvent(body, {
    format: options.format ?? 'http',
    path: webhook.registration.path,
    timeout: `${webhook.registration.timeoutSeconds}s`,
    ...(options.base64 ? { base64: true } : {}),
    ...(options.headers ? { headers: options.headers } : {}),
  });
  const result = (await handlerFor(webhook, options)(event, lambdaContext())) as {
    statusCode: number;
    headers?: Record<string, string>;
    body?: string;
  };
  return { statusCode: result.statusCode, headers: result.headers ?? {}, body: result.body ?? '' };
}

/**
 * Decodes a webhook's HTTP answer to a review, checking the rules the API server applies
 * to it (HTTP 200, same apiVersion and kind, uid echoed, schema, patch rules).
 */
export function readAnswer(
  type: 'validating' | 'mutating',
  review: AdmissionReview,
  raw: { statusCode: number; body: string },
): AdmissionResult;
/** Decodes a conversion webhook's HTTP answer to a ConversionReview, checking it as the API server does. */
export function readAnswer(
  type: 'conversion',
  review: ConversionReview,
  raw: { statusCode: number; body: string },
): ConversionResult;
export function readAnswer(
  type: 'validating' | 'mutating' | 'conversion',
  review: AdmissionReview | ConversionReview,
  raw: { statusCode: number; body: string },
): AdmissionResult | ConversionResult {
  assert.equal(raw.statusCode, 200, `webhook answered HTTP ${raw.statusCode}: ${raw.body}`);
  const body: unknown = parseJson(raw.body);
  if (review.kind === 'ConversionReview') {
    const parsed = ConversionReviewResponseSchema.safeParse(body);
    assert.ok(parsed.success, `not a ConversionReview response: ${parsed.success ? '' : describeIssue(parsed.error)}`);
    const out = parsed.data;
    assert.equal(out.apiVersion, review.apiVersion, 'response apiVersion must match the request');
    assert.equal(out.response.uid, review.request.uid, 'response uid must echo the request uid');
    const result: ConversionResult = {
      status: out.response.result.status,
      convertedObjects: out.response.convertedObjects ?? [],
      review: out,
    };
    if (out.response.result.message !== undefined) result.message = out.response.result.message;
    if (result.status === 'Success')
      assert.equal(
        result.convertedObjects.length,
        review.request.objects.length,
        'convertedObjects must match objects in count',
      );
    return result;
  }
  const parsed = AdmissionReviewResponseSchema.safeParse(body);
  assert.ok(parsed.success, `not an AdmissionReview response: ${parsed.success ? '' : describeIssue(parsed.error)}`);
  const out = parsed.data;
  assert.equal(out.apiVersion, review.apiVersion, 'response apiVersion must match the request');
  assert.equal(out.response.uid, review.request.uid, 'response uid must echo the request uid');
  const response = out.response;
  assert.equal(response.patch === undefined, response.patchType === undefined, 'patch and patchType go together');
  if (type === 'validating') assert.equal(response.patch, undefined, 'a validating webhook may not return a patch');
  const patch = response.patch
    ? (parseJson(Buffer.from(response.patch, 'base64').toString('utf8')) as fastJsonPatch.Operation[])
    : [];
  let object = review.request.object ?? null;
  if (response.patch) {
    assert.ok(object, 'a patch was returned for a request without an object');
    assert.ok(patch.length > 0, 'an empty patch must not be sent');
    // Applied to a copy, bigints and members named __proto__ kept, as the API server applies it.
    object = applyPatchCopy(object, patch) as typeof object;
    const refused = refusedMutation(review.request, object);
    assert.ok(
      refused === undefined,
      `the API server refuses the object the patch makes: ${refused}. A mutating webhook may change ` +
        'what an object holds, never which object it is: leave kind, apiVersion, metadata.namespace ' +
        '(and on UPDATE metadata.name and metadata.uid) as the request has them',
    );
  }
  const result: AdmissionResult = {
    allowed: response.allowed,
    warnings: response.warnings ?? [],
    patch,
    object,
    review: out,
  };
  if (response.status) result.status = response.status;
  return result;
}

/** Runs a review through a webhook's Lambda handler and decodes the answer with `readAnswer`. */
export async function invoke(
  webhook: AdmissionWebhook,
  review: AdmissionReview,
  options?: InvokeOptions,
): Promise<AdmissionResult>;
/** Runs a ConversionReview through a conversion webhook's Lambda handler and decodes the answer. */
export async function invoke(
  webhook: ConversionWebhook,
  review: ConversionReview,
  options?: InvokeOptions,
): Promise<ConversionResult>;
export async function invoke(
  webhook: AdmissionWebhook | ConversionWebhook,
  review: AdmissionReview | ConversionReview,
  options: InvokeOptions = {},
): Promise<AdmissionResult | ConversionResult> {
  const reviewKind = (review as { kind?: unknown })?.kind;
  const expected = webhook.registration.type === 'conversion' ? 'ConversionReview' : 'AdmissionReview';
  if ((reviewKind === 'AdmissionReview' || reviewKind === 'ConversionReview') && reviewKind !== expected) {
    const send =
      expected === 'ConversionReview'
        ? 'conversionReview(objects, desiredAPIVersion)'
        : 'admissionReview(object, options)';
    throw new assert.AssertionError({
      message:
        `${webhook.registration.name} is a ${webhook.registration.type} webhook: the API server sends it ` +
        `${expected}s, not ${reviewKind === 'AdmissionReview' ? 'an' : 'a'} ${reviewKind}; send ${send}`,
    });
  }
  const request = (review as AdmissionReview)?.request;
  if (webhook.registration.type !== 'conversion' && options.matchRules !== false && request) {
    const unmatched = unmatchedByRules(webhook.registration, request);
    if (unmatched) throw new assert.AssertionError({ message: unmatched });
  }
  if (
    webhook.registration.type !== 'conversion' &&
    webhook.registration.matchConditions?.length &&
    options.matchConditions !== false
  ) {
    const notCalled = notCalledByConditions(webhook as AdmissionWebhook, review as AdmissionReview, options);
    if (notCalled) return notCalled;
  }
  const { value: raw, failures } = await recordingFailures(() => invokeRaw(webhook, review, options));
  const result = named(webhook.registration.name, () =>
    readAnswer(webhook.registration.type as never, review as never, raw),
  ) as AdmissionResult | ConversionResult;
  const failure = failures[0];
  if (options.expectFailure) {
    if (!failure) throw new assert.AssertionError({ message: unexpectedAnswer(webhook.registration, review, result) });
    result.failure = failure;
  } else if (failure) {
    throw new assert.AssertionError({ message: failureMessage(webhook.registration, review, result, failure) });
  }
  if (webhook.registration.type !== 'conversion') {
    const admission = result as AdmissionResult;
    const wouldDeny = readWouldDeny(webhook.registration.webhookName, admission.review.response);
    if (wouldDeny !== undefined) admission.wouldDeny = wouldDeny;
  }
  return result;
}

/** What `fn` returns; an AssertionError it throws is thrown again with the function's name in front. */
function named<T>(name: string, fn: () => T): T {
  try {
    return fn();
  } catch (err) {
    if (!(err instanceof assert.AssertionError) || err.message.startsWith(`${name}: `)) throw err;
    throw new assert.AssertionError({ message: `${name}: ${err.message}` });
  }
}

/**
 * The API server's answer when matchConditions keep it from calling the webhook: allowed
 * when a condition is false (or failed under failurePolicy Ignore), rejected when one failed
 * under Fail; undefined when the webhook is to be called.
 */
function notCalledByConditions(
  webhook: AdmissionWebhook,
  review: AdmissionReview,
  options: InvokeOptions,
): AdmissionResult | undefined {
  const notCalled = answerWithoutCalling(webhook.registration, review.request, options.authorize);
  if (!notCalled) return undefined;
  const out = completeAdmissionReview(review, notCalled.response);
  const result: AdmissionResult = {
    allowed: out.response.allowed,
    warnings: [],
    patch: [],
    object: review.request.object ?? null,
    review: out,
  };
  if (notCalled.response.status) result.status = notCalled.response.status;
  if ('matched' in notCalled.outcome) result.skipped = skipReason(notCalled.outcome)!;
  else result.matchConditionError = notCalled.outcome.error;
  return result;
}
