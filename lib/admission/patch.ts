import fastJsonPatch, { type Operation as PatchOperation } from 'fast-json-patch';
import { stringifyJson } from '../json.ts';

const { validate } = fastJsonPatch;

export type { PatchOperation };

type Json = Record<string, unknown> | unknown[];

/** One object or array being compared: its keys, and how far the comparison has got. */
interface Frame {
  mirror: Json;
  obj: Json;
  path: string;
  oldKeys: string[];
  next: number;
  deleted: boolean;
}

/** Own keys as fast-json-patch lists them: indices as strings for arrays. */
function keysOf(value: Json): string[] {
  if (!Array.isArray(value)) return Object.keys(value);
  const keys = new Array<string>(value.length);
  for (let i = 0; i < value.length; i++) keys[i] = String(i);
  return keys;
}

/** A JSON Pointer reference token (RFC 6901): `~` and `/` escaped. */
function escapeToken(key: string): string {
  if (!key.includes('/') && !key.includes('~')) return key;
  return key.replace(/~/g, '~0').replace(/\//g, '~1');
}

const hasOwn = (value: object, key: string) => Object.prototype.hasOwnProperty.call(value, key);

/** A value as a patch carries it: `undefined` (an array hole) is written as null. */
const patchValue = (value: unknown) => (value === undefined ? null : value);

/**
 * The JSONPatch that turns `original` into `mutated` (empty when nothing changed): the same
 * operations, in the same order, as fast-json-patch's `compare`, but walked with an explicit
 * stack, so objects nested thousands of levels deep do not overflow the call stack.
 */
export function diffPatch(original: object, mutated: object): PatchOperation[] {
  const patches: PatchOperation[] = [];
  const stack: Frame[] = [];
  const enter = (mirror: Json, value: Json, path: string) => {
    if (value === mirror) return;
    const obj = typeof (value as { toJSON?: unknown }).toJSON === 'function' ? ((value as { toJSON(): Json }).toJSON()) : value;
    const oldKeys = keysOf(mirror);
    stack.push({ mirror, obj, path, oldKeys, next: oldKeys.length - 1, deleted: false });
  };
  enter(original as Json, mutated as Json, '');
  while (stack.length > 0) {
    const frame = stack[stack.length - 1]!;
    const { mirror, obj, path } = frame;
    const m = mirror as Record<string, unknown>;
    const o = obj as Record<string, unknown>;
    if (frame.next >= 0) {
      // Old keys last to first, as compare walks them; a nested pair is finished before the next key.
      const key = frame.oldKeys[frame.next--]!;
      const oldVal = m[key];
      if (hasOwn(obj, key) && !(o[key] === undefined && oldVal !== undefined && !Array.isArray(obj))) {
        const newVal = o[key];
        if (typeof oldVal === 'object' && oldVal !== null && typeof newVal === 'object' && newVal !== null && Array.isArray(oldVal) === Array.isArray(newVal)) {
          enter(oldVal as Json, newVal as Json, `${path}/${escapeToken(key)}`);
        } else if (oldVal !== newVal) {
          patches.push({ op: 'replace', path: `${path}/${escapeToken(key)}`, value: patchValue(newVal) });
        }
      } else if (Array.isArray(mirror) === Array.isArray(obj)) {
        patches.push({ op: 'remove', path: `${path}/${escapeToken(key)}` });
        frame.deleted = true;
      } else {
        patches.push({ op: 'replace', path, value: obj });
      }
      continue;
    }
    stack.pop();
    const newKeys = keysOf(obj);
    if (!frame.deleted && newKeys.length === frame.oldKeys.length) continue;
    for (const key of newKeys) {
      if (!hasOwn(mirror, key) && o[key] !== undefined) patches.push({ op: 'add', path: `${path}/${escapeToken(key)}`, value: patchValue(o[key]) });
    }
  }
  return patches;
}

/**
 * Checks that operations are a well-formed JSONPatch that applies to `original`;
 * returns a one-line reason when they are not. The API server fails the whole request
 * on a patch that does not apply, so it is checked here first.
 */
export function checkPatch(original: object, operations: unknown): string | undefined {
  if (!Array.isArray(operations)) return 'patch must be an array of JSONPatch operations';
  const error = validateCopies(operations as PatchOperation[], original);
  if (!error) return undefined;
  return `invalid patch operation ${error.index ?? '?'} (${error.name}): ${error.message.split('\n', 1)[0]}`;
}

/**
 * fast-json-patch's `validate`, which copies both through JSON.stringify: values holding a
 * bigint (an int64 beyond ±2^53) are first copied with their numbers rounded, enough to check
 * that the operations apply.
 */
function validateCopies(operations: PatchOperation[], original: object): ReturnType<typeof validate> {
  try {
    return validate(operations, original);
  } catch (err) {
    if (!(err instanceof TypeError) || !/BigInt/i.test(err.message)) throw err;
    const rounded = <T>(value: T): T => JSON.parse(stringifyJson(value)) as T;
    return validate(rounded(operations), rounded(original));
  }
}

/** Base64 of the JSON text of a patch, as `AdmissionResponse.patch` carries it. */
export function encodePatch(operations: readonly PatchOperation[]): string {
  return Buffer.from(stringifyJson(operations), 'utf8').toString('base64');
}
