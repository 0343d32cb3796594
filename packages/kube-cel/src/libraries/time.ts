/**
 * Timestamps and durations as cel-go has them (Go's time.Time and time.Duration), nanoseconds end
 * to end: parsing, string(), comparison and equality, `+` and `-` in every order cel-go declares
 * (`duration + timestamp` included), the range and overflow errors, the accessors in UTC or in a
 * zone (`'Europe/Paris'`, `'+05:30'`), int() of both, with cel-go's messages. The engine keeps a
 * timestamp as a Date (milliseconds) and a duration as its Duration class: a timestamp here is a
 * Date that also carries its nanoseconds below the millisecond and the offset it was written with,
 * and every operation on the two is this module's, set on the nodes of an expression (TIME_WRAPPERS).
 */
import { Duration } from '../engine.ts';
import * as go from './gotime.ts';

type Handle = (...args: unknown[]) => unknown;
/** The timestamp and duration type names. */
/** The timestamp type's name. */
export const TIMESTAMP = 'google.protobuf.Timestamp';
const DURATION = 'google.protobuf.Duration';
const NS_PER_SECOND = 1_000_000_000n;

/** What a timestamp keeps that its Date cannot: the nanoseconds below the millisecond, its offset. */
const EXTRA = Symbol('timestamp nanoseconds and offset');
type Stamp = Date & { [EXTRA]?: { sub: number; offset: number } };

/** The CEL timestamp of an instant. */
export function timestampOf(t: go.Instant): Date {
  const stamp: Stamp = new Date(t.seconds * 1000 + Math.floor(t.nanos / 1e6));
  const sub = t.nanos % 1e6;
  if (sub || t.offset) stamp[EXTRA] = { sub, offset: t.offset };
  return stamp;
}

/** The instant of a CEL timestamp. */
export function instantOf(d: Date): go.Instant {
  const ms = d.getTime();
  const seconds = Math.floor(ms / 1000);
  const extra = (d as Stamp)[EXTRA];
  return { seconds, nanos: (ms - seconds * 1000) * 1e6 + (extra?.sub ?? 0), offset: extra?.offset ?? 0 };
}

/** True for a CEL duration. */
export function isDuration(v: unknown): v is Duration {
  return v instanceof Duration;
}

/** The CEL duration of so many nanoseconds. */
export function durationOf(ns: bigint): Duration {
  return new Duration(ns / NS_PER_SECOND, Number(ns % NS_PER_SECOND));
}

/** A CEL duration's nanoseconds. */
export function nanosOf(d: Duration): bigint {
  return d.seconds * NS_PER_SECOND + BigInt(Math.trunc(d.nanos));
}

/** cel-go's message for a conversion it refuses. */
function conversionError(from: string, to: string): go.TimeError {
  return new go.TimeError(`type conversion error from '${from}' to '${to}'`);
}

/** timestamp(string): RFC 3339 as Go parses it, within 0001-01-01..9999-12-31. */
export function parseTimestamp(s: string): Date {
  const t = go.parseRfc3339(s);
  if (!t) throw conversionError('string', TIMESTAMP);
  if (t.seconds < go.MIN_UNIX_SECONDS || t.seconds > go.MAX_UNIX_SECONDS) throw new go.TimeError(go.TIMESTAMP_OVERFLOW);
  return timestampOf(t);
}

/** timestamp(int): Unix seconds, in UTC. */
export function timestampOfSeconds(seconds: bigint): Date {
  if (seconds < go.MIN_UNIX_SECONDS || seconds > go.MAX_UNIX_SECONDS) throw new go.TimeError(go.TIMESTAMP_OVERFLOW);
  return timestampOf({ seconds: Number(seconds), nanos: 0, offset: 0 });
}

/** duration(string): Go's duration syntax (`1h2m3.5s`, `-1.5h`, `1us`, `1µs`). */
export function parseDuration(s: string): Duration {
  const ns = go.parseGoDuration(s);
  if (ns === undefined) throw conversionError('string', DURATION);
  return durationOf(ns);
}

/** string(timestamp): Go's RFC3339Nano, with the offset the timestamp was written with. */
export function formatTimestamp(d: Date): string {
  return go.formatRfc3339Nano(instantOf(d));
}

/** string(duration): the seconds, shortest, then `s`. */
export function formatDuration(d: Duration): string {
  return go.formatDuration(nanosOf(d));
}

/** True for the zero value cel-go's optional.ofNonZeroValue skips: Go's zero time (0001-01-01T00:00:00Z), a zero duration. */
export function isZeroTime(v: unknown): boolean | undefined {
  if (v instanceof Date) {
    const t = instantOf(v);
    return t.seconds === go.MIN_UNIX_SECONDS && t.nanos === 0;
  }
  return isDuration(v) ? nanosOf(v) === 0n : undefined;
}

/** -1, 0 or 1 for two timestamps or two durations; undefined for other values. */
export function compareTime(a: unknown, b: unknown): number | undefined {
  if (a instanceof Date && b instanceof Date) return go.compareInstants(instantOf(a), instantOf(b));
  if (isDuration(a) && isDuration(b)) {
    const d = nanosOf(a) - nanosOf(b);
    return d < 0n ? -1 : d > 0n ? 1 : 0;
  }
  return undefined;
}

/** Two durations added, int64 overflow an error. */
export function addDurations(a: Duration, b: Duration): Duration {
  return durationOf(go.checkedDuration(nanosOf(a) + nanosOf(b)));
}

/** `a + b` of timestamps and durations in the orders cel-go declares; undefined for other operands. */
function sum(a: unknown, b: unknown): unknown {
  if (isDuration(a) && isDuration(b)) return addDurations(a, b);
  if (a instanceof Date && isDuration(b)) return timestampOf(go.addToInstant(instantOf(a), nanosOf(b)));
  if (isDuration(a) && b instanceof Date) return timestampOf(go.addToInstant(instantOf(b), nanosOf(a)));
  return undefined;
}

/** `a - b` of timestamps and durations; undefined for other operands. */
function difference(a: unknown, b: unknown): unknown {
  if (isDuration(a) && isDuration(b)) return durationOf(go.checkedDuration(nanosOf(a) - nanosOf(b)));
  // As cel-go: the duration negated first (the most negative one cannot be), then added.
  if (a instanceof Date && isDuration(b))
    return timestampOf(go.addToInstant(instantOf(a), go.checkedDuration(-nanosOf(b))));
  if (a instanceof Date && b instanceof Date) return durationOf(go.instantDifference(instantOf(a), instantOf(b)));
  return undefined;
}

/** The timestamp accessors: the field of the timestamp's calendar time in a zone (UTC by default). */
const TIMESTAMP_FIELDS: Record<string, (c: go.CivilTime, nanos: number) => number> = {
  getFullYear: (c) => c.year,
  getMonth: (c) => c.month - 1,
  getDayOfYear: (c) => c.yearDay - 1,
  getDayOfMonth: (c) => c.day - 1,
  getDate: (c) => c.day,
  getDayOfWeek: (c) => c.weekday,
  getHours: (c) => c.hour,
  getMinutes: (c) => c.minute,
  getSeconds: (c) => c.second,
  getMilliseconds: (_, nanos) => Math.floor(nanos / 1e6),
};

/** The duration accessors: whole hours, minutes and seconds as Go's float64 methods truncate them; milliseconds. */
const DURATION_FIELDS: Record<string, (ns: bigint) => bigint> = {
  getHours: (ns) => go.wholeUnits(ns, 'h'),
  getMinutes: (ns) => go.wholeUnits(ns, 'm'),
  getSeconds: (ns) => go.wholeUnits(ns, 's'),
  getMilliseconds: (ns) => ns / 1_000_000n,
};

/** An accessor's handle: a timestamp's or a duration's field as cel-go computes it. */
const accessor =
  (name: string) =>
  (orig: Handle): Handle =>
  (args, ...rest) => {
    const [value, tz] = args as [unknown, unknown];
    const field = TIMESTAMP_FIELDS[name];
    const given = (args as unknown[]).length > 1;
    if (value instanceof Date && field && (!given || typeof tz === 'string')) {
      const t = instantOf(value);
      const offset = given ? go.zoneOffset(tz as string, t.seconds) : 0;
      return BigInt(field(go.civil(t.seconds + offset), t.nanos));
    }
    const durationField = DURATION_FIELDS[name];
    if (isDuration(value) && durationField && !given) return durationField(nanosOf(value));
    return orig(args, ...rest);
  };

/** A binary operator's handle that answers for timestamps and durations, else as it did. */
const arithmetic =
  (op: (a: unknown, b: unknown) => unknown) =>
  (orig: Handle): Handle =>
  (l, r, ...rest) =>
    op(l, r) ?? orig(l, r, ...rest);

/** A comparison's handle that orders timestamps and durations by their nanoseconds. */
const ordering =
  (test: (c: number) => boolean) =>
  (orig: Handle): Handle =>
  (l, r, ...rest) => {
    const c = compareTime(l, r);
    return c === undefined ? orig(l, r, ...rest) : test(c);
  };

/** A conversion's handle that converts strings (and ints, for timestamps) itself. */
const conversion =
  (convert: (v: string | bigint) => unknown, ints: boolean) =>
  (orig: Handle): Handle =>
  (args, ...rest) => {
    const v = (args as unknown[])[0];
    return typeof v === 'string' || (ints && typeof v === 'bigint') ? convert(v) : orig(args, ...rest);
  };

/** The handle wrappers of this module, by operator or `rcall:name` / `call:name`. */
export const TIME_WRAPPERS: Record<string, (orig: Handle) => Handle> = {
  '+': arithmetic(sum),
  '-': arithmetic(difference),
  '<': ordering((c) => c < 0),
  '<=': ordering((c) => c <= 0),
  '>': ordering((c) => c > 0),
  '>=': ordering((c) => c >= 0),
  'call:timestamp': conversion((v) => (typeof v === 'string' ? parseTimestamp(v) : timestampOfSeconds(v)), true),
  'call:duration': conversion((v) => parseDuration(v as string), false),
};
for (const name of Object.keys(TIMESTAMP_FIELDS)) TIME_WRAPPERS[`rcall:${name}`] = accessor(name);

/** The engine's checker and a binary node (the parts used here). */
interface Checker {
  getType(name: string): unknown;
}
interface BinaryNode {
  op: string;
  left?: { checkedType?: { name: string } };
  right?: { checkedType?: { name: string } };
  readonly meta: { check: (chk: Checker, node: BinaryNode, scope: unknown) => unknown };
}

/**
 * Types `duration + timestamp` as a timestamp, as cel-go declares it (the engine's overload
 * answers a duration); set on a `+` node before it is checked.
 */
export function adoptTimestampSum(node: BinaryNode): void {
  if (node.op !== '+') return;
  const check = node.meta.check;
  node.meta.check = (chk, n, scope) => {
    const type = check(chk, n, scope);
    const sides = `${n.left?.checkedType?.name} ${n.right?.checkedType?.name}`;
    return sides === `${DURATION} ${TIMESTAMP}` ? chk.getType(TIMESTAMP) : type;
  };
}

/** The environment's registration methods (the part used here). */
interface Registry {
  registerFunction(signature: string, handler: (...args: never[]) => unknown): Registry;
}

/**
 * Conversions cel-go declares that the engine lacks: int() of a timestamp (Unix seconds) and of a
 * duration (nanoseconds), the identities, and duration(int), which cel-go declares and always
 * refuses (its int has no conversion to a duration).
 */
export function registerTime(env: Registry): void {
  env
    .registerFunction(`int(${TIMESTAMP}): int`, (t: Date) => BigInt(instantOf(t).seconds))
    .registerFunction(`int(${DURATION}): int`, nanosOf)
    .registerFunction(`timestamp(${TIMESTAMP}): ${TIMESTAMP}`, (t: Date) => t)
    .registerFunction(`duration(${DURATION}): ${DURATION}`, (d: Duration) => d)
    .registerFunction(`duration(int): ${DURATION}`, () => {
      throw conversionError('int', DURATION);
    });
}
