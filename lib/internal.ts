// The tools' (infra/) entry point into the library's internals: what `klw` needs beyond the
// public entry points. It is not in package.json's exports, so users cannot import it.
export * from './gateway/sources.ts';
export * from './json.ts';
/** The resource descriptors of `on(...)`, by kind, for `klw new --resource`. */
export * as KINDS from './k8s/kinds.ts';
export * from './k8s/url.ts';
export * from './registration.ts';
export * from './rule-builder.ts';
export * from './review/envelope.ts';
export * from './review/schemas.ts';
export * from './review/parse.ts';
export * from './admission/enforcement.ts';
export * from './auth.ts';
export * from './conversion/webhook.ts';
export * from './gateway/http.ts';
export * from './gateway/sources/emulate.ts';
export * from './k8s/resources.ts';
export * from './metrics.ts';
export * from './webhook.ts';
// Admission policies evaluated as the API server evaluates them (klw audit).
export { diffPatch } from './admission/patch.ts';
export type { Authorize as PolicyAuthorize } from './policies/cel.ts';
export { builtinEquivalents } from './policies/generic/equivalent.ts';
export { collectParams, paramSourcesOf, type ParamSource } from './policies/generic/params.ts';
export type { ParamKind, ParamRef } from './policies/generic/types.ts';
export type { MutatingPolicyWebhook } from './policies/mutating/define.ts';
export { defaultObject } from './policies/mutating/defaults.ts';
export type { ValidatingPolicyWebhook } from './policies/validating/define.ts';
export {
  dispatchValidating,
  type PoliciesVerdict,
  VALIDATION_FAILURE_ANNOTATION,
} from './policies/validating/dispatcher.ts';
export type { ValidationAction } from './policies/validating/types.ts';
export { compileValidatingPolicy, type CompiledValidatingPolicy } from './policies/validating/validator.ts';
// Policies as klw writes and lints them (manifests, lint, deploy).
export { mutatingPolicyManifests, nativeMutatingPolicyVersion } from './policies/mutating/manifest.ts';
export type { DefinedMutatingPolicy } from './policies/mutating/define.ts';
export { builtinSchema as builtinTypesSchema } from './policies/mutating/smd/schema.ts';
export { validate as validateTyped } from './policies/mutating/smd/typed.ts';
export { VALIDATION_REASONS } from './policies/validating/types.ts';
export { compileVariables } from './policies/generic/composition.ts';
export { compileConditions } from './policies/generic/conditions.ts';
export { compileMutation } from './policies/mutating/cel.ts';
