/**
 * One evaluation, metered on its own. The engine evaluates every operation through its evaluator's
 * `run` and calls functions with the evaluator as `this`; each evaluation gets an evaluator of its
 * own (derived from the environment's) that carries its Meter, so that whatever runs at the same
 * time — an evaluation started from inside another one's function call, another awaiting — is
 * charged to itself. Nothing here is shared between evaluations.
 */
import type { ASTNode, Environment, ParseResult } from '../engine.ts';
import { afterNode, beforeNode, chargeOf, CostLimitExceeded, METER_PROBE, type Meter } from './meter.ts';

/** The engine's evaluator, with the meter of the evaluation it serves. */
interface MeteredEvaluator extends Meter {
  run(ast: ASTNode, ctx: unknown): unknown;
  debugTypeDeep(value: unknown): unknown;
}
/** A node's own `evaluate`, as the engine calls it. */
type Evaluate = (ev: unknown, ast: ASTNode, ctx: unknown) => unknown;
/** The engine's scope of variables (the part used here). */
interface Context {
  getValue(key: unknown): unknown;
}

/** The key, no expression can name, under which an evaluation's variables carry its evaluator. */
const EVALUATION = Symbol('kube-cel evaluation');

/** Each environment's own evaluator, once metered (installMeter); evaluations derive theirs from it. */
const evaluators = new WeakMap<Environment, MeteredEvaluator>();
/** Expressions whose root hands the evaluation's evaluator down (rootHandsOver). */
const handingOver = new WeakSet<object>();

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
  // The engine's own method reads a private field, which an evaluator derived from this one lacks.
  const debugTypeDeep = evaluator.debugTypeDeep;
  evaluator.debugTypeDeep = (value) => debugTypeDeep.call(evaluator, value);
  evaluators.set(env, evaluator);
}

/**
 * Makes the root of a parsed expression run with the evaluator its variables carry. The engine
 * calls the root with the environment's evaluator, and resolves a node's `evaluate` on first use by
 * assigning it: the assigned one is kept aside and called with the evaluation's own evaluator.
 */
function rootHandsOver(ast: ASTNode): void {
  if (handingOver.has(ast)) return;
  handingOver.add(ast);
  const resolve = (Object.getPrototypeOf(ast) as { evaluate: Evaluate }).evaluate;
  let resolved: Evaluate | undefined;
  const evaluate = (ev: unknown, node: ASTNode, ctx: unknown): unknown => {
    const own = (ctx as Context).getValue(EVALUATION) ?? ev;
    return (resolved ?? resolve).call(node, own, node, ctx);
  };
  Object.defineProperty(ast, 'evaluate', {
    configurable: true,
    get: () => evaluate,
    set: (fn: Evaluate) => {
      resolved = fn;
    },
  });
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
  const shared = evaluators.get(env);
  if (!shared) throw new Error('the environment is not metered (installMeter)');
  const own = Object.create(shared) as MeteredEvaluator;
  // The engine runs the root operation itself, not through `run`: charged here.
  own.left = limit - chargeOf(parsed.ast);
  own.loops = undefined;
  rootHandsOver(parsed.ast);
  const spent = () => limit - own.left;
  try {
    const value = parsed({ ...variables, [EVALUATION]: own });
    afterNode(own, parsed.ast, value);
    // An operator that absorbs errors (`||`, `&&`) may have absorbed the stop.
    if (own.left < 0) throw new CostLimitExceeded();
    return { value, cost: spent() };
  } catch (err) {
    const thrown = own.left < 0 ? new CostLimitExceeded() : failed(err);
    if (thrown && typeof thrown === 'object') Object.assign(thrown, { cost: spent() });
    throw thrown;
  }
}
