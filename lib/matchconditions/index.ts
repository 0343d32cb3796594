// matchConditions: compiling and checking CEL conditions, and in-function enforcement. A separate
// entry point (`kube-lambda-webhooks/matchconditions`), so only functions that enforce conditions
// bundle the CEL engine. One export per line, sorted by name;
// etc/kube-lambda-webhooks-matchconditions.api.md records it (npm run api:check).
export type { AuthorizationAttributes } from '../../packages/kube-cel/src/index.ts';
export type { AuthorizationDecision } from '../../packages/kube-cel/src/index.ts';
export type { Authorize } from '../../packages/kube-cel/src/index.ts';
export type { CelKubeVersion } from '../../packages/kube-cel/src/index.ts';
export { checkMatchConditions } from './rules.ts';
export { compileExpression } from '../../packages/kube-cel/src/index.ts';
export type { CompiledExpression } from '../../packages/kube-cel/src/index.ts';
export type { CompileError } from '../../packages/kube-cel/src/index.ts';
export type { CompileOptions } from '../../packages/kube-cel/src/index.ts';
export type { ConditionProblem } from './rules.ts';
export { enforceMatchConditions } from './enforce.ts';
export type { ExpressionMode } from '../../packages/kube-cel/src/index.ts';
export type { FieldSelectorRequirement } from '../../packages/kube-cel/src/index.ts';
export { isCompileError } from '../../packages/kube-cel/src/index.ts';
export type { LabelSelectorOperator } from '../../packages/kube-cel/src/index.ts';
export type { LabelSelectorRequirement } from '../../packages/kube-cel/src/index.ts';
