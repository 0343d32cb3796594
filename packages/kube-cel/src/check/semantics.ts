/**
 * cel-go's semantics where the engine's differ, set on each node of a parsed expression before it
 * is checked: aggregate literals joined as cel-go's checker joins them (`[x, 1]` with `x` dyn is a
 * list of dyn), heterogeneous equality and membership (`dyn(1) == 1.0`, `dyn(3u) in [3]`), numeric
 * comparisons across int, uint and double as cel-go makes them (through float64), list indexes of
 * uint and whole doubles, and int64 overflow of `-`, `/` and `%`.
 */

import { celEquals, compareStrings, isMap, lookup, numeric } from '../evaluate/equality.ts';
import { celGoType } from './checker.ts';
import { entryType, listWithEntries, optionalEntries } from '../evaluate/entries.ts';
import { costWrapper, indexReadFree, isConstant, isSetMembership } from '../cost/meter.ts';
import { adoptHas, isOptionalNone } from '../evaluate/optionals.ts';
import { isFormatCall } from './literal-validator.ts';
import { mapLiteral } from './map-literal.ts';
import { boolOfString, conversion, listIndex, runtimeType } from '../evaluate/conversions.ts';
import { adoptTimestampSum, TIME_WRAPPERS } from '../libraries/time.ts';

import type { CelType, Check, Engine, Handle, Node } from './semantics-types.ts';

/** The largest and smallest int64. */
const INT64_MAX = 2n ** 63n - 1n;
const INT64_MIN = -(2n ** 63n);

/** A comparison of two numbers of different kinds as cel-go makes it; undefined when not such a pair. */
function crossCompare(op: string, a: unknown, b: unknown): boolean | undefined {
  const x = numeric(a);
  const y = numeric(b);
  if (
    x === undefined ||
    y === undefined ||
    (typeof x === typeof y && (typeof a === 'object') === (typeof b === 'object'))
  )
    return undefined;
  // int and uint compare exactly; either with a double, through float64 (Go's conversion).
  const [l, r] = typeof x === 'bigint' && typeof y === 'bigint' ? [x, y] : [Number(x), Number(y)];
  if (op === '<') return l < r;
  if (op === '<=') return l <= r;
  if (op === '>') return l > r;
  return l >= r;
}

function overflow(ev: Engine, node: Node): Error {
  return ev.createError('numeric_overflow', 'integer overflow', node);
}

/** The handle of each operator, wrapped: the engine sets a node's handle when it checks the node. */
const WRAPPERS: Record<string, (orig: Handle) => Handle> = {
  '==': () => (l, r, _n, ev) => celEquals(ev as Engine, l, r),
  '!=': () => (l, r, _n, ev) => !celEquals(ev as Engine, l, r),
  in: (orig) => (l, r, n, ev) => {
    if (Array.isArray(r)) return r.some((v) => celEquals(ev as Engine, l, v));
    if (isMap(r)) return lookup(ev as Engine, r, l) !== undefined;
    return orig(l, r, n, ev);
  },
  '[]': (orig) => (l, r, n, ev) => {
    if (Array.isArray(l)) return orig(l, listIndex(ev as Engine, l, r, n), n, ev);
    if (l instanceof Map && numeric(r) !== undefined) {
      const found = lookup(ev as Engine, l, r);
      if (found) return found.v;
    }
    // A map of string keys has no key of another type (`{'1': x}[1]` is no such key, as in cel-go).
    if (isMap(l) && !(l instanceof Map) && typeof r !== 'string')
      throw (ev as Engine).createError('no_such_key', `no such key: ${String(r)}`, n);
    return orig(l, r, n, ev);
  },
  // A field of a list: cel-go qualifies the list with the field's name as an index it cannot be.
  '.': (orig) => (l, r, n, ev) => {
    if (Array.isArray(l))
      throw (ev as Engine).createError('invalid_index', "unsupported index type 'string' in list", n);
    return orig(l, r, n, ev);
  },
  '-_': (orig) => (v, n, ev) => {
    const r = orig(v, n, ev);
    if (typeof r === 'bigint' && r > INT64_MAX) throw overflow(ev as Engine, n as Node);
    return r;
  },
  '/': (orig) => (l, r, n, ev) => {
    if (l === INT64_MIN && r === -1n) throw overflow(ev as Engine, n as Node);
    return orig(l, r, n, ev);
  },
  '%': (orig) => (l, r, n, ev) => {
    if (l === INT64_MIN && r === -1n) throw overflow(ev as Engine, n as Node);
    return orig(l, r, n, ev);
  },
};
WRAPPERS['call:int'] = conversion('int');
WRAPPERS['call:uint'] = conversion('uint');
WRAPPERS['call:bool'] = boolOfString;

WRAPPERS['call:type'] = runtimeType;

/** Each ordering operator's answer from a comparison's -1, 0 or 1. */
const ORDERED: Record<string, (c: number) => boolean> = {
  '<': (c) => c < 0,
  '<=': (c) => c <= 0,
  '>': (c) => c > 0,
  '>=': (c) => c >= 0,
};
for (const op of ['<', '<=', '>', '>=']) {
  WRAPPERS[op] = (orig) => (l, r, n, ev) => {
    // cel-go's Compare of a NaN double is an error, not false (common/types/double.go).
    if (Number.isNaN(l) || Number.isNaN(r))
      throw (ev as Engine).createError('nan_comparison', 'NaN values cannot be ordered', n);
    // Strings in Go's order, by UTF-8 bytes (cel-go's String.Compare), not by UTF-16 units.
    if (typeof l === 'string' && typeof r === 'string') return ORDERED[op]!(compareStrings(l, r));
    return crossCompare(op, l, r) ?? orig(l, r, n, ev);
  };
}

/** Literals written as elements of another literal: their free element types stay free until the outer one. */
const nestedLiterals = new WeakSet<object>();

/**
 * The type an element brings to its literal's join: an empty literal and `optional.none()` with a
 * free type parameter (the engine's `list<T>`), which the other elements bind, as cel-go's checker does.
 */
function elementType(chk: Engine, part: unknown, scope: unknown): CelType {
  const type = chk.check(part, scope);
  if (!isOptionalNone(part)) return type;
  return (chk.registry as unknown as { getOptionalType(t: CelType): CelType }).getOptionalType(
    (chk.getType('list<T>') as CelType & { valueType: CelType }).valueType,
  );
}

/** True for the kinds null is assignable to in cel-go (objects, opaque types, optionals, timestamps). */
const nullable = (t: CelType & { kind?: string }) => t.kind === 'message' || t.kind === 'optional';

/**
 * The checker of a list or map literal as cel-go's with HomogeneousAggregateLiterals: elements of
 * one type, where a dyn element joins any type (and makes the literal's element type dyn), an empty
 * literal or `optional.none()` takes the type the others give (`[[], [1]]` is a list of lists of
 * int), and null joins an object or optional type (as dyn). Type parameters nothing bound are dyn once the
 * outermost literal is checked.
 */
function joinedLiteral(original: Check, exempt: boolean): Check {
  return (chk, node, scope) => {
    const items = node.args as unknown[];
    const free = (t: CelType): CelType => {
      const type = t as CelType & { templated?: (r: unknown, b: { get(): CelType }) => CelType };
      return nestedLiterals.has(node) || !type.templated ? t : type.templated(chk.registry, anyDyn(chk));
    };
    if (items.length === 0) return free(original(chk, node, scope));
    // An optional entry (`[?x]`, `{?'k': x}`) gives the literal its optional's value type.
    const entries = optionalEntries(node);
    const typeOf = (part: unknown, i: number, values: boolean): CelType => {
      const t = elementType(chk, part, scope);
      return values && entries?.has(i) ? (entryType(chk, t as never, part) as unknown as CelType) : t;
    };
    const join = (parts: unknown[], code: string, values = true): CelType => {
      let joined = typeOf(parts[0], 0, values);
      for (const [i, part] of parts.entries()) {
        if (i === 0) continue;
        const t = typeOf(part, i, values);
        // null joins an object or optional type as a dyn element: the engine's typed lists refuse a
        // null element when indexed, where cel-go's give it.
        const nullJoin = (t.name === 'null' && nullable(joined)) || (joined.name === 'null' && nullable(t));
        const u = joined.unify(chk.registry, t) ?? (nullJoin ? chk.getType('dyn') : null);
        if (!u && !exempt)
          throw chk.createError(
            code,
            `expected type '${celGoType(joined as never)}' but found '${celGoType(t as never)}'`,
            part,
          );
        joined = u ?? chk.getType('dyn');
      }
      return joined;
    };
    if (node.op === 'list') return free(chk.registry.getListType(join(items, 'heterogeneous_list_element')));
    const pairs = items as Array<[unknown, unknown]>;
    const key = join(
      pairs.map((p) => p[0]),
      'heterogeneous_map_key',
      false,
    );
    return free(
      chk.registry.getMapType(
        key,
        join(
          pairs.map((p) => p[1]),
          'heterogeneous_map_value',
        ),
      ),
    );
  };
}

function isNode(v: unknown): v is Node {
  return !!v && typeof v === 'object' && typeof (v as Node).op === 'string' && 'meta' in (v as object);
}

/** The key of a node's cost wrapper: its operator, or `rcall:name` and `call:name` for calls. */
function costKey(node: Node): string {
  return node.op === 'rcall' || node.op === 'call' ? `${node.op}:${(node.args as unknown[])[0]}` : node.op;
}

/**
 * Sets how a list or map literal is checked and how a map literal is built. `exempt`: the literal is
 * inside a `format` call, which cel-go's string format validator exempts from the homogeneous
 * literal check (its mixed elements join as dyn: `'%s %d'.format(['a', 1])`).
 */
function adoptLiteral(node: Node, exempt: boolean): void {
  const meta = node.meta;
  const elements = node.op === 'list' ? (node.args as unknown[]) : (node.args as unknown[][]).flat();
  for (const e of elements) if (isNode(e) && (e.op === 'list' || e.op === 'map')) nestedLiterals.add(e);
  meta.check = joinedLiteral(meta.check, exempt);
  if (node.op === 'map') meta.evaluate = mapLiteral;
  else if (optionalEntries(node)) meta.evaluate = listWithEntries as never;
}

/** Wraps the handle the engine sets on `node` when it checks it. */
function wrapHandle(node: Node, wraps: Array<(orig: Handle) => Handle>): void {
  const meta = node.meta;
  const check = meta.check;
  meta.check = (chk, n, scope) => {
    const type = check(chk, n, scope);
    if (n.handle) for (const wrap of wraps) n.handle = wrap(n.handle);
    return type;
  };
}

/** Binds every type parameter to dyn (`{ get }` is all the engine asks of a binding). */
function anyDyn(chk: Engine): { get(): CelType } {
  return { get: () => chk.getType('dyn') };
}

/**
 * A call's result type with the type parameters nothing bound made dyn, as cel-go's checker does
 * (`object.items.max()` is a dyn, which `> 1` accepts; the engine leaves it an unbound `A`).
 */
function boundResult(node: Node): void {
  const check = node.meta.check;
  node.meta.check = (chk, n, scope) => {
    const type = check(chk, n, scope) as CelType & {
      hasPlaceholderType?: boolean;
      templated?: (registry: unknown, binding: { get(): CelType }) => CelType;
    };
    return type.hasPlaceholderType && type.templated ? type.templated(chk.registry, anyDyn(chk)) : type;
  };
}

/** A call node once checked: the overloads of its name and its arguments' checked types. */
interface CheckedCall extends Node {
  candidates: { findFunction(args: unknown[], receiver: unknown): { handler: Handle } | undefined };
  argTypes: unknown[];
}

/**
 * A `sets.` call bound to the overload the checker chose. The engine chooses again at run time,
 * by the lists' first elements, when an element is dyn, and finds none for `[1, dyn(2u)]` and
 * `[2, 2.0]`, which cel-go types list(dyn) and compares by value.
 */
function checkedSetsCall(node: Node): void {
  const receiver = (node.args as unknown[])[1] as Node & { checkedType?: unknown };
  if (receiver?.op !== 'id' || receiver.args !== 'sets') return;
  const check = node.meta.check;
  node.meta.check = (chk, n, scope) => {
    const type = check(chk, n, scope);
    const call = n as CheckedCall;
    const handler = call.candidates.findFunction(call.argTypes, receiver.checkedType)?.handler;
    const dynamic = n.handle;
    // Values that are no lists (a dyn variable holding a string) still find no overload.
    if (handler && dynamic)
      n.handle = (args, ev, ast) =>
        (args as unknown[]).slice(1).every(Array.isArray)
          ? handler.apply(ev, args as unknown[])
          : dynamic(args, ev, ast);
    return type;
  };
}

/** A checked type as the engine gives it on a node (the parts used here). */
type Checked = CelType & { valueType?: CelType };

/**
 * `indexOf` and `lastIndexOf` of a list, refused as cel-go's checker refuses them when the list's
 * element type and the argument's are known and differ (`[1, 2].indexOf('a')`): the overload of
 * dyn lists the library adds for run time must not let them through.
 */
function typedListSearch(node: Node): void {
  const check = node.meta.check;
  node.meta.check = (chk, n, scope) => {
    const type = check(chk, n, scope);
    const [name, receiver, args] = n.args as [string, { checkedType?: Checked }, Array<{ checkedType?: Checked }>];
    const list = receiver.checkedType;
    const arg = args[0]?.checkedType;
    const element = list?.valueType;
    if (list?.name.startsWith('list<') && element && arg && element.name !== 'dyn' && arg.name !== 'dyn') {
      if (!element.unify(chk.registry, arg))
        throw chk.createError(
          'no_matching_overload',
          `found no matching overload for 'list.${name.replace(/__k8s$/, '')}(${arg.name})'`,
          n,
        );
    }
    return type;
  };
}

/**
 * `namespaceObject` as the API server gives webhooks: null, which the engine's variable of a message
 * type refuses to read.
 */
function nullableNamespace(node: Node): void {
  const evaluate = node.meta.evaluate;
  node.meta.evaluate = (ev, n, scope) =>
    (scope as { getValue(k: string): unknown }).getValue('namespaceObject') === null ? null : evaluate(ev, n, scope);
}

/**
 * `x in []`: cel-go's planner (cel.OptOptimize) replaces membership in a constant empty list by
 * false, so `x` is never evaluated (`1 / 0 in []` is false, not an error) and nothing is charged.
 */
function inEmptyList(node: Node): void {
  const list = (node.args as unknown as Node[])[1];
  if (list?.op === 'list' && (list.args as unknown[]).length === 0) node.meta.evaluate = () => false;
}

/** Adds the direct child nodes of `node` to `set`. */
function markChildren(node: Node, set: WeakSet<object>): void {
  for (const part of [node.args].flat(2)) if (isNode(part)) set.add(part);
}

/**
 * Sets cel-go's semantics and costs on every node of a parsed expression (before it is checked): the
 * handle of an operator does what cel-go's does and charges what cel-go's cost tracker charges.
 */
export function adoptCelGoSemantics(root: Node): void {
  const stack: unknown[] = [root];
  const seen = new WeakSet<object>();
  // Nodes inside a `format` call: pushed with this marker after them.
  const inFormat = new WeakSet<object>();
  while (stack.length) {
    const item = stack.pop();
    if (Array.isArray(item)) {
      stack.push(...item);
      continue;
    }
    if (!isNode(item) || seen.has(item)) continue;
    seen.add(item);
    if (isFormatCall(item) || inFormat.has(item)) markChildren(item, inFormat);
    if (item.op === 'list' || item.op === 'map') adoptLiteral(item, inFormat.has(item));
    adoptTimestampSum(item as never);
    adoptHas(item as never);
    if (item.op === 'call' || item.op === 'rcall') boundResult(item);
    if (item.op === 'rcall') checkedSetsCall(item);
    if (item.op === 'rcall' && /^(?:last)?[iI]ndexOf__k8s$/.test((item.args as unknown[])[0] as string))
      typedListSearch(item);
    if (item.op === 'id' && item.args === 'namespaceObject') nullableNamespace(item);
    if (item.op === 'in') inEmptyList(item);
    if (item.op === '[]') indexReadFree(item as never);
    const key = costKey(item);
    // What the optimized program folds away costs nothing: no cost wrapper.
    const folded = (item.op === 'call' && isConstant(item as never)) || isSetMembership(item as never);
    const wraps = [WRAPPERS[key], TIME_WRAPPERS[key], folded ? undefined : costWrapper(key)].filter(
      (w) => w !== undefined,
    );
    if (wraps.length) wrapHandle(item, wraps);
    stack.push(item.args);
  }
}
