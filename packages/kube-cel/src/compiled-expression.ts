/**
 * What compiling an expression gives (compile.ts, and the trees of precompiled forms): a leaf module,
 * which the modules that make one import without importing each other.
 */

/** A compiled condition expression. */
export interface CompiledExpression {
  /** The type the checker inferred (`bool` for a valid condition). */
  type: string;
  /** True when the expression reads the `authorizer` variable. */
  usesAuthorizer: boolean;
  /** Evaluates the expression, stopping past `limit` cost units (CostLimitExceeded). */
  run(variables: Record<string, unknown>, limit?: number): unknown;
  /** Cost units the last run of this object spent (past the limit when it was stopped). */
  readonly lastCost: number;
  /**
   * Evaluates the expression with a meter of its own, stopping past `limit` cost units: its value
   * and cost. The error thrown (CostLimitExceeded or the evaluation's) carries the cost as `cost`.
   */
  evaluate(variables: Record<string, unknown>, limit?: number): { value: unknown; cost: number };
}

/** An evaluation with a meter of its own: its value and cost; what it throws carries the cost as `cost`. */
export type MeteredEvaluation = (variables: Record<string, unknown>, limit: number) => { value: unknown; cost: number };

/**
 * The compiled expression of `evaluate`: `run` answers its value and keeps the cost of its last
 * call, answered or stopped, as `lastCost`; a call given no limit has `defaultLimit`.
 */
export function compiledExpression(
  type: string,
  usesAuthorizer: boolean,
  evaluate: MeteredEvaluation,
  defaultLimit: number,
): CompiledExpression {
  let lastCost = 0;
  return {
    type,
    usesAuthorizer,
    get lastCost() {
      return lastCost;
    },
    run(variables, limit = defaultLimit) {
      try {
        const { value, cost } = evaluate(variables, limit);
        lastCost = cost;
        return value;
      } catch (err) {
        lastCost = (err as { cost?: number }).cost ?? lastCost;
        throw err;
      }
    },
    evaluate: (variables, limit = defaultLimit) => evaluate(variables, limit),
  };
}
