/**
 * Readers of well-formed reviews that build exactly what the zod schemas of schemas.ts build
 * (the same members in the same order, the same copies, the same embedded objects), at a
 * fraction of the cost. They answer undefined for anything they are not sure of, and the
 * caller then asks zod, which finds the same value or reports the problem in its own words.
 */
import { setMember } from '../json.ts';
import type { AdmissionReview, ConversionReview } from './schemas.ts';

type Loose = Record<string, unknown>;

const isObject = (v: unknown): v is Loose => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Marks a value the fast readers cannot vouch for. */
const NO = Symbol('no');

/** `input[key]` as z.optional(z.string()) reads it into `out`; NO when it is not a string. */
function optionalString(input: Loose, key: string, out: Loose): typeof NO | undefined {
  const v = input[key];
  if (v === undefined) {
    if (key in input) out[key] = undefined;
    return undefined;
  }
  if (typeof v !== 'string') return NO;
  out[key] = v;
  return undefined;
}

/** A copy of an array of strings, as z.array(z.string()) makes it; NO otherwise. */
function stringArray(v: unknown): string[] | typeof NO {
  if (!Array.isArray(v)) return NO;
  const out = new Array<string>(v.length);
  for (let i = 0; i < v.length; i++) {
    const s: unknown = v[i];
    if (typeof s !== 'string') return NO;
    out[i] = s;
  }
  return out;
}

/** `metav1.GroupVersionKind` or `GroupVersionResource` as its z.object reads it; NO otherwise. */
function groupVersion(v: unknown, last: 'kind' | 'resource'): Loose | typeof NO {
  if (!isObject(v)) return NO;
  const { group, version } = v;
  const third = v[last];
  if (typeof group !== 'string' || typeof version !== 'string' || typeof third !== 'string') return NO;
  return last === 'kind' ? { group, version, kind: third } : { group, version, resource: third };
}

/**
 * Members of a z.looseObject not in its shape, copied after the known ones as zod copies them
 * (an own `__proto__` member too: see keepingProto in schemas.ts).
 */
function copyUnknown(input: Loose, known: ReadonlySet<string>, out: Loose): void {
  for (const key in input) {
    if (known.has(key)) continue;
    setMember(out, key, input[key]);
  }
}

const USER_INFO_KEYS: ReadonlySet<string> = new Set(['username', 'uid', 'groups', 'extra']);
const NO_KEYS: ReadonlySet<string> = new Set();
const OPERATIONS: ReadonlySet<unknown> = new Set(['CREATE', 'UPDATE', 'DELETE', 'CONNECT']);

/**
 * `userInfo.extra` as z.record(z.string(), z.array(z.string())) reads it: a new object of
 * copied lists, own keys in order, `__proto__` kept as a member. NO for anything but a plain JSON
 * object (symbol keys, another prototype or an own `constructor` go to zod).
 */
function extraOf(v: unknown): Loose | typeof NO {
  if (!isObject(v) || Object.getPrototypeOf(v) !== Object.prototype || Object.hasOwn(v, 'constructor')) return NO;
  if (Object.getOwnPropertySymbols(v).length) return NO;
  const out: Loose = {};
  for (const key of Object.keys(v)) {
    const list = stringArray(v[key]);
    if (list === NO) return NO;
    setMember(out, key, list);
  }
  return out;
}

/** `userInfo` as UserInfoSchema reads it; NO otherwise. */
function userInfo(v: unknown): Loose | typeof NO {
  if (!isObject(v)) return NO;
  const out: Loose = {};
  if (optionalString(v, 'username', out) === NO || optionalString(v, 'uid', out) === NO) return NO;
  const groups = v.groups;
  if (groups !== undefined) {
    const copy = stringArray(groups);
    if (copy === NO) return NO;
    out.groups = copy;
  } else if ('groups' in v) out.groups = undefined;
  const extra = v.extra;
  if (extra !== undefined) {
    const copy = extraOf(extra);
    if (copy === NO) return NO;
    out.extra = copy;
  } else if ('extra' in v) out.extra = undefined;
  copyUnknown(v, USER_INFO_KEYS, out);
  return out;
}

/** An embedded object (z.nullish of a JSON object) read into `out`; NO otherwise. */
function embedded(input: Loose, key: string, out: Loose): typeof NO | undefined {
  const v = input[key];
  if (v === undefined) {
    if (key in input) out[key] = undefined;
    return undefined;
  }
  if (v !== null && !isObject(v)) return NO;
  out[key] = v;
  return undefined;
}

/** Optional GroupVersionKind or Resource read into `out`; NO otherwise. */
function optionalGroupVersion(input: Loose, key: string, last: 'kind' | 'resource', out: Loose): typeof NO | undefined {
  const v = input[key];
  if (v === undefined) {
    if (key in input) out[key] = undefined;
    return undefined;
  }
  const read = groupVersion(v, last);
  if (read === NO) return NO;
  out[key] = read;
  return undefined;
}

/**
 * What AdmissionReviewSchema.safeParse(body).data is, for a review whose apiVersion and kind
 * have been checked; undefined when the fast reader cannot tell (zod decides).
 */
export function readAdmissionReviewFast(body: Loose): AdmissionReview | undefined {
  const r = body.request;
  if (!isObject(r)) return undefined;
  const uid = r.uid;
  if (typeof uid !== 'string' || uid.length < 1) return undefined;
  const kind = groupVersion(r.kind, 'kind');
  const resource = groupVersion(r.resource, 'resource');
  if (kind === NO || resource === NO) return undefined;
  const request: Loose = { uid, kind, resource };
  if (
    optionalString(r, 'subResource', request) === NO ||
    optionalGroupVersion(r, 'requestKind', 'kind', request) === NO ||
    optionalGroupVersion(r, 'requestResource', 'resource', request) === NO ||
    optionalString(r, 'requestSubResource', request) === NO ||
    optionalString(r, 'name', request) === NO ||
    optionalString(r, 'namespace', request) === NO
  ) {
    return undefined;
  }
  if (!OPERATIONS.has(r.operation)) return undefined;
  request.operation = r.operation;
  const user = userInfo(r.userInfo);
  if (user === NO) return undefined;
  request.userInfo = user;
  if (embedded(r, 'object', request) === NO || embedded(r, 'oldObject', request) === NO) return undefined;
  const dryRun = r.dryRun;
  if (dryRun === undefined) {
    if ('dryRun' in r) request.dryRun = undefined;
  } else if (typeof dryRun === 'boolean') request.dryRun = dryRun;
  else return undefined;
  const options = r.options;
  if (options === undefined) {
    if ('options' in r) request.options = undefined;
  } else if (options === null) request.options = null;
  else if (isObject(options)) {
    const copy: Loose = {};
    copyUnknown(options, NO_KEYS, copy);
    request.options = copy;
  } else return undefined;
  // Every field was checked above, as the schema checks it (a test compares the two on random reviews).
  return { apiVersion: body.apiVersion, kind: body.kind, request } as unknown as AdmissionReview;
}

/** ConversionRequestSchema's pattern of desiredAPIVersion. */
const API_VERSION = /^([^/]+\/)?[^/]+$/;

const optionalStringMember = (v: unknown): boolean => v === undefined || typeof v === 'string';

/**
 * What ConversionReviewSchema.safeParse(body).data is, for a review whose apiVersion and kind
 * have been checked; undefined when the fast reader cannot tell (zod decides).
 */
export function readConversionReviewFast(body: Loose): ConversionReview | undefined {
  const r = body.request;
  if (!isObject(r)) return undefined;
  const { uid, desiredAPIVersion, objects } = r;
  if (typeof uid !== 'string' || uid.length < 1) return undefined;
  if (typeof desiredAPIVersion !== 'string' || !API_VERSION.test(desiredAPIVersion)) return undefined;
  if (!Array.isArray(objects)) return undefined;
  const copy = new Array<unknown>(objects.length);
  for (let i = 0; i < objects.length; i++) {
    const o: unknown = objects[i];
    // ConvertibleObjectSchema's test.
    if (
      !isObject(o) ||
      typeof o.apiVersion !== 'string' ||
      o.apiVersion === '' ||
      typeof o.kind !== 'string' ||
      o.kind === ''
    )
      return undefined;
    const m = o.metadata;
    if (
      m !== undefined &&
      !(isObject(m) && optionalStringMember(m.name) && optionalStringMember(m.namespace) && optionalStringMember(m.uid))
    )
      return undefined;
    copy[i] = o;
  }
  return {
    apiVersion: body.apiVersion,
    kind: body.kind,
    request: { uid, desiredAPIVersion, objects: copy },
  } as ConversionReview;
}
