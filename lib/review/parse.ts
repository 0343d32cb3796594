// Reading reviews at once, zod loaded with the module: for tools, which run unbundled. A function
// reads its reviews with envelope.ts's readers, which load zod only for a malformed review.
import { readReview, type ReviewResult } from './envelope.ts';
import * as schemas from './schemas.ts';
import type { AdmissionReview, ConversionReview } from './schemas.ts';

/** Reads an AdmissionReview (v1 or v1beta1) from a parsed JSON body. */
export function parseAdmissionReview(body: unknown): ReviewResult<AdmissionReview> {
  return readReview('AdmissionReview', body, () => schemas);
}

/** Reads a ConversionReview (v1 or v1beta1) from a parsed JSON body. */
export function parseConversionReview(body: unknown): ReviewResult<ConversionReview> {
  return readReview('ConversionReview', body, () => schemas);
}
