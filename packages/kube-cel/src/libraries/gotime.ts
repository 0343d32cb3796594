/**
 * Go's time package as cel-go uses it for CEL timestamps and durations: `time.Parse` of RFC 3339
 * (the strict fast path and the lenient general parser it falls back on), RFC3339Nano printing,
 * `time.ParseDuration`, durations printed as float seconds, the calendar fields of an instant in a
 * zone, the zones cel-go reads (IANA names, `±hh:mm` offsets read with `strconv.Atoi`) and the
 * overflow checks of its arithmetic. Instants are Unix seconds plus nanoseconds; durations are
 * int64 nanoseconds held in bigints. Messages are Go's and cel-go's.
 */
import { goQuote } from './go.ts';

/** An instant: Unix seconds, the nanoseconds within that second, and the UTC offset it is written with. */
export interface Instant {
  seconds: number;
  /** 0 ≤ nanos < 1e9. */
  nanos: number;
  /** Seconds east of UTC, kept for printing (`+05:30`); 0 prints `Z`. */
  offset: number;
}

/** The first Unix second of google.protobuf.Timestamp (and cel-go): 0001-01-01T00:00:00Z. */
export const MIN_UNIX_SECONDS = -62_135_596_800;
/** The last Unix second of google.protobuf.Timestamp (and cel-go): 9999-12-31T23:59:59Z. */
export const MAX_UNIX_SECONDS = 253_402_300_799;
/** The most negative Go time.Duration, in nanoseconds (about -292 years). */
export const DURATION_MIN = -(2n ** 63n);
/** The largest Go time.Duration, in nanoseconds (about 292 years). */
export const DURATION_MAX = 2n ** 63n - 1n;
const UINT64_MAX = 2n ** 64n - 1n;
const NS_PER_SECOND = 1_000_000_000n;
const SECONDS_PER_DAY = 86_400;

/** cel-go's words for a timestamp outside 0001-01-01..9999-12-31. */
export const TIMESTAMP_OVERFLOW = 'timestamp overflow';
/** cel-go's words for int64 arithmetic (durations) that overflows. */
export const INTEGER_OVERFLOW = 'integer overflow';

/** An error cel-go reports with these words. */
export class TimeError extends Error {
  override name = 'TimeError';
}

/** Days since 1970-01-01 of a proleptic Gregorian date (any year, negative included). */
export function daysFromCivil(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yearOfEra = y - era * 400;
  const dayOfYear = Math.floor((153 * (month > 2 ? month - 3 : month + 9) + 2) / 5) + day - 1;
  const dayOfEra = yearOfEra * 365 + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100) + dayOfYear;
  // 719,468 days from 0000-03-01 (the era's start) to 1970-01-01.
  return era * 146_097 + dayOfEra - 719_468;
}

/** The calendar fields of a wall-clock time given as seconds since 1970-01-01T00:00:00 of that clock. */
export interface CivilTime {
  year: number;
  /** 1-12. */
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
  /** 0 is Sunday, as Go's time.Weekday. */
  weekday: number;
  /** 1-366, as Go's YearDay. */
  yearDay: number;
}

/** The calendar fields of `local` (seconds of a wall clock since its 1970-01-01T00:00:00). */
export function civil(local: number): CivilTime {
  const days = Math.floor(local / SECONDS_PER_DAY);
  const inDay = local - days * SECONDS_PER_DAY;
  const z = days + 719_468;
  const era = Math.floor(z / 146_097);
  const dayOfEra = z - era * 146_097;
  const yearOfEra = Math.floor(
    (dayOfEra - Math.floor(dayOfEra / 1460) + Math.floor(dayOfEra / 36_524) - Math.floor(dayOfEra / 146_096)) / 365,
  );
  const dayOfYear = dayOfEra - (365 * yearOfEra + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100));
  const mp = Math.floor((5 * dayOfYear + 2) / 153);
  const month = mp < 10 ? mp + 3 : mp - 9;
  const year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0);
  return {
    year,
    month,
    day: dayOfYear - Math.floor((153 * mp + 2) / 5) + 1,
    hour: Math.floor(inDay / 3600),
    minute: Math.floor((inDay % 3600) / 60),
    second: inDay % 60,
    // 1970-01-01 was a Thursday.
    weekday: (((days + 4) % 7) + 7) % 7,
    yearDay: days - daysFromCivil(year, 1, 1) + 1,
  };
}

function daysIn(month: number, year: number): number {
  if (month !== 2) return [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1]!;
  return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28;
}

/**
 * What Go's time.Parse(time.RFC3339, s) reads, its fast path and its general parser together: a
 * one- or two-digit hour, `,` or `.` before the fraction, fraction digits past the ninth ignored,
 * a `±hh:mm` offset up to 24:60 (the general parser's bounds). `Z` and `T` in capitals only.
 */
const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})T(\d{1,2}):(\d{2}):(\d{2})(?:[.,](\d+))?(?:Z|([+-])(\d{2}):(\d{2}))$/;

/** The instant Go's time.Parse(time.RFC3339, s) gives (the API server's local zone is UTC); undefined if it refuses s. */
export function parseRfc3339(s: string): Instant | undefined {
  const m = RFC3339.exec(s);
  if (!m) return undefined;
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number) as [number, ...number[]];
  if (month! < 1 || month! > 12 || day! < 1 || day! > daysIn(month!, year)) return undefined;
  if (hour! > 23 || minute! > 59 || second! > 59) return undefined;
  const zoneHours = Number(m[9] ?? 0);
  const zoneMinutes = Number(m[10] ?? 0);
  if (zoneHours > 24 || zoneMinutes > 60) return undefined;
  const offset = (m[8] === '-' ? -1 : 1) * (zoneHours * 60 + zoneMinutes) * 60;
  const local = daysFromCivil(year, month!, day!) * SECONDS_PER_DAY + hour! * 3600 + minute! * 60 + second!;
  const nanos = Number((m[7] ?? '').slice(0, 9).padEnd(9, '0'));
  return { seconds: local - offset, nanos, offset: offset === 0 ? 0 : offset };
}

/** Go's Time.Format(time.RFC3339Nano): the fraction without trailing zeros, `Z` for UTC. */
export function formatRfc3339Nano(t: Instant): string {
  const f = civil(t.seconds + t.offset);
  const two = (n: number) => String(n).padStart(2, '0');
  const year = f.year < 0 ? `-${String(-f.year).padStart(4, '0')}` : String(f.year).padStart(4, '0');
  const fraction = t.nanos ? `.${String(t.nanos).padStart(9, '0').replace(/0+$/, '')}` : '';
  let zone = 'Z';
  if (t.offset !== 0) {
    const minutes = Math.trunc(Math.abs(t.offset) / 60);
    zone = `${t.offset < 0 ? '-' : '+'}${two(Math.floor(minutes / 60))}:${two(minutes % 60)}`;
  }
  return `${year}-${two(f.month)}-${two(f.day)}T${two(f.hour)}:${two(f.minute)}:${two(f.second)}${fraction}${zone}`;
}

/** The nanoseconds of each unit Go's time.ParseDuration reads (`µs` as U+00B5 and U+03BC). */
const UNITS: ReadonlyMap<string, bigint> = new Map([
  ['ns', 1n],
  ['us', 1_000n],
  ['\u00b5s', 1_000n],
  ['\u03bcs', 1_000n],
  ['ms', 1_000_000n],
  ['s', NS_PER_SECOND],
  ['m', 60n * NS_PER_SECOND],
  ['h', 3600n * NS_PER_SECOND],
]);
const TWO_TO_63 = 2n ** 63n;

/** Fraction digits as Go's leadingFraction keeps them: while they fit an int64, with 10^digits kept. */
function leadingFraction(digits: string): { f: bigint; scale: number } {
  let f = 0n;
  let scale = 1;
  for (const c of digits) {
    const next = f * 10n + BigInt(c);
    if (f > (TWO_TO_63 - 1n) / 10n || next > TWO_TO_63) break;
    f = next;
    scale *= 10;
  }
  return { f, scale };
}

/**
 * Go's time.ParseDuration: a sign, then numbers with optional fractions, each with a unit (`ns`,
 * `us`, `µs`, `ms`, `s`, `m`, `h`), `0` alone without one. Nanoseconds; undefined where Go errs
 * (no unit, unknown unit, past int64).
 */
export function parseGoDuration(input: string): bigint | undefined {
  const negative = input[0] === '-';
  const start = negative || input[0] === '+' ? 1 : 0;
  if (input.length === start + 1 && input[start] === '0') return 0n;
  if (input.length === start) return undefined;
  // One number and its unit (everything up to the next number) at a time, in one pass.
  const part = /(\d*)(?:\.(\d*))?([^\d.]*)/y;
  part.lastIndex = start;
  let total = 0n;
  while (part.lastIndex < input.length) {
    const [, intDigits = '', fracDigits, unit = ''] = part.exec(input)!;
    if (intDigits === '' && !fracDigits) return undefined;
    const perUnit = UNITS.get(unit);
    const significant = intDigits.replace(/^0+/, '');
    // More than 19 significant digits is past 2^63 (Go's leadingInt overflows).
    if (perUnit === undefined || significant.length > 19) return undefined;
    let v = BigInt(significant || '0');
    if (v > TWO_TO_63 / perUnit) return undefined;
    v *= perUnit;
    const { f, scale } = leadingFraction(fracDigits ?? '');
    // As Go computes it: in float64, truncated.
    if (f > 0n) v += BigInt(Math.trunc(Number(f) * (Number(perUnit) / scale)));
    total += v;
    if (v > TWO_TO_63 || total > TWO_TO_63) return undefined;
  }
  if (negative) return -total;
  return total > DURATION_MAX ? undefined : total;
}

/** A finite double in Go's strconv.FormatFloat(x, 'f', -1, 64): shortest digits, never an exponent. */
function formatFixed(x: number): string {
  const s = String(x);
  const e = s.indexOf('e');
  if (e < 0) return s;
  // JavaScript writes |x| < 1e-6 with an exponent (durations never reach 1e21).
  const exponent = Number(s.slice(e + 1));
  const mantissa = s.slice(0, e);
  const negative = mantissa.startsWith('-');
  const digits = mantissa.replace('-', '').replace('.', '');
  return `${negative ? '-' : ''}0.${'0'.repeat(-exponent - 1)}${digits}`;
}

/** A duration as cel-go's string() writes it: its seconds as a float64, shortest, then `s` (`1.5s`, `-0.000000001s`). */
export function formatDuration(ns: bigint): string {
  return `${formatFixed(goSeconds(ns))}s`;
}

/** Go's Duration.Seconds(): whole seconds plus the rest, in float64. */
export function goSeconds(ns: bigint): number {
  return Number(ns / NS_PER_SECOND) + Number(ns % NS_PER_SECOND) / 1e9;
}

/** Go's Duration.Hours() and Minutes() (whole units plus the rest, in float64), truncated as int64() does. */
export function wholeUnits(ns: bigint, unit: 'h' | 'm' | 's'): bigint {
  const per = UNITS.get(unit)!;
  return BigInt(Math.trunc(Number(ns / per) + Number(ns % per) / Number(per)));
}

/** A duration's nanoseconds checked for int64 range; cel-go's integer overflow otherwise. */
export function checkedDuration(ns: bigint): bigint {
  if (ns < DURATION_MIN || ns > DURATION_MAX) throw new TimeError(INTEGER_OVERFLOW);
  return ns;
}

/** An instant plus a duration as cel-go adds them (seconds and nanoseconds apart), range-checked. */
export function addToInstant(t: Instant, ns: bigint): Instant {
  let seconds = t.seconds + Number(ns / NS_PER_SECOND);
  let nanos = t.nanos + Number(ns % NS_PER_SECOND);
  if (nanos < 0) {
    seconds -= 1;
    nanos += 1e9;
  } else if (nanos >= 1e9) {
    seconds += 1;
    nanos -= 1e9;
  }
  if (seconds < MIN_UNIX_SECONDS || seconds > MAX_UNIX_SECONDS) throw new TimeError(TIMESTAMP_OVERFLOW);
  return { seconds, nanos, offset: t.offset };
}

/** a - b in nanoseconds, an int64 as cel-go computes it (integer overflow past ±292 years). */
export function instantDifference(a: Instant, b: Instant): bigint {
  return checkedDuration(BigInt(a.seconds - b.seconds) * NS_PER_SECOND + BigInt(a.nanos - b.nanos));
}

/** -1, 0 or 1 as instant a is before, at or after b. */
export function compareInstants(a: Instant, b: Instant): number {
  const d = a.seconds - b.seconds || a.nanos - b.nanos;
  return Math.sign(d);
}

/** Go's strconv.Atoi, with its messages (`strconv.Atoi: parsing "x": invalid syntax`). */
export function goAtoi(s: string): bigint {
  const body = s[0] === '+' || s[0] === '-' ? s.slice(1) : s;
  const digits = /^\d*/.exec(body)![0];
  const fail = (why: string) => new TimeError(`strconv.Atoi: parsing ${goQuote(s)}: ${why}`);
  // Go stops at the first digit that overflows uint64 (20 digits at most), before a later bad character.
  const significant = digits.replace(/^0+/, '');
  if (significant.length > 20 || BigInt(significant || '0') > UINT64_MAX) throw fail('value out of range');
  if (!body || digits !== body) throw fail('invalid syntax');
  const v = (s[0] === '-' ? -1n : 1n) * BigInt(significant || '0');
  if (v < DURATION_MIN || v > DURATION_MAX) throw fail('value out of range');
  return v;
}

/**
 * The UTC offset, in seconds, of a `±hh:mm` zone as cel-go reads it: hours and minutes through
 * strconv.Atoi, the minutes subtracted when the text starts with `-`, in Go's int64 arithmetic.
 */
function fixedOffset(tz: string, colon: number): number {
  const hours = goAtoi(tz.slice(0, colon));
  const minutes = goAtoi(tz.slice(colon + 1));
  const total = BigInt.asIntN(64, tz[0] === '-' ? hours * 60n - minutes : hours * 60n + minutes);
  return Math.trunc(goSeconds(BigInt.asIntN(64, total * 60n * NS_PER_SECOND)));
}

/** The formatters of IANA zones in use: building one costs far more than using it. */
const ZONES = new Map<string, Intl.DateTimeFormat>();
/** Zones kept at once (names come from expressions, so the cache is bounded). */
const MAX_ZONES = 64;

function zoneFormat(name: string): Intl.DateTimeFormat | undefined {
  let format = ZONES.get(name);
  if (format) return format;
  try {
    format = new Intl.DateTimeFormat('en-US', {
      timeZone: name,
      hourCycle: 'h23',
      era: 'short',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
  } catch {
    return undefined;
  }
  if (ZONES.size >= MAX_ZONES) ZONES.clear();
  ZONES.set(name, format);
  return format;
}

/** The UTC offset of an IANA zone at a Unix second (tz data through Intl, proleptic Gregorian). */
function zoneOffsetAt(format: Intl.DateTimeFormat, seconds: number): number {
  const parts: Record<string, string> = {};
  for (const p of format.formatToParts(seconds * 1000)) parts[p.type] = p.value;
  const year = parts.era === 'BC' ? 1 - Number(parts.year) : Number(parts.year);
  const local =
    daysFromCivil(year, Number(parts.month), Number(parts.day)) * SECONDS_PER_DAY +
    Number(parts.hour) * 3600 +
    Number(parts.minute) * 60 +
    Number(parts.second);
  return local - seconds;
}

/**
 * The UTC offset of zone `tz` at Unix second `seconds`, as cel-go reads a time zone argument:
 * `±hh:mm` (anything with a colon) as a fixed offset, else a name as Go's time.LoadLocation
 * loads it (`''`, `UTC` and the API server's `Local` are UTC). Throws Go's message otherwise.
 */
export function zoneOffset(tz: string, seconds: number): number {
  const colon = tz.indexOf(':');
  if (colon >= 0) return fixedOffset(tz, colon);
  if (tz === '' || tz === 'UTC' || tz === 'Local') return 0;
  if (tz.includes('..') || tz[0] === '/' || tz[0] === '\\') throw new TimeError('time: invalid location name');
  // Names start with a letter; Intl would also read offsets (`+0530`), which Go does not.
  const format = /^[A-Za-z]/.test(tz) ? zoneFormat(tz) : undefined;
  if (!format) throw new TimeError(`unknown time zone ${tz}`);
  return zoneOffsetAt(format, seconds);
}
