// matchConditions: the CEL environment, the API server's rules and evaluation, and
// in-function enforcement. A separate entry point (`kube-lambda-webhooks/matchconditions`),
// so only functions that enforce conditions bundle the CEL engine.
export { compileExpression, CostLimitExceeded, isCompileError, MATCH_CONDITIONS_COST_BUDGET, matchConditionsEnvironment, noOpinion, PER_CALL_COST_LIMIT, toCel, variablesFor } from './cel.ts';
export { REGEX_CACHE_SIZE, regexCacheSize, RegexSyntaxError } from './regex.ts';
export type { AuthorizationAttributes, AuthorizationDecision, Authorize, CompiledExpression, CompileError, CompileOptions } from './cel.ts';
export { CEL_FEATURES, environmentMinor, NEWEST_KUBE_VERSION } from './versions.ts';
export type { CelFeature, CelKubeVersion, ExpressionMode } from './versions.ts';
export { checkInFunctionConditions, checkMatchConditions, MAX_MATCH_CONDITIONS, qualifiedNameProblem } from './rules.ts';
export type { ConditionProblem } from './rules.ts';
export { answerWithoutCalling, createMatcher, decideMatch, matchConditionsFor, rejectionMessage, skipReason } from './matcher.ts';
export type { ConditionEvaluation, Matcher, MatchOutcome, NotCalled } from './matcher.ts';
export { parseQuantity, Quantity } from './quantity.ts';
export { enforceMatchConditions } from './enforce.ts';
