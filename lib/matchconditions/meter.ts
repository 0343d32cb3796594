/**
 * Cost accounting of an evaluation, as cel-go's runtime cost tracker charges it: one unit per
 * variable or field read and per call, nothing for literals, `&&`, `||` and `?:`, and for the
 * standard functions whose work grows with their arguments a cost by their sizes (a string's code
 * points, a list's elements, a map's entries), with cel-go's factors: a tenth of a unit per
 * character traversed, ten units to create a list, thirty to create a map. Kubernetes library calls
 * are charged by their own estimator (k8s/cost.ts).
 */
import { actualSize } from './k8s/cost.ts';

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

/** An evaluation stopped at the cost limit, with cel-go's message. */
export class CostLimitExceeded extends Error {
  override name = 'CostLimitExceeded';
  constructor() {
    super('operation cancelled: actual cost limit exceeded');
  }
}

/** Units left to the evaluation under way; evaluation is synchronous, so one meter serves all. */
export const meter = { left: Number.POSITIVE_INFINITY };

/** Charges `units` to the evaluation under way (negative: gives back); throws past the limit. */
export function charge(units: number): void {
  if ((meter.left -= units) < 0) throw new CostLimitExceeded();
}

/** cel-go's common.StringTraversalCostFactor: a tenth of a unit per character. */
const TRAVERSAL = 0.1;
/** cel-go's common.ListCreateBaseCost and MapCreateBaseCost: what creating a list or a map costs. */
export const LIST_CREATE_COST = 10;
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
  'rcall:startsWith': ([s]) => traversal(size(s)),
  'rcall:endsWith': ([s]) => traversal(size(s)),
  'rcall:contains': ([s, sub]) => traversal(size(s)) * traversal(size(sub)),
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

/** The cost wrapper of the operator or call `key` (`==`, `rcall:startsWith`), if cel-go sizes it. */
export function costWrapper(key: string): CostWrapper | undefined {
  const cost = COSTS[key];
  if (!cost) return undefined;
  return (orig) =>
    function (this: unknown, ...args: unknown[]) {
      // The meter charged the node's one unit when it ran it.
      charge(cost(operands(key, args)) - 1);
      return orig.apply(this, args);
    };
}

/** What creating a list or map literal costs beyond the one unit the meter charges for the node. */
export function literalCost(op: string): number {
  return op === 'list' ? LIST_CREATE_COST - 1 : op === 'map' ? MAP_CREATE_COST - 1 : 0;
}
