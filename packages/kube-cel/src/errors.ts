/**
 * The errors the package throws, under one base class: a caller tells the package's errors from
 * its own with `instanceof CelError`, and the kind by the subclass.
 */

/** Any error of Kubernetes' CEL: compiling, evaluating, or the cost limit. */
export class CelError extends Error {
  override name = 'CelError';
}

/** An expression the API server would refuse: the checker's message, with where in the expression. */
export class CelCompileError extends CelError {
  override name = 'CelCompileError';
  /** The expression refused. */
  readonly expression: string;
  /** 1-based line of the error in the expression; -1 when it has none. */
  readonly line: number;
  /** 1-based column (in code points) of the error in the expression; 0 when it has none. */
  readonly column: number;
  constructor(expression: string, message: string, line: number, column: number) {
    super(message);
    this.expression = expression;
    this.line = line;
    this.column = column;
  }
}

/** An evaluation that failed, with cel-go's message (`no such key: x`) and the cost spent until then. */
export class CelEvaluationError extends CelError {
  override name = 'CelEvaluationError';
  /** Cost units spent before it failed. */
  readonly cost: number;
  constructor(message: string, cost: number, options?: { cause?: unknown }) {
    super(message, options);
    this.cost = cost;
  }
}

/** An evaluation stopped at the cost limit, with cel-go's message. */
export class CostLimitExceeded extends CelError {
  override name = 'CostLimitExceeded';
  /** Cost units spent when it was stopped (past the limit). */
  cost = 0;
  constructor() {
    super('operation cancelled: actual cost limit exceeded');
  }
}

/**
 * Thrown in a function's bundle where an expression needs the CEL engine (compiling one that has no
 * precompiled tree, or evaluating one its tree leaves to the engine) before it is loaded: await
 * loadEngine(), then do it again (evaluations are pure). Never thrown where the package runs unbundled.
 */
export class CelEngineNotLoaded extends CelError {
  override name = 'CelEngineNotLoaded';
  constructor() {
    super('the CEL engine is not loaded: await loadEngine() before compiling or evaluating this expression');
  }
}
