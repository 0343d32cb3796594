// The schemas of the answers a webhook gives, as the API server reads them: the test kit checks
// a function's answers with them. Apart from the request schemas, so that a function's bundle,
// which writes answers and never reads them, carries none of them.
import * as z from 'zod/mini';
import { ADMISSION_REVIEW_VERSIONS, CONVERSION_REVIEW_VERSIONS } from './types.ts';
import {
  EmbeddedObjectSchema,
  UidSchema,
  type AdmissionReviewResponse,
  type ConversionReviewResponse,
  type Same,
} from './schemas.ts';

/** `metav1.Status` as returned in a denied AdmissionResponse; `code` is an int32 in Go. */
export const StatusSchema = z.object({
  code: z.int32(),
  message: z.optional(z.string()),
  reason: z.optional(z.string()),
});

/** `response` of an AdmissionReview, as the API server reads it. */
export const AdmissionResponseSchema = z.object({
  uid: UidSchema,
  allowed: z.boolean(),
  status: z.optional(StatusSchema),
  patch: z.optional(z.base64()),
  patchType: z.optional(z.literal('JSONPatch')),
  warnings: z.optional(z.array(z.string())),
  auditAnnotations: z.optional(z.record(z.string(), z.string())),
});

/** An AdmissionReview response envelope, either version. */
export const AdmissionReviewResponseSchema = z.object({
  apiVersion: z.enum(ADMISSION_REVIEW_VERSIONS),
  kind: z.literal('AdmissionReview'),
  response: AdmissionResponseSchema,
});

/** `response` of a ConversionReview, as the API server reads it. */
export const ConversionResponseSchema = z.object({
  uid: UidSchema,
  result: z.object({ status: z.enum(['Success', 'Failed']), message: z.optional(z.string()) }),
  convertedObjects: z.optional(z.array(EmbeddedObjectSchema)),
});

/** A ConversionReview response envelope, either version. */
export const ConversionReviewResponseSchema = z.object({
  apiVersion: z.enum(CONVERSION_REVIEW_VERSIONS),
  kind: z.literal('ConversionReview'),
  response: ConversionResponseSchema,
});

// The public types are what the schemas read: a schema and its type change together.
const typesMatchSchemas: [
  Same<AdmissionReviewResponse, z.infer<typeof AdmissionReviewResponseSchema>>,
  Same<ConversionReviewResponse, z.infer<typeof ConversionReviewResponseSchema>>,
] = [true, true];
void typesMatchSchemas;
