// matchConditions: compiling and checking CEL conditions, and in-function enforcement. A separate
// entry point (`kube-lambda-webhooks/matchconditions`), so only functions that enforce conditions
// bundle the CEL engine. One export per line, sorted by name;
// etc/kube-lambda-webhooks-matchconditions.api.md records it (npm run api:check).
export type { AuthorizationAttributes } from './cel.ts';
export type { AuthorizationDecision } from './cel.ts';
export type { Authorize } from './cel.ts';
export type { CelKubeVersion } from './versions.ts';
export { checkMatchConditions } from './rules.ts';
export { compileExpression } from './cel.ts';
export type { CompiledExpression } from './cel.ts';
export type { CompileError } from './cel.ts';
export type { CompileOptions } from './cel.ts';
export type { ConditionProblem } from './rules.ts';
export { enforceMatchConditions } from './enforce.ts';
export type { ExpressionMode } from './versions.ts';
export type { FieldSelectorRequirement } from './cel.ts';
export { isCompileError } from './cel.ts';
export type { LabelSelectorOperator } from './cel.ts';
export type { LabelSelectorRequirement } from './cel.ts';
