/**
 * One evaluation, metered on its own. The engine evaluates every operation through its evaluator's
 * `run` and calls functions with the evaluator as `this`; the environment's evaluator carries the
 * Meter of the evaluation running now. Evaluations are synchronous, so the only other evaluation
 * that can run meanwhile is one started from inside a function call of this one: it keeps the
 * outer meter aside and gives it back when it ends, so no two evaluations ever share a budget.
 */
import type { ASTNode, Environment, ParseResult } from '../engine.ts';
import { afterNode, beforeNode, CostLimitExceeded, METER_PROBE, type Meter, planOf } from './meter.ts';

/** The engine's evaluator, with the meter of the evaluation it serves. */
interface MeteredEvaluator extends Meter {
  run(ast: ASTNode, ctx: unknown): unknown;
}
/** A node's own `evaluate`, as the engine calls it. */
type Evaluate = (ev: unknown, ast: ASTNode, ctx: unknown) => unknown;

/** Each environment's own evaluator, once metered (installMeter). */
const evaluators = new WeakMap<Environment, MeteredEvaluator>();

/** Registers the probe installMeter calls to reach an environment's evaluator: it answers the evaluator itself. */
export function registerMeterProbe(env: Environment): void {
  env.registerFunction(`${METER_PROBE}(): dyn`, function (this: unknown) {
    return this;
  });
}

/**
 * Meters an environment's evaluations: its evaluator's `run` charges each operation to the meter of
 * the evaluator running it (those cel-go charges nothing for are free: literals, `&&`, `||`, `?:`).
 * Evaluations outside evaluate() run unmetered. Each environment (a clone too) has its own.
 */
export function installMeter(env: Environment): void {
  const evaluator = env.evaluate(`${METER_PROBE}()`) as MeteredEvaluator | undefined;
  if (!evaluator || typeof evaluator.run !== 'function')
    throw new Error('the CEL engine did not hand over its evaluator');
  evaluator.left = Number.POSITIVE_INFINITY;
  evaluator.run = function (this: MeteredEvaluator, ast, ctx) {
    beforeNode(this, ast);
    const value = (ast as unknown as { evaluate: Evaluate }).evaluate(this, ast, ctx);
    afterNode(this, ast, value);
    return value;
  };
  evaluators.set(env, evaluator);
}

/** What one evaluation answered and what it cost. */
export interface Metered {
  value: unknown;
  /** Cost units spent (past the limit when it was stopped). */
  cost: number;
}

/**
 * Evaluates a parsed expression of `env` with a meter of its own, stopping past `limit` cost units
 * (CostLimitExceeded). `failed` turns the engine's other errors into the error thrown; either error
 * carries the cost spent as `cost`.
 */
export function evaluateMetered(
  env: Environment,
  parsed: ParseResult,
  variables: Record<string, unknown>,
  limit: number,
  failed: (err: unknown) => unknown,
): Metered {
  const meter = evaluators.get(env);
  if (!meter) throw new Error('the environment is not metered (installMeter)');
  // The environment's evaluator carries the meter of the evaluation running now; one started
  // from inside another (a function call) keeps the outer one's aside and gives it back.
  const outerLeft = meter.left;
  const outerLoops = meter.loops;
  // The engine runs the root operation itself, not through `run`: charged here.
  meter.left = limit - planOf(parsed.ast).units;
  meter.loops = undefined;
  try {
    const value = parsed(variables);
    afterNode(meter, parsed.ast, value);
    // An operator that absorbs errors (`||`, `&&`) may have absorbed the stop.
    if (meter.left < 0) throw new CostLimitExceeded();
    return { value, cost: limit - meter.left };
  } catch (err) {
    const thrown = meter.left < 0 ? new CostLimitExceeded() : failed(err);
    if (thrown && typeof thrown === 'object') Object.assign(thrown, { cost: limit - meter.left });
    throw thrown;
  } finally {
    meter.left = outerLeft;
    meter.loops = outerLoops;
  }
}
