import type {
  AdmissionResponse,
  AdmissionReview,
  AdmissionReviewResponse,
  ConversionResponse,
  ConversionReview,
  ConversionReviewResponse,
} from './schemas.ts';
import { readAdmissionReviewFast, readConversionReviewFast } from './fast.ts';
import { ADMISSION_REVIEW_VERSIONS, CONVERSION_REVIEW_VERSIONS } from './types.ts';

export {
  ADMISSION_REVIEW_VERSIONS,
  CONVERSION_REVIEW_VERSIONS,
  type AdmissionReviewVersion,
  type ConversionReviewVersion,
} from './types.ts';

/** Why a body could not be read as a review; becomes an HTTP 400 at the gateway. */
export interface ReviewError {
  ok: false;
  message: string;
}

/** The outcome of reading a review from a body. */
export type ReviewResult<T> = { ok: true; review: T } | ReviewError;

/** The zod schemas of the reviews, with the describer of their problems (schemas.ts). */
export type ReviewSchemas = typeof import('./schemas.ts');

/** The kinds of review and what reads each. */
const REVIEWS = {
  AdmissionReview: { versions: ADMISSION_REVIEW_VERSIONS, fast: readAdmissionReviewFast },
  ConversionReview: { versions: CONVERSION_REVIEW_VERSIONS, fast: readConversionReviewFast },
} as const;

/** The reviews' types by kind. */
interface ReviewTypes {
  AdmissionReview: AdmissionReview;
  ConversionReview: ConversionReview;
}

/** The problem with a body's kind and apiVersion, read before anything else; undefined when right. */
function envelopeProblem(body: unknown, kind: keyof ReviewTypes): ReviewError | undefined {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    return { ok: false, message: `body is not a ${kind} object` };
  }
  const { apiVersion, kind: gotKind } = body as { apiVersion?: unknown; kind?: unknown };
  if (gotKind !== kind) {
    return { ok: false, message: `kind: expected "${kind}", got ${JSON.stringify(gotKind ?? null)}` };
  }
  const versions: readonly string[] = REVIEWS[kind].versions;
  if (typeof apiVersion !== 'string' || !versions.includes(apiVersion)) {
    return {
      ok: false,
      message: `apiVersion: unsupported ${kind} version ${JSON.stringify(apiVersion ?? null)}; expected one of ${versions.join(', ')}`,
    };
  }
  return undefined;
}

/** What zod reads of a body the fast readers left to it: the review, or its first problem in words. */
function readWithZod<K extends keyof ReviewTypes>(
  schemas: ReviewSchemas,
  kind: K,
  body: unknown,
): ReviewResult<ReviewTypes[K]> {
  const schema = kind === 'AdmissionReview' ? schemas.AdmissionReviewSchema : schemas.ConversionReviewSchema;
  const parsed = schema.safeParse(body);
  return parsed.success
    ? { ok: true, review: parsed.data as ReviewTypes[K] }
    : { ok: false, message: schemas.describeIssue(parsed.error) };
}

/**
 * Reads a review of `kind` from a parsed JSON body: a well-formed one without zod, the rest with
 * the schemas `schemas` gives (now, or once loaded), which read it or word its problem.
 */
export function readReview<K extends keyof ReviewTypes>(
  kind: K,
  body: unknown,
  schemas: () => ReviewSchemas,
): ReviewResult<ReviewTypes[K]>;
export function readReview<K extends keyof ReviewTypes>(
  kind: K,
  body: unknown,
  schemas: () => Promise<ReviewSchemas>,
): ReviewResult<ReviewTypes[K]> | Promise<ReviewResult<ReviewTypes[K]>>;
export function readReview<K extends keyof ReviewTypes>(
  kind: K,
  body: unknown,
  schemas: () => ReviewSchemas | Promise<ReviewSchemas>,
): ReviewResult<ReviewTypes[K]> | Promise<ReviewResult<ReviewTypes[K]>> {
  const problem = envelopeProblem(body, kind);
  if (problem) return problem;
  const review = REVIEWS[kind].fast(body as Record<string, unknown>) as ReviewTypes[K] | undefined;
  if (review !== undefined) return { ok: true, review };
  const loaded = schemas();
  return loaded instanceof Promise ? loaded.then((s) => readWithZod(s, kind, body)) : readWithZod(loaded, kind, body);
}

/**
 * The schemas, loaded on first need: a function's bundle carries them (and zod) in a chunk of
 * its own, which only a malformed review loads. Set once, then read only.
 */
let lazySchemas: Promise<ReviewSchemas> | undefined;
const loadSchemas = () => (lazySchemas ??= import('./schemas.ts'));

/**
 * Reads an AdmissionReview (v1 or v1beta1) from a parsed JSON body: at once when well-formed;
 * otherwise once zod is loaded, which reads it or words its problem.
 */
export function readAdmissionReview(
  body: unknown,
): ReviewResult<AdmissionReview> | Promise<ReviewResult<AdmissionReview>> {
  return readReview('AdmissionReview', body, loadSchemas);
}

/** Reads a ConversionReview (v1 or v1beta1) from a parsed JSON body, as readAdmissionReview does. */
export function readConversionReview(
  body: unknown,
): ReviewResult<ConversionReview> | Promise<ReviewResult<ConversionReview>> {
  return readReview('ConversionReview', body, loadSchemas);
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
