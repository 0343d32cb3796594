/**
 * Two-variable comprehensions (cel-go ext.TwoVarComprehensions, in the Kubernetes environment from
 * 1.32): `all`, `exists`, `existsOne`, `transformList` and `transformMap` with an index (lists) or
 * key (maps) and a value, added to the engine as macros.
 */
import type { Environment } from '@marcbachmann/cel-js';
import { charge, LIST_CREATE_COST } from './meter.ts';

/** The engine's type of a checked expression (the parts used here). */
interface CelType {
  kind: string;
  name: string;
  keyType?: CelType;
  valueType?: CelType;
}
/** The engine's scope of variables: a comprehension forks it with its own. */
interface Scope {
  forkWithVariable(name: string, type: CelType): Scope;
  reuse(parent: unknown): Scope;
  setIterValue(value: unknown, ev: unknown): Scope;
}
/** The engine's checker (the parts used here). */
interface Checker {
  check(node: unknown, scope: Scope): CelType;
  createError(code: string, message: string, node: unknown): Error;
  getType(name: string): CelType;
  registry: { getListType(t: CelType): CelType; getMapType(k: CelType, v: CelType): CelType };
}
/** The engine's evaluator (the parts used here). */
interface Evaluator {
  run(node: unknown, scope: unknown): unknown;
  tryEval(node: unknown, scope: unknown): unknown;
  createError(code: string, message: string, node: unknown): Error;
}
/** A node of the parsed expression (the parts used here). */
interface Node {
  op: string;
  args: unknown;
}

type Kind = 'all' | 'exists' | 'existsOne' | 'transformList' | 'transformMap';

/** One use of a macro: its parts, and the scopes the checker made for it. */
interface Use {
  kind: Kind;
  node: Node;
  receiver: Node;
  first: string;
  second: string;
  filter?: Node;
  body: Node;
  outer?: Scope;
  inner?: Scope;
}

/**
 * What cel-go charges for one step of each macro beyond its expressions: reads of the accumulator,
 * the loop condition of `all` and `exists` (a call), `existsOne`'s `+ 1`, the one-element list and
 * the `+` of `transformList`, the insertion of `transformMap`.
 */
const STEP_COST: Record<Kind, number> = {
  all: 3,
  exists: 3,
  existsOne: 2,
  transformList: 2 + LIST_CREATE_COST,
  transformMap: 2,
};

function identifier(kind: Kind, node: Node, checkerError: (m: string) => Error): string {
  if (node.op === 'id' && typeof node.args === 'string') return node.args;
  throw checkerError(`${kind}() variable name must be a simple identifier`);
}

/** The types of the two variables over a range of type `range`. */
function variableTypes(chk: Checker, use: Use, range: CelType): [CelType, CelType] {
  if (range.kind === 'list') return [chk.getType('int'), range.valueType!];
  if (range.kind === 'map') return [range.keyType!, range.valueType!];
  if (range.kind === 'dyn') return [range, range];
  throw chk.createError(
    'invalid_comprehension_range',
    `expression of type '${range.name}' cannot be the range of a comprehension (must be list, map, or dynamic)`,
    use.receiver,
  );
}

function typeCheck(chk: Checker, use: Use, scope: Scope): CelType {
  const range = chk.check(use.receiver, scope);
  const [firstType, valueType] = variableTypes(chk, use, range);
  use.outer = scope.forkWithVariable(use.first, firstType);
  use.inner = use.outer.forkWithVariable(use.second, valueType);
  const predicate = use.kind === 'transformList' || use.kind === 'transformMap' ? use.filter : use.body;
  if (predicate) {
    const t = chk.check(predicate, use.inner);
    if (t.name !== 'bool' && t.name !== 'dyn')
      throw chk.createError('invalid_predicate', `${use.kind}() predicate must be bool, got '${t.name}'`, predicate);
  }
  if (use.kind === 'transformList') return chk.registry.getListType(chk.check(use.body, use.inner));
  if (use.kind === 'transformMap') return chk.registry.getMapType(firstType, chk.check(use.body, use.inner));
  return chk.getType('bool');
}

/** The (index or key, value) pairs of a range. */
function entriesOf(ev: Evaluator, use: Use, range: unknown): Array<[unknown, unknown]> {
  if (Array.isArray(range)) return range.map((v, i) => [BigInt(i), v]);
  if (range instanceof Map) return [...range];
  if (range && typeof range === 'object' && (range.constructor === Object || range.constructor === undefined))
    return Object.entries(range);
  throw ev.createError(
    'invalid_comprehension_range',
    'expression cannot be the range of a comprehension (must be list, map, or dynamic)',
    use.receiver,
  );
}

/**
 * `all` and `exists` as cel-go runs them: `accu && pred` (or `||`) step by step, stopping once the
 * answer is known; an error is the answer only when no step decided it.
 */
function quantify(ev: Evaluator, use: Use, entries: Array<[unknown, unknown]>): boolean {
  const decisive = use.kind === 'exists';
  let error: unknown;
  for (const [key, value] of entries) {
    charge(STEP_COST[use.kind]);
    const got = ev.tryEval(use.body, bind(ev, use, key, value));
    if (got === decisive) return decisive;
    if (got !== !decisive) error ??= got instanceof Error ? got : predicateError(ev, use, got);
  }
  if (error) throw error;
  return !decisive;
}

function predicateError(ev: Evaluator, use: Use, got: unknown): Error {
  return ev.createError('invalid_predicate', `${use.kind}() predicate must be bool, got '${typeof got}'`, use.body);
}

function bind(ev: Evaluator, use: Use, key: unknown, value: unknown): Scope {
  use.outer!.setIterValue(key, ev);
  return use.inner!.setIterValue(value, ev);
}

function passes(ev: Evaluator, use: Use, predicate: Node, scope: Scope): boolean {
  const got = ev.run(predicate, scope);
  if (typeof got !== 'boolean') throw predicateError(ev, use, got);
  return got;
}

function evaluate(ev: Evaluator, use: Use, scope: unknown): unknown {
  const entries = entriesOf(ev, use, ev.run(use.receiver, scope));
  use.outer!.reuse(scope);
  if (use.kind === 'all' || use.kind === 'exists') return quantify(ev, use, entries);
  if (use.kind === 'existsOne') {
    let count = 0;
    for (const [key, value] of entries) {
      charge(STEP_COST[use.kind]);
      if (passes(ev, use, use.body, bind(ev, use, key, value))) count++;
    }
    return count === 1;
  }
  const list: unknown[] = [];
  const map = new Map<unknown, unknown>();
  for (const [key, value] of entries) {
    charge(STEP_COST[use.kind]);
    const inner = bind(ev, use, key, value);
    if (use.filter && !passes(ev, use, use.filter, inner)) continue;
    const out = ev.run(use.body, inner);
    if (use.kind === 'transformList') list.push(out);
    else map.set(key, out);
  }
  return use.kind === 'transformList' ? list : mapValue(map);
}

/** A map with string keys as the plain object the engine gives string-keyed maps; others as a Map. */
function mapValue(map: Map<unknown, unknown>): unknown {
  if (![...map.keys()].every((k) => typeof k === 'string')) return map;
  const out: Record<string, unknown> = {};
  for (const [k, v] of map) Object.defineProperty(out, k as string, { value: v, enumerable: true, writable: true });
  return out;
}

/** Registers the two-variable macros on `env`, each step charged as cel-go charges it. */
export function registerTwoVariableComprehensions(env: Environment): void {
  const macro =
    (kind: Kind, withFilter: boolean) =>
    ({ args, receiver, ast }: { args: Node[]; receiver: Node; ast: Node }) => {
      const fail = (m: string) =>
        Object.assign(new Error(m), { range: { start: (ast as { start?: number }).start ?? 0 } });
      const first = identifier(kind, args[0]!, fail);
      const second = identifier(kind, args[1]!, fail);
      if (first === second) throw fail(`${kind}() second variable name must be different from the first`);
      const use: Use = withFilter
        ? { kind, node: ast, receiver, first, second, filter: args[2], body: args[3]! }
        : { kind, node: ast, receiver, first, second, body: args[2]! };
      return {
        async: false,
        typeCheck: (chk: Checker, _m: unknown, scope: Scope) => typeCheck(chk, use, scope),
        evaluate: (ev: Evaluator, _m: unknown, scope: unknown) => evaluate(ev, use, scope),
      };
    };
  const e = env as unknown as { registerFunction(signature: string, handler: unknown): unknown };
  e.registerFunction('list.all(ast, ast, ast): bool', macro('all', false));
  e.registerFunction('list.exists(ast, ast, ast): bool', macro('exists', false));
  e.registerFunction('list.existsOne(ast, ast, ast): bool', macro('existsOne', false));
  e.registerFunction('list.transformList(ast, ast, ast): list<dyn>', macro('transformList', false));
  e.registerFunction('list.transformList(ast, ast, ast, ast): list<dyn>', macro('transformList', true));
  e.registerFunction('list.transformMap(ast, ast, ast): map<dyn, dyn>', macro('transformMap', false));
  e.registerFunction('list.transformMap(ast, ast, ast, ast): map<dyn, dyn>', macro('transformMap', true));
}
