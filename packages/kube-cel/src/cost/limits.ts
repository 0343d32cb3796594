/**
 * The API server's cost limits of CEL evaluations: in a module of their own, which imports nothing, so
 * that what reads them loads no engine.
 */

/**
 * Cost limit of one expression's evaluation, the API server's PerCallLimit
 * (apiserver/pkg/apis/cel/config.go, "roughly 0.1 second").
 */
export const PER_CALL_COST_LIMIT = 1_000_000;

/**
 * Cost budget of all matchConditions of one webhook for one request, the API server's
 * RuntimeCELCostBudgetMatchConditions: past it, the conditions fail as a whole (the
 * filter's error), whatever the ones before answered.
 */
export const MATCH_CONDITIONS_COST_BUDGET = 2_500_000;
