// The review types of the public API, as plain TypeScript: users need no zod to read them.
// lib/review/schemas.ts checks at compile time that its schemas read and write exactly these.

/** The AdmissionReview API versions the API server may send, newest first. */
export const ADMISSION_REVIEW_VERSIONS = ['admission.k8s.io/v1', 'admission.k8s.io/v1beta1'] as const;
/** The ConversionReview API versions the API server may send, newest first. */
export const CONVERSION_REVIEW_VERSIONS = ['apiextensions.k8s.io/v1', 'apiextensions.k8s.io/v1beta1'] as const;
/** Which review API version a request came in (and its answer must go out in). */
export type AdmissionReviewVersion = (typeof ADMISSION_REVIEW_VERSIONS)[number];
/** Which ConversionReview API version a request came in. */
export type ConversionReviewVersion = (typeof CONVERSION_REVIEW_VERSIONS)[number];

/** A Kubernetes object as the API server serializes it: any JSON object; known fields typed loosely. */
export interface KubeObject {
  [key: string]: unknown;
  /** `group/version`, or `version` for the core group. */
  apiVersion?: string;
  /** The object's kind. */
  kind?: string;
  /** Name, namespace, uid, labels and annotations, and whatever else the object's metadata holds. */
  metadata?: {
    [key: string]: unknown;
    name?: string;
    namespace?: string;
    uid?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
  };
}

/** An admission operation. */
export type Operation = 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT';

/** The AdmissionReview `request`; identical in v1 and v1beta1. */
export interface AdmissionRequest {
  /** Echoed in the response. */
  uid: string;
  /** The kind the webhook is called with (`metav1.GroupVersionKind`). */
  kind: { group: string; version: string; kind: string };
  /** The resource the webhook is called with (`metav1.GroupVersionResource`). */
  resource: { group: string; version: string; resource: string };
  /** The subresource, when the request is for one. */
  subResource?: string;
  /** The kind of the original request, before any conversion. */
  requestKind?: { group: string; version: string; kind: string };
  /** The resource of the original request, before any conversion. */
  requestResource?: { group: string; version: string; resource: string };
  /** The subresource of the original request. */
  requestSubResource?: string;
  /** The object's name (absent on a generateName create). */
  name?: string;
  /** The object's namespace (absent for cluster-scoped objects). */
  namespace?: string;
  /** What is being done. */
  operation: Operation;
  /** The user that made the request to the API server (`authenticationv1.UserInfo`). */
  userInfo: {
    [key: string]: unknown;
    username?: string;
    uid?: string;
    groups?: string[];
    extra?: Record<string, string[]>;
  };
  /** The object as it would be stored (null for DELETE and CONNECT). */
  object?: KubeObject | null;
  /** The object as it is stored (UPDATE, DELETE). */
  oldObject?: KubeObject | null;
  /** True when the request will not be persisted. */
  dryRun?: boolean;
  /** The operation's options (`CreateOptions`, `UpdateOptions`, `DeleteOptions`). */
  options?: { [key: string]: unknown } | null;
}

/** An AdmissionReview request envelope, either version. */
export interface AdmissionReview {
  /** The review version, which the answer must have too. */
  apiVersion: 'admission.k8s.io/v1' | 'admission.k8s.io/v1beta1';
  /** Always `AdmissionReview`. */
  kind: 'AdmissionReview';
  /** The request. */
  request: AdmissionRequest;
}

/** The ConversionReview `request`; identical in v1 and v1beta1. */
export interface ConversionRequest {
  /** Echoed in the response. */
  uid: string;
  /** The version to convert the objects to, `group/version`. */
  desiredAPIVersion: string;
  /** The objects to convert. */
  objects: Array<KubeObject & { apiVersion: string; kind: string }>;
}

/** A ConversionReview request envelope, either version. */
export interface ConversionReview {
  /** The review version, which the answer must have too. */
  apiVersion: 'apiextensions.k8s.io/v1' | 'apiextensions.k8s.io/v1beta1';
  /** Always `ConversionReview`. */
  kind: 'ConversionReview';
  /** The request. */
  request: ConversionRequest;
}

/** An AdmissionReview response envelope, either version. */
export interface AdmissionReviewResponse {
  /** The request's review version. */
  apiVersion: 'admission.k8s.io/v1' | 'admission.k8s.io/v1beta1';
  /** Always `AdmissionReview`. */
  kind: 'AdmissionReview';
  /** The answer, as the API server reads it. */
  response: {
    uid: string;
    allowed: boolean;
    status?: { code: number; message?: string; reason?: string };
    patch?: string;
    patchType?: 'JSONPatch';
    warnings?: string[];
    auditAnnotations?: Record<string, string>;
  };
}

/** A ConversionReview response envelope, either version. */
export interface ConversionReviewResponse {
  /** The request's review version. */
  apiVersion: 'apiextensions.k8s.io/v1' | 'apiextensions.k8s.io/v1beta1';
  /** Always `ConversionReview`. */
  kind: 'ConversionReview';
  /** The answer, as the API server reads it. */
  response: {
    uid: string;
    result: { status: 'Success' | 'Failed'; message?: string };
    convertedObjects?: KubeObject[];
  };
}
