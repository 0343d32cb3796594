/**
 * Kubernetes' CEL: the CEL environment of the Kubernetes API server, per Kubernetes version, for
 * any tool that compiles or evaluates its expressions (matchConditions, admission policies). Compile
 * an expression for a version and mode, check it, evaluate it with the variables of an admission
 * request and a cost limit passed per call. Errors are CelError's subclasses.
 * One export per line, sorted by name; etc/kube-cel.api.md records it (npm run api:check).
 */
export { admissionVariables } from './admission/variables.ts';
export type { AdmissionRequest } from './admission/variables.ts';
export type { AdmissionVariablesOptions } from './admission/variables.ts';
export type { AuthorizationAttributes } from './libraries/authorizer.ts';
export type { AuthorizationDecision } from './libraries/authorizer.ts';
export type { Authorize } from './libraries/authorizer.ts';
export { CelCompileError } from './errors.ts';
export { CelEngineNotLoaded } from './errors.ts';
export { CelError } from './errors.ts';
export { CelEvaluationError } from './errors.ts';
export type { CelKubeVersion } from './versions/versions.ts';
export { celGoTypeName } from './check/words.ts';
export { check } from './program.ts';
export type { CheckResult } from './program.ts';
export { compile } from './program.ts';
export { compileExpression } from './compile.ts';
export type { CompiledExpression } from './compile.ts';
export type { CompileError } from './compile.ts';
export type { CompileOptions } from './compile.ts';
export { CostLimitExceeded } from './errors.ts';
export type { EvaluateOptions } from './program.ts';
export type { Evaluation } from './program.ts';
export type { ExpressionMode } from './versions/versions.ts';
export type { FieldSelectorRequirement } from './libraries/authorizer.ts';
export type { GroupVersionKind } from './admission/variables.ts';
export type { GroupVersionResource } from './admission/variables.ts';
export { isCompileError } from './compile.ts';
export { kubeVersionFromText } from './versions/versions.ts';
export type { LabelSelectorOperator } from './libraries/authorizer.ts';
export type { LabelSelectorRequirement } from './libraries/authorizer.ts';
export { loadEngine } from './compile.ts';
export { loadLibraries } from './libraries/all.ts';
export { loadRegexEngine } from './libraries/regex.ts';
export { MATCH_CONDITIONS_COST_BUDGET } from './cost/limits.ts';
export { namespaceForCel } from './admission/variables.ts';
export { needsEngine } from './compile.ts';
export { needsLibraries } from './libraries/names.ts';
export { NEWEST_KUBE_VERSION } from './versions/versions.ts';
export { noOpinion } from './libraries/authorizer.ts';
export { PER_CALL_COST_LIMIT } from './cost/limits.ts';
export { precompile } from './compile.ts';
export type { PrecompiledExpression } from './precompiled.ts';
export type { Program } from './program.ts';
export { toCel } from './admission/variables.ts';
export { usePrecompiled } from './precompiled.ts';
export { usesRegex } from './libraries/regex.ts';
export type { WholeDoubles } from './admission/variables.ts';
