import {
  ADMISSION_REVIEW_VERSIONS,
  AdmissionReviewSchema,
  CONVERSION_REVIEW_VERSIONS,
  ConversionReviewSchema,
  memberName,
  type AdmissionResponse,
  type AdmissionReview,
  type AdmissionReviewResponse,
  type ConversionResponse,
  type ConversionReview,
  type ConversionReviewResponse,
} from './schemas.ts';
import { readAdmissionReviewFast, readConversionReviewFast } from './fast.ts';

/** Why a body could not be read as a review; becomes an HTTP 400 at the gateway. */
export interface ReviewError {
  ok: false;
  message: string;
}

/** The outcome of reading a review from a body. */
export type ReviewResult<T> = { ok: true; review: T } | ReviewError;

/** What the describer needs of a zod error. */
export interface IssueList {
  issues: ReadonlyArray<{ path: ReadonlyArray<PropertyKey>; message: string }>;
}

/** A schema as far as reading a review needs it. */
interface SafeParser<T> {
  safeParse(value: unknown): { success: true; data: T } | { success: false; error: IssueList };
}

/** Formats the first zod issue as `path: message` so a caller sees which field is wrong. */
export function describeIssue(error: IssueList): string {
  const issue = error.issues[0];
  if (!issue) return 'invalid review';
  const path = issue.path.length ? issue.path.map(memberName).join('.') : '(root)';
  const more = error.issues.length > 1 ? ` (and ${error.issues.length - 1} more)` : '';
  return `${path}: ${issue.message}${more}`;
}

function readReview<T>(
  body: unknown,
  kind: 'AdmissionReview' | 'ConversionReview',
  versions: readonly string[],
  schema: SafeParser<T>,
  fast: (body: Record<string, unknown>) => T | undefined,
): ReviewResult<T> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    return { ok: false, message: `body is not a ${kind} object` };
  }
  const { apiVersion, kind: gotKind } = body as { apiVersion?: unknown; kind?: unknown };
  if (gotKind !== kind) {
    return { ok: false, message: `kind: expected "${kind}", got ${JSON.stringify(gotKind ?? null)}` };
  }
  if (typeof apiVersion !== 'string' || !versions.includes(apiVersion)) {
    return {
      ok: false,
      message: `apiVersion: unsupported ${kind} version ${JSON.stringify(apiVersion ?? null)}; expected one of ${versions.join(', ')}`,
    };
  }
  // A well-formed review is read without zod; zod reads the rest and words its problems.
  const review = fast(body as Record<string, unknown>);
  if (review !== undefined) return { ok: true, review };
  const parsed = schema.safeParse(body);
  return parsed.success ? { ok: true, review: parsed.data } : { ok: false, message: describeIssue(parsed.error) };
}

/** Reads an AdmissionReview (v1 or v1beta1) from a parsed JSON body. */
export function parseAdmissionReview(body: unknown): ReviewResult<AdmissionReview> {
  return readReview(body, 'AdmissionReview', ADMISSION_REVIEW_VERSIONS, AdmissionReviewSchema, readAdmissionReviewFast);
}

/** Reads a ConversionReview (v1 or v1beta1) from a parsed JSON body. */
export function parseConversionReview(body: unknown): ReviewResult<ConversionReview> {
  return readReview(
    body,
    'ConversionReview',
    CONVERSION_REVIEW_VERSIONS,
    ConversionReviewSchema,
    readConversionReviewFast,
  );
}

/** Wraps an admission response in the envelope of the request: same apiVersion and kind, uid echoed. */
export function completeAdmissionReview(
  review: Pick<AdmissionReview, 'apiVersion'> & { request: { uid: string } },
  response: Omit<AdmissionResponse, 'uid'>,
): AdmissionReviewResponse {
  return { apiVersion: review.apiVersion, kind: 'AdmissionReview', response: { uid: review.request.uid, ...response } };
}

/** Wraps a conversion response in the envelope of the request: same apiVersion and kind, uid echoed. */
export function completeConversionReview(
  review: Pick<ConversionReview, 'apiVersion'> & { request: { uid: string } },
  response: Omit<ConversionResponse, 'uid'>,
): ConversionReviewResponse {
  return {
    apiVersion: review.apiVersion,
    kind: 'ConversionReview',
    response: { uid: review.request.uid, ...response },
  };
}
