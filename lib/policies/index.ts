// Admission policies: CEL policies served natively or from Lambda. A separate entry point
// (`kube-lambda-webhooks/policies`), so only policy functions bundle the CEL engine. One export per
// line, sorted by name; etc/kube-lambda-webhooks-policies.api.md records it (npm run api:check).
export type { AuditAnnotation } from './validating/types.ts';
export type { BindingCommon } from './generic/types.ts';
export type { CrdSchema } from './mutating/smd/crd.ts';
export type { DefinedMutatingPolicy } from './mutating/define.ts';
export type { DefinedValidatingPolicy } from './validating/define.ts';
export { defineMutatingPolicy } from './mutating/define.ts';
export { defineValidatingPolicy } from './validating/define.ts';
export type { MatchResources } from './generic/types.ts';
export type { MutatingBindingSpec } from './mutating/types.ts';
export type { MutatingEvaluationOptions } from './mutating/define.ts';
export type { MutatingPolicyDefinition } from './mutating/define.ts';
export type { MutatingPolicyOutcome } from './mutating/dispatch.ts';
export type { MutatingPolicySpec } from './mutating/types.ts';
export type { MutatingPolicyWebhook } from './mutating/define.ts';
export type { Mutation } from './mutating/types.ts';
export type { MutationStatus } from './mutating/mutation.ts';
export type { NamedRuleWithOperations } from './generic/types.ts';
export type { ParamKind } from './generic/types.ts';
export type { ParamRef } from './generic/types.ts';
export type { ParamSource, ParamSources } from './generic/params.ts';
export type { PolicyCommon } from './generic/types.ts';
export type { PolicyMatchConstraints } from './generic/define.ts';
export type { PolicyRule } from './generic/define.ts';
export type { ReinvocationPolicy } from './mutating/types.ts';
export type { ValidatingBindingSpec } from './validating/types.ts';
export type { ValidatingPolicyDefinition } from './validating/define.ts';
export type { ValidatingPolicySpec } from './validating/types.ts';
export type { ValidatingPolicyWebhook } from './validating/define.ts';
export type { Validation } from './validating/types.ts';
export { VALIDATION_REASONS } from './validating/types.ts';
export type { ValidationAction } from './validating/types.ts';
export type { ValidationReason } from './validating/types.ts';
export type { Variable } from './generic/types.ts';
