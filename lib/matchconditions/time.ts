/**
 * Timestamps and durations as cel-go has them where the engine's differ: time zones given as fixed
 * offsets (`getHours('+02:00')`, `'-09:30'`, `'02:00'`), and the range errors of values outside what
 * the protobuf types hold (timestamps from year 1 to 9999, durations within ±10,000 years).
 */

type Handle = (...args: unknown[]) => unknown;
/** The engine's evaluator (the part used here). */
interface Evaluator {
  createError(code: string, message: string, node?: unknown): Error;
}

/** A time zone written as an offset from UTC, as Go's time.Parse of `-07:00` reads it (sign optional). */
const OFFSET = /^([+-]?)(\d{2}):(\d{2})$/;
/** The first and last instants of google.protobuf.Timestamp (0001-01-01, 9999-12-31T23:59:59.999…). */
const MIN_TIME_MS = -62_135_596_800_000;
const MAX_TIME_MS = 253_402_300_799_999;
/** The largest google.protobuf.Duration in seconds (about 10,000 years). */
const MAX_DURATION_SECONDS = 315_576_000_000n;

/** The timestamp accessors that take a time zone. */
const ACCESSORS = [
  'getDate',
  'getDayOfMonth',
  'getDayOfWeek',
  'getDayOfYear',
  'getFullYear',
  'getHours',
  'getMilliseconds',
  'getMinutes',
  'getMonth',
  'getSeconds',
];

/**
 * An accessor's handle that reads a fixed-offset zone: the instant is moved by the offset and read
 * in UTC, which is what reading it in that zone gives.
 */
const withOffsets =
  (orig: Handle): Handle =>
  (args, ...rest) => {
    const [d, tz] = args as [unknown, unknown];
    const m = typeof tz === 'string' && d instanceof Date ? OFFSET.exec(tz) : null;
    if (!m) return orig(args, ...rest);
    const minutes = (Number(m[2]) * 60 + Number(m[3])) * (m[1] === '-' ? -1 : 1);
    return orig([new Date((d as Date).getTime() + minutes * 60_000), 'UTC'], ...rest);
  };

/** True for the engine's durations (seconds as a bigint, nanoseconds). */
function isDuration(v: unknown): v is { seconds: bigint; nanos: number } {
  return v !== null && typeof v === 'object' && typeof (v as { seconds?: unknown }).seconds === 'bigint';
}

/** `value` when it is within range; a range error, as cel-go's, when it is not. */
function inRange(value: unknown, ev: Evaluator, node: unknown): unknown {
  if (value instanceof Date) {
    const t = value.getTime();
    if (!(t >= MIN_TIME_MS && t <= MAX_TIME_MS)) throw ev.createError('range', 'timestamp out of range', node);
  } else if (isDuration(value)) {
    const s = value.seconds;
    if (s > MAX_DURATION_SECONDS || s < -MAX_DURATION_SECONDS)
      throw ev.createError('range', 'duration out of range', node);
  }
  return value;
}

/** Binary operators whose result is checked for range. */
const ranged =
  (orig: Handle): Handle =>
  (l, r, node, ev) =>
    inRange(orig(l, r, node, ev), ev as Evaluator, node);

/** A conversion call's handle whose result is checked for range (`duration('320000000000s')`). */
const rangedCall =
  (orig: Handle): Handle =>
  (args, node, ev) =>
    inRange(orig(args, node, ev), ev as Evaluator, node);

/** The handle wrappers of this module, by operator or `rcall:name` / `call:name`. */
export const TIME_WRAPPERS: Record<string, (orig: Handle) => Handle> = {
  '+': ranged,
  '-': ranged,
  'call:duration': rangedCall,
  'call:timestamp': rangedCall,
};
for (const name of ACCESSORS) TIME_WRAPPERS[`rcall:${name}`] = withOffsets;
