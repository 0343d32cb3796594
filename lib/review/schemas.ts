import { z } from 'zod';

/** The AdmissionReview API versions the API server may send, newest first. */
export const ADMISSION_REVIEW_VERSIONS = ['admission.k8s.io/v1', 'admission.k8s.io/v1beta1'] as const;
/** The ConversionReview API versions the API server may send, newest first. */
export const CONVERSION_REVIEW_VERSIONS = ['apiextensions.k8s.io/v1', 'apiextensions.k8s.io/v1beta1'] as const;

/** A Kubernetes object as the API server serializes it: any JSON object; known fields typed loosely. */
export const KubeObjectSchema = z.looseObject({
  apiVersion: z.string().optional(),
  kind: z.string().optional(),
  metadata: z
    .looseObject({
      name: z.string().optional(),
      namespace: z.string().optional(),
      uid: z.string().optional(),
      labels: z.record(z.string(), z.string()).optional(),
      annotations: z.record(z.string(), z.string()).optional(),
    })
    .optional(),
});

/** Group, version and kind of an object (`metav1.GroupVersionKind`). */
export const GroupVersionKindSchema = z.object({
  group: z.string(),
  version: z.string(),
  kind: z.string(),
});

/** Group, version and resource of a request (`metav1.GroupVersionResource`). */
export const GroupVersionResourceSchema = z.object({
  group: z.string(),
  version: z.string(),
  resource: z.string(),
});

/** The admission operations a webhook can be called for. */
export const OperationSchema = z.enum(['CREATE', 'UPDATE', 'DELETE', 'CONNECT']);

/** The user that made the request to the API server (`authenticationv1.UserInfo`). */
export const UserInfoSchema = z.looseObject({
  username: z.string().optional(),
  uid: z.string().optional(),
  groups: z.array(z.string()).optional(),
  extra: z.record(z.string(), z.array(z.string())).optional(),
});

/** `request` of an AdmissionReview; identical in v1 and v1beta1. */
export const AdmissionRequestSchema = z.object({
  uid: z.string().min(1, 'uid must not be empty'),
  kind: GroupVersionKindSchema,
  resource: GroupVersionResourceSchema,
  subResource: z.string().optional(),
  requestKind: GroupVersionKindSchema.optional(),
  requestResource: GroupVersionResourceSchema.optional(),
  requestSubResource: z.string().optional(),
  name: z.string().optional(),
  namespace: z.string().optional(),
  operation: OperationSchema,
  userInfo: UserInfoSchema,
  object: KubeObjectSchema.nullish(),
  oldObject: KubeObjectSchema.nullish(),
  dryRun: z.boolean().optional(),
  options: z.looseObject({}).nullish(),
});

/** An AdmissionReview request as sent by the API server, either version. */
export const AdmissionReviewSchema = z.object({
  apiVersion: z.enum(ADMISSION_REVIEW_VERSIONS),
  kind: z.literal('AdmissionReview'),
  request: AdmissionRequestSchema,
});

/** `request` of a ConversionReview; identical in v1 and v1beta1. */
export const ConversionRequestSchema = z.object({
  uid: z.string().min(1, 'uid must not be empty'),
  desiredAPIVersion: z.string().regex(/^([^/]+\/)?[^/]+$/, 'desiredAPIVersion must be "group/version"'),
  objects: z.array(
    KubeObjectSchema.extend({
      apiVersion: z.string().min(1),
      kind: z.string().min(1),
    }),
  ),
});

/** A ConversionReview request as sent by the API server, either version. */
export const ConversionReviewSchema = z.object({
  apiVersion: z.enum(CONVERSION_REVIEW_VERSIONS),
  kind: z.literal('ConversionReview'),
  request: ConversionRequestSchema,
});

/** `metav1.Status` as returned in a denied AdmissionResponse. */
export const StatusSchema = z.object({
  code: z.number().int(),
  message: z.string().optional(),
  reason: z.string().optional(),
});

/** `response` of an AdmissionReview, as the API server reads it. */
export const AdmissionResponseSchema = z.object({
  uid: z.string().min(1),
  allowed: z.boolean(),
  status: StatusSchema.optional(),
  patch: z.base64().optional(),
  patchType: z.literal('JSONPatch').optional(),
  warnings: z.array(z.string()).optional(),
  auditAnnotations: z.record(z.string(), z.string()).optional(),
});

/** An AdmissionReview response envelope, either version. */
export const AdmissionReviewResponseSchema = z.object({
  apiVersion: z.enum(ADMISSION_REVIEW_VERSIONS),
  kind: z.literal('AdmissionReview'),
  response: AdmissionResponseSchema,
});

/** `response` of a ConversionReview, as the API server reads it. */
export const ConversionResponseSchema = z.object({
  uid: z.string().min(1),
  result: z.object({ status: z.enum(['Success', 'Failed']), message: z.string().optional() }),
  convertedObjects: z.array(KubeObjectSchema).optional(),
});

/** A ConversionReview response envelope, either version. */
export const ConversionReviewResponseSchema = z.object({
  apiVersion: z.enum(CONVERSION_REVIEW_VERSIONS),
  kind: z.literal('ConversionReview'),
  response: ConversionResponseSchema,
});

/** A Kubernetes object. */
export type KubeObject = z.infer<typeof KubeObjectSchema>;
/** An admission operation. */
export type Operation = z.infer<typeof OperationSchema>;
/** The AdmissionReview `request`. */
export type AdmissionRequest = z.infer<typeof AdmissionRequestSchema>;
/** An AdmissionReview request envelope. */
export type AdmissionReview = z.infer<typeof AdmissionReviewSchema>;
/** The ConversionReview `request`. */
export type ConversionRequest = z.infer<typeof ConversionRequestSchema>;
/** A ConversionReview request envelope. */
export type ConversionReview = z.infer<typeof ConversionReviewSchema>;
/** The AdmissionReview `response`. */
export type AdmissionResponse = z.infer<typeof AdmissionResponseSchema>;
/** An AdmissionReview response envelope. */
export type AdmissionReviewResponse = z.infer<typeof AdmissionReviewResponseSchema>;
/** The ConversionReview `response`. */
export type ConversionResponse = z.infer<typeof ConversionResponseSchema>;
/** A ConversionReview response envelope. */
export type ConversionReviewResponse = z.infer<typeof ConversionReviewResponseSchema>;
/** Which review API version a request came in (and its answer must go out in). */
export type AdmissionReviewVersion = (typeof ADMISSION_REVIEW_VERSIONS)[number];
/** Which ConversionReview API version a request came in. */
export type ConversionReviewVersion = (typeof CONVERSION_REVIEW_VERSIONS)[number];
