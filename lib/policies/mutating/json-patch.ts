import { WebhookError } from '../../errors.ts';
/**
 * JSON Patch applied as the API server applies a MutatingAdmissionPolicy's JSONPatch mutation
 * (evanphx/json-patch v4, as k8s.io/apiserver uses it): a failed `test` leaves the object as it
 * was, `replace` of a missing object member adds it, negative array indices count from the end,
 * and each other failure answered with the library's text after `JSON Patch: `.
 */

/** One operation as a JSONPatch expression builds it; `value` undefined when the expression set none. */
export interface PatchOp {
  op: string;
  path: string;
  from?: string;
  value?: unknown;
}

/** The patched document; `tested` false when a `test` operation failed (the document is then the original). */
export type JsonPatchResult = { document: unknown; tested: boolean } | { error: string };

class PatchError extends WebhookError {
  readonly code = 'PATCH_FAILED';
  constructor(
    message: string,
    readonly testFailed = false,
  ) {
    super(message);
  }
}

type Container = Record<string, unknown> | unknown[];

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const decodeKey = (k: string) => k.replace(/~1/g, '/').replace(/~0/g, '~');

/** Go's strconv.Atoi: an optionally signed run of decimal digits, or the error it gives. */
function atoi(key: string): number | PatchError {
  if (!/^[+-]?\d+$/.test(key)) return new PatchError(`strconv.Atoi: parsing ${JSON.stringify(key)}: invalid syntax`);
  const n = Number(key);
  if (!Number.isSafeInteger(n))
    return new PatchError(`strconv.Atoi: parsing ${JSON.stringify(key)}: value out of range`);
  return n;
}

const invalidIndex = (idx: number) =>
  new PatchError(`Unable to access invalid index: ${idx}: invalid index referenced`);

function get(c: Container, key: string): unknown {
  if (!Array.isArray(c)) return Object.hasOwn(c, key) ? c[key] : undefined;
  let idx = atoi(key);
  if (idx instanceof PatchError) throw idx;
  if (idx < 0) {
    if (idx < -c.length) throw invalidIndex(idx);
    idx += c.length;
  }
  if (idx >= c.length) throw invalidIndex(idx);
  return c[idx];
}

function set(c: Container, key: string, value: unknown): void {
  if (!Array.isArray(c)) {
    c[key] = value;
    return;
  }
  let idx = atoi(key);
  if (idx instanceof PatchError) throw idx;
  if (idx < 0) {
    if (idx < -c.length) throw invalidIndex(idx);
    idx += c.length;
  }
  c[idx] = value;
}

function add(c: Container, key: string, value: unknown): void {
  if (!Array.isArray(c)) {
    c[key] = value;
    return;
  }
  if (key === '-') {
    c.push(value);
    return;
  }
  let idx = atoi(key);
  if (idx instanceof PatchError) throw new PatchError(`value was not a proper array index: '${key}': ${idx.message}`);
  if (idx >= c.length + 1) throw invalidIndex(idx);
  if (idx < 0) {
    if (idx < -(c.length + 1)) throw invalidIndex(idx);
    idx += c.length + 1;
  }
  c.splice(idx, 0, value);
}

function remove(c: Container, key: string): void {
  if (!Array.isArray(c)) {
    if (!Object.hasOwn(c, key)) throw new PatchError(`Unable to remove nonexistent key: ${key}: missing value`);
    delete c[key];
    return;
  }
  let idx = atoi(key);
  if (idx instanceof PatchError) throw idx;
  if (idx >= c.length) throw invalidIndex(idx);
  if (idx < 0) {
    if (idx < -c.length) throw invalidIndex(idx);
    idx += c.length;
  }
  c.splice(idx, 1);
}

/** The container a path's last token is in, and that token; undefined when the path does not lead to one. */
function find(doc: Container, path: string): [Container, string] | undefined {
  const parts = path.split('/');
  if (parts.length < 2) return undefined;
  let here: Container = doc;
  for (const part of parts.slice(1, -1)) {
    let next: unknown;
    try {
      next = get(here, decodeKey(part));
    } catch {
      return undefined;
    }
    if (!Array.isArray(next) && !isObject(next)) return undefined;
    here = next;
  }
  return [here, decodeKey(parts[parts.length - 1] as string)];
}

/** Deep equality of JSON values, as the library compares a `test` operation's value. */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) return Array.isArray(b) && a.length === b.length && a.every((v, i) => jsonEqual(v, b[i]));
  if (isObject(a)) {
    if (!isObject(b)) return false;
    const keys = Object.keys(a);
    return keys.length === Object.keys(b).length && keys.every((k) => Object.hasOwn(b, k) && jsonEqual(a[k], b[k]));
  }
  return typeof a === 'bigint' || typeof b === 'bigint' ? String(a) === String(b) : false;
}

/** Wraps an error of a step in the operation's words. */
function step<T>(fn: () => T, wrap: (message: string) => string): T {
  try {
    return fn();
  } catch (err) {
    if (err instanceof PatchError && !err.testFailed) throw new PatchError(wrap(err.message));
    throw err;
  }
}

// size: one case per operation, each with the library's own texts.
function applyOne(doc: { root: Container }, op: PatchOp): void {
  const { path } = op;
  const missing = (what: string, p: string) => new PatchError(`${what}: ${p}: missing value`);
  switch (op.op) {
    case 'add': {
      const at = find(doc.root, path);
      if (!at) throw missing('add operation does not apply: doc is missing path', JSON.stringify(path));
      step(
        () => add(at[0], at[1], op.value ?? null),
        (m) => `error in add for path: '${path}': ${m}`,
      );
      return;
    }
    case 'remove': {
      const at = find(doc.root, path);
      if (!at) throw missing('remove operation does not apply: doc is missing path', JSON.stringify(path));
      step(
        () => remove(at[0], at[1]),
        (m) => `error in remove for path: '${path}': ${m}`,
      );
      return;
    }
    case 'replace':
      replace(doc, op);
      return;
    case 'move':
    case 'copy':
      moveOrCopy(doc, op);
      return;
    case 'test':
      test(doc, op);
      return;
    default:
      throw new PatchError(`Unexpected kind: ${op.op}`);
  }
}

function replace(doc: { root: Container }, op: PatchOp): void {
  const { path } = op;
  if (path === '') {
    if (!Array.isArray(op.value) && !isObject(op.value))
      throw new PatchError('replace operation value must be object or array: %!w(<nil>)');
    doc.root = op.value;
    return;
  }
  const at = find(doc.root, path);
  if (!at) throw new PatchError(`replace operation does not apply: doc is missing path: ${path}: missing value`);
  try {
    get(at[0], at[1]);
  } catch {
    throw new PatchError(`replace operation does not apply: doc is missing key: ${path}: missing value`);
  }
  step(
    () => set(at[0], at[1], op.value ?? null),
    (m) => `error in remove for path: '${path}': ${m}`,
  );
}

function moveOrCopy(doc: { root: Container }, op: PatchOp): void {
  const kind = op.op;
  if (!op.from)
    throw new PatchError(`${kind} operation failed to decode from: operation, missing from field: missing value`);
  const from = op.from;
  const source = find(doc.root, from);
  if (!source)
    throw new PatchError(`${kind} operation does not apply: doc is missing from path: ${from}: missing value`);
  const [fc, fk] = source;
  let value: unknown;
  if (kind === 'move') {
    value = step(
      () => get(fc, fk),
      (m) => `error in move for path: '${fk}': ${m}`,
    );
    step(
      () => remove(fc, fk),
      (m) => `error in move for path: '${fk}': ${m}`,
    );
  } else
    value = structuredClone(
      step(
        () => get(fc, fk),
        (m) => `error in copy for from: '${from}': ${m}`,
      ) ?? null,
    );
  const at = find(doc.root, op.path);
  if (!at)
    throw new PatchError(
      `${kind} operation does not apply: doc is missing destination path: ${op.path}: missing value`,
    );
  const wrap =
    kind === 'move'
      ? (m: string) => `error in move for path: '${op.path}': ${m}`
      : (m: string) => `error while adding value during copy: ${m}`;
  step(() => add(at[0], at[1], value ?? null), wrap);
}

function test(doc: { root: Container }, op: PatchOp): void {
  const { path } = op;
  const failed = () => new PatchError(`testing value ${path} failed: test failed`, true);
  if (path === '') {
    if (!jsonEqual(doc.root, op.value)) throw failed();
    return;
  }
  const at = find(doc.root, path);
  if (!at) throw new PatchError(`test operation does not apply: is missing path: ${path}: missing value`);
  const value = step(
    () => get(at[0], at[1]),
    (m) => `error in test for path: '${path}': ${m}`,
  );
  if (value === undefined || value === null) {
    if (op.value === undefined || op.value === null) return;
    throw failed();
  }
  if (op.value === undefined || !jsonEqual(value, op.value)) throw failed();
}

/**
 * Applies the operations to a copy of `document` (an object or array). A failed `test` gives the
 * original back with `tested` false, as the API server then leaves the object unchanged.
 */
export function applyJsonPatch(document: Container, ops: readonly PatchOp[]): JsonPatchResult {
  const doc = { root: structuredClone(document) };
  try {
    for (const op of ops) applyOne(doc, op);
  } catch (err) {
    if (!(err instanceof PatchError)) throw err;
    if (err.testFailed) return { document, tested: false };
    return { error: `JSON Patch: ${err.message}` };
  }
  return { document: doc.root, tested: true };
}

/** `jsonpatch.escapeKey`: a key as a JSON Pointer reference token (`~` as `~0`, `/` as `~1`). */
export function escapeKey(key: string): string {
  return key.replace(/~/g, '~0').replace(/\//g, '~1');
}
