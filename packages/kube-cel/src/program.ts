/**
 * Programs: an expression compiled for a Kubernetes version and mode, evaluated with the variables
 * and the cost limit of each call. A program holds no state of its evaluations: each has its own
 * meter, so evaluations may run inside one another (an authorizer callback evaluating another
 * expression) or side by side.
 */
import { type CompileOptions, compileExpression, isCompileError } from './compile.ts';
import { PER_CALL_COST_LIMIT } from './cost/limits.ts';
import { CelCompileError, CelError, CelEvaluationError } from './errors.ts';

/** Options of Program.evaluate. */
export interface EvaluateOptions {
  /**
   * Cost units the evaluation may spend before it is stopped (CostLimitExceeded); the API server's
   * per-expression limit (PER_CALL_COST_LIMIT) by default.
   */
  costLimit?: number;
}

/** What an evaluation answered, and what it cost in the API server's cost units. */
export interface Evaluation {
  value: unknown;
  cost: number;
}

/** A compiled expression. */
export interface Program {
  /** The expression as written. */
  readonly expression: string;
  /** The type the checker inferred, in cel-go's words (`bool`); `unchecked` when compiled without the check. */
  readonly type: string;
  /** True when the expression reads the `authorizer` variable. */
  readonly usesAuthorizer: boolean;
  /**
   * Evaluates the program with `variables` (see admissionVariables). Throws CostLimitExceeded past
   * the cost limit, CelEvaluationError when the evaluation fails (cel-go's message); both carry the
   * cost spent.
   */
  evaluate(variables: Record<string, unknown>, options?: EvaluateOptions): Evaluation;
}

/** What check() found: the expression's type, or the error the API server would report. */
export type CheckResult = { valid: true; type: string } | { valid: false; error: CelCompileError };

/**
 * Parses and type-checks an expression in Kubernetes' CEL environment for `options.kubeVersion`
 * (the newest modelled by default) and `options.mode` (`create`: as the API server compiles a
 * configuration being written, one minor version back; `stored`, the default: as it evaluates what
 * is already stored). Throws CelCompileError with the API server's message when it refuses it.
 */
export function compile(expression: string, options: CompileOptions = {}): Program {
  const compiled = compileExpression(expression, options);
  if (isCompileError(compiled)) throw new CelCompileError(expression, compiled.message, compiled.line, compiled.column);
  return {
    expression,
    type: compiled.type,
    usesAuthorizer: compiled.usesAuthorizer,
    evaluate(variables, evaluateOptions = {}) {
      try {
        return compiled.evaluate(variables, evaluateOptions.costLimit ?? PER_CALL_COST_LIMIT);
      } catch (err) {
        if (err instanceof CelError) throw err;
        const e = err as { summary?: string; message?: string; cost?: number };
        throw new CelEvaluationError(e.summary ?? e.message ?? String(err), e.cost ?? 0, { cause: err });
      }
    },
  };
}

/** Checks an expression as compile() does, without throwing: its type, or the error. */
export function check(expression: string, options: CompileOptions = {}): CheckResult {
  const compiled = compileExpression(expression, options);
  if (isCompileError(compiled))
    return { valid: false, error: new CelCompileError(expression, compiled.message, compiled.line, compiled.column) };
  return { valid: true, type: compiled.type };
}
