// The test kit of kube-lambda-webhooks: build reviews and events, run handlers in-process, check
// conformance. One export per line, sorted by name; etc/kube-lambda-webhooks-testing.api.md
// records it (npm run api:check).
export type { AdmissionResult } from '../harness/invoke.ts';
export { admissionReview } from '../harness/reviews.ts';
export type { AdmissionReviewOptions } from '../harness/reviews.ts';
export type { ChainResult } from './chain.ts';
export type { ChainStep } from './chain.ts';
export type { ConformanceCheck } from './conformance.ts';
export type { ConformanceOptions } from './conformance.ts';
export type { ConversionResult } from '../harness/invoke.ts';
export type { CustomKind } from '../policies/validating/typecheck.ts';
export { conversionReview } from '../harness/reviews.ts';
export type { DenialStatus } from '../policies/validating/dispatcher.ts';
export { describeConformance } from './conformance.ts';
export type { DescribeConformanceOptions } from './conformance.ts';
export { evaluatePolicies } from './policies.ts';
export type { EventOptions } from '../harness/events.ts';
export type { EventSource } from '../gateway/sources.ts';
export { expectConformance } from './conformance.ts';
export { expectIdempotent } from './chain.ts';
export { expectMutatingPolicyParity } from './mutating-policies.ts';
export { expectPolicyParity } from './policies.ts';
export { expectRoundTrip } from './chain.ts';
export type { ExpressionWarning } from '../policies/validating/typecheck.ts';
export type { FunctionFailure } from '../harness/failures.ts';
export { invoke } from '../harness/invoke.ts';
export type { InvokeOptions } from '../harness/invoke.ts';
export type { MutatingParityOptions } from './mutating-policies.ts';
export type { MutatingPolicyParity } from './mutating-policies.ts';
export type { PoliciesVerdict } from '../policies/validating/dispatcher.ts';
export type { PolicyEvaluationOptions } from './policies.ts';
export type { PolicyParity } from './policies.ts';
export { readAnswer } from '../harness/invoke.ts';
export { runAdmissionChain } from './chain.ts';
export { sanitizeWarnings } from '../admission/decision.ts';
export { toEvent } from '../harness/events.ts';
export { typeCheckValidatingPolicy } from '../policies/validating/typecheck.ts';
export type { ValidationFailure } from '../policies/validating/dispatcher.ts';
