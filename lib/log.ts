/** Log levels, least to most severe; `silent` writes nothing. */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'silent';

const RANK: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 };

/** Structured JSON logger: one line per call, fields merged into the line. */
export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
}

/** Where log lines go; stdout by default (CloudWatch Logs on Lambda). */
export type LogSink = (line: string) => void;

const stdoutSink: LogSink = (line) => {
  process.stdout.write(`${line}\n`);
};

/** Reads the level from KLW_LOG_LEVEL; `info` when unset or unknown. */
export function levelFromEnv(env: NodeJS.ProcessEnv = process.env): LogLevel {
  const value = env.KLW_LOG_LEVEL?.toLowerCase();
  return value && value in RANK ? (value as LogLevel) : 'info';
}

// While a logger of createLogger writes a line, RawJson values stand in it as marker strings
// (a per-process random nonce and their index): no string of a line carries the nonce.
const NONCE = Math.random().toString(36).slice(2, 10) + Math.random().toString(36).slice(2, 10);
const RAW_MARKER = `klw-raw-json:${NONCE}:`;
/** The JSON texts of the RawJson values met while a line is written, or undefined outside a line. */
let captured: string[] | undefined;

/**
 * A value given as its JSON text, written once instead of at every line: a logger of
 * createLogger writes the text as it is; anything else serialising it gets the value back
 * (toJSON), so the bytes are the same either way.
 */
export class RawJson {
  constructor(readonly text: string) {}
  /** The value, or while a line is written the marker that stands for the text. */
  toJSON(): unknown {
    if (!captured) return JSON.parse(this.text);
    captured.push(this.text);
    return RAW_MARKER + (captured.length - 1);
  }
}

/** JSON.stringify of a line, RawJson values written as their text. */
function stringifyLine(line: object): string {
  const outer = captured;
  const raw: string[] = [];
  captured = raw;
  let text: string;
  try {
    text = JSON.stringify(line);
  } finally {
    captured = outer;
  }
  if (!raw.length) return text;
  let out = '';
  let from = 0;
  for (let i = 0; i < raw.length; i++) {
    const marker = `"${RAW_MARKER}${i}"`;
    const at = text.indexOf(marker, from);
    if (at < 0) return JSON.stringify(line);
    out += text.slice(from, at) + raw[i];
    from = at + marker.length;
  }
  return out + text.slice(from);
}

/** The loggers made by createLogger, which write RawJson values as their text. */
const ownLoggers = new WeakSet<Logger>();

/** True when `logger` was made by createLogger: RawJson values in its fields cost no serialisation. */
export function writesRawJson(logger: Logger): boolean {
  return ownLoggers.has(logger);
}

/** The second `isoTime` last wrote, and its text up to the milliseconds (`2024-05-01T12:00:00.`). */
let isoSecond = -1;
let isoPrefix = '';
/** Year 10000, from which toISOString writes six-digit years. */
const ISO_LIMIT = 253_402_300_800_000;

/** `new Date().toISOString()`, the date and time written once per second. */
function isoTime(): string {
  const ms = Date.now();
  if (ms < 0 || ms >= ISO_LIMIT) return new Date(ms).toISOString();
  const second = Math.floor(ms / 1000);
  if (second !== isoSecond) {
    isoPrefix = new Date(second * 1000).toISOString().slice(0, 20);
    isoSecond = second;
  }
  const milli = ms - second * 1000;
  return `${isoPrefix}${milli < 10 ? '00' : milli < 100 ? '0' : ''}${milli}Z`;
}

/** A JSON-lines logger at a level, writing to a sink. */
export function createLogger(
  options: { level?: LogLevel; sink?: LogSink; base?: Record<string, unknown> } = {},
): Logger {
  const threshold = RANK[options.level ?? levelFromEnv()];
  const sink = options.sink ?? stdoutSink;
  const base = options.base ?? {};
  const emit =
    (level: Exclude<LogLevel, 'silent'>) =>
    (msg: string, fields: Record<string, unknown> = {}) => {
      if (RANK[level] < threshold) return;
      sink(stringifyLine({ level, time: isoTime(), msg, ...base, ...fields }));
    };
  const logger: Logger = { debug: emit('debug'), info: emit('info'), warn: emit('warn'), error: emit('error') };
  ownLoggers.add(logger);
  return logger;
}

/** One method of a Logger. */
type LogMethod = (msg: string, fields?: Record<string, unknown>) => void;

/**
 * One request's logger: every line carries the request id and, for a fleet call, the calling
 * cluster, which a line's own fields cannot change (the cluster is named by the path secret,
 * never by what a function logs). One object per request; a method is made when first read,
 * bound to the logger, so `const { warn } = ctx.log` works and a request that logs nothing
 * beyond its review line makes none.
 */
class RequestLogger implements Logger {
  private methods: Partial<Record<Exclude<LogLevel, 'silent'>, LogMethod>> | undefined = undefined;
  constructor(
    private readonly parent: Logger,
    private readonly requestId: string,
    private readonly cluster: string | undefined,
  ) {}
  get debug(): LogMethod {
    return this.method('debug');
  }
  get info(): LogMethod {
    return this.method('info');
  }
  get warn(): LogMethod {
    return this.method('warn');
  }
  get error(): LogMethod {
    return this.method('error');
  }
  private method(level: Exclude<LogLevel, 'silent'>): LogMethod {
    this.methods ??= {};
    return (this.methods[level] ??= (msg, fields) => {
      this.parent[level](msg, this.fields(fields));
    });
  }
  private fields(fields: Record<string, unknown> | undefined): Record<string, unknown> {
    return this.cluster === undefined
      ? { requestId: this.requestId, ...fields }
      : { requestId: this.requestId, ...fields, cluster: this.cluster };
  }
}

/** A child of `parent` whose every line carries `requestId` and, when given, `cluster`. */
export function requestLogger(parent: Logger, requestId: string, cluster?: string): Logger {
  return new RequestLogger(parent, requestId, cluster);
}
