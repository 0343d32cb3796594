import type { Operation as PatchOperation } from 'fast-json-patch';
import { exactIntegerCopy, setMember, stringifyJson } from '../json.ts';
// fast-json-patch's ES module build, imported by path so that bundles keep only the functions used
// (its CommonJS main is one object holding all of them). That build ships no declaration file of
// its own: its functions are typed as the package declares them.
// @ts-expect-error TS7016, no declaration file for the ES module build
import * as untyped from 'fast-json-patch/module/core.mjs';

const applyPatch: typeof import('fast-json-patch').applyPatch = untyped.applyPatch;
const JsonPatchError: typeof import('fast-json-patch').JsonPatchError = untyped.JsonPatchError;

export type { PatchOperation };

type Json = Record<string, unknown> | unknown[];

/** One object or array being compared: its keys, and how far the comparison has got. */
interface Frame {
  mirror: Json;
  obj: Json;
  /** The JSON Pointer of the pair, written when an operation first needs it (see pathOf). */
  path: string | undefined;
  /** The pair holding this one, and the key or index this one is at there. */
  parent: Frame | undefined;
  key: string | number;
  /** True when both are arrays (a frame never pairs an array with an object). */
  array: boolean;
  /** The keys of `mirror` (objects only: an array's are its indices). */
  oldKeys: string[];
  /** The next key (objects) or index (arrays) of `mirror` to compare, last to first. */
  next: number;
  deleted: boolean;
}

/** A JSON Pointer reference token (RFC 6901): `~` and `/` escaped. */
function escapeToken(key: string): string {
  if (!key.includes('/') && !key.includes('~')) return key;
  return key.replace(/~/g, '~0').replace(/\//g, '~1');
}

/** The reference token of an object key or array index. */
const token = (key: string | number) => (typeof key === 'number' ? String(key) : escapeToken(key));

const hasOwn = (value: object, key: string) => Object.hasOwn(value, key);

/** Stands for a member JSON.stringify leaves out of an object (undefined, a function, a symbol). */
const ABSENT = Symbol('absent');

/**
 * A value as JSON.stringify takes it, one level deep: `toJSON` applied, boxed primitives
 * unboxed, NaN and the infinities as null; ABSENT for what it leaves out of an object (in an
 * array, it writes null instead). What lies deeper is walked by the diff or written by
 * JSON.stringify itself, so a patch always carries a value and the original's shape.
 */
function asJson(value: unknown, key: string): unknown {
  if ((typeof value === 'object' && value !== null) || typeof value === 'function') {
    const toJSON = (value as { toJSON?: unknown }).toJSON;
    if (typeof toJSON === 'function') value = (toJSON as (key: string) => unknown).call(value, key);
    if (
      typeof value === 'object' &&
      value !== null &&
      !Array.isArray(value) &&
      Object.getPrototypeOf(value) !== Object.prototype
    ) {
      if (value instanceof Number || value instanceof String || value instanceof Boolean) value = value.valueOf();
    }
  }
  switch (typeof value) {
    case 'number':
      return Number.isFinite(value) ? value : null;
    case 'undefined':
    case 'function':
    case 'symbol':
      return ABSENT;
    default:
      return value;
  }
}

/** An array element as JSON.stringify writes it: what it leaves out of an object is null. */
function elementAsJson(value: unknown, index: number): unknown {
  const json = asJson(value, String(index));
  return json === ABSENT ? null : json;
}

const isContainer = (value: unknown): value is Json => typeof value === 'object' && value !== null;

/**
 * The JSONPatch that turns `original` (a JSON value, as parsed) into `mutated` as JSON.stringify
 * would write it (empty when nothing changed): the same operations, in the same order, as
 * fast-json-patch's `compare` for JSON values, but walked with an explicit stack, so objects
 * nested thousands of levels deep do not overflow the call stack. What JSON leaves out of an
 * object (undefined, functions, symbols) is absent, array holes and such values are null, and
 * `toJSON` is applied: every operation carries a value and applies to the original, in order
 * (an array grows only at its end).
 */
export function diffPatch(original: object, mutated: object): PatchOperation[] {
  const patches: PatchOperation[] = [];
  const root = asJson(mutated, '');
  if (!isContainer(root) || Array.isArray(root) !== Array.isArray(original)) {
    return [{ op: 'replace', path: '', value: root === ABSENT ? null : root }];
  }
  const stack: Frame[] = [];
  const enter = (mirror: Json, obj: Json, parent: Frame | undefined, key: string | number) => {
    if (obj === mirror) return;
    const array = Array.isArray(mirror);
    const oldKeys = array ? NO_KEYS : Object.keys(mirror);
    const path = parent ? undefined : '';
    stack.push({
      mirror,
      obj,
      path,
      parent,
      key,
      array,
      oldKeys,
      next: (array ? (mirror as unknown[]).length : oldKeys.length) - 1,
      deleted: false,
    });
  };
  enter(original as Json, root, undefined, '');
  while (stack.length > 0) {
    const frame = stack[stack.length - 1]!;
    const { mirror, obj } = frame;
    if (frame.next >= 0) {
      // Old keys last to first, as compare walks them; a nested pair is finished before the next key.
      // An array's index becomes a string only for an operation or a nested pair.
      let key: string | number;
      let oldVal: unknown;
      let newVal: unknown;
      let present: boolean;
      if (frame.array) {
        const index = frame.next--;
        key = index;
        oldVal = (mirror as unknown[])[index];
        present = index < (obj as unknown[]).length;
        if (present) {
          newVal = (obj as unknown[])[index];
          if (newVal !== oldVal) newVal = elementAsJson(newVal, index);
        }
      } else {
        key = frame.oldKeys[frame.next--]!;
        oldVal = (mirror as Record<string, unknown>)[key];
        present = hasOwn(obj, key);
        if (present) {
          newVal = (obj as Record<string, unknown>)[key];
          if (newVal !== oldVal) {
            newVal = asJson(newVal, key);
            present = newVal !== ABSENT;
          }
        }
      }
      if (!present) {
        patches.push({ op: 'remove', path: `${pathOf(frame)}/${token(key)}` });
        frame.deleted = true;
      } else if (newVal !== oldVal) {
        if (isContainer(oldVal) && isContainer(newVal) && Array.isArray(oldVal) === Array.isArray(newVal)) {
          enter(oldVal, newVal, frame, key);
        } else {
          patches.push({ op: 'replace', path: `${pathOf(frame)}/${token(key)}`, value: newVal });
        }
      }
      continue;
    }
    stack.pop();
    addNew(frame, patches);
  }
  return patches;
}

/**
 * The additions of a compared pair, once its old keys are walked: an array's new elements,
 * appended in order at the end (a JSON array has no holes to add into), or an object's new keys.
 */
function addNew(frame: Frame, patches: PatchOperation[]): void {
  const { mirror, obj } = frame;
  if (frame.array) {
    const old = mirror as unknown[];
    const now = obj as unknown[];
    for (let i = old.length; i < now.length; i++)
      patches.push({ op: 'add', path: `${pathOf(frame)}/${i}`, value: elementAsJson(now[i], i) });
    return;
  }
  const newKeys = Object.keys(obj);
  if (!frame.deleted && newKeys.length === frame.oldKeys.length) return;
  for (const key of newKeys) {
    if (hasOwn(mirror, key)) continue;
    const value = asJson((obj as Record<string, unknown>)[key], key);
    if (value !== ABSENT) patches.push({ op: 'add', path: `${pathOf(frame)}/${escapeToken(key)}`, value });
  }
}

/**
 * The JSON Pointer of a compared pair, written from its parent's when first asked for: most
 * pairs hold no change and never need one. A loop, not recursion, for pairs nested at any depth.
 */
function pathOf(frame: Frame): string {
  if (frame.path !== undefined) return frame.path;
  const unwritten: Frame[] = [];
  let at: Frame = frame;
  while (at.path === undefined) {
    unwritten.push(at);
    at = at.parent!;
  }
  let path = at.path;
  for (let i = unwritten.length - 1; i >= 0; i--) {
    const f = unwritten[i]!;
    path = f.path = `${path}/${token(f.key)}`;
  }
  return path;
}

/** The keys of an array frame: none are listed, its indices are counted. */
const NO_KEYS: string[] = [];

/**
 * Checks that operations are a well-formed JSONPatch that applies to `original`;
 * returns a one-line reason when they are not. The API server fails the whole request
 * on a patch that does not apply, so it is checked here first.
 */
export function checkPatch(original: object, operations: unknown): string | undefined {
  if (!Array.isArray(operations)) return 'patch must be an array of JSONPatch operations';
  const error = validateCopies(operations as PatchOperation[], original);
  if (!error) return undefined;
  const op = error.index === undefined ? undefined : (operations[error.index] as Partial<PatchOperation> | undefined);
  const what = op && typeof op === 'object' ? ` (${String(op.op)} ${JSON.stringify(op.path)})` : '';
  const missing = error.name === 'OPERATION_PATH_UNRESOLVABLE' && op ? unreachable(original, op.path) : undefined;
  return (
    `invalid patch operation ${error.index ?? '?'}${what}: ${missing ?? error.message.split('\n', 1)[0]} ` +
    `[${error.name}]`
  );
}

/**
 * Why a JSON Pointer leads nowhere in `document`: the first part of it that is missing, or
 * that holds no object or array to go into; undefined when it can be followed to its parent.
 */
function unreachable(document: unknown, pointer: unknown): string | undefined {
  if (typeof pointer !== 'string') return undefined;
  const tokens = pointer.split('/').slice(1);
  let at: unknown = document;
  let path = '';
  for (const [i, raw] of tokens.entries()) {
    const key = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (typeof at !== 'object' || at === null) {
      const type = Array.isArray(at) ? 'an array' : at === null ? 'null' : `a ${typeof at}`;
      return `${path || 'the object'} is ${type}, so it has no ${JSON.stringify(key)} to go into`;
    }
    if (i === tokens.length - 1) return `the object has no ${pointer} (its parent ${path || '/'} exists)`;
    if (!Object.hasOwn(at, key)) return `the object has no ${path}/${raw}, so ${pointer} cannot be reached`;
    at = (at as Record<string, unknown>)[key];
    path += `/${raw}`;
  }
  return undefined;
}

/**
 * Member names an object inherits (`__proto__`, `constructor`, `toString`, ...), and `prototype`:
 * fast-json-patch reads `obj[key]` to tell whether a member exists, so for these it finds the
 * inherited one, and it refuses `__proto__` and `constructor/prototype` outright. JSON allows
 * them as member names and the API server's json-patch treats them as any other.
 */
const INHERITED = new Set([...Object.getOwnPropertyNames(Object.prototype), 'prototype']);
const MAY_NAME_INHERITED = new RegExp([...INHERITED].join('|'));

/** Put before an inherited name to make it a name like any other (a NUL and a per-process nonce: no review has it). */
const RENAMED = `\u0000klw-member:${Math.random().toString(36).slice(2, 12)}:`;

/** JSON.parse reviver giving every member with an inherited name a name of its own (see INHERITED). */
function renameInherited(_key: string, value: unknown): unknown {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return value;
  const keys = Object.keys(value);
  if (!keys.some((k) => INHERITED.has(k))) return value;
  const out: Record<string, unknown> = {};
  for (const k of keys) out[INHERITED.has(k) ? RENAMED + k : k] = (value as Record<string, unknown>)[k];
  return out;
}

/** A JSON Pointer with its inherited names renamed as renameInherited renames members. */
function renamePointer(pointer: unknown): unknown {
  if (typeof pointer !== 'string') return pointer;
  return pointer
    .split('/')
    .map((t) => (INHERITED.has(t) ? RENAMED + t : t))
    .join('/');
}

/** What fast-json-patch reports of an operation that does not apply. */
type PatchError = InstanceType<typeof JsonPatchError>;

/**
 * fast-json-patch's `validate` (a trial on copies of both): copied through JSON text, values
 * holding a bigint (an int64 beyond ±2^53) with such integers as strings of their digits, so
 * that a `test` operation compares them exactly, as the API server's json-patch compares
 * numbers (as written), and not rounded to the nearest double. Members named `__proto__`,
 * `constructor` and the like are renamed in the copies and in the pointers, so the trial
 * treats them as the API server does: as members like any other, never the prototype.
 */
function validateCopies(operations: PatchOperation[], original: object): PatchError | undefined {
  let document: string;
  let sequence: string;
  try {
    document = JSON.stringify(original);
    sequence = JSON.stringify(operations);
  } catch (err) {
    if (!(err instanceof TypeError) || !/BigInt/i.test(err.message)) throw err;
    document = JSON.stringify(exactIntegerCopy(original));
    sequence = JSON.stringify(exactIntegerCopy(operations));
  }
  if (!MAY_NAME_INHERITED.test(document) && !MAY_NAME_INHERITED.test(sequence)) {
    return trial(JSON.parse(sequence), JSON.parse(document));
  }
  const ops = (JSON.parse(sequence, renameInherited) as unknown[]).map((op) => {
    if (typeof op !== 'object' || op === null || Array.isArray(op)) return op;
    const { path, from } = op as { path?: unknown; from?: unknown };
    const renamed: Record<string, unknown> = { ...op };
    if (path !== undefined) renamed.path = renamePointer(path);
    if (from !== undefined) renamed.from = renamePointer(from);
    return renamed;
  });
  return trial(ops as PatchOperation[], JSON.parse(document, renameInherited));
}

/** What fast-json-patch's `validate` does once it has its copies: apply, checking each operation. */
function trial(operations: PatchOperation[], document: object): PatchError | undefined {
  try {
    applyPatch(document, operations, true);
    return undefined;
  } catch (err) {
    if (err instanceof JsonPatchError) return err;
    throw err;
  }
}

/** A copy of a JSON value (bigints kept) with members renamed by `rename`; iterative, for any depth. */
function renamedCopy(value: unknown, rename: (key: string) => string): unknown {
  if (typeof value !== 'object' || value === null) return value;
  const root: Record<string, unknown> | unknown[] = Array.isArray(value) ? [] : {};
  const stack: Array<[object, Record<string, unknown> | unknown[]]> = [[value, root]];
  while (stack.length > 0) {
    const [source, target] = stack.pop()!;
    const array = Array.isArray(source);
    for (const key of Object.keys(source)) {
      let v = (source as Record<string, unknown>)[key];
      if (typeof v === 'object' && v !== null) {
        const copy = Array.isArray(v) ? [] : {};
        stack.push([v, copy]);
        v = copy;
      }
      if (array) (target as unknown[])[Number(key)] = v;
      else setMember(target as Record<string, unknown>, rename(key), v);
    }
  }
  return root;
}

const toRenamed = (key: string) => (INHERITED.has(key) ? RENAMED + key : key);
const fromRenamed = (key: string) => (key.startsWith(RENAMED) ? key.slice(RENAMED.length) : key);

/**
 * Applies a JSONPatch to a copy of `document` as the API server's json-patch does (the test kit
 * reads mutating answers with it): members named `__proto__`, `constructor` and the like are
 * members like any other, and bigints are kept. Throws fast-json-patch's error when an
 * operation does not apply.
 */
export function applyPatchCopy(document: unknown, operations: readonly PatchOperation[]): unknown {
  const ops = operations.map((op) => {
    const renamed = { ...op, path: renamePointer(op.path) } as PatchOperation & { from?: unknown; value?: unknown };
    if ('from' in op) renamed.from = renamePointer(op.from);
    if ('value' in op) renamed.value = renamedCopy(op.value, toRenamed);
    return renamed as PatchOperation;
  });
  const applied = applyPatch(renamedCopy(document, toRenamed), ops, true, true).newDocument;
  return renamedCopy(applied, fromRenamed);
}

/** Base64 of the JSON text of a patch, as `AdmissionResponse.patch` carries it. */
export function encodePatch(operations: readonly PatchOperation[]): string {
  return Buffer.from(stringifyJson(operations), 'utf8').toString('base64');
}
