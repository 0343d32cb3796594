/**
 * CEL values as cel-go's runtime compares them: equality across int, uint and double, lists and
 * maps element by element at any depth, values of different types unequal; and the engine's
 * classes of the values it tells apart (uint, duration, type).
 */
import { Optional } from '../engine.ts';
import { compareTime } from '../libraries/time.ts';

/** The engine's evaluator (the parts used here). */
export interface Engine {
  registry: {
    findBinaryOverload(op: string, l: unknown, r: unknown): { handler: (...a: unknown[]) => unknown } | undefined;
  };
  debugType(v: unknown): unknown;
}

/** The engine's class of uint values (its `valueOf()` is the bigint). */
let uintClass: unknown;

/** Tells the semantics which class the engine gives uint values. */
export function useUintClass(ctor: unknown): void {
  uintClass = ctor;
}

/** The engine's classes of durations and types: their names do not survive minifying. */
const engineClasses: { duration?: unknown; type?: unknown } = {};

/** Tells the semantics which classes the engine gives durations and type values. */
export function useEngineClasses(classes: { duration: unknown; type: unknown }): void {
  Object.assign(engineClasses, classes);
}

/** True when `v` is a value of the engine's class of `kind`. */
export function isEngineValue(v: unknown, kind: 'duration' | 'type'): boolean {
  return v !== null && typeof v === 'object' && v.constructor === engineClasses[kind];
}

/** A UTF-16 unit with surrogates moved above U+E000–U+FFFF: the order of the code points they encode. */
const codePointOrder = (unit: number) => (unit >= 0xe000 ? unit - 0x800 : unit >= 0xd800 ? unit + 0x2000 : unit);

/**
 * Two strings compared as Go compares them (cel-go's String.Compare, strings.Compare): by their
 * UTF-8 bytes, which is the order of their code points; UTF-16 units differ from it only where a
 * surrogate (U+10000 and up) meets a unit of U+E000–U+FFFF (`'😀' > '\uffff'`). -1, 0 or 1.
 */
export function compareStrings(a: string, b: string): number {
  if (a === b) return 0;
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a.charCodeAt(i) === b.charCodeAt(i)) i++;
  if (i === n) return a.length < b.length ? -1 : 1;
  return codePointOrder(a.charCodeAt(i)) < codePointOrder(b.charCodeAt(i)) ? -1 : 1;
}

/** The engine's uint of `value` (within uint64). */
export function uintOf(value: bigint): unknown {
  return new (uintClass as new (v: bigint) => unknown)(value);
}

/** True when `v` is a uint value of the engine. */
export function isUint(v: unknown): boolean {
  return v !== null && typeof v === 'object' && v.constructor === uintClass;
}

/** A number's value (bigint for int and uint, number for double); undefined for other values. */
export function numeric(v: unknown): bigint | number | undefined {
  if (typeof v === 'bigint' || typeof v === 'number') return v;
  if (v !== null && typeof v === 'object' && v.constructor === uintClass) return (v as { valueOf(): bigint }).valueOf();
  return undefined;
}

/** A CEL map value: a Map, or a plain object (the engine's string-keyed maps and JSON objects). */
export function isMap(v: unknown): v is Map<unknown, unknown> | Record<string, unknown> {
  if (v instanceof Map) return true;
  return v !== null && typeof v === 'object' && (v.constructor === Object || v.constructor === undefined);
}

function entries(m: Map<unknown, unknown> | Record<string, unknown>): Array<[unknown, unknown]> {
  return m instanceof Map ? [...m] : Object.entries(m);
}

/** The value under `key` in map `m` by CEL key equality (1, 1u and 1.0 are one key); undefined if absent. */
export function lookup(
  ev: Engine,
  m: Map<unknown, unknown> | Record<string, unknown>,
  key: unknown,
): { v: unknown } | undefined {
  if (!(m instanceof Map)) return typeof key === 'string' && Object.hasOwn(m, key) ? { v: m[key] } : undefined;
  if (m.has(key)) return { v: m.get(key) };
  if (numeric(key) === undefined) return undefined;
  for (const [k, v] of m) if (numeric(k) !== undefined && celEquals(ev, k, key)) return { v };
  return undefined;
}

/**
 * CEL equality as cel-go's runtime has it: numbers of any kind compare by value (int and uint to a
 * double through float64), lists and maps element by element, values of different types are unequal.
 */
export function celEquals(ev: Engine, a: unknown, b: unknown): boolean {
  // Two strings, bools, ints or doubles: what most conditions compare.
  if (typeof a !== 'object' && typeof a === typeof b) return a === b;
  // An explicit stack, not recursion: values nested as deep as the API server accepts compare too.
  const pending: Array<[unknown, unknown]> = [[a, b]];
  while (pending.length) {
    const [x, y] = pending.pop()!;
    if (!equalAtTop(ev, x, y, pending)) return false;
  }
  return true;
}

/** Compares two values at their top level: false when they differ; the pairs inside still to compare go to `pending`. */
function equalAtTop(ev: Engine, a: unknown, b: unknown, pending: Array<[unknown, unknown]>): boolean {
  if (a === b) return typeof a !== 'number' || !Number.isNaN(a);
  const x = numeric(a);
  const y = numeric(b);
  if (x !== undefined || y !== undefined) {
    if (x === undefined || y === undefined) return false;
    return typeof x === 'bigint' && typeof y === 'bigint' ? x === y : Number(x) === Number(y);
  }
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return false;
  if (a instanceof Optional || b instanceof Optional) {
    if (!(a instanceof Optional && b instanceof Optional) || a.hasValue() !== b.hasValue()) return false;
    if (a.hasValue()) pending.push([a.value(), b.value()]);
    return true;
  }
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) pending.push([a[i], b[i]]);
    return true;
  }
  if (isMap(a) || isMap(b)) {
    if (!isMap(a) || !isMap(b)) return false;
    const ea = entries(a);
    if (ea.length !== entries(b).length) return false;
    for (const [k, v] of ea) {
      const found = lookup(ev, b, k);
      if (!found) return false;
      pending.push([v, found.v]);
    }
    return true;
  }
  // Timestamps and durations: by their nanoseconds (the engine's compare milliseconds).
  const time = compareTime(a, b);
  if (time !== undefined) return time === 0;
  const type = ev.debugType(a);
  if (type !== ev.debugType(b)) return false;
  const overload = ev.registry.findBinaryOverload('==', type, type);
  return !!overload && overload.handler(a, b, undefined, ev) === true;
}
