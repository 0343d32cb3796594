/**
 * Two-variable comprehensions (cel-go ext.TwoVarComprehensions, in the Kubernetes environment from
 * 1.32): `all`, `exists`, `existsOne`, `transformList`, `transformMap` and `transformMapEntry` with
 * an index (lists) or key (maps) and a value, added to the engine as macros.
 */
import type { CelType, Checker, Environment, Evaluator, Node, Scope } from '../engine.ts';
import { charge, LIST_CREATE_COST, MAP_CREATE_COST, type Meter } from '../cost/meter.ts';
import { goTypeOf } from './runtime-errors.ts';

type Kind = 'all' | 'exists' | 'existsOne' | 'transformList' | 'transformMap' | 'transformMapEntry';

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
 * What cel-go charges for one step of each macro beyond its expressions, as it expands them: `all`
 * and `exists` test the loop condition (`@not_strictly_false(@result)`, and `!@result` for exists)
 * and read the accumulator; `existsOne` reads it (and adds 1 on a match); `transformList` reads it,
 * builds the one-element list and adds it; `transformMap` reads it and the key and inserts;
 * `transformMapEntry` reads it and merges. A step a filter skips reads the accumulator only.
 */
const STEP_COST: Record<Kind, number> = {
  all: 3,
  exists: 4,
  existsOne: 1,
  transformList: 2 + LIST_CREATE_COST,
  transformMap: 3,
  transformMapEntry: 2,
};
/** The loop condition alone, which cel-go tests once more before it stops `all` or `exists` early. */
const CONDITION_COST: Partial<Record<Kind, number>> = { all: 2, exists: 3 };
/** The accumulator a transform starts from: an empty list or map literal. */
const INIT_COST: Partial<Record<Kind, number>> = {
  transformList: LIST_CREATE_COST,
  transformMap: MAP_CREATE_COST,
  transformMapEntry: MAP_CREATE_COST,
};

function identifier(node: Node, parserError: (m: string, at: Node) => Error): string {
  if (node.op === 'id' && typeof node.args === 'string') return node.args;
  throw parserError('argument must be a simple name', node);
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
  const predicate = use.kind.startsWith('transform') ? use.filter : use.body;
  if (predicate) {
    const t = chk.check(predicate, use.inner);
    if (t.name !== 'bool' && t.name !== 'dyn')
      throw chk.createError('invalid_predicate', `${use.kind}() predicate must be bool, got '${t.name}'`, predicate);
  }
  if (use.kind === 'transformList') return chk.registry.getListType(chk.check(use.body, use.inner));
  if (use.kind === 'transformMap') return chk.registry.getMapType(firstType, chk.check(use.body, use.inner));
  if (use.kind === 'transformMapEntry') {
    const entry = chk.check(use.body, use.inner);
    if (entry.kind !== 'map' && entry.kind !== 'dyn')
      throw chk.createError(
        'invalid_transform',
        `transformMapEntry() transform must be a map, got '${entry.name}'`,
        use.body,
      );
    return entry.kind === 'map' ? entry : chk.registry.getMapType(entry, entry);
  }
  return chk.getType('bool');
}

/** The (index or key, value) pairs of a range. */
function entriesOf(ev: Evaluator & Meter, use: Use, range: unknown): Array<[unknown, unknown]> {
  if (Array.isArray(range)) return range.map((v, i) => [BigInt(i), v]);
  if (range instanceof Map) return [...range];
  if (range && typeof range === 'object' && (range.constructor === Object || range.constructor === undefined))
    return Object.entries(range);
  // cel-go's words for a range that is neither a list nor a map (interpreter/interpretable.go).
  throw ev.createError(
    'invalid_comprehension_range',
    `unsupported comprehension range type: ${goTypeOf(String(ev.debugType(range)))}`,
    use.receiver,
  );
}

/**
 * `all` and `exists` as cel-go runs them: `accu && pred` (or `||`) step by step, stopping once the
 * answer is known; an error is the answer only when no step decided it.
 */
function quantify(ev: Evaluator & Meter, use: Use, entries: Array<[unknown, unknown]>): boolean {
  const decisive = use.kind === 'exists';
  let error: unknown;
  for (const [i, [key, value]] of entries.entries()) {
    charge(ev, STEP_COST[use.kind]);
    const got = ev.tryEval(use.body, bind(ev, use, key, value));
    if (got === decisive) {
      if (i < entries.length - 1) charge(ev, CONDITION_COST[use.kind]!);
      return decisive;
    }
    if (got !== !decisive) error ??= got instanceof Error ? got : predicateError(ev, use, got);
  }
  if (error) throw error;
  return !decisive;
}

function predicateError(ev: Evaluator & Meter, use: Use, got: unknown): Error {
  return ev.createError('invalid_predicate', `${use.kind}() predicate must be bool, got '${typeof got}'`, use.body);
}

function bind(ev: Evaluator & Meter, use: Use, key: unknown, value: unknown): Scope {
  use.outer!.setIterValue(key, ev);
  return use.inner!.setIterValue(value, ev);
}

function passes(ev: Evaluator & Meter, use: Use, predicate: Node, scope: Scope): boolean {
  const got = ev.run(predicate, scope);
  if (typeof got !== 'boolean') throw predicateError(ev, use, got);
  return got;
}

function evaluate(ev: Evaluator & Meter, use: Use, scope: unknown): unknown {
  const entries = entriesOf(ev, use, ev.run(use.receiver, scope));
  use.outer!.reuse(scope);
  if (use.kind === 'all' || use.kind === 'exists') return quantify(ev, use, entries);
  if (use.kind === 'existsOne') {
    let count = 0;
    for (const [key, value] of entries) {
      charge(ev, STEP_COST[use.kind]);
      if (passes(ev, use, use.body, bind(ev, use, key, value))) {
        charge(ev, 1);
        count++;
      }
    }
    // The result, `@result == 1`, is a call beside the read.
    charge(ev, 1);
    return count === 1;
  }
  return transform(ev, use, entries);
}

/** `transformList`, `transformMap` and `transformMapEntry`, each step charged as cel-go does. */
function transform(ev: Evaluator & Meter, use: Use, entries: Array<[unknown, unknown]>): unknown {
  charge(ev, INIT_COST[use.kind]!);
  const list: unknown[] = [];
  const map = new Map<unknown, unknown>();
  for (const [key, value] of entries) {
    const inner = bind(ev, use, key, value);
    if (use.filter && !passes(ev, use, use.filter, inner)) {
      charge(ev, 1);
      continue;
    }
    const out = ev.run(use.body, inner);
    charge(ev, STEP_COST[use.kind]);
    if (use.kind === 'transformList') list.push(out);
    else if (use.kind === 'transformMap') map.set(key, out);
    else mergeEntry(ev, use, map, out);
  }
  return use.kind === 'transformList' ? list : mapValue(map);
}

/** Adds a `transformMapEntry` step's map to the result: cel-go refuses a key already there. */
function mergeEntry(ev: Evaluator & Meter, use: Use, into: Map<unknown, unknown>, entry: unknown): void {
  const pairs =
    entry instanceof Map
      ? [...entry]
      : entry && typeof entry === 'object' && !Array.isArray(entry)
        ? Object.entries(entry)
        : undefined;
  if (!pairs) throw ev.createError('invalid_transform', 'transformMapEntry() transform must be a map', use.body);
  for (const [k, v] of pairs) {
    if (into.has(k)) throw ev.createError('duplicate_key', `insert failed: key ${String(k)} already exists`, use.body);
    into.set(k, v);
  }
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
      // cel-go's parser's words, at the argument it refuses.
      const fail = (m: string, at: Node) =>
        Object.assign(new Error(m), { range: { start: (at as { start?: number }).start ?? 0 } });
      const first = identifier(args[0]!, fail);
      const second = identifier(args[1]!, fail);
      if (first === second) throw fail(`${kind}() second variable name must be different from the first`, args[1]!);
      const use: Use = withFilter
        ? { kind, node: ast, receiver, first, second, filter: args[2], body: args[3]! }
        : { kind, node: ast, receiver, first, second, body: args[2]! };
      return {
        async: false,
        use,
        typeCheck: (chk: Checker, _m: unknown, scope: Scope) => typeCheck(chk, use, scope),
        evaluate: (ev: Evaluator & Meter, _m: unknown, scope: unknown) => evaluate(ev, use, scope),
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
  e.registerFunction('list.transformMapEntry(ast, ast, ast): map<dyn, dyn>', macro('transformMapEntry', false));
  e.registerFunction('list.transformMapEntry(ast, ast, ast, ast): map<dyn, dyn>', macro('transformMapEntry', true));
}
