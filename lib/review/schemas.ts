// zod/mini is zod v4's tree-shakable API: the same schemas in about 12 KB of bundle
// instead of more than 400 KB, which keeps cold starts short. A function loads this module (and
// zod) only for a review the fast readers of fast.ts leave to it, a malformed one: it is a chunk
// of its own in a bundle, so it imports at run time nothing but zod (anything else it shared with
// the bundle's entry would become a chunk that the entry loads on every cold start).
import * as z from 'zod/mini';
import type {
  AdmissionReviewVersion,
  ConversionReviewVersion,
  AdmissionRequest,
  AdmissionReview,
  AdmissionReviewResponse,
  ConversionRequest,
  ConversionReview,
  ConversionReviewResponse,
  KubeObject,
  Operation,
} from './types.ts';

/** types.ts's lists of versions, restated (see the head of this file); the type checks below pin them equal. */
const ADMISSION_VERSIONS = ['admission.k8s.io/v1', 'admission.k8s.io/v1beta1'] as const;
const CONVERSION_VERSIONS = ['apiextensions.k8s.io/v1', 'apiextensions.k8s.io/v1beta1'] as const;

/** A Kubernetes object as the API server serializes it: any JSON object; known fields typed loosely. */
export const KubeObjectSchema = z.looseObject({
  apiVersion: z.optional(z.string()),
  kind: z.optional(z.string()),
  metadata: z.optional(
    z.looseObject({
      name: z.optional(z.string()),
      namespace: z.optional(z.string()),
      uid: z.optional(z.string()),
      labels: z.optional(z.record(z.string(), z.string())),
      annotations: z.optional(z.record(z.string(), z.string())),
    }),
  ),
});

/** A review uid: any non-empty string. */
export const UidSchema = z.string().check(z.minLength(1, 'uid must not be empty'));

function isJsonObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * An object embedded in a review (`object`, `oldObject`, conversion `objects`): any JSON
 * object. Its fields are the user function's business; walking a whole pod or a 1 MiB
 * ConfigMap with a schema on every call would cost more than the webhook itself.
 */
export const EmbeddedObjectSchema = z.custom<KubeObject>(isJsonObject, 'expected a JSON object');

const nonEmptyString = (v: unknown): boolean => typeof v === 'string' && v !== '';
const optionalString = (v: unknown): boolean => v === undefined || typeof v === 'string';

/**
 * A conversion object: a JSON object with string `apiVersion` and `kind`, and metadata whose
 * name, namespace and uid, if present, are strings: the identity conversion must preserve.
 */
const ConvertibleObjectSchema = z.custom<KubeObject & { apiVersion: string; kind: string }>(
  (v) =>
    isJsonObject(v) &&
    nonEmptyString(v.apiVersion) &&
    nonEmptyString(v.kind) &&
    (v.metadata === undefined ||
      (isJsonObject(v.metadata) &&
        optionalString(v.metadata.name) &&
        optionalString(v.metadata.namespace) &&
        optionalString(v.metadata.uid))),
  'expected an object with string apiVersion and kind, and string metadata.name, namespace and uid',
);

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

/** The name an own `__proto__` member is read under by keepingProto (a NUL and a nonce: no review has it). */
const PROTO_STAND_IN = `\u0000klw-proto:${Math.random().toString(36).slice(2, 12)}`;

/** A member name of an issue's path as the review has it (`__proto__` for its stand-in). */
export function memberName(key: PropertyKey): string {
  return key === PROTO_STAND_IN ? '__proto__' : String(key);
}

/** A JSON object with its own `__proto__` member renamed to `to` (the same value when it has none). */
function renamedProto(value: unknown, from: string, to: string): unknown {
  if (typeof value !== 'object' || value === null || Array.isArray(value) || !Object.hasOwn(value, from)) return value;
  const out: Record<string, unknown> = {};
  const source = value as Record<string, unknown>;
  for (const key of Object.keys(source)) {
    const name = key === from ? to : key;
    // An own `__proto__` member needs defineProperty: assignment would set the prototype.
    if (name === '__proto__')
      Object.defineProperty(out, name, { value: source[key], enumerable: true, writable: true, configurable: true });
    else out[name] = source[key];
  }
  return out;
}

/**
 * `schema` (an object or record schema) keeping an own `__proto__` member: zod leaves it out of
 * the objects it builds, while JSON allows it and the API server keeps it (`userInfo.extra` keys
 * are any string an authenticator gives). It is read under a stand-in name, then put back.
 */
function keepingProto<T extends z.ZodMiniType>(schema: T) {
  return z.pipe(
    z.pipe(
      z.transform((v: unknown) => renamedProto(v, '__proto__', PROTO_STAND_IN)),
      schema,
    ),
    z.transform((v: z.output<T>) => renamedProto(v, PROTO_STAND_IN, '__proto__') as z.output<T>),
  );
}

/** The user that made the request to the API server (`authenticationv1.UserInfo`). */
export const UserInfoSchema = keepingProto(
  z.looseObject({
    username: z.optional(z.string()),
    uid: z.optional(z.string()),
    groups: z.optional(z.array(z.string())),
    extra: z.optional(keepingProto(z.record(z.string(), z.array(z.string())))),
  }),
);

/** `request` of an AdmissionReview; identical in v1 and v1beta1. */
export const AdmissionRequestSchema = z.object({
  uid: UidSchema,
  kind: GroupVersionKindSchema,
  resource: GroupVersionResourceSchema,
  subResource: z.optional(z.string()),
  requestKind: z.optional(GroupVersionKindSchema),
  requestResource: z.optional(GroupVersionResourceSchema),
  requestSubResource: z.optional(z.string()),
  name: z.optional(z.string()),
  namespace: z.optional(z.string()),
  operation: OperationSchema,
  userInfo: UserInfoSchema,
  object: z.nullish(EmbeddedObjectSchema),
  oldObject: z.nullish(EmbeddedObjectSchema),
  dryRun: z.optional(z.boolean()),
  options: z.nullish(keepingProto(z.looseObject({}))),
});

/** An AdmissionReview request as sent by the API server, either version. */
export const AdmissionReviewSchema = z.object({
  apiVersion: z.enum(ADMISSION_VERSIONS),
  kind: z.literal('AdmissionReview'),
  request: AdmissionRequestSchema,
});

/** `request` of a ConversionReview; identical in v1 and v1beta1. */
export const ConversionRequestSchema = z.object({
  uid: UidSchema,
  desiredAPIVersion: z.string().check(z.regex(/^([^/]+\/)?[^/]+$/, 'desiredAPIVersion must be "group/version"')),
  objects: z.array(ConvertibleObjectSchema),
});

/** A ConversionReview request as sent by the API server, either version. */
export const ConversionReviewSchema = z.object({
  apiVersion: z.enum(CONVERSION_VERSIONS),
  kind: z.literal('ConversionReview'),
  request: ConversionRequestSchema,
});

export type {
  AdmissionRequest,
  AdmissionReview,
  AdmissionReviewResponse,
  ConversionRequest,
  ConversionReview,
  ConversionReviewResponse,
  KubeObject,
  Operation,
} from './types.ts';
/** The AdmissionReview `response`. */
export type AdmissionResponse = AdmissionReviewResponse['response'];
/** The ConversionReview `response`. */
export type ConversionResponse = ConversionReviewResponse['response'];

/** True when A and B are assignable both ways; the checks below fail to compile otherwise. */
export type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
// The public types are what the schemas read and write: a schema and its type change together.
const typesMatchSchemas: [
  Same<KubeObject, z.infer<typeof KubeObjectSchema>>,
  Same<Operation, z.infer<typeof OperationSchema>>,
  Same<AdmissionRequest, z.infer<typeof AdmissionRequestSchema>>,
  Same<AdmissionReview, z.infer<typeof AdmissionReviewSchema>>,
  Same<ConversionRequest, z.infer<typeof ConversionRequestSchema>>,
  Same<ConversionReview, z.infer<typeof ConversionReviewSchema>>,
  Same<AdmissionReviewVersion, (typeof ADMISSION_VERSIONS)[number]>,
  Same<ConversionReviewVersion, (typeof CONVERSION_VERSIONS)[number]>,
] = [true, true, true, true, true, true, true, true];
void typesMatchSchemas;

/** What the describer needs of a zod error. */
export interface IssueList {
  issues: ReadonlyArray<{ path: ReadonlyArray<PropertyKey>; message: string }>;
}

/** Formats the first zod issue as `path: message` so a caller sees which field is wrong. */
export function describeIssue(error: IssueList): string {
  const issue = error.issues[0];
  if (!issue) return 'invalid review';
  const path = issue.path.length ? issue.path.map(memberName).join('.') : '(root)';
  const more = error.issues.length > 1 ? ` (and ${error.issues.length - 1} more)` : '';
  return `${path}: ${issue.message}${more}`;
}
