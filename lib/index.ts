// The public API of kube-lambda-webhooks.

// Defining webhooks
export { defineValidatingWebhook, defineMutatingWebhook, byOperation } from './admission/webhook.ts';
export type {
  AdmissionWebhook,
  MutateFn,
  MutatingWebhookDefinition,
  OperationHandlers,
  TypedAdmissionRequest,
  ValidateFn,
  ValidatingWebhookDefinition,
} from './admission/webhook.ts';
export { defineConversionWebhook, hubAndSpoke, ConversionError, splitAPIVersion, withoutFields } from './conversion/webhook.ts';
export type { ConversionWebhook, ConversionWebhookDefinition, ConvertFn, ConvertibleObject, Spoke } from './conversion/webhook.ts';

// Decisions
export { allow, deny, errored, patched, isDecision, sanitizeWarnings } from './admission/decision.ts';
export type { Decision, DenyOptions } from './admission/decision.ts';
export type { PatchOperation } from './admission/patch.ts';
export { ENFORCEMENT_ENV, enforcementEnvFor, WOULD_DENY_ANNOTATION } from './admission/enforcement.ts';

// Registration
export { defaultNamespaceSelector, SYSTEM_NAMESPACES, DEFAULT_TIMEOUT_SECONDS, ENFORCEMENT_MODES, on } from './registration.ts';
// Resource descriptors for on(...): Pod, Deployment, ... (plain objects; object types only from kubernetes-models)
export * from './k8s/kinds.ts';
export type {
  AdmissionRegistration,
  AdmissionRegistrationInput,
  ConversionRegistration,
  ConversionRegistrationInput,
  Enforcement,
  LabelSelector,
  LambdaSettings,
  MatchCondition,
  Registration,
  ResourceDescriptor,
  ReviewObject,
  RuleBuilder,
  RuleWithOperations,
  TypedRule,
} from './registration.ts';

// Reviews
export {
  AdmissionReviewSchema,
  AdmissionRequestSchema,
  AdmissionReviewResponseSchema,
  ConversionReviewSchema,
  ConversionRequestSchema,
  ConversionReviewResponseSchema,
  KubeObjectSchema,
} from './review/schemas.ts';
export type {
  AdmissionRequest,
  AdmissionReview,
  AdmissionReviewResponse,
  ConversionRequest,
  ConversionReview,
  ConversionReviewResponse,
  KubeObject,
  Operation,
} from './review/schemas.ts';

// Runtime
export type { WebhookContext, WebhookHandler, HandlerOptions, LambdaContextLike } from './webhook.ts';
export { createLogger } from './log.ts';
export type { Logger, LogLevel } from './log.ts';
export { MAX_BODY_BYTES } from './gateway/http.ts';
