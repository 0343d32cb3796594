/**
 * Type parameters as cel-go's checker handles them (checker/types.go): a free type variable stands
 * for the element type of an empty literal (`[]`, `{}`) until a use binds it. Binding is
 * unification over a substitution mapping: a variable takes the type it is first matched against,
 * and a later use must agree with it. `[].filter(n, n == -1.5)` is a list of double because `_==_`
 * (A, A) binds the element type to double.
 */

/** A type in cel-go's terms: a primitive or object type by name, a list, map, optional, dyn, a type variable. */
export interface Ty {
  k: 'prim' | 'null' | 'type' | 'dyn' | 'var' | 'list' | 'map' | 'opt';
  /** The name of a primitive or object type (`int`, `google.protobuf.Timestamp`), of a variable (`_var0`). */
  name: string;
  p: Ty[];
}

/** Type variable name to the type it stands for. */
export type Mapping = Map<string, Ty>;

export const DYN: Ty = { k: 'dyn', name: 'dyn', p: [] };
export const prim = (name: string): Ty =>
  name === 'null'
    ? { k: 'null', name, p: [] }
    : name === 'type'
      ? { k: 'type', name, p: [] }
      : { k: 'prim', name, p: [] };
export const list = (e: Ty): Ty => ({ k: 'list', name: 'list', p: [e] });
export const map = (k: Ty, v: Ty): Ty => ({ k: 'map', name: 'map', p: [k, v] });
export const opt = (e: Ty): Ty => ({ k: 'opt', name: 'optional_type', p: [e] });

/** Fresh type variables, numbered per checked expression. */
export class TypeVars {
  #next = 0;
  fresh(): Ty {
    return { k: 'var', name: `_var${this.#next++}`, p: [] };
  }
}

/** True when two types are the same, variables by name. */
export function exact(a: Ty, b: Ty): boolean {
  return a.k === b.k && a.name === b.name && a.p.length === b.p.length && a.p.every((t, i) => exact(t, b.p[i]!));
}

/** True when `a` is dyn or a variable where `b` has a type, or they agree (cel-go's isEqualOrLessSpecific). */
function lessSpecific(a: Ty, b: Ty): boolean {
  if (a.k === 'dyn' || a.k === 'var') return true;
  if (b.k === 'dyn' || b.k === 'var' || a.k !== b.k) return false;
  if (a.k === 'list' || a.k === 'map' || a.k === 'opt')
    return a.p.length === b.p.length && a.p.every((t, i) => lessSpecific(t, b.p[i]!));
  return a.k === 'type' || exact(a, b);
}

/** The kinds null is assignable to in cel-go: objects, opaque types, optionals, timestamps, durations. */
const nullable = (t: Ty) => t.k === 'null' || t.k === 'opt' || (t.k === 'prim' && !PRIMITIVES.has(t.name));
const PRIMITIVES = new Set(['bool', 'bytes', 'double', 'int', 'string', 'uint']);

/** True when `t` occurs nowhere in `within`, through the mapping (the occurs check). */
function notReferencedIn(m: Mapping, t: Ty, within: Ty): boolean {
  if (exact(t, within)) return false;
  if (within.k === 'var') {
    const sub = m.get(within.name);
    return sub ? notReferencedIn(m, t, sub) : true;
  }
  return within.p.every((p) => notReferencedIn(m, t, p));
}

/**
 * Whether `t2` (or what it is bound to) may stand for `t1`, binding it when it is free; and whether
 * it was bound already.
 */
function validSubstitution(m: Mapping, t1: Ty, t2: Ty): { valid: boolean; bound: boolean } {
  if (t1.k === t2.k && exact(t1, t2)) return { valid: true, bound: true };
  const sub = m.get(t2.name);
  if (sub) {
    if (t1.k === sub.k && exact(t1, sub)) return { valid: true, bound: true };
    if (!assignableIn(m, t1, sub)) return { valid: false, bound: true };
    const general = lessSpecific(t1, sub) ? t1 : sub;
    if (notReferencedIn(m, t2, general)) m.set(t2.name, general);
    return { valid: true, bound: true };
  }
  if (!notReferencedIn(m, t2, t1)) return { valid: false, bound: false };
  m.set(t2.name, t1);
  return { valid: true, bound: false };
}

/** True when a value of type `t1` may be used where `t2` is expected, binding variables in `m`. */
function assignableIn(m: Mapping, t1: Ty, t2: Ty): boolean {
  if (t2.k === 'var') {
    const { valid, bound } = validSubstitution(m, t1, t2);
    if (valid) return true;
    if (bound) return false;
  }
  if (t1.k === 'var') return validSubstitution(m, t2, t1).valid;
  if (t1.k === 'dyn' || t2.k === 'dyn') return true;
  if (t1.k === 'null') return nullable(t2);
  if (t2.k === 'null') return nullable(t1);
  if (t1.k === 'prim') return t2.k === 'prim' && t1.name === t2.name;
  if (t1.k === 'type') return t2.k === 'type';
  return t1.k === t2.k && t1.p.length === t2.p.length && t1.p.every((t, i) => assignableIn(m, t, t2.p[i]!));
}

/**
 * The mapping after `t1s` were assigned to `t2s` pairwise, or undefined when one is not (the
 * mapping given is left as it was).
 */
export function assignList(m: Mapping, t1s: Ty[], t2s: Ty[]): Mapping | undefined {
  if (t1s.length !== t2s.length) return undefined;
  const copy = new Map(m);
  return t1s.every((t, i) => assignableIn(copy, t, t2s[i]!)) ? copy : undefined;
}

/** `t` with its bound variables replaced by their types; free ones by dyn when `freeToDyn`. */
export function substitute(m: Mapping, t: Ty, freeToDyn: boolean): Ty {
  if (t.k === 'var') {
    const sub = m.get(t.name);
    if (sub) return substitute(m, sub, freeToDyn);
    return freeToDyn ? DYN : t;
  }
  return t.p.length ? { ...t, p: t.p.map((p) => substitute(m, p, freeToDyn)) } : t;
}

/** The more general of two types that unify. */
export const mostGeneral = (a: Ty, b: Ty): Ty => (lessSpecific(a, b) ? a : b);

/** True when a type has a variable in it. */
export const hasVar = (t: Ty): boolean => t.k === 'var' || t.p.some(hasVar);

/** A type as cel-go prints it in its errors: `list(double)`, `map(string, int)`, `null_type`. */
export function formatTy(t: Ty): string {
  if (t.k === 'null') return 'null_type';
  if (t.p.length) return `${t.name}(${t.p.map(formatTy).join(', ')})`;
  return t.name;
}
