// The test kit of kube-lambda-webhooks: build reviews and events, run handlers in-process.
export { admissionReview, conversionReview } from './reviews.ts';
export type { AdmissionReviewOptions } from './reviews.ts';
export { toEvent, eventFromHttp, isTextContentType, lambdaContext, clfTime } from './events.ts';
export type { EventOptions, HttpRequestInput } from './events.ts';
export { invoke, invokeRaw, readAnswer } from './invoke.ts';
export type { AdmissionResult, ConversionResult, InvokeOptions } from './invoke.ts';
export { runAdmissionChain, expectIdempotent, expectRoundTrip, webhookMatches } from './chain.ts';
export { selectorMatches } from '../registration.ts';
export type { ChainResult, ChainStep } from './chain.ts';
export { conformanceChecks, expectConformance, describeConformance, kindOf } from './conformance.ts';
export type { ConformanceCheck, ConformanceOptions, DescribeConformanceOptions } from './conformance.ts';
