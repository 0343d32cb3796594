/**
 * The CEL environment of webhook matchConditions, as the API server declares it: the
 * variables `object`, `oldObject`, `request`, `namespaceObject` and `authorizer`, and the
 * Kubernetes libraries conditions use in practice (lists, extended strings, regex in RE2,
 * URLs, quantity, authorizer), under the API server's cost limit per expression.
 * Imported only by code that evaluates conditions, never by the admission engine itself,
 * so functions that do not enforce conditions carry no CEL in their bundles.
 */
import { Environment, Optional, type ASTNode, type ParseResult } from '@marcbachmann/cel-js';
import { wholeDoubleKeys } from '../json.ts';
import type { AdmissionRequest } from '../review/schemas.ts';
import { parseQuantity, Quantity, quantityOf } from './quantity.ts';
import { regexFind, regexFindAll, regexMatches, regexProblem } from './regex.ts';
import { isUrl, parseUrl, UrlValue } from './url.ts';
import { FORMATS, formatNamed, serviceAccountUser, type NamedFormat } from './k8s/format.ts';
import { libraryCallCost } from './k8s/cost.ts';
import { goFormatFloat } from './k8s/go.ts';
import { CidrPrefix, cidr, cidrContainsCIDRString, cidrContainsIPString, ip, IpAddr } from './k8s/ip.ts';
import { ipIsCanonical, isCIDR, isIP } from './k8s/ip.ts';
import * as k8sLists from './k8s/lists.ts';
import { isSemver, Semver, semver } from './k8s/semver.ts';
import { setsContains, setsEquivalent, setsIntersects } from './k8s/sets.ts';
import { stringFormat, type FormatArg } from './k8s/strformat.ts';
import * as k8sStrings from './k8s/strings.ts';
import { registerTwoVariableComprehensions } from './comprehensions.ts';
import { CostLimitExceeded, meter, PER_CALL_COST_LIMIT } from './meter.ts';
import { adoptCelGoSemantics, useUintClass } from './semantics.ts';
import { environmentMinor, missingFeature, type CelKubeVersion, type ExpressionMode } from './versions.ts';

/** What an authorizer check asks (`authorizer.group(...).resource(...)...check(verb)`). */
export interface AuthorizationAttributes {
  /** The user asked about: the request's user, or a service account's. */
  user: { username: string; uid?: string; groups?: string[]; extra?: Record<string, string[]> };
  verb: string;
  /** Set for `authorizer.path(...)` checks. */
  path?: string;
  group?: string;
  resource?: string;
  subresource?: string;
  namespace?: string;
  name?: string;
}

/** An authorizer's answer; `NoOpinion` reads as not allowed. */
export interface AuthorizationDecision {
  decision: 'Allow' | 'Deny' | 'NoOpinion';
  reason?: string;
}

/** Decides authorizer checks for conditions that use `authorizer` (tests, the emulator). */
export type Authorize = (attributes: AuthorizationAttributes) => AuthorizationDecision;

/** The default authorizer: no opinion on anything, so `allowed()` is false. */
export const noOpinion: Authorize = () => ({ decision: 'NoOpinion', reason: 'no authorizer configured' });

// The authorizer library's types (k8s.io/apiserver/pkg/cel/library/authz.go).
class AuthorizerValue {
  constructor(
    readonly authorize: Authorize,
    readonly user: AuthorizationAttributes['user'],
    readonly requestResource?: ResourceCheckValue,
  ) {}
}
class PathCheckValue {
  constructor(
    readonly authorizer: AuthorizerValue,
    readonly path: string,
  ) {}
}
class GroupCheckValue {
  constructor(
    readonly authorizer: AuthorizerValue,
    readonly group: string,
  ) {}
}
class ResourceCheckValue {
  constructor(
    readonly authorizer: AuthorizerValue,
    readonly fields: Pick<AuthorizationAttributes, 'group' | 'resource' | 'subresource' | 'namespace' | 'name'>,
  ) {}
  with(field: 'subresource' | 'namespace' | 'name', value: string): ResourceCheckValue {
    return new ResourceCheckValue(this.authorizer, { ...this.fields, [field]: value });
  }
}
class DecisionValue {
  constructor(
    readonly decision: AuthorizationDecision['decision'] | 'Error',
    readonly reason: string,
    readonly error: string,
  ) {}
}

/** `authorizer.serviceAccount(namespace, name)`: the names checked, the account's two groups. */
function serviceAccountAuthorizer(a: AuthorizerValue, namespace: string, name: string): AuthorizerValue {
  const user = serviceAccountUser(namespace, name);
  return new AuthorizerValue(a.authorize, { username: user.username, groups: [...user.groups] });
}

function decide(authorizer: AuthorizerValue, attributes: Omit<AuthorizationAttributes, 'user'>): DecisionValue {
  try {
    const answer = authorizer.authorize({ user: authorizer.user, ...attributes });
    return new DecisionValue(answer.decision, answer.reason ?? '', '');
  } catch (err) {
    return new DecisionValue('Error', '', err instanceof Error ? err.message : String(err));
  }
}

/** CEL equality of two values: what `indexOf` and `lastIndexOf` compare with. */
function celEquals(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if ((typeof a === 'bigint' || typeof a === 'number') && (typeof b === 'bigint' || typeof b === 'number'))
    return Number(a) === Number(b);
  if (a instanceof Quantity && b instanceof Quantity) return a.compareTo(b) === 0;
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((v, i) => celEquals(v, b[i]));
  if (a && b && typeof a === 'object' && typeof b === 'object' && !Array.isArray(a) && !Array.isArray(b)) {
    const ka = Object.keys(a);
    return (
      ka.length === Object.keys(b).length &&
      ka.every((k) => Object.hasOwn(b, k) && celEquals((a as any)[k], (b as any)[k]))
    );
  }
  return false;
}

function compare(a: unknown, b: unknown): number {
  if (a instanceof Quantity && b instanceof Quantity) return a.compareTo(b);
  if (
    typeof a !== typeof b &&
    !((typeof a === 'bigint' || typeof a === 'number') && (typeof b === 'bigint' || typeof b === 'number'))
  ) {
    throw new TypeError(`cannot compare ${typeof a} with ${typeof b}`);
  }
  return (a as any) < (b as any) ? -1 : (a as any) > (b as any) ? 1 : 0;
}

function compareBytes(a: Uint8Array, b: Uint8Array): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return a[i]! - b[i]!;
  return a.length - b.length;
}

function extreme(list: unknown[], name: string, sign: number): unknown {
  if (!list.length) throw new RangeError(`${name} called on empty list`);
  return list.reduce((best, v) => (compare(v, best) * sign > 0 ? v : best));
}

function quantityArg(value: Quantity | bigint): Quantity {
  return typeof value === 'bigint' ? quantityOf(value) : value;
}

const AUTHORIZER = 'kubernetes.authorization.Authorizer';
const PATH_CHECK = 'kubernetes.authorization.PathCheck';
const GROUP_CHECK = 'kubernetes.authorization.GroupCheck';
const RESOURCE_CHECK = 'kubernetes.authorization.ResourceCheck';
const DECISION = 'kubernetes.authorization.Decision';
const QUANTITY = 'kubernetes.Quantity';
const URL = 'kubernetes.URL';
const TIMESTAMP = 'google.protobuf.Timestamp';
/** The largest int64. */
const INT64_MAX = 9223372036854775807n;
/**
 * The name member calls of `matches` are given before checking, so they reach the RE2
 * overload (the engine refuses a second `string.matches`); never written by users.
 */
const RE2_MATCHES = 'matches__re2';
/** The suffix of the environment's own overloads of names the engine also declares (its UTF-16 strings). */
const RENAMED = '__k8s';
/** Member functions whose calls go to the `__k8s` overloads. */
const MEMBER_RENAMES = new Set(['indexOf', 'lastIndexOf', 'lowerAscii', 'upperAscii', 'trim', 'substring', 'split']);
MEMBER_RENAMES.add('join');
/** Global functions whose calls go to the `__k8s` overloads. */
const GLOBAL_RENAMES = new Set(['string']);
/** Internal names in messages: the name the user wrote is before the suffix. */
const INTERNAL_NAME = /(\w+)__(?:re2|k8s)\b/g;
/** The type of the namespace receiver `strings` (`strings.quote`). */
const STRINGS_NS = 'kubernetes.lib.strings';
/** Namespace types in messages: `kubernetes.lib.strings.quote` is `strings.quote`. */
const NAMESPACE_TYPE = /\bkubernetes\.lib\.(\w+)\b/g;
/** The value of a library namespace (`strings`, `sets`): a receiver that holds nothing. */
class Namespace {}
// One class per namespace: the engine knows a value's type by its class.
class StringsNamespace extends Namespace {}
class SetsNamespace extends Namespace {}
class ListsNamespace extends Namespace {}
class IpNamespace extends Namespace {}
class FormatNamespace extends Namespace {}
const SETS_NS = 'kubernetes.lib.sets';
const LISTS_NS = 'kubernetes.lib.lists';
const IP_NS = 'kubernetes.lib.ip';
const FORMAT_NS = 'kubernetes.lib.format';
const IP = 'net.IP';
const CIDR = 'net.CIDR';
const FORMAT = 'kubernetes.NamedFormat';
const SEMVER = 'kubernetes.Semver';
/** A named format as a CEL value (`format.dns1123Label()`). */
class FormatValue {
  constructor(readonly format: NamedFormat) {}
}
/** A uint's bigint; any other value as it is. */
function unwrapUint(v: unknown): unknown {
  return v !== null && typeof v === 'object' && v.constructor === uintCtor ? (v as { valueOf(): bigint }).valueOf() : v;
}
/** How `sort()` orders values: those of one comparable type, as CEL's `<`. */
const ORDERING: k8sLists.CelOrdering = {
  comparableType(v) {
    if (typeof v === 'bigint') return 'int';
    if (typeof v === 'number') return 'double';
    if (typeof v === 'string' || typeof v === 'boolean') return typeof v === 'string' ? 'string' : 'bool';
    if (v instanceof Date) return 'google.protobuf.Timestamp';
    if (v !== null && typeof v === 'object' && v.constructor === uintCtor) return 'uint';
    return undefined;
  },
  compare(a, b) {
    const x = unwrapUint(a) as number;
    const y = unwrapUint(b) as number;
    return x < y ? -1 : x > y ? 1 : 0;
  },
};
/** Decodes bytes as Go's string(bytes) does, invalid sequences as U+FFFD. */
const UTF8 = new TextDecoder();

/** A function the environment calls once to reach the evaluator; never written by users. */
const METER_PROBE = 'cost__meter';
/**
 * Member functions the engine provides that the API server's environment has not (byte
 * helpers): an expression calling them is refused as the API server refuses it.
 */
const NOT_IN_KUBERNETES = new Set(['json', 'hex', 'base64', 'string', 'at']);
/** Functions whose pattern argument, when a literal, RE2 must accept at compile time. */
const REGEX_FUNCTIONS = new Set(['matches', 'find', 'findAll']);

/** Library calls whose cost depends on their result: charged once they have answered. */
const COST_OF_RESULT = new Set(['join', 'slice', 'lists.range', 'reverse']);
/** A function signature's receiver (if any) and name: `string.indexOf__k8s(string): int`. */
const SIGNATURE = /^(?:([\w.<>, ]+)\.)?(\w+)\(([^)]*)\)/;

/** Charges `cost` (a library call's, of which the call's own unit is already charged) to the meter. */
function chargeCall(cost: number | undefined): void {
  if (cost !== undefined && cost > 1 && (meter.left -= cost - 1) < 0) throw new CostLimitExceeded();
}

/**
 * A handler that charges the library call's cost as cel-go does (libraryCallCost, by the sizes of
 * the arguments): before the call where the cost depends on the arguments only, so the work of a call
 * past the limit is not done; after it where it depends on the result.
 */
function chargedHandler(signature: string, handler: (...args: never[]) => unknown): (...args: never[]) => unknown {
  const m = SIGNATURE.exec(signature);
  if (!m) return handler;
  const receiver = m[1];
  const name = m[2]!.replace(/__(?:k8s|re2)$/, '');
  const namespace = receiver?.startsWith('kubernetes.lib.') ? receiver.slice('kubernetes.lib.'.length) : undefined;
  const fn = namespace ? `${namespace}.${name}` : name;
  const params = m[3]!;
  const overloadId =
    receiver === CIDR && name === 'ip'
      ? 'cidr_ip'
      : receiver === CIDR && params === 'string'
        ? `cidr_${snake(name)}_string`
        : '';
  const afterward = COST_OF_RESULT.has(fn);
  if (!afterward && libraryCallCost(fn, overloadId, SAMPLE_ARGS, SAMPLE_ARGS) === undefined) return handler;
  return function (this: unknown, ...args: never[]) {
    const costArgs = namespace ? args.slice(1) : args;
    if (!afterward) chargeCall(libraryCallCost(fn, overloadId, costArgs));
    const result = handler.apply(this, args);
    if (afterward) chargeCall(libraryCallCost(fn, overloadId, costArgs, result));
    return result;
  };
}
/** `containsIP` as `contains_ip`. */
const snake = (name: string): string => name.replace(/[A-Z]+/g, (c) => `_${c.toLowerCase()}`);
/** Arguments that give every costed library function a cost: to find which functions are costed. */
const SAMPLE_ARGS: readonly unknown[] = ['', '', ''];

/** The engine's environment, with every library function charged by its cost. */
class MeteredEnvironment extends Environment {
  override registerFunction(signature: any, handler?: any, opts?: any): this {
    if (typeof signature === 'string' && typeof handler === 'function') handler = chargedHandler(signature, handler);
    return super.registerFunction(signature, handler, opts);
  }
}

/** Builds the environment; costly, so done once, on first use. */
function buildEnvironment(): Environment {
  const env = new MeteredEnvironment({ enableOptionalTypes: true })
    .registerType('kubernetes.GroupVersionKind', { fields: { group: 'string', version: 'string', kind: 'string' } })
    .registerType('kubernetes.GroupVersionResource', {
      fields: { group: 'string', version: 'string', resource: 'string' },
    })
    .registerType('kubernetes.UserInfo', {
      fields: { username: 'string', uid: 'string', groups: 'list<string>', extra: 'map<string, list<string>>' },
    })
    .registerType('kubernetes.AdmissionRequest', {
      fields: {
        kind: 'kubernetes.GroupVersionKind',
        resource: 'kubernetes.GroupVersionResource',
        subResource: 'string',
        requestKind: 'kubernetes.GroupVersionKind',
        requestResource: 'kubernetes.GroupVersionResource',
        requestSubResource: 'string',
        name: 'string',
        namespace: 'string',
        operation: 'string',
        userInfo: 'kubernetes.UserInfo',
        dryRun: 'bool',
        options: 'dyn',
      },
    })
    .registerType(PATH_CHECK, PathCheckValue)
    .registerType(GROUP_CHECK, GroupCheckValue)
    .registerType(RESOURCE_CHECK, ResourceCheckValue)
    .registerType(DECISION, DecisionValue)
    .registerType(AUTHORIZER, { ctor: AuthorizerValue, fields: { requestResource: RESOURCE_CHECK } })
    .registerType(QUANTITY, Quantity)
    .registerType(URL, UrlValue)
    // The Namespace as the API server declares it (plugin/cel/compile.go, BuildNamespaceType).
    // Declared for webhook matchConditions too, and null there: only admission policies get
    // the request's Namespace object.
    .registerType('kubernetes.NamespaceSpec', { fields: { finalizers: 'list<string>' } })
    .registerType('kubernetes.NamespaceCondition', {
      fields: { status: 'string', type: 'string', lastTransitionTime: TIMESTAMP, message: 'string', reason: 'string' },
    })
    .registerType('kubernetes.NamespaceStatus', {
      fields: { conditions: 'list<kubernetes.NamespaceCondition>', phase: 'string' },
    })
    .registerType('kubernetes.NamespaceMetadata', {
      fields: {
        name: 'string',
        generateName: 'string',
        namespace: 'string',
        labels: 'map<string, string>',
        annotations: 'map<string, string>',
        UID: 'string',
        creationTimestamp: TIMESTAMP,
        deletionGracePeriodSeconds: 'int',
        deletionTimestamp: TIMESTAMP,
        generation: 'int',
        resourceVersion: 'string',
        finalizers: 'list<string>',
      },
    })
    .registerType('kubernetes.Namespace', {
      fields: {
        metadata: 'kubernetes.NamespaceMetadata',
        spec: 'kubernetes.NamespaceSpec',
        status: 'kubernetes.NamespaceStatus',
      },
    })
    .registerVariable('object', 'dyn')
    .registerVariable('oldObject', 'dyn')
    .registerVariable('request', 'kubernetes.AdmissionRequest')
    .registerVariable('namespaceObject', 'kubernetes.Namespace')
    .registerVariable('authorizer', AUTHORIZER);

  // Conversions cel-go has that the engine lacks: int of a uint (in range) and of a timestamp
  // (its Unix seconds), and the identity conversions of timestamps and durations.
  env
    .registerFunction('int(uint): int', (u: { valueOf(): bigint | number }) => {
      const v = BigInt(u.valueOf());
      if (v > INT64_MAX) throw new RangeError('range error converting uint to int');
      return v;
    })
    .registerFunction(`int(${TIMESTAMP}): int`, (t: Date) => BigInt(Math.floor(t.getTime() / 1000)))
    .registerFunction(`timestamp(${TIMESTAMP}): ${TIMESTAMP}`, (t: Date) => t)
    .registerFunction('duration(google.protobuf.Duration): google.protobuf.Duration', (d: unknown) => d)
    // Bytes order as Go's bytes.Compare: unsigned, byte by byte, a prefix first.
    .registerOperator('bytes < bytes', (a: Uint8Array, b: Uint8Array) => compareBytes(a, b) < 0)
    .registerOperator('bytes <= bytes', (a: Uint8Array, b: Uint8Array) => compareBytes(a, b) <= 0)
    .registerOperator('bytes > bytes', (a: Uint8Array, b: Uint8Array) => compareBytes(a, b) > 0)
    .registerOperator('bytes >= bytes', (a: Uint8Array, b: Uint8Array) => compareBytes(a, b) >= 0)
    // cel-go compares any message-typed value with null; webhooks always see null here.
    .registerOperator('kubernetes.Namespace == null', (a: unknown, b: unknown) => a === b);

  // Authorizer library.
  env
    .registerFunction(
      `${AUTHORIZER}.path(string): ${PATH_CHECK}`,
      (a: AuthorizerValue, path: string) => new PathCheckValue(a, path),
    )
    .registerFunction(
      `${AUTHORIZER}.group(string): ${GROUP_CHECK}`,
      (a: AuthorizerValue, group: string) => new GroupCheckValue(a, group),
    )
    .registerFunction(`${AUTHORIZER}.serviceAccount(string, string): ${AUTHORIZER}`, serviceAccountAuthorizer)
    .registerFunction(
      `${GROUP_CHECK}.resource(string): ${RESOURCE_CHECK}`,
      (g: GroupCheckValue, resource: string) => new ResourceCheckValue(g.authorizer, { group: g.group, resource }),
    )
    .registerFunction(`${RESOURCE_CHECK}.subresource(string): ${RESOURCE_CHECK}`, (r: ResourceCheckValue, v: string) =>
      r.with('subresource', v),
    )
    .registerFunction(`${RESOURCE_CHECK}.namespace(string): ${RESOURCE_CHECK}`, (r: ResourceCheckValue, v: string) =>
      r.with('namespace', v),
    )
    .registerFunction(`${RESOURCE_CHECK}.name(string): ${RESOURCE_CHECK}`, (r: ResourceCheckValue, v: string) =>
      r.with('name', v),
    )
    .registerFunction(`${RESOURCE_CHECK}.check(string): ${DECISION}`, (r: ResourceCheckValue, verb: string) =>
      decide(r.authorizer, { verb, ...r.fields }),
    )
    .registerFunction(`${PATH_CHECK}.check(string): ${DECISION}`, (p: PathCheckValue, verb: string) =>
      decide(p.authorizer, { verb, path: p.path }),
    )
    .registerFunction(`${DECISION}.allowed(): bool`, (d: DecisionValue) => d.decision === 'Allow')
    .registerFunction(`${DECISION}.reason(): string`, (d: DecisionValue) => d.reason)
    .registerFunction(`${DECISION}.errored(): bool`, (d: DecisionValue) => d.decision === 'Error')
    .registerFunction(`${DECISION}.error(): string`, (d: DecisionValue) => d.error);

  // Lists library (k8s.io/apiserver/pkg/cel/library/lists.go).
  env
    .registerFunction('list<A>.isSorted(): bool', (l: unknown[]) =>
      l.every((v, i) => i === 0 || compare(l[i - 1], v) <= 0),
    )
    .registerFunction('list<A>.sum(): A', (l: unknown[]) => {
      if (l.some((v) => typeof v === 'number')) return l.reduce<number>((s, v) => s + Number(v), 0);
      if (l.some((v) => v instanceof Quantity)) throw new TypeError('sum is not defined for quantities');
      return l.reduce<bigint>((s, v) => s + (v as bigint), 0n);
    })
    .registerFunction('list<A>.min(): A', (l: unknown[]) => extreme(l, 'min', -1))
    .registerFunction('list<A>.max(): A', (l: unknown[]) => extreme(l, 'max', 1))
    .registerFunction(`list<A>.indexOf${RENAMED}(A): int`, (l: unknown[], v: unknown) =>
      BigInt(l.findIndex((x) => celEquals(x, v))),
    )
    .registerFunction(`list<A>.lastIndexOf${RENAMED}(A): int`, (l: unknown[], v: unknown) =>
      BigInt(l.findLastIndex((x) => celEquals(x, v))),
    )
    .registerFunction('list<A>.slice(int, int): list<A>', (l: unknown[], from: bigint, to: bigint) =>
      k8sLists.slice(l, from, to),
    );

  // Strings extension (cel-go ext.Strings as Kubernetes enables it), counting code points as Go
  // does: the engine's own versions (UTF-16) are never reached, screenNode points member calls of
  // these names at the `__k8s` overloads, and `string(…)` at string__k8s.
  const k = RENAMED;
  env
    .registerFunction('string.charAt(int): string', k8sStrings.charAt)
    .registerFunction('string.replace(string, string): string', (s: string, a: string, b: string) =>
      k8sStrings.replace(s, a, b),
    )
    .registerFunction('string.replace(string, string, int): string', k8sStrings.replace)
    .registerFunction(`string.indexOf${k}(string): int`, (s: string, sub: string) => k8sStrings.indexOf(s, sub))
    .registerFunction(`string.indexOf${k}(string, int): int`, k8sStrings.indexOf)
    .registerFunction(`string.lastIndexOf${k}(string): int`, (s: string, sub: string) => k8sStrings.lastIndexOf(s, sub))
    .registerFunction(`string.lastIndexOf${k}(string, int): int`, k8sStrings.lastIndexOf)
    .registerFunction(`string.lowerAscii${k}(): string`, k8sStrings.lowerAscii)
    .registerFunction(`string.upperAscii${k}(): string`, k8sStrings.upperAscii)
    .registerFunction(`string.trim${k}(): string`, k8sStrings.trim)
    .registerFunction(`string.substring${k}(int): string`, (s: string, from: bigint) => k8sStrings.substring(s, from))
    .registerFunction(`string.substring${k}(int, int): string`, k8sStrings.substring)
    .registerFunction(`string.split${k}(string): list<string>`, (s: string, sep: string) => k8sStrings.split(s, sep))
    .registerFunction(`string.split${k}(string, int): list<string>`, k8sStrings.split)
    .registerFunction(`list<string>.join${k}(): string`, (l: string[]) => k8sStrings.join(l))
    .registerFunction(`list<string>.join${k}(string): string`, k8sStrings.join)
    .registerFunction('string.format(list<dyn>): string', (s: string, args: unknown[]) =>
      stringFormat(s, args.map(formatArg)),
    )
    .registerType(STRINGS_NS, StringsNamespace)
    .registerConstant('strings', STRINGS_NS, new StringsNamespace())
    .registerFunction(`${STRINGS_NS}.quote(string): string`, (_: Namespace, s: string) => k8sStrings.quote(s));
  // string(…), with doubles formatted as Go's strconv 'g' (string(1e6) is '1e+06').
  env
    .registerFunction(`string${k}(string): string`, (v: string) => v)
    .registerFunction(`string${k}(bool): string`, (v: boolean) => String(v))
    .registerFunction(`string${k}(int): string`, (v: bigint) => String(v))
    .registerFunction(`string${k}(uint): string`, (v: unknown) => String(v))
    .registerFunction(`string${k}(bytes): string`, (v: Uint8Array) => UTF8.decode(v))
    .registerFunction(`string${k}(double): string`, goFormatFloat)
    .registerFunction(`string${k}(${TIMESTAMP}): string`, rfc3339)
    .registerFunction(`string${k}(google.protobuf.Duration): string`, (d: unknown) => String(d));

  // Regular expressions in RE2: the standard `matches` (the engine's own, in JavaScript
  // RegExp, is never reached: compileExpression points member calls at RE2_MATCHES) and the
  // regex library (k8s.io/apiserver/pkg/cel/library/regex.go).
  env
    .registerFunction(`string.${RE2_MATCHES}(string): bool`, regexMatches)
    .registerFunction('matches(string, string): bool', regexMatches)
    .registerFunction('string.find(string): string', regexFind)
    .registerFunction('string.findAll(string): list<string>', (s: string, pattern: string) => regexFindAll(s, pattern))
    .registerFunction('string.findAll(string, int): list<string>', (s: string, pattern: string, n: bigint) =>
      regexFindAll(s, pattern, n < 0n ? -1 : Number(n)),
    );

  // URL library (k8s.io/apiserver/pkg/cel/library/urls.go).
  env
    .registerFunction(`url(string): ${URL}`, parseUrl)
    .registerFunction('isURL(string): bool', isUrl)
    .registerFunction(`${URL}.getScheme(): string`, (u: UrlValue) => u.scheme)
    .registerFunction(`${URL}.getHost(): string`, (u: UrlValue) => u.host)
    .registerFunction(`${URL}.getHostname(): string`, (u: UrlValue) => u.hostname())
    .registerFunction(`${URL}.getPort(): string`, (u: UrlValue) => u.port())
    .registerFunction(`${URL}.getEscapedPath(): string`, (u: UrlValue) => u.escapedPath())
    .registerFunction(`${URL}.getQuery(): map<string, list<string>>`, (u: UrlValue) => Object.fromEntries(u.query()))
    .registerOperator(`${URL} == ${URL}`, (a: UrlValue, b: UrlValue) => a.equals(b));

  // Quantity library (k8s.io/apiserver/pkg/cel/library/quantity.go).
  const parse = (s: string): Quantity => {
    const q = parseQuantity(s);
    if (!q)
      throw new RangeError(
        `quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$': ${JSON.stringify(s)}`,
      );
    return q;
  };
  env
    .registerFunction(`quantity(string): ${QUANTITY}`, parse)
    .registerFunction('isQuantity(string): bool', (s: string) => parseQuantity(s) !== undefined)
    .registerFunction(`${QUANTITY}.sign(): int`, (q: Quantity) => q.sign())
    .registerFunction(`${QUANTITY}.isInteger(): bool`, (q: Quantity) => q.isInteger())
    .registerFunction(`${QUANTITY}.asInteger(): int`, (q: Quantity) => q.asInteger())
    .registerFunction(`${QUANTITY}.asApproximateFloat(): double`, (q: Quantity) => q.asApproximateFloat())
    .registerFunction(`${QUANTITY}.add(${QUANTITY}): ${QUANTITY}`, (a: Quantity, b: Quantity) => a.add(b))
    .registerFunction(`${QUANTITY}.add(int): ${QUANTITY}`, (a: Quantity, b: bigint) => a.add(quantityArg(b)))
    .registerFunction(`${QUANTITY}.sub(${QUANTITY}): ${QUANTITY}`, (a: Quantity, b: Quantity) => a.add(b.negate()))
    .registerFunction(`${QUANTITY}.sub(int): ${QUANTITY}`, (a: Quantity, b: bigint) => a.add(quantityArg(b).negate()))
    .registerFunction(`${QUANTITY}.isLessThan(${QUANTITY}): bool`, (a: Quantity, b: Quantity) => a.compareTo(b) < 0)
    .registerFunction(`${QUANTITY}.isGreaterThan(${QUANTITY}): bool`, (a: Quantity, b: Quantity) => a.compareTo(b) > 0)
    .registerFunction(`${QUANTITY}.compareTo(${QUANTITY}): int`, (a: Quantity, b: Quantity) => BigInt(a.compareTo(b)))
    .registerOperator(`${QUANTITY} == ${QUANTITY}`, (a: Quantity, b: Quantity) => a.compareTo(b) === 0);

  // Sets (k8s.io/apiserver/pkg/cel/library/sets.go), from 1.29.
  env
    .registerType(SETS_NS, SetsNamespace)
    .registerConstant('sets', SETS_NS, new SetsNamespace())
    .registerFunction(`${SETS_NS}.contains(list<A>, list<A>): bool`, (_: Namespace, a: unknown[], b: unknown[]) =>
      setsContains(a, b, celEquals),
    )
    .registerFunction(`${SETS_NS}.equivalent(list<A>, list<A>): bool`, (_: Namespace, a: unknown[], b: unknown[]) =>
      setsEquivalent(a, b, celEquals),
    )
    .registerFunction(`${SETS_NS}.intersects(list<A>, list<A>): bool`, (_: Namespace, a: unknown[], b: unknown[]) =>
      setsIntersects(a, b, celEquals),
    );

  // IP and CIDR (library/ip.go, cidr.go), from 1.30.
  env
    .registerType(IP, IpAddr)
    .registerType(CIDR, CidrPrefix)
    .registerType(IP_NS, IpNamespace)
    .registerConstant('ip', IP_NS, new IpNamespace())
    .registerFunction(`ip(string): ${IP}`, ip)
    .registerFunction('isIP(string): bool', isIP)
    .registerFunction(`${IP_NS}.isCanonical(string): bool`, (_: Namespace, v: string) => ipIsCanonical(v))
    .registerFunction(`${IP}.family(): int`, (a: IpAddr) => a.family())
    .registerFunction(`${IP}.isUnspecified(): bool`, (a: IpAddr) => a.isUnspecified())
    .registerFunction(`${IP}.isLoopback(): bool`, (a: IpAddr) => a.isLoopback())
    .registerFunction(`${IP}.isLinkLocalMulticast(): bool`, (a: IpAddr) => a.isLinkLocalMulticast())
    .registerFunction(`${IP}.isLinkLocalUnicast(): bool`, (a: IpAddr) => a.isLinkLocalUnicast())
    .registerFunction(`${IP}.isGlobalUnicast(): bool`, (a: IpAddr) => a.isGlobalUnicast())
    .registerFunction(`string${RENAMED}(${IP}): string`, (a: IpAddr) => a.toString())
    .registerOperator(`${IP} == ${IP}`, (a: IpAddr, b: IpAddr) => a.equals(b))
    .registerFunction(`cidr(string): ${CIDR}`, cidr)
    .registerFunction('isCIDR(string): bool', isCIDR)
    .registerFunction(`${CIDR}.containsIP(string): bool`, cidrContainsIPString)
    .registerFunction(`${CIDR}.containsIP(${IP}): bool`, (c: CidrPrefix, a: IpAddr) => c.containsIP(a))
    .registerFunction(`${CIDR}.containsCIDR(string): bool`, cidrContainsCIDRString)
    .registerFunction(`${CIDR}.containsCIDR(${CIDR}): bool`, (c: CidrPrefix, o: CidrPrefix) => c.containsCIDR(o))
    .registerFunction(`${CIDR}.ip(): ${IP}`, (c: CidrPrefix) => c.ip())
    .registerFunction(`${CIDR}.masked(): ${CIDR}`, (c: CidrPrefix) => c.masked())
    .registerFunction(`${CIDR}.prefixLength(): int`, (c: CidrPrefix) => c.prefixLength())
    .registerFunction(`string${RENAMED}(${CIDR}): string`, (c: CidrPrefix) => c.toString())
    .registerOperator(`${CIDR} == ${CIDR}`, (a: CidrPrefix, b: CidrPrefix) => a.equals(b));

  // Format (library/format.go), from 1.31: `format.<name>()`, `format.named(name)`, `validate`.
  env
    .registerType(FORMAT, FormatValue)
    .registerType(FORMAT_NS, FormatNamespace)
    .registerConstant('format', FORMAT_NS, new FormatNamespace());
  for (const name of Object.keys(FORMATS)) {
    env.registerFunction(`${FORMAT_NS}.${name}(): ${FORMAT}`, () => new FormatValue(FORMATS[name]!));
  }
  env
    .registerFunction(`${FORMAT_NS}.named(string): optional<${FORMAT}>`, (_: Namespace, name: string) => {
      const f = formatNamed(name);
      return f ? Optional.of(new FormatValue(f)) : Optional.none();
    })
    .registerFunction(`${FORMAT}.validate(string): optional<list<string>>`, (f: FormatValue, v: string) => {
      const errors = f.format.validate(v);
      return errors ? Optional.of(errors) : Optional.none();
    });

  // Semver (library/semverlib.go), from 1.33.
  env
    .registerType(SEMVER, Semver)
    .registerFunction(`semver(string): ${SEMVER}`, (v: string) => semver(v))
    .registerFunction(`semver(string, bool): ${SEMVER}`, semver)
    .registerFunction('isSemver(string): bool', (v: string) => isSemver(v))
    .registerFunction('isSemver(string, bool): bool', isSemver)
    .registerFunction(`${SEMVER}.major(): int`, (v: Semver) => v.major())
    .registerFunction(`${SEMVER}.minor(): int`, (v: Semver) => v.minor())
    .registerFunction(`${SEMVER}.patch(): int`, (v: Semver) => v.patch())
    .registerFunction(`${SEMVER}.isLessThan(${SEMVER}): bool`, (a: Semver, b: Semver) => a.compareTo(b) < 0)
    .registerFunction(`${SEMVER}.isGreaterThan(${SEMVER}): bool`, (a: Semver, b: Semver) => a.compareTo(b) > 0)
    .registerFunction(`${SEMVER}.compareTo(${SEMVER}): int`, (a: Semver, b: Semver) => BigInt(a.compareTo(b)))
    .registerOperator(`${SEMVER} == ${SEMVER}`, (a: Semver, b: Semver) => a.equals(b));

  // Lists version 3 (cel-go ext.Lists), from 1.34 (slice is above).
  env
    .registerType(LISTS_NS, ListsNamespace)
    .registerConstant('lists', LISTS_NS, new ListsNamespace())
    .registerFunction(`${LISTS_NS}.range(int): list<int>`, (_: Namespace, n: bigint) => k8sLists.range(n))
    .registerFunction('list<A>.reverse(): list<A>', (l: unknown[]) => k8sLists.reverse(l))
    .registerFunction('list<A>.distinct(): list<A>', (l: unknown[]) => k8sLists.distinct(l, celEquals))
    .registerFunction('list<dyn>.flatten(): list<dyn>', (l: unknown[]) => k8sLists.flatten(l))
    .registerFunction('list<dyn>.flatten(int): list<dyn>', (l: unknown[], depth: bigint) => k8sLists.flatten(l, depth))
    .registerFunction('list<A>.sort(): list<A>', (l: unknown[]) => k8sLists.sort(l, ORDERING));

  env.registerFunction(`${METER_PROBE}(): bool`, function (this: Evaluator) {
    probed = this;
    return true;
  });
  uintCtor = (env.evaluate('0u') as object).constructor;
  useUintClass(uintCtor);
  registerTwoVariableComprehensions(env);
  installMeter(env);
  return env;
}

/** The engine's evaluator (the part metered). */
type Evaluator = { run: (ast: ASTNode, ctx: unknown) => unknown };
/** The evaluator the probe call last handed over. */
let probed: Evaluator | undefined;

/**
 * Meters an environment's evaluations. The engine evaluates every operation through its
 * evaluator's `run`, and calls functions with the evaluator as `this`: a probe call hands it
 * over, and its `run` then charges one unit per operation against the meter (those cel-go charges
 * nothing for are free: literals, `&&`, `||`, `?:`). Each environment (a clone too) has its own.
 */
function installMeter(env: Environment): void {
  probed = undefined;
  env.evaluate(`${METER_PROBE}()`);
  const evaluator = probed as Evaluator | undefined;
  if (!evaluator) throw new Error('the CEL engine did not hand over its evaluator');
  evaluator.run = function (ast, ctx) {
    const charge = FREE.has(ast.op)
      ? ast.op === '?:' && isMacroStep(ast)
        ? MACRO_STEP_COST
        : 0
      : (ast.op as string) === 'accuPush'
        ? 1 + LIST_APPEND_COST
        : 1;
    if (charge && (meter.left -= charge) < 0) throw new CostLimitExceeded();
    return (ast as unknown as { evaluate(ev: unknown, ast: ASTNode, ctx: unknown): unknown }).evaluate(this, ast, ctx);
  };
}

/**
 * What cel-go charges for one step of an `all`, `exists`, `exists_one` or `filter` beyond its
 * predicate: the loop condition (a call and a read of the accumulator) and the step's read of
 * the accumulator. The engine runs such a step as a `?:` cloned from the predicate.
 */
const MACRO_STEP_COST = 3;
/**
 * What cel-go charges beyond a read for appending one element in `map` and `filter`: the
 * one-element list literal the step builds (ListCreateBaseCost, 10) and the list `+` (1).
 */
const LIST_APPEND_COST = 11;

/** A `?:` the engine made of a macro's predicate: it spans exactly the predicate. */
function isMacroStep(ast: ASTNode): boolean {
  const predicate = (ast.args as ASTNode[])[0];
  return !!predicate && predicate.start === ast.start && predicate.end === ast.end;
}

/** Operations cel-go charges no cost for. */
const FREE = new Set<string>(['value', '&&', '||', '?:']);

let environment: Environment | undefined;

/** The shared matchConditions environment, built on first use. */
export function matchConditionsEnvironment(): Environment {
  environment ??= buildEnvironment();
  return environment;
}

export { CostLimitExceeded, MATCH_CONDITIONS_COST_BUDGET, PER_CALL_COST_LIMIT } from './meter.ts';

/** A compiled condition expression. */
export interface CompiledExpression {
  /** The type the checker inferred (`bool` for a valid condition). */
  type: string;
  /** True when the expression reads the `authorizer` variable. */
  usesAuthorizer: boolean;
  /** Evaluates the expression, stopping past `limit` cost units (CostLimitExceeded). */
  run(variables: Record<string, unknown>, limit?: number): unknown;
  /** Cost units the last run spent (past the limit when it was stopped). */
  readonly lastCost: number;
}

/** A compile error: the checker's message, with the expression and the position. */
export interface CompileError {
  message: string;
  /** 1-based line and column of the error in the expression. */
  line: number;
  column: number;
}

function position(expression: string, offset: number): { line: number; column: number } {
  const before = expression.slice(0, Math.max(0, offset));
  const lines = before.split('\n');
  return { line: lines.length, column: lines.at(-1)!.length + 1 };
}

function mentions(node: unknown, name: string): boolean {
  if (!node || typeof node !== 'object') return false;
  if (Array.isArray(node)) return node.some((n) => mentions(n, name));
  const ast = node as ASTNode;
  if (ast.op === 'id') return ast.args === name;
  return mentions(ast.args, name);
}

/** A refusal found in the parsed expression: the message and where it is. */
interface Refusal {
  summary: string;
  range: { start: number };
}

const undeclared = (name: string, node: ASTNode): Refusal => ({
  summary: `undeclared reference to '${name}' (in container '')`,
  range: { start: node.start },
});

/**
 * Walks the parsed expression before checking: refuses what the API server's environment
 * lacks (`cel.bind`, the engine's byte helpers, the internal names) and regex literals RE2
 * rejects (the API server validates them at compile time), and points member calls of
 * `matches` at the RE2 overload.
 */
function screen(node: ASTNode, minor: number): Refusal | undefined {
  return featureRefusal(node, minor, 'operator') ?? featureRefusal(node, minor, 'function') ?? screenNode(node, minor);
}

/** The child nodes of a parsed node. */
function childrenOf(node: ASTNode): ASTNode[] {
  const children: unknown[] = Array.isArray(node.args) ? node.args : [node.args];
  return children
    .flat()
    .filter((c): c is ASTNode => !!c && typeof c === 'object' && typeof (c as ASTNode).op === 'string');
}

/**
 * The first use, innermost first as cel-go reports it, of a feature the environment of
 * `minor` lacks: optional syntax (the parser's error, reported before any checker's), or a
 * function of a library it does not have yet.
 */
function featureRefusal(node: ASTNode, minor: number, kind: 'operator' | 'function'): Refusal | undefined {
  if (node.op === 'value') return undefined;
  for (const child of childrenOf(node)) {
    const refusal = featureRefusal(child, minor, kind);
    if (refusal) return refusal;
  }
  if (kind === 'operator') {
    if ((node.op === '.?' || node.op === '[?]') && missingFeature('operator', node.op, minor)) {
      return { summary: `unsupported syntax '${node.op === '.?' ? '.?' : '[?'}'`, range: { start: node.start } };
    }
    return undefined;
  }
  if (node.op === 'rcall') {
    const receiver = node.args[1] as ASTNode;
    const name = node.args[0] as string;
    if (receiver.op === 'id' && missingFeature('global', receiver.args as string, minor))
      return undeclared(receiver.args as string, receiver);
    // `all` and `exists` with two variables are the two-variable comprehensions' (as `existsOne`).
    const twoVariables = (name === 'all' || name === 'exists') && (node.args[2] as ASTNode[]).length === 3;
    if (missingFeature('member', twoVariables ? 'existsOne' : name, minor)) return undeclared(name, node);
  } else if (node.op === 'call' && missingFeature('global', node.args[0] as string, minor))
    return undeclared(node.args[0] as string, node);
  return undefined;
}

/** Conversions whose literal argument the API server checks when a configuration is created. */
const CONVERSIONS = new Set(['int', 'uint', 'timestamp', 'duration']);
/** The minor version whose environment validates timestamp and duration literals (cel.ASTValidators). */
const LITERAL_VALIDATORS_SINCE = 29;
/** What literal() answers for a node that is not a literal. */
const NOT_LITERAL = Symbol('not a literal');
/** 2^63 as a double: the first double int() refuses (Go's math.MaxInt64 converts to it). */
const TWO_TO_63 = 2 ** 63;

/** The value of a literal node, a negated number literal included; NOT_LITERAL otherwise. */
function literal(node: ASTNode): unknown {
  if (node.op === 'value') return node.args;
  if (node.op === '-_' && (node.args as ASTNode).op === 'value') {
    const v = (node.args as ASTNode).args;
    if (typeof v === 'number' || typeof v === 'bigint') return -v;
  }
  return NOT_LITERAL;
}

/**
 * Why a conversion of a literal fails, as the API server refuses it when a configuration is
 * created (the literal validators of 1.29 for timestamp and duration; the range of int and uint).
 */
function foldingProblem(name: string, value: unknown, minor: number): string | undefined {
  if (name === 'int' && typeof value === 'number' && !(value > -TWO_TO_63 && value < TWO_TO_63))
    return 'range error converting double to int';
  if (
    name === 'uint' &&
    (typeof value === 'number' || typeof value === 'bigint') &&
    (value < 0 || (typeof value === 'number' && !(value < 2 * TWO_TO_63)))
  ) {
    return `range error converting ${typeof value === 'number' ? 'double' : 'int'} to uint`;
  }
  if ((name === 'timestamp' || name === 'duration') && typeof value === 'string' && minor >= LITERAL_VALIDATORS_SINCE) {
    try {
      matchConditionsEnvironment().evaluate(`${name}(${JSON.stringify(value)})`);
    } catch {
      return `invalid ${name} argument`;
    }
  }
  return undefined;
}

/** A run of an even number of `!` or `-` before an operand, which cel-go's parser drops. */
function collapsed(node: ASTNode): ASTNode {
  let n = node;
  while ((n.op === '!_' || n.op === '-_') && (n.args as ASTNode).op === n.op) n = (n.args as ASTNode).args as ASTNode;
  return n;
}

function screenNode(node: ASTNode, minor: number): Refusal | undefined {
  if (node.op === 'value') return undefined;
  // cel-go's parser reads `!!x` and `--x` as `x` (an even run cancels out): children are
  // replaced by what they collapse to, so the checker sees what cel-go's sees.
  if (Array.isArray(node.args)) {
    const args = node.args as unknown[];
    for (let i = 0; i < args.length; i++) {
      const child = args[i] as ASTNode | undefined;
      if (child && typeof child === 'object' && (child.op === '!_' || child.op === '-_')) args[i] = collapsed(child);
    }
  } else if (
    node.args &&
    typeof node.args === 'object' &&
    ((node.args as ASTNode).op === '!_' || (node.args as ASTNode).op === '-_')
  ) {
    (node as unknown as { args: ASTNode }).args = collapsed(node.args as ASTNode);
  }
  if (node.op === 'rcall' || node.op === 'call') {
    const member = node.op === 'rcall';
    const name = node.args[0] as string;
    const args = (member ? node.args[2] : node.args[1]) as ASTNode[];
    if (name === METER_PROBE || name.endsWith(RENAMED) || name.endsWith('__re2')) return undeclared(name, node);
    if (member) {
      const receiver = node.args[1] as ASTNode;
      if (name === 'bind' && receiver.op === 'id' && receiver.args === 'cel') return undeclared('cel', receiver);
      if (NOT_IN_KUBERNETES.has(name)) return undeclared(name, node);
    }
    if (!member && CONVERSIONS.has(name) && args.length === 1 && literal(args[0]!) !== NOT_LITERAL) {
      const problem = foldingProblem(name, literal(args[0]!), minor);
      if (problem) return { summary: problem, range: { start: node.start } };
    }
    if (REGEX_FUNCTIONS.has(name)) {
      const pattern = args[member ? 0 : 1];
      if (pattern?.op === 'value' && typeof pattern.args === 'string') {
        const problem = regexProblem(pattern.args);
        if (problem) return { summary: `invalid ${name} argument: ${problem}`, range: { start: pattern.start } };
      }
    }
    if (member && name === 'matches' && args.length === 1) (node.args as unknown as unknown[])[0] = RE2_MATCHES;
    else if (member ? MEMBER_RENAMES.has(name) : GLOBAL_RENAMES.has(name)) {
      (node.args as unknown as unknown[])[0] = name + RENAMED;
    }
  }
  const children: unknown[] = Array.isArray(node.args) ? node.args : [node.args];
  for (const child of children.flat()) {
    if (child && typeof child === 'object' && typeof (child as ASTNode).op === 'string') {
      const refusal = screenNode(child as ASTNode, minor);
      if (refusal) return refusal;
    }
  }
  return undefined;
}

/** Options of compileExpression. */
export interface CompileOptions {
  /** False only parses (no type check). */
  typeCheck?: boolean;
  /** The Kubernetes version whose environment compiles it; the newest modelled by default. */
  kubeVersion?: CelKubeVersion;
  /**
   * `create`: as the API server compiles a configuration being created or updated (its
   * compatibility version's environment, one minor version back); `stored` (the default): as
   * it evaluates expressions already stored (everything its version knows).
   */
  mode?: ExpressionMode;
  /**
   * Further variables, name to CEL type (`list<int>`), declared beside the environment's own:
   * for testing the environment on expressions written for other declarations.
   */
  declarations?: Record<string, string>;
}

/**
 * Parses and type-checks an expression in the matchConditions environment. Returns the
 * compiled expression, or the error the API server would report at registration.
 * `typeCheck: false` only parses (in-function enforcement: lint has checked the types, and
 * a cold start should not pay for it again); the type is then `unchecked`.
 */
export function compileExpression(expression: string, options: CompileOptions = {}): CompiledExpression | CompileError {
  let env = matchConditionsEnvironment();
  if (options.declarations) {
    env = env.clone();
    for (const [name, type] of Object.entries(options.declarations)) env.registerVariable(name, type);
    installMeter(env);
  }
  let parsed: ParseResult;
  let type = 'unchecked';
  try {
    try {
      parsed = env.parse(expression);
    } catch (err) {
      return compileError(expression, err);
    }
    const refusal = screen(parsed.ast, environmentMinor(options.kubeVersion, options.mode));
    if (refusal) return compileError(expression, refusal, false);
    adoptCelGoSemantics(parsed.ast as never);
    if (options.typeCheck !== false) {
      const checked = parsed.check();
      if (!checked.valid) return compileError(expression, checked.error);
      type = String(checked.type);
    }
  } catch (err) {
    // An expression nested past what the walkers' stack holds (a 10,000-term `1+1+…`) is
    // refused as cel-go's parser refuses one past its recursion limit.
    if (err instanceof RangeError) return compileError(expression, { summary: RECURSION_LIMIT_MESSAGE });
    throw err;
  }
  let lastCost = 0;
  return {
    type,
    usesAuthorizer: mentions(parsed.ast, 'authorizer'),
    get lastCost() {
      return lastCost;
    },
    run(variables, limit = PER_CALL_COST_LIMIT) {
      // The engine runs the root operation itself, not through `run`: charged here.
      meter.left = FREE.has(parsed.ast.op) ? limit : limit - 1;
      try {
        const value = parsed(variables);
        // An operator that absorbs errors (`||`, `&&`) may have absorbed the stop.
        if (meter.left < 0) throw new CostLimitExceeded();
        return value;
      } catch (err) {
        throw meter.left < 0 ? new CostLimitExceeded() : internalNames(err);
      } finally {
        lastCost = limit - meter.left;
        meter.left = Number.POSITIVE_INFINITY;
      }
    },
  };
}

/** cel-go's words for a key or field a map lacks, which the engine capitalizes. */
const NO_SUCH_KEY = /^No such key: /;

/**
 * An evaluation error in cel-go's words: the internal name of `matches` given back its own,
 * and a missing key as `no such key: <name>`.
 */
function internalNames(err: unknown): unknown {
  if (!err || typeof err !== 'object') return err;
  for (const key of ['message', 'summary'] as const) {
    const said = (err as Record<string, unknown>)[key];
    if (typeof said !== 'string') continue;
    const words = userNames(said).replace(NO_SUCH_KEY, 'no such key: ');
    // The engine's `summary` is a getter: the corrected words are defined over it.
    if (words !== said) Object.defineProperty(err, key, { value: words, configurable: true, writable: true });
  }
  return err;
}

/** A message with the environment's internal names given back as the user wrote them. */
function userNames(said: string): string {
  return said.replace(INTERNAL_NAME, '$1').replace(NAMESPACE_TYPE, '$1');
}

/** The type cel-go names a value by in messages, for values the formatter does not format. */
function celTypeName(v: unknown): string {
  const name = (v as object)?.constructor?.name;
  if (name === 'Duration') return 'google.protobuf.Duration';
  return name === 'Date' ? 'google.protobuf.Timestamp' : String(name);
}

/** A CEL value as string.format sees it. */
function formatArg(v: unknown): FormatArg {
  if (typeof v === 'bigint') return { type: 'int', value: v };
  if (typeof v === 'number') return { type: 'double', value: v };
  if (typeof v === 'boolean') return { type: 'bool', value: v };
  if (typeof v === 'string') return { type: 'string', value: v };
  if (v === null || v === undefined) return { type: 'null' };
  if (v instanceof Uint8Array) return { type: 'bytes', value: v };
  if (Array.isArray(v)) return { type: 'list', items: v.map(formatArg) };
  if (v instanceof Map) return { type: 'map', entries: [...v].map(([a, b]) => [formatArg(a), formatArg(b)] as const) };
  if (v instanceof Date) return { type: 'timestamp', text: rfc3339(v) };
  const ctor = (v as object).constructor;
  if (ctor === uintCtor) return { type: 'uint', value: BigInt((v as { valueOf(): bigint }).valueOf()) };
  if (ctor?.name === 'Duration') return { type: 'duration', text: String(v) };
  if (ctor?.name === 'Type') return { type: 'type', name: (v as { name: string }).name };
  if (ctor === Object || ctor === undefined) {
    return { type: 'map', entries: Object.entries(v as object).map(([a, b]) => [formatArg(a), formatArg(b)] as const) };
  }
  return { type: 'other', typeName: celTypeName(v) };
}

/** A timestamp as Go's RFC 3339 with nanoseconds, trailing zeros of the fraction dropped. */
function rfc3339(d: Date): string {
  return d.toISOString().replace(/\.?0*Z$/, 'Z');
}

/** The engine's class of uint values, found when the environment is built. */
let uintCtor: unknown;

function compileError(expression: string, err: unknown, renamed = true): CompileError {
  const e = err as { summary?: string; message?: string; range?: { start: number } };
  const { line, column } = position(expression, e.range?.start ?? 0);
  const said = (e.summary ?? e.message ?? String(err)).replace(/^Exceeded maxDepth \(\d+\)/, RECURSION_LIMIT_MESSAGE);
  // The checker names the RE2 overload of `matches`, which the user wrote as `matches`.
  const summary = renamed ? userNames(said) : said;
  return {
    message: `compilation failed: ERROR: <input>:${line}:${column}: ${summary}\n | ${expression.split('\n')[line - 1] ?? ''}\n | ${' '.repeat(column - 1)}^`,
    line,
    column,
  };
}

/** cel-go's parser refuses expressions nested deeper than this (parser.MaxRecursionDepth). */
const MAX_RECURSION_DEPTH = 250;
/** cel-go's words for an expression past its recursion limit. */
const RECURSION_LIMIT_MESSAGE = `expression recursion limit exceeded: ${MAX_RECURSION_DEPTH}`;

/** True when a compile result is an error. */
export function isCompileError(result: CompiledExpression | CompileError): result is CompileError {
  return !('run' in result);
}

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
