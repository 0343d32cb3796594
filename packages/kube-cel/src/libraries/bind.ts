/**
 * The Kubernetes CEL libraries of the environment before 1.29 as the API server declares them: lists,
 * the strings extension (by code point, as Go), RE2 regular expressions,
 * URLs and quantities.
 */
import type { Environment } from '../engine.ts';
import type { Duration } from '../engine.ts';
import * as k8sLists from './lists.ts';
import { stringFormat, type FormatArg } from './strformat.ts';
import * as k8sStrings from './strings.ts';
import { Quantity } from './quantity.ts';
import { parseQuantity, parseQuantityOrThrow, quantityOf } from './quantity-parse.ts';
import { regexFind, regexFindAll, regexMatches } from './regex.ts';
import { RE2_MATCHES, RENAMED } from '../check/messages.ts';
import {
  celEquals as engineEquals,
  compareStrings,
  type Engine,
  isEngineValue,
  isUint,
  numeric,
  uintOf,
} from '../evaluate/equality.ts';
import { isUrl, parseUrl, UrlValue } from './url.ts';
import { addDurations, compareTime, durationOf, formatDuration, formatTimestamp, isDuration } from './time.ts';

/**
 * Two list elements compared as cel-go's Compare: -1, 0 or 1; numbers of any kind by value (int and
 * uint exactly, with a double through float64); NaN where cel-go's Compare answers an error (values of
 * different types, a NaN), which the Kubernetes lists library passes over (lists.go: `isSorted`,
 * `min` and `max` only act on a result of -1 or 1).
 */
function compare(a: unknown, b: unknown): number {
  if (a instanceof Quantity && b instanceof Quantity) return a.compareTo(b);
  const time = compareTime(a, b);
  if (time !== undefined) return time;
  const x = numeric(a);
  const y = numeric(b);
  if (x !== undefined && y !== undefined) {
    const [l, r] = typeof x === 'bigint' && typeof y === 'bigint' ? [x, y] : [Number(x), Number(y)];
    return l < r ? -1 : l > r ? 1 : l === r ? 0 : Number.NaN;
  }
  if (typeof a === 'string' && typeof b === 'string') return compareStrings(a, b);
  const sameType = typeof a === typeof b && (typeof a !== 'object' || a?.constructor === b?.constructor);
  if (!sameType || a === null) return Number.NaN;
  // Both of one primitive type (or one class): the operators compare them as CEL orders them.
  return (a as number) < (b as number) ? -1 : (a as number) > (b as number) ? 1 : 0;
}

function extreme(list: unknown[], name: string, sign: number): unknown {
  if (!list.length) throw new RangeError(`${name} called on empty list`);
  return list.reduce((best, v) => (compare(v, best) * sign > 0 ? v : best));
}

function quantityArg(value: Quantity | bigint): Quantity {
  return typeof value === 'bigint' ? quantityOf(value) : value;
}

const QUANTITY = 'kubernetes.Quantity';
const URL = 'kubernetes.URL';
/** The largest int64. */
const INT64_MAX = 2n ** 63n - 1n;
/** The type of the namespace receiver `strings` (`strings.quote`). */
const STRINGS_NS = 'kubernetes.lib.strings';
/** The value of a library namespace (`strings`, `sets`): a receiver that holds nothing. */
export class Namespace {}
// One class per namespace: the engine knows a value's type by its class.
class StringsNamespace extends Namespace {}
/** A uint's bigint; any other value as it is. */
function unwrapUint(v: unknown): unknown {
  return isUint(v) ? (v as { valueOf(): bigint }).valueOf() : v;
}
/** How `sort()` orders values: those of one comparable type, as CEL's `<`. */
export const ORDERING: k8sLists.CelOrdering = {
  comparableType(v) {
    if (typeof v === 'bigint') return 'int';
    if (typeof v === 'number') return 'double';
    if (typeof v === 'string' || typeof v === 'boolean') return typeof v === 'string' ? 'string' : 'bool';
    if (v instanceof Date) return 'google.protobuf.Timestamp';
    if (isDuration(v)) return 'google.protobuf.Duration';
    if (isUint(v)) return 'uint';
    return undefined;
  },
  compare(a, b) {
    const time = compareTime(a, b);
    if (time !== undefined) return time;
    if (typeof a === 'string' && typeof b === 'string') return compareStrings(a, b);
    const x = unwrapUint(a) as number;
    const y = unwrapUint(b) as number;
    return x < y ? -1 : x > y ? 1 : 0;
  },
};
/** The type cel-go names a value by in messages, for values the formatter does not format. */
function celTypeName(v: unknown): string {
  if (isEngineValue(v, 'duration')) return 'google.protobuf.Duration';
  return v instanceof Date ? 'google.protobuf.Timestamp' : String((v as object)?.constructor?.name);
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
  if (v instanceof Date) return { type: 'timestamp', text: formatTimestamp(v) };
  const ctor = (v as object).constructor;
  if (isUint(v)) return { type: 'uint', value: BigInt((v as { valueOf(): bigint }).valueOf()) };
  if (isDuration(v)) return { type: 'duration', text: formatDuration(v) };
  if (isEngineValue(v, 'type')) return { type: 'type', name: (v as { name: string }).name };
  if (ctor === Object || ctor === undefined) {
    return { type: 'map', entries: Object.entries(v as object).map(([a, b]) => [formatArg(a), formatArg(b)] as const) };
  }
  return { type: 'other', typeName: celTypeName(v) };
}

/** The largest uint64. */
const UINT64_MAX = 18446744073709551615n;
/** The element types the lists library sums, and those it compares (isSorted, min, max). */
const SUMMABLE = ['int', 'uint', 'double', 'google.protobuf.Duration'];
const COMPARABLE = [...SUMMABLE, 'bool', 'string', 'bytes', 'google.protobuf.Timestamp'];

/** `sum()` of durations: a duration (zero for none), int64 overflow an error. */
function sumDurations(l: Duration[]): Duration {
  return l.reduce(addDurations, durationOf(0n));
}

/** The kind of a summable value: its `typeof`, or its class for uints and durations. */
function summand(v: unknown): unknown {
  return v !== null && typeof v === 'object' ? v.constructor : typeof v;
}

/** `sum()`: numbers add as their type (ints and uints overflow as cel-go's do), durations as durations. */

function sumOf(l: unknown[]): unknown {
  // cel-go's Add takes only its own type: the list's overload is chosen by its first element, and an
  // element of another kind is `no such overload` (lists.go sum, common/types int.go Add).
  if (l.some((v) => summand(v) !== summand(l[0]))) throw new TypeError('no such overload');
  if (typeof l[0] === 'number') return l.reduce<number>((s, v) => s + Number(v), 0);
  if (isDuration(l[0])) return sumDurations(l as Duration[]);
  const total = l.reduce<bigint>((s, v) => s + BigInt(unwrapUint(v) as bigint), 0n);
  const uint = l.length > 0 && unwrapUint(l[0]) !== l[0];
  if (uint ? total > UINT64_MAX : total > INT64_MAX || total < -INT64_MAX - 1n)
    throw new RangeError(uint ? 'unsigned integer overflow' : 'integer overflow');
  return uint ? uintOf(total) : total;
}

/**
 * The `sum()` overload of `type`: cel-go adds the elements to that type's zero, so a list sums to
 * a value of its elements' type (`[1u, 2u].sum()` is `3u`) and an empty one to the zero of the
 * overload the checker chose (lists.go, zeroValuesOfSummableTypes).
 */
function sumAs(type: string): (l: unknown[]) => unknown {
  if (type === 'google.protobuf.Duration') return (l) => sumDurations(l as Duration[]);
  const zero = () => (type === 'double' ? 0 : type === 'uint' ? uintOf(0n) : 0n);
  return (l) => (l.length === 0 ? zero() : sumOf(l));
}

/**
 * Lists library (k8s.io/apiserver/pkg/cel/library/lists.go), as the library declares it: sum for
 * numbers and durations, isSorted, min and max for comparable types only.
 */
export function registerLists(env: Environment): void {
  for (const t of SUMMABLE) env.registerFunction(`list<${t}>.sum(): ${t}`, sumAs(t));
  for (const t of COMPARABLE) {
    env
      .registerFunction(`list<${t}>.isSorted(): bool`, (l: unknown[]) =>
        l.every((v, i) => i === 0 || !(compare(l[i - 1], v) > 0)),
      )
      .registerFunction(`list<${t}>.min(): ${t}`, (l: unknown[]) => extreme(l, 'min', -1))
      .registerFunction(`list<${t}>.max(): ${t}`, (l: unknown[]) => extreme(l, 'max', 1));
  }
  env
    .registerFunction(`list<A>.indexOf${RENAMED}(A): int`, function (this: Engine, l: unknown[], v: unknown) {
      return BigInt(l.findIndex((x) => engineEquals(this, x, v)));
    })
    .registerFunction(`list<A>.lastIndexOf${RENAMED}(A): int`, function (this: Engine, l: unknown[], v: unknown) {
      return BigInt(l.findLastIndex((x) => engineEquals(this, x, v)));
    });
  // A dyn list and an element of another type at run time (`object.ints.indexOf(2.0)`): cel-go's
  // one overload compares them by value, as `==` does.
  env
    .registerFunction(`list<dyn>.indexOf${RENAMED}(dyn): int`, function (this: Engine, l: unknown[], v: unknown) {
      return BigInt(l.findIndex((x) => engineEquals(this, x, v)));
    })
    .registerFunction(`list<dyn>.lastIndexOf${RENAMED}(dyn): int`, function (this: Engine, l: unknown[], v: unknown) {
      return BigInt(l.findLastIndex((x) => engineEquals(this, x, v)));
    })
    .registerFunction('list<A>.slice(int, int): list<A>', (l: unknown[], from: bigint, to: bigint) =>
      k8sLists.slice(l, from, to),
    );
}

/** Strings extension (cel-go ext.Strings as Kubernetes enables it), counting code points as Go does: the engine's own versions (UTF-16) are never reached, screenNode points member calls of these names at the `__k8s` overloads (`string(…)`: string-conversions.ts, in every environment). */
export function registerStrings(env: Environment): void {
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
}

/** Regular expressions in RE2: the standard `matches` (the engine's own, in JavaScript RegExp, is never reached: member calls are pointed at RE2_MATCHES) and the regex library (library/regex.go). */
export function registerRegex(env: Environment): void {
  env
    .registerFunction(`string.${RE2_MATCHES}(string): bool`, regexMatches)
    .registerFunction('matches(string, string): bool', regexMatches)
    .registerFunction('string.find(string): string', regexFind)
    .registerFunction('string.findAll(string): list<string>', (s: string, pattern: string) => regexFindAll(s, pattern))
    .registerFunction('string.findAll(string, int): list<string>', (s: string, pattern: string, n: bigint) =>
      regexFindAll(s, pattern, n < 0n ? -1 : Number(n)),
    );
}

/**
 * Each URL value's query map, built once: cel-go charges `getQuery()` one unit whatever the URL's
 * size (its parse is charged by `url()`), so repeated calls on one value must not repeat the work.
 */
const QUERIES = new WeakMap<UrlValue, Record<string, string[]>>();
function queryOf(u: UrlValue): Record<string, string[]> {
  let query = QUERIES.get(u);
  if (!query) QUERIES.set(u, (query = Object.fromEntries(u.query())));
  return query;
}

/** URL library (k8s.io/apiserver/pkg/cel/library/urls.go). */
export function registerUrls(env: Environment): void {
  env.registerType(URL, UrlValue);
  env
    .registerFunction(`url(string): ${URL}`, parseUrl)
    .registerFunction('isURL(string): bool', isUrl)
    .registerFunction(`${URL}.getScheme(): string`, (u: UrlValue) => u.scheme)
    .registerFunction(`${URL}.getHost(): string`, (u: UrlValue) => u.host)
    .registerFunction(`${URL}.getHostname(): string`, (u: UrlValue) => u.hostname())
    .registerFunction(`${URL}.getPort(): string`, (u: UrlValue) => u.port())
    .registerFunction(`${URL}.getEscapedPath(): string`, (u: UrlValue) => u.escapedPath())
    .registerFunction(`${URL}.getQuery(): map<string, list<string>>`, queryOf)
    .registerOperator(`${URL} == ${URL}`, (a: UrlValue, b: UrlValue) => a.equals(b));
}

/** Quantity library (k8s.io/apiserver/pkg/cel/library/quantity.go). */
export function registerQuantity(env: Environment): void {
  env.registerType(QUANTITY, Quantity);
  env
    .registerFunction(`quantity(string): ${QUANTITY}`, parseQuantityOrThrow)
    .registerFunction('isQuantity(string): bool', (s: string) => parseQuantity(s) !== undefined)
    // A global function in the API server's declarations: `sign(q)`, not `q.sign()`.
    .registerFunction(`sign(${QUANTITY}): int`, (q: Quantity) => q.sign())
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
}
