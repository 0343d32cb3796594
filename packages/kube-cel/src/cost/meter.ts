/**
 * Cost accounting of an evaluation, as cel-go's runtime cost tracker charges it: one unit per
 * variable or field read and per call, nothing for literals, `&&`, `||` and `?:`, and for the
 * standard functions whose work grows with their arguments a cost by their sizes (a string's code
 * points, a list's elements, a map's entries), with cel-go's factors: a tenth of a unit per
 * character traversed, ten units to create a list, thirty to create a map. Kubernetes library calls
 * are charged by their own estimator (k8s/cost.ts).
 */
import { Environment, type ASTNode } from '../engine.ts';
import { CostLimitExceeded } from '../errors.ts';
import { actualSize, libraryCallCost } from './library-costs.ts';
import { isConstant, isSetMembership, isUnoptimized } from './constants.ts';

export { isConstant, isSetMembership, keepUnoptimized } from './constants.ts';
export { CostLimitExceeded } from '../errors.ts';

export { MATCH_CONDITIONS_COST_BUDGET, PER_CALL_COST_LIMIT } from './limits.ts';

/**
 * What one evaluation has left to spend, carried by its own evaluator (evaluation.ts): every
 * charge goes to the evaluation that made it, so two evaluations never share a meter.
 */
export interface Meter {
  /** Units left; below zero, the evaluation is stopped. */
  left: number;
  /** The quantifier loops under way: their element counts and the tests of their condition made so far. */
  loops?: Map<object, Loop>;
}

/** One run of a quantifier's loop. */
export interface Loop {
  elements?: number;
  tests: number;
}

/** Charges `units` to the evaluation `meter` belongs to (negative: gives back); throws past the limit. */
export function charge(meter: Meter, units: number): void {
  if ((meter.left -= units) < 0) throw new CostLimitExceeded();
}

/** cel-go's common.StringTraversalCostFactor: a tenth of a unit per character. */
const TRAVERSAL = 0.1;
/** cel-go's common.ListCreateBaseCost: what creating a list costs. */
export const LIST_CREATE_COST = 10;
/** cel-go's common.MapCreateBaseCost: what creating a map costs. */
export const MAP_CREATE_COST = 30;

/** A value's size as cel-go's traits.Sizer (plain objects are maps here: their entries). */
function size(v: unknown): number {
  if (v !== null && typeof v === 'object' && (v.constructor === Object || v.constructor === undefined))
    return Object.keys(v).length;
  return actualSize(v);
}

const traversal = (n: number): number => Math.ceil(n * TRAVERSAL);

type Handle = (...args: unknown[]) => unknown;
/** A wrapper of a node's handle that charges what cel-go charges for the call beyond its one unit. */
export type CostWrapper = (orig: Handle) => Handle;

/**
 * What cel-go charges for the operator or call `key` on `args` (its runtime cost estimate), or
 * undefined where it charges one unit (already charged by the meter for the node).
 */
const COSTS: Record<string, (args: unknown[]) => number> = {
  // O(min(m, n)): equality and ordering compare up to the shorter operand.
  '==': ([a, b]) => traversal(Math.min(size(a), size(b))),
  '!=': ([a, b]) => traversal(Math.min(size(a), size(b))),
  // O(m + n): a new string or byte sequence of both.
  '+': ([a, b]) => (typeof a === 'string' || a instanceof Uint8Array ? traversal(size(a) + size(b)) : 1),
  // O(n): membership in a list walks it.
  in: ([_, c]) => (Array.isArray(c) ? size(c) : 1),
  // On strings only: `sets.contains(…)` is another function of the same name.
  'rcall:startsWith': ([s]) => (typeof s === 'string' ? traversal(size(s)) : 1),
  'rcall:endsWith': ([s]) => (typeof s === 'string' ? traversal(size(s)) : 1),
  'rcall:contains': ([s, sub]) => (typeof s === 'string' ? traversal(size(s)) * traversal(size(sub)) : 1),
  'call:bytes': ([s]) => (typeof s === 'string' ? traversal(size(s)) : 1),
  'call:string__k8s': ([b]) => (b instanceof Uint8Array ? traversal(size(b)) : 1),
};
for (const op of ['<', '<=', '>', '>=']) {
  COSTS[op] = ([a, b]) =>
    typeof a === 'string' || a instanceof Uint8Array ? traversal(Math.min(size(a), size(b))) : 1;
}

/** The handle's arguments as the call's operands: binary operators get (l, r), calls an array. */
const operands = (key: string, args: unknown[]): unknown[] =>
  key.includes(':') ? (args[0] as unknown[]) : [args[0], args[1]];

/**
 * The evaluator among a handle's arguments, whose meter the call is charged to: the engine calls a
 * function's handle with (arguments, node, evaluator), a method's with (arguments, evaluator, node),
 * an operator's with (left, right, node, evaluator).
 */
const evaluatorArg = (key: string, args: unknown[]): Meter =>
  (key.startsWith('call:') ? args[2] : key.startsWith('rcall:') ? args[1] : args[3]) as Meter;

/** The cost wrapper of the operator or call `key` (`==`, `rcall:startsWith`), if cel-go sizes it. */
export function costWrapper(key: string): CostWrapper | undefined {
  const cost = COSTS[key];
  if (!cost) return undefined;
  return (orig) =>
    function (this: unknown, ...args: unknown[]) {
      // The meter charged the node's one unit when it ran it.
      charge(evaluatorArg(key, args), cost(operands(key, args)) - 1);
      return orig.apply(this, args);
    };
}

/** A function the environment calls once to reach the evaluator; never written by users. */
export const METER_PROBE = 'cost__meter';

/** Library calls whose cost depends on their result: charged once they have answered. */
const COST_OF_RESULT = new Set(['join', 'slice', 'lists.range', 'reverse']);
/** A function signature's receiver (if any) and name: `string.indexOf__k8s(string): int`. */
const SIGNATURE = /^(?:([\w.<>, ]+)\.)?(\w+)\(([^)]*)\)/;

/** Charges `cost` (a library call's, of which the call's own unit is already charged) to the meter. */
function chargeCall(meter: Meter, cost: number | undefined): void {
  if (cost !== undefined && cost > 1 && (meter.left -= cost - 1) < 0) throw new CostLimitExceeded();
}

/**
 * A handler that charges the library call's cost as cel-go does (libraryCallCost, by the sizes of
 * the arguments): before the call where the cost depends on the arguments only, so the work of a call
 * past the limit is not done; after it where it depends on the result.
 */
function chargedHandler(signature: string, handler: (...args: never[]) => unknown): (...args: never[]) => unknown {
  const m = SIGNATURE.exec(signature);
  if (!m) return handler;
  const receiver = m[1];
  const name = m[2]!.replace(/__(?:k8s|re2)$/, '');
  const namespace = receiver?.startsWith('kubernetes.lib.') ? receiver.slice('kubernetes.lib.'.length) : undefined;
  const fn = namespace ? `${namespace}.${name}` : name;
  const params = m[3]!;
  const overloadId =
    receiver === 'net.CIDR' && name === 'ip'
      ? 'cidr_ip'
      : receiver === 'net.CIDR' && params === 'string'
        ? `cidr_${snake(name)}_string`
        : '';
  const afterward = COST_OF_RESULT.has(fn);
  if (!afterward && libraryCallCost(fn, overloadId, SAMPLE_ARGS, SAMPLE_ARGS) === undefined) return handler;
  // The engine calls a function with the evaluation's evaluator as `this`, which holds its meter.
  return function (this: Meter, ...args: never[]) {
    const costArgs = namespace ? args.slice(1) : args;
    if (!afterward) chargeCall(this, libraryCallCost(fn, overloadId, costArgs));
    const result = handler.apply(this, args);
    if (afterward) chargeCall(this, libraryCallCost(fn, overloadId, costArgs, result));
    return result;
  };
}
/** `containsIP` as `contains_ip`. */
const snake = (name: string): string => name.replace(/[A-Z]+/g, (c) => `_${c.toLowerCase()}`);
/** Arguments that give every costed library function a cost: to find which functions are costed. */
const SAMPLE_ARGS: readonly unknown[] = ['', '', ''];

/** The engine's environment, with every library function charged by its cost. */
export class MeteredEnvironment extends Environment {
  // biome-ignore lint/suspicious/noExplicitAny: one override of every overload of the engine's registerFunction.
  override registerFunction(signature: any, handler?: any, opts?: any): this {
    if (typeof signature === 'string' && typeof handler === 'function') handler = chargedHandler(signature, handler);
    return super.registerFunction(signature, handler, opts);
  }
}

/**
 * What cel-go charges for a test of the loop condition of `all` (`@not_strictly_false(@result)`: a
 * call and a read) and of `exists` (`@not_strictly_false(!@result)`: two calls and a read). cel-go
 * tests it before each step, and once more when it stops early; the engine calls the condition
 * at the same points, so the charge rides on its condition function.
 */
const CONDITION_COST = { all: 2, exists: 3 };
/**
 * What cel-go charges beyond a read for appending one element in `map` and `filter`: the
 * one-element list literal the step builds (ListCreateBaseCost, 10) and the list `+` (1).
 */
const LIST_APPEND_COST = 11;

/** Comprehension arguments the engine keeps (the parts metered). */
interface ComprehensionArgs {
  kind?: string;
  /** The node of the range the comprehension iterates. */
  iterable?: object;
  /** The node of one step. */
  step?: object;
  condition?: (accu: unknown) => boolean;
}

/** A quantifier (`all`, `exists`) as the meter knows it: its comprehension and what a test of its condition costs. */
interface Quantifier {
  args: ComprehensionArgs;
  cost: number;
}
/**
 * The part each node plays in a quantifier: its call (`x.all(…)`), its range or its step. Facts of
 * the parsed expression, the same for every evaluation; what an evaluation counts is in its Meter.
 */
const quantifierParts = new WeakMap<object, { part: 'call' | 'range' | 'step'; quantifier: Quantifier }>();

/** How many elements a comprehension over `value` visits; undefined when not known. */
function elementCount(value: unknown): number | undefined {
  return value !== null && typeof value === 'object' && !(value instanceof Uint8Array) ? size(value) : undefined;
}

/**
 * Notes the parts of an `all` or `exists` comprehension, whose loop condition the meter charges as
 * cel-go does: once before each step, and once more when the loop stops early.
 */
function meterCondition(call: object, args: ComprehensionArgs): void {
  const condition = args.condition;
  if (args.kind !== 'quantifier' || !condition || quantifierParts.has(call)) return;
  // `all` continues while the accumulator is true, `exists` while it is false.
  const quantifier = { args, cost: condition(true) ? CONDITION_COST.all : CONDITION_COST.exists };
  quantifierParts.set(call, { part: 'call', quantifier });
  if (args.iterable) quantifierParts.set(args.iterable, { part: 'range', quantifier });
  if (args.step) quantifierParts.set(args.step, { part: 'step', quantifier });
}

/** Where a node keeps what metering it needs (the same for every evaluation): no lookup per run. */
const PLAN = Symbol('kube-cel meter plan');
/** What metering a node needs: its charge, and its part in a quantifier. */
interface Plan {
  units: number;
  role: ReturnType<typeof quantifierParts.get>;
}
/** A node with its plan, once it has run. */
type Planned = ASTNode & { [PLAN]?: Plan };

/**
 * A node's plan, made when it first runs and kept on it. Its charge and its part are facts of the
 * parsed expression; a quantifier's parts are known once its call has been charged, which runs first.
 */
export function planOf(ast: ASTNode): Plan {
  const planned = ast as Planned;
  let plan = planned[PLAN];
  if (plan === undefined) {
    const units = chargeOf(ast);
    plan = planned[PLAN] = { units, role: quantifierParts.get(ast) };
  }
  return plan;
}

/** Charges what running `ast` costs before it runs: its own charge, and a loop test before a quantifier's step. */
export function beforeNode(meter: Meter, ast: ASTNode): void {
  const plan = planOf(ast);
  if (plan.units && (meter.left -= plan.units) < 0) throw new CostLimitExceeded();
  const role = plan.role;
  if (role?.part !== 'step') return;
  const loop = meter.loops?.get(role.quantifier.args);
  if (loop) loop.tests++;
  charge(meter, role.quantifier.cost);
}

/**
 * What the meter notes once `ast` has run: a quantifier's range starts a loop of that many
 * elements; a quantifier that stopped before its last element tested its condition once more.
 * cel-go tests it once more after a predicate's error too, once the elements are done: that test
 * it never evaluates, and it is free.
 */
export function afterNode(meter: Meter, ast: ASTNode, value: unknown): void {
  const role = planOf(ast).role;
  if (!role) return;
  const args = role.quantifier.args;
  if (role.part === 'range') (meter.loops ??= new Map()).set(args, { tests: 0, elements: elementCount(value) });
  else if (role.part === 'call') {
    const loop = meter.loops?.get(args);
    if (loop?.elements !== undefined && loop.tests < loop.elements) charge(meter, role.quantifier.cost);
  }
}

/** A `?:` the engine made of a macro's predicate: it spans exactly the predicate. */
function isMacroStep(ast: ASTNode): boolean {
  const predicate = (ast.args as ASTNode[])[0];
  return !!predicate && predicate.start === ast.start && predicate.end === ast.end;
}

/**
 * The charge of a macro's step `?:`: for `all` and `exists` (whose branches are the constants
 * true and false) the step's read of the accumulator; `exists_one`, `filter` and `map`'s filter
 * charge their reads in their branches (`accuInc`, `accuPush`, `accuValue`).
 */
function macroStepCost(ast: ASTNode): number {
  return (ast.args as ASTNode[])[1]?.op === 'value' ? 1 : 0;
}

/**
 * Variables read as the index of a `[]` (`object.val[k]`): cel-go resolves an index that is an
 * identifier as a qualifier of the attribute, a read its cost tracker does not see.
 */
const unchargedReads = new WeakSet<object>();

/** Marks the index of `x[i]` free when it is an identifier, as cel-go charges it. */
export function indexReadFree(ast: ASTNode): void {
  const index = (ast.args as ASTNode[])[1];
  if (ast.op === '[]' && index?.op === 'id') unchargedReads.add(index);
}

/**
 * has(x.f): Kubernetes charges the presence test nothing (PresenceTestHasCost(false)), only the reads
 * of its operand, one for the variable and one for each field or index of it. The engine resolves an
 * operand that is a chain of fields from a variable itself, with one read charged: the rest is
 * charged here; any other operand is evaluated, and so charged, node by node.
 */
function presenceTestCharge(ast: ASTNode): number {
  const select = ((ast.args as unknown[])[1] as ASTNode[] | undefined)?.[0];
  if (!select || (select.op !== '.' && select.op !== '.?')) return 0;
  let reads = 1;
  let operand = (select.args as unknown as [ASTNode])[0];
  while (operand.op === '.') {
    reads++;
    operand = (operand.args as unknown as [ASTNode])[0];
  }
  return operand.op === 'id' ? reads - 1 : 0;
}

/** Operations cel-go charges no cost for. */
export const FREE = new Set<string>(['value', '&&', '||', '?:']);
/** Library namespaces: `sets.contains` is one function name for cel-go, not a read of `sets`. */
const NAMESPACES = new Set(['strings', 'sets', 'lists', 'ip', 'format', 'optional', 'math', 'cel']);

/**
 * What cel-go charges for one operation, beside what its library call costs.
 */
export function chargeOf(ast: ASTNode): number {
  const op = ast.op as string;
  if (FREE.has(op)) return op === '?:' && isMacroStep(ast) ? macroStepCost(ast) : 0;
  if (op === 'accuPush') return 1 + LIST_APPEND_COST;
  // A step's false branch, the accumulator read for an element filter or exists_one rejects: free
  // in the programs the API server builds (Kubernetes' cost stability table), one read in programs
  // built without OptOptimize (cel-go's own runtime cost tests).
  if (op === 'accuValue') return isUnoptimized(ast) ? 1 : 0;
  if (op === 'call' && (ast.args as unknown[])[0] === 'has') return presenceTestCharge(ast);
  // `exists_one`'s step adds 1 to the accumulator it reads; its result compares it with 1.
  if (op === 'accuInc') return 2;
  // A macro call: the engine runs the comprehension it expands to without `run`, so it is metered here.
  if (op === 'rcall') {
    const expansion = (ast as { meta?: { alternate?: { op: string; args: unknown } } }).meta?.alternate;
    if (expansion?.op === 'comprehension') {
      const args = expansion.args as ComprehensionArgs;
      meterCondition(ast, args);
      return args.kind === 'quantifier' && !args.condition ? 2 : 1;
    }
  }
  // Every list and map built, literals and the macros' accumulators alike; not constants.
  if (op === 'list') return isConstant(ast) ? 0 : LIST_CREATE_COST;
  if (op === 'map') return isConstant(ast) ? 0 : MAP_CREATE_COST;
  if ((op === 'call' && isConstant(ast)) || isSetMembership(ast)) return 0;
  // A namespace receiver, and a negative literal (one constant for cel-go's parser), are free.
  if (op === 'id' && (NAMESPACES.has(ast.args as string) || unchargedReads.has(ast))) return 0;
  if (op === '-_' && (ast.args as ASTNode).op === 'value') return 0;
  return 1;
}
