/**
 * Evaluation of expression trees (tree.ts) over the values admission variables hold (plain objects
 * as maps, arrays as lists, strings, bools, ints as bigint, null), charged as the metered engine
 * charges the same expression. It answers only where the answer is plainly the engine's: any error,
 * any operand of another kind (a double, mixed types, a map of the engine's own), a value that is
 * not a bool, string or int, or a cost near the limit gives up (undefined), and the caller evaluates
 * the expression with the engine instead, whose answer, error and cost are then the ones given.
 * Evaluations are pure (trees read no authorizer), so giving up midway leaves nothing behind.
 */
import { codePointLength } from '../libraries/go.ts';
import type { Tree } from './tree.ts';

/** Thrown to give up; caught by runTree only. */
const GIVE_UP: unique symbol = Symbol('give up');

/** What cel-go charges for a test of the loop condition of `all` (2) and `exists` (3): see cost/meter.ts. */
const CONDITION_COST = { all: 2, exists: 3 } as const;

/** One evaluation: its variables, the macro variables in scope, and the cost so far. */
interface Run {
  variables: Record<string, unknown>;
  scope: Map<string, unknown>;
  cost: number;
}

/** True for a value the tree evaluator reads as a CEL map: a plain object. */
function isPlainMap(v: unknown): v is Record<string, unknown> {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return false;
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

/** The largest and smallest int64: a bigint outside them is left to the engine. */
const INT64_MAX = 2n ** 63n - 1n;
const INT64_MIN = -(2n ** 63n);

/** A value the tree evaluator knows: null, a bool, a string, an int64, a list or a plain map. */
function known(v: unknown): unknown {
  if (
    v === null ||
    typeof v === 'boolean' ||
    typeof v === 'string' ||
    (typeof v === 'bigint' && v >= INT64_MIN && v <= INT64_MAX) ||
    Array.isArray(v) ||
    isPlainMap(v)
  )
    return v;
  throw GIVE_UP;
}

/** The size cel-go's cost of an operand counts: a string's code points, a list's elements, a map's entries. */
function size(v: unknown): number {
  if (typeof v === 'string') return codePointLength(v);
  if (Array.isArray(v)) return v.length;
  if (isPlainMap(v)) return Object.keys(v).length;
  return 1;
}

/** cel-go's string traversal cost: a tenth of a unit per element, rounded up. */
const traversal = (n: number): number => Math.ceil(n * 0.1);

/** A bool, or give up. */
function bool(v: unknown): boolean {
  if (typeof v !== 'boolean') throw GIVE_UP;
  return v;
}

/** Equality of two scalars of the same kind (null, bool, string, int); anything else gives up. */
function equals(a: unknown, b: unknown): boolean {
  const kind = typeof a;
  if (kind !== typeof b || (a === null) !== (b === null)) throw GIVE_UP;
  if (a !== null && kind !== 'boolean' && kind !== 'string' && kind !== 'bigint') throw GIVE_UP;
  return a === b;
}

/** `key in container`: a list's elements by equality, a map's string keys. */
function member(run: Run, key: unknown, container: unknown): boolean {
  if (Array.isArray(container)) {
    run.cost += container.length;
    let found = false;
    for (const v of container) if (equals(key, v)) found = true;
    return found;
  }
  if (!isPlainMap(container) || typeof key !== 'string') throw GIVE_UP;
  run.cost += 1;
  return Object.hasOwn(container, key);
}

/** A map's field, present; anything else gives up (the engine words the error). */
function field(map: unknown, name: string): unknown {
  if (!isPlainMap(map) || !Object.hasOwn(map, name)) throw GIVE_UP;
  return known(map[name]);
}

/** An int comparison; other kinds (strings compare by UTF-8 bytes, numbers across kinds) give up. */
function compare(kind: string, a: unknown, b: unknown): boolean {
  if (typeof a !== 'bigint' || typeof b !== 'bigint') throw GIVE_UP;
  return kind === '<' ? a < b : kind === '<=' ? a <= b : kind === '>' ? a > b : a >= b;
}

/** `all` or `exists` over a list's elements or a map's keys, charged as the engine's quantifiers. */
function quantify(run: Run, kind: 'all' | 'exists', range: Tree, name: string, predicate: Tree): boolean {
  run.cost += 1;
  const over = evaluate(run, range);
  const items = Array.isArray(over) ? over : isPlainMap(over) ? Object.keys(over) : undefined;
  if (!items) throw GIVE_UP;
  const test = CONDITION_COST[kind];
  const outer = run.scope.get(name);
  const had = run.scope.has(name);
  let visited = 0;
  let result = kind === 'all';
  for (const item of items) {
    visited++;
    // The loop condition's test, and the step's read of the accumulator.
    run.cost += test + 1;
    run.scope.set(name, known(item));
    if (bool(evaluate(run, predicate)) !== (kind === 'all')) {
      result = !result;
      break;
    }
  }
  // A loop stopped before its last element tests its condition once more.
  if (visited < items.length) run.cost += test;
  if (had) run.scope.set(name, outer);
  else run.scope.delete(name);
  return result;
}

/** The value of a tree node, its cost added to the run's. */
function evaluate(run: Run, t: Tree): unknown {
  switch (t[0]) {
    case 'lit':
      return t[1];
    case 'int':
      return BigInt(t[1]);
    case 'id': {
      run.cost += 1;
      if (run.scope.has(t[1])) return run.scope.get(t[1]);
      if (!Object.hasOwn(run.variables, t[1])) throw GIVE_UP;
      return known(run.variables[t[1]]);
    }
    case '.': {
      const of = evaluate(run, t[1]);
      run.cost += 1;
      return field(of, t[2]);
    }
    case 'has': {
      const of = evaluate(run, t[1]);
      if (!isPlainMap(of)) throw GIVE_UP;
      return Object.hasOwn(of, t[2]);
    }
    case '!':
      run.cost += 1;
      return !bool(evaluate(run, t[1]));
    case '&&':
      return bool(evaluate(run, t[1])) ? bool(evaluate(run, t[2])) : false;
    case '||':
      return bool(evaluate(run, t[1])) ? true : bool(evaluate(run, t[2]));
    case 'all':
    case 'exists':
      return quantify(run, t[0], t[1], t[2], t[3]);
    default:
      return operation(run, t);
  }
}

/** The value of an operator or function node: its operands first, then its own cost. */
function operation(run: Run, t: Tree): unknown {
  const a = evaluate(run, t[1] as Tree);
  if (t[0] === 'string') {
    run.cost += 1;
    if (typeof a === 'bigint' || typeof a === 'string') return String(a);
    throw GIVE_UP;
  }
  const b = evaluate(run, t[2] as Tree);
  switch (t[0]) {
    case '==':
    case '!=': {
      const same = equals(a, b);
      run.cost += traversal(Math.min(size(a), size(b)));
      return t[0] === '==' ? same : !same;
    }
    case 'in':
      return member(run, a, b);
    case '+':
      if (typeof a !== 'string' || typeof b !== 'string') throw GIVE_UP;
      run.cost += traversal(size(a) + size(b));
      return a + b;
    case 'startsWith':
    case 'endsWith':
      if (typeof a !== 'string' || typeof b !== 'string') throw GIVE_UP;
      run.cost += traversal(size(a));
      return t[0] === 'startsWith' ? a.startsWith(b) : a.endsWith(b);
    default:
      run.cost += 1;
      return compare(t[0], a, b);
  }
}

/**
 * Evaluates a tree with `variables` under `limit` cost units: its value (a bool, string or int) and
 * cost, or undefined where the engine is to answer (see the module's comment). One unit short of
 * the limit gives up too: the engine charges an equality's unit before giving it back for empty
 * operands, and stops there when that unit is past the limit.
 */
export function runTree(
  tree: Tree,
  variables: Record<string, unknown>,
  limit: number,
): { value: unknown; cost: number } | undefined {
  const run: Run = { variables, scope: new Map(), cost: 0 };
  let value: unknown;
  try {
    value = evaluate(run, tree);
  } catch (err) {
    if (err === GIVE_UP || err instanceof RangeError) return undefined;
    throw err;
  }
  if (run.cost + 1 > limit) return undefined;
  if (typeof value !== 'boolean' && typeof value !== 'string' && typeof value !== 'bigint') return undefined;
  return { value, cost: run.cost };
}
