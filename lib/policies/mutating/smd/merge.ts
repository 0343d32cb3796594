/**
 * Structured-merge-diff's merge of an apply configuration (the right side) into an object (the
 * left side), as the API server applies a MutatingAdmissionPolicy's ApplyConfiguration: scalars
 * and atomic lists and maps replaced whole, granular maps and structs merged field by field, sets
 * merged by value and keyed lists by their keys (the order of the left side kept, new items where
 * the right side puts them), empty and null kept as the right side writes them.
 */
import { type Atom, type ListAtom, type MapAtom, resolve, type Schema, type TypeRef } from './schema.ts';
import { deduce, isMap, itemKey, scalarError, type SmdError } from './typed.ts';

/** Absent: no value on that side (JSON's missing member, not its null). */
const ABSENT = undefined;

/** The merge's output: the value, or ABSENT to leave the member out. */
type Out = unknown;

interface Walk {
  schema: Schema;
  errors: SmdError[];
}

/** Merges `rhs` into `lhs`, both of type `ref`; errors (with paths) go to `errors`. */
export function mergeValues(schema: Schema, ref: TypeRef, lhs: unknown, rhs: unknown, errors: SmdError[]): unknown {
  return merge({ schema, errors }, ref, lhs, rhs, '');
}

function merge(w: Walk, ref: TypeRef, lhs: unknown, rhs: unknown, path: string): Out {
  const atom = resolve(w.schema, ref);
  if (!atom) {
    w.errors.push({ path, message: `schema error: no type found matching: ${typeof ref === 'string' ? ref : ''}` });
    return ABSENT;
  }
  // Nothing on the right: the left side as it is (it was read as typed before the merge).
  if (rhs === ABSENT) return lhs;
  const left = deduce(atom, lhs);
  const right = deduce(atom, rhs);
  if (lhs !== ABSENT && !sameAtom(left, right)) {
    // Each side read as its own kind; the right side's reading is the output.
    const discarded: Walk = { schema: w.schema, errors: [] };
    handle(discarded, left, lhs, rhs, path);
    w.errors.push(...discarded.errors);
  }
  return handle(w, right, lhs, rhs, path);
}

const sameAtom = (a: Atom, b: Atom) => a.s === b.s && a.l === b.l && a.m === b.m;

/** The right side when it has a value, else the left: a leaf (a scalar, an atomic or empty list or map). */
const leaf = (lhs: unknown, rhs: unknown): Out => (rhs !== ABSENT ? rhs : lhs);

function handle(w: Walk, atom: Atom, lhs: unknown, rhs: unknown, path: string): Out {
  if (atom.m) return mergeMap(w, atom.m, lhs, rhs, path);
  if (atom.s) {
    const left = scalarError(atom.s, lhs, 'lhs: ');
    const right = scalarError(atom.s, rhs, 'rhs: ');
    if (left && right) w.errors.push({ path, message: left }, { path, message: right });
    return leaf(lhs, rhs);
  }
  if (atom.l) return mergeList(w, atom.l, lhs, rhs, path);
  w.errors.push({ path, message: 'schema error: invalid atom: inlined' });
  return ABSENT;
}

function mergeMap(w: Walk, map: MapAtom, lhs: unknown, rhs: unknown, path: string): Out {
  const l = isMap(lhs) ? lhs : undefined;
  const r = isMap(rhs) ? rhs : undefined;
  const empty = (!l || Object.keys(l).length === 0) && (!r || Object.keys(r).length === 0);
  if (map.r === 'atomic' || empty) return leaf(lhs, rhs);
  const out: Record<string, unknown> = {};
  const keys = new Set([...Object.keys(l ?? {}), ...Object.keys(r ?? {})]);
  for (const key of keys) {
    const type = map.f?.[key] ?? map.e ?? {};
    const lv = l && Object.hasOwn(l, key) ? l[key] : ABSENT;
    const rv = r && Object.hasOwn(r, key) ? r[key] : ABSENT;
    const value = merge(w, type, lv, rv, `${path}.${key}`);
    if (value !== ABSENT) out[key] = value;
  }
  return Object.keys(out).length > 0 ? out : ABSENT;
}

/** A list's items by identity; an identity seen twice maps to null (duplicates are not merged). */
function index(w: Walk, list: ListAtom, items: readonly unknown[], duplicates: boolean, path: string) {
  const keys: string[] = [];
  const byKey = new Map<string, unknown>();
  let failed = false;
  for (const [i, item] of items.entries()) {
    const key = itemKey(w.schema, list, item);
    if (key instanceof Error) {
      w.errors.push({ path, message: `element ${i}: ${key.message}` });
      failed = true;
      continue;
    }
    if (byKey.has(key)) {
      if (!duplicates) {
        w.errors.push({ path, message: `duplicate entries for key ${key}` });
        failed = true;
        continue;
      }
      byKey.set(key, null);
    } else byKey.set(key, item);
    keys.push(key);
  }
  return { keys, byKey, failed };
}

// size: one walk of structured-merge-diff's list merge, whose order rules hang together.
function mergeList(w: Walk, list: ListAtom, lhs: unknown, rhs: unknown, path: string): Out {
  const l = Array.isArray(lhs) ? lhs : undefined;
  const r = Array.isArray(rhs) ? rhs : undefined;
  const empty = (!l || l.length === 0) && (!r || r.length === 0);
  if (list.r === 'atomic' || empty) return leaf(lhs, rhs);
  if (!l && !r) return ABSENT;
  const right = index(w, list, r ?? [], false, path);
  const left = index(w, list, l ?? [], true, path);
  if (right.failed || left.failed) return ABSENT;
  // Errors inside items are not reported by the API server's merge: an item's own walk's errors are dropped.
  const item = (key: string, lv: unknown, rv: unknown) =>
    merge({ schema: w.schema, errors: [] }, list.e, lv, rv, path + key);
  const shared = right.keys.filter((k) => left.byKey.has(k));
  let nextShared = shared.shift();
  const merged = new Set<string>();
  const out: unknown[] = [];
  const push = (v: unknown) => {
    if (v !== ABSENT) out.push(v);
  };
  let li = 0;
  let ri = 0;
  while (li < left.keys.length || ri < right.keys.length) {
    if (li < left.keys.length && ri < right.keys.length) {
      const key = left.keys[li] as string;
      if (key === right.keys[ri]) {
        merged.add(key);
        push(item(key, left.byKey.get(key), right.byKey.get(key)));
        li++;
        ri++;
        nextShared = shared.shift();
        continue;
      }
      if (right.byKey.has(key) && nextShared !== undefined && nextShared !== key) {
        li++;
        continue;
      }
    }
    if (li < left.keys.length) {
      const key = left.keys[li] as string;
      if (!right.byKey.has(key)) {
        push(item(key, (l as unknown[])[li], ABSENT));
        li++;
        continue;
      }
      if (merged.has(key)) li++;
    }
    if (ri < right.keys.length) {
      const key = right.keys[ri] as string;
      merged.add(key);
      push(item(key, left.byKey.has(key) ? left.byKey.get(key) : ABSENT, right.byKey.get(key)));
      ri++;
      if (nextShared === key) nextShared = shared.shift();
    }
  }
  return out.length > 0 ? out : ABSENT;
}
