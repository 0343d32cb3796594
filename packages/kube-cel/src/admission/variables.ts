/**
 * The variables of one evaluation as the API server gives them: the object and old object as its
 * JSON decoding reads them, the request as CreateAdmissionRequest converted to JSON, the authorizer,
 * the namespace as CreateNamespaceObject keeps it, and a policy's params.
 */
import { AuthorizerValue, noOpinion, ResourceCheckValue, type Authorize } from '../libraries/authorizer.ts';

/**
 * The keys of a parsed object (or array) whose whole number its JSON text wrote as a double (`1.0`,
 * `1e3`): a double for the API server's decoding, an int when written `1`. Given by the JSON reader
 * that parsed the review; without one, every whole number is an int.
 */
export type WholeDoubles = (parent: object) => ReadonlySet<string> | undefined;

/** A group, version and kind (`kind`, `requestKind` of a review). */
export interface GroupVersionKind {
  group?: string;
  version?: string;
  kind?: string;
}
/** A group, version and resource (`resource`, `requestResource` of a review). */
export interface GroupVersionResource {
  group?: string;
  version?: string;
  resource?: string;
}

/** The AdmissionRequest of an AdmissionReview (admission.k8s.io/v1), the fields the variables read. */
export interface AdmissionRequest {
  kind: GroupVersionKind;
  resource: GroupVersionResource;
  subResource?: string;
  requestKind?: GroupVersionKind;
  requestResource?: GroupVersionResource;
  requestSubResource?: string;
  name?: string;
  namespace?: string;
  operation: string;
  userInfo?: { username?: string; uid?: string; groups?: string[]; extra?: Record<string, string[]> };
  object?: unknown;
  oldObject?: unknown;
  dryRun?: boolean;
  options?: unknown;
}

/** Options of admissionVariables. */
export interface AdmissionVariablesOptions {
  /** Decides the `authorizer` checks as the requesting user; by default every check has no opinion. */
  authorize?: Authorize;
  /**
   * The Namespace of the request's object (admission policies); `namespaceObject` keeps of it what
   * the API server keeps. Null (the default) for cluster-scoped objects and webhooks' conditions.
   */
  namespaceObject?: Record<string, unknown> | null;
  /** A policy's params object (`params`); null by default. */
  params?: unknown;
  /** How the JSON reader marks whole numbers written as doubles (see WholeDoubles). */
  wholeDoubles?: WholeDoubles;
}

/**
 * A JSON value as CEL sees Kubernetes objects: numbers the JSON text wrote without a fraction or an
 * exponent are ints (bigint), others doubles, as the API server's decoding gives int64 and float64
 * (a whole number written `1.0` stays a double: parseJson notes it).
 */
export function toCel(value: unknown, wholeDoubles?: WholeDoubles): unknown {
  return toCelAt(value, 0, wholeDoubles ?? noWholeDoubles);
}

const noWholeDoubles: WholeDoubles = () => undefined;

/**
 * Depth from which toCel stops recursing and converts the rest with an explicit stack: the API
 * server accepts objects nested 10,000 levels, deeper than a Lambda function's call stack.
 */
const TO_CEL_RECURSION_LIMIT = 1000;

/** A member of a parsed object as CEL sees it: `doubles` are the keys of whole numbers written as doubles. */
function memberToCel(
  v: unknown,
  key: string,
  doubles: ReadonlySet<string> | undefined,
  depth: number,
  wholeDoubles: WholeDoubles,
): unknown {
  return typeof v === 'number' && doubles?.has(key) ? v : toCelAt(v, depth, wholeDoubles);
}

function toCelAt(value: unknown, depth: number, wholeDoubles: WholeDoubles): unknown {
  if (typeof value === 'number') return Number.isInteger(value) ? BigInt(value) : value;
  if (typeof value !== 'object' || value === null) return value;
  if (depth >= TO_CEL_RECURSION_LIMIT) return toCelIteratively(value, wholeDoubles);
  const doubles = wholeDoubles(value);
  if (Array.isArray(value)) return value.map((v, i) => memberToCel(v, String(i), doubles, depth + 1, wholeDoubles));
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value))
    setOwn(out, key, memberToCel((value as Record<string, unknown>)[key], key, doubles, depth + 1, wholeDoubles));
  return out;
}

function setOwn(out: Record<string, unknown>, key: string, v: unknown): void {
  if (key === '__proto__')
    Object.defineProperty(out, key, { value: v, enumerable: true, writable: true, configurable: true });
  else out[key] = v;
}

/** toCel with an explicit stack instead of recursion, for deeply nested values. */
function toCelIteratively(value: object, wholeDoubles: WholeDoubles): unknown {
  const empty = (v: object): Record<string, unknown> | unknown[] => (Array.isArray(v) ? new Array(v.length) : {});
  const root = empty(value);
  const stack: Array<[object, Record<string, unknown> | unknown[]]> = [[value, root]];
  while (stack.length > 0) {
    const [source, target] = stack.pop()!;
    const doubles = wholeDoubles(source);
    const keys = Array.isArray(source) ? source.map((_, i) => i) : Object.keys(source);
    for (const key of keys) {
      const v = (source as Record<string | number, unknown>)[key];
      let converted: unknown;
      if (typeof v === 'object' && v !== null) {
        converted = empty(v);
        stack.push([v, converted as Record<string, unknown> | unknown[]]);
      } else converted = memberToCel(v, String(key), doubles, 0, wholeDoubles);
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

/** `kind`, `requestKind` as the API server's request has them: every part present, empty when unset. */
const gvk = (k?: GroupVersionKind) => ({ group: k?.group ?? '', version: k?.version ?? '', kind: k?.kind ?? '' });
/** `resource`, `requestResource` likewise. */
const gvr = (r?: GroupVersionResource) => ({
  group: r?.group ?? '',
  version: r?.version ?? '',
  resource: r?.resource ?? '',
});

/** The request's user as the authorizer sees it, and `userInfo` as the request variable has it. */
function requestUser(request: AdmissionRequest) {
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
  return { user, userInfo };
}

/**
 * The Namespace as CreateNamespaceObject keeps it for CEL (apiserver's admission/plugin/cel):
 * its spec and status, and of its metadata only name, generateName, namespace, uid,
 * resourceVersion, generation, creationTimestamp, deletionTimestamp, deletionGracePeriodSeconds,
 * labels, annotations and finalizers (managedFields, ownerReferences and the rest are dropped).
 */
export function namespaceForCel(namespace: Record<string, unknown> | null | undefined): Record<string, unknown> | null {
  if (!namespace) return null;
  const metadata = (namespace.metadata ?? {}) as Record<string, unknown>;
  const kept: Record<string, unknown> = {};
  for (const key of NAMESPACE_METADATA) if (metadata[key] !== undefined) kept[key] = metadata[key];
  const out: Record<string, unknown> = {};
  // The typed Namespace comes back as JSON with its own kind and version set.
  if (namespace.apiVersion !== undefined) out.apiVersion = namespace.apiVersion;
  if (namespace.kind !== undefined) out.kind = namespace.kind;
  out.metadata = kept;
  out.spec = namespace.spec ?? {};
  out.status = namespace.status ?? {};
  return out;
}

/** The metadata fields of a Namespace CreateNamespaceObject copies. */
const NAMESPACE_METADATA = [
  'name',
  'generateName',
  'namespace',
  'uid',
  'resourceVersion',
  'generation',
  'creationTimestamp',
  'deletionTimestamp',
  'deletionGracePeriodSeconds',
  'labels',
  'annotations',
  'finalizers',
];

/**
 * The variables of one evaluation of an admission request, as the API server builds them for
 * matchConditions and admission policies: `request` is the AdmissionRequest without its objects
 * (CreateAdmissionRequest, then converted to JSON, so that fields tagged `omitempty` are absent
 * when empty: `name` on a generateName create, `namespace` of a cluster-scoped object,
 * `subResource`, `requestSubResource`, `userInfo`'s `username`, `uid`, `groups` and `extra`;
 * reading one is a "no such key" error and `has()` is false). `kind` is the kind the webhook is
 * called with; `resource` and `subResource` are the request's own, as are `requestKind`,
 * `requestResource` and `requestSubResource`. `object`/`oldObject` are null where the operation
 * has none; `authorizer` decides with `options.authorize` as the requesting user;
 * `namespaceObject` and `params` come from the options (null without).
 */
export function admissionVariables(
  request: AdmissionRequest,
  options: AdmissionVariablesOptions = {},
): Record<string, unknown> {
  const cel = (v: unknown) => toCel(v, options.wholeDoubles);
  const { user, userInfo } = requestUser(request);
  // The API server's Attributes hold the request's own resource and subresource; the review
  // gives them as requestResource/requestSubResource when a webhook is called for an equivalent.
  const resource = request.requestResource ?? request.resource;
  const subResource = request.requestSubResource ?? request.subResource ?? '';
  const authorize = options.authorize ?? noOpinion;
  const requestResource = new ResourceCheckValue(new AuthorizerValue(authorize, user), {
    group: resource.group ?? '',
    resource: resource.resource ?? '',
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
  celRequest.options = cel(request.options ?? null);
  return {
    object: cel(request.object ?? null),
    oldObject: cel(request.oldObject ?? null),
    request: celRequest,
    namespaceObject: cel(namespaceForCel(options.namespaceObject)),
    params: cel(options.params ?? null),
    authorizer: new AuthorizerValue(authorize, user, requestResource),
  };
}
