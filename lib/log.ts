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
  process.stdout.write(line + '\n');
};

/** Reads the level from KLW_LOG_LEVEL; `info` when unset or unknown. */
export function levelFromEnv(env: NodeJS.ProcessEnv = process.env): LogLevel {
  const value = env.KLW_LOG_LEVEL?.toLowerCase();
  return value && value in RANK ? (value as LogLevel) : 'info';
}

/** A JSON-lines logger at a level, writing to a sink. */
export function createLogger(options: { level?: LogLevel; sink?: LogSink; base?: Record<string, unknown> } = {}): Logger {
  const threshold = RANK[options.level ?? levelFromEnv()];
  const sink = options.sink ?? stdoutSink;
  const base = options.base ?? {};
  const emit = (level: Exclude<LogLevel, 'silent'>) => (msg: string, fields: Record<string, unknown> = {}) => {
    if (RANK[level] < threshold) return;
    sink(JSON.stringify({ level, time: new Date().toISOString(), msg, ...base, ...fields }));
  };
  return { debug: emit('debug'), info: emit('info'), warn: emit('warn'), error: emit('error') };
}
