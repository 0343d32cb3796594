/**
 * The variables of one evaluation as the API server gives them: the object and old object as its
 * JSON decoding reads them, the request as CreateAdmissionRequest converted to JSON, the authorizer.
 */
import { wholeDoubleKeys } from '../../../../lib/json.ts';
import type { AdmissionRequest } from '../../../../lib/review/schemas.ts';
import { AuthorizerValue, noOpinion, ResourceCheckValue, type Authorize } from '../libraries/authorizer.ts';

/**
 * A JSON value as CEL sees Kubernetes objects: numbers the JSON text wrote without a fraction or an
 * exponent are ints (bigint), others doubles, as the API server's decoding gives int64 and float64
 * (a whole number written `1.0` stays a double: parseJson notes it).
 */
export function toCel(value: unknown): unknown {
  return toCelAt(value, 0);
}

/**
 * Depth from which toCel stops recursing and converts the rest with an explicit stack: the API
 * server accepts objects nested 10,000 levels, deeper than a Lambda function's call stack.
 */
const TO_CEL_RECURSION_LIMIT = 1000;

/** A member of a parsed object as CEL sees it: `doubles` are the keys of whole numbers written as doubles. */
function memberToCel(v: unknown, key: string, doubles: ReadonlySet<string> | undefined, depth: number): unknown {
  return typeof v === 'number' && doubles?.has(key) ? v : toCelAt(v, depth);
}

function toCelAt(value: unknown, depth: number): unknown {
  if (typeof value === 'number') return Number.isInteger(value) ? BigInt(value) : value;
  if (typeof value !== 'object' || value === null) return value;
  if (depth >= TO_CEL_RECURSION_LIMIT) return toCelIteratively(value);
  const doubles = wholeDoubleKeys(value);
  if (Array.isArray(value)) return value.map((v, i) => memberToCel(v, String(i), doubles, depth + 1));
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value))
    setOwn(out, key, memberToCel((value as Record<string, unknown>)[key], key, doubles, depth + 1));
  return out;
}

function setOwn(out: Record<string, unknown>, key: string, v: unknown): void {
  if (key === '__proto__')
    Object.defineProperty(out, key, { value: v, enumerable: true, writable: true, configurable: true });
  else out[key] = v;
}

/** toCel with an explicit stack instead of recursion, for deeply nested values. */
function toCelIteratively(value: object): unknown {
  const empty = (v: object): Record<string, unknown> | unknown[] => (Array.isArray(v) ? new Array(v.length) : {});
  const root = empty(value);
  const stack: Array<[object, Record<string, unknown> | unknown[]]> = [[value, root]];
  while (stack.length > 0) {
    const [source, target] = stack.pop()!;
    const doubles = wholeDoubleKeys(source);
    const keys = Array.isArray(source) ? source.map((_, i) => i) : Object.keys(source);
    for (const key of keys) {
      const v = (source as Record<string | number, unknown>)[key];
      let converted: unknown;
      if (typeof v === 'object' && v !== null) {
        converted = empty(v);
        stack.push([v, converted as Record<string, unknown> | unknown[]]);
      } else converted = memberToCel(v, String(key), doubles, 0);
      if (typeof key === 'number') (target as unknown[])[key] = converted;
      else setOwn(target as Record<string, unknown>, key, converted);
    }
  }
  return root;
}

/** Sets `key` on `out` unless `value` is empty, as Go's `omitempty` leaves it out of the JSON. */
function present(
  out: Record<string, unknown>,
  key: string,
  value: string | unknown[] | Record<string, unknown> | undefined,
): void {
  if (value === undefined) return;
  if (
    typeof value === 'string'
      ? value === ''
      : Array.isArray(value)
        ? value.length === 0
        : Object.keys(value).length === 0
  )
    return;
  out[key] = value;
}

/**
 * The variables of one evaluation: `request` is the AdmissionRequest without its objects, as the
 * API server builds it (CreateAdmissionRequest, then converted to JSON, so that fields tagged
 * `omitempty` are absent when empty: `name` on a generateName create, `namespace` of a
 * cluster-scoped object, `subResource`, `requestSubResource`, `userInfo`'s `username`, `uid`,
 * `groups` and `extra`; reading one is a "no such key" error and `has()` is false). `kind` is the
 * kind the webhook is called with; `resource` and `subResource` are the request's own, as are
 * `requestKind`, `requestResource` and `requestSubResource`. `object`/`oldObject` are null where
 * the operation has none, and `authorizer` decides with `authorize` as the requesting user.
 */
export function variablesFor(request: AdmissionRequest, authorize: Authorize = noOpinion): Record<string, unknown> {
  const gvk = (k?: { group?: string; version?: string; kind?: string }) => ({
    group: k?.group ?? '',
    version: k?.version ?? '',
    kind: k?.kind ?? '',
  });
  const gvr = (r?: { group?: string; version?: string; resource?: string }) => ({
    group: r?.group ?? '',
    version: r?.version ?? '',
    resource: r?.resource ?? '',
  });
  const user = {
    username: request.userInfo?.username ?? '',
    uid: request.userInfo?.uid ?? '',
    groups: request.userInfo?.groups ?? [],
    extra: request.userInfo?.extra ?? {},
  };
  const userInfo: Record<string, unknown> = {};
  present(userInfo, 'username', user.username);
  present(userInfo, 'uid', user.uid);
  present(userInfo, 'groups', user.groups);
  present(userInfo, 'extra', user.extra);
  // The API server's Attributes hold the request's own resource and subresource; the review
  // gives them as requestResource/requestSubResource when a webhook is called for an equivalent.
  const resource = request.requestResource ?? request.resource;
  const subResource = request.requestSubResource ?? request.subResource ?? '';
  const authorizer = new AuthorizerValue(authorize, user);
  const requestResource = new ResourceCheckValue(authorizer, {
    group: resource.group,
    resource: resource.resource,
    subresource: subResource,
    namespace: request.namespace ?? '',
    name: request.name ?? '',
  });
  const celRequest: Record<string, unknown> = { kind: gvk(request.kind), resource: gvr(resource) };
  present(celRequest, 'subResource', subResource);
  celRequest.requestKind = gvk(request.requestKind ?? request.kind);
  celRequest.requestResource = gvr(resource);
  present(celRequest, 'requestSubResource', subResource);
  present(celRequest, 'name', request.name);
  present(celRequest, 'namespace', request.namespace);
  celRequest.operation = request.operation;
  celRequest.userInfo = userInfo;
  celRequest.dryRun = request.dryRun ?? false;
  celRequest.options = toCel(request.options ?? null);
  return {
    object: toCel(request.object ?? null),
    oldObject: toCel(request.oldObject ?? null),
    request: celRequest,
    // Webhooks get no Namespace object: the API server passes none to their conditions.
    namespaceObject: null,
    authorizer: new AuthorizerValue(authorize, user, requestResource),
  };
}
