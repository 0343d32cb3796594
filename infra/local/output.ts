import { appendFileSafely } from '../files.ts';

/** How the emulator prints its lines: `text` (one readable line per review) or `json` (JSON lines as they come). */
export type LogFormat = 'text' | 'json';

/** The default format: readable on a terminal, JSON lines when piped. */
export function defaultLogFormat(stream: { isTTY?: boolean } = process.stderr): LogFormat {
  return stream.isTTY ? 'text' : 'json';
}

function clock(time: unknown): string {
  const date = typeof time === 'string' ? new Date(time) : new Date();
  return Number.isNaN(date.getTime()) ? String(time) : date.toISOString().slice(11, 23);
}

/** Longest denial message a readable line shows (characters); the log file keeps it whole. */
const MESSAGE_CHARS = 160;

/** A message on one line (control characters and runs of white space as one space), cut at MESSAGE_CHARS. */
function shortMessage(message: unknown): string {
  const text = String(message)
    .replace(/[\s\u0000-\u001f\u007f-\u009f]+/g, ' ')
    .trim();
  return text.length > MESSAGE_CHARS ? `${text.slice(0, MESSAGE_CHARS - 1)}…` : text;
}

/** The decision of a review line: `denied: <message>`, `would deny: <message>` (Warn or Audit admitted it), `Failed: <message>` (conversion), else the bare decision. */
function decisionText(fields: Record<string, unknown>): string {
  if (fields.wouldDeny === true) return `would deny: ${shortMessage(fields.wouldDenyMessage ?? '')}`;
  const decision = String(fields.decision ?? fields.result ?? '');
  const message = typeof fields.message === 'string' && fields.message ? shortMessage(fields.message) : '';
  return (decision === 'denied' || decision === 'Failed') && message ? `${decision}: ${message}` : decision;
}

/** The function as a readable line names it: `function@cluster` when a fleet cluster called. */
function caller(fn: unknown, cluster: unknown): string {
  return typeof cluster === 'string' && cluster ? `${String(fn)}@${cluster}` : String(fn);
}

/**
 * One readable line for a log line, or undefined for one a terminal need not show: a
 * function's review line becomes `time function[@cluster] operation kind namespace/name
 * decision duration warnings` (a denial or a would-deny with its message); the emulator's own
 * request line is shown only when it went wrong (the review line said the rest), with the
 * reason a refused one was refused; anything else is shown as its message and fields.
 */
export function readableLine(line: string): string | undefined {
  let fields: Record<string, unknown>;
  try {
    const parsed = JSON.parse(line) as unknown;
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return line;
    fields = parsed as Record<string, unknown>;
  } catch {
    return line;
  }
  const { msg, time, level, ...rest } = fields;
  if (msg === 'review') {
    const object = [rest.namespace, rest.name].filter(Boolean).join('/') || '-';
    const warnings = Number(rest.warnings ?? 0);
    const duration = typeof rest.durationMs === 'number' ? `${rest.durationMs.toFixed(1)}ms` : '';
    const decision = decisionText(rest);
    return [
      clock(time),
      caller(rest.webhook, rest.cluster),
      rest.operation ?? rest.desiredAPIVersion ?? '',
      rest.kind ?? '',
      object,
      decision,
      duration,
      warnings ? `${warnings} warning${warnings > 1 ? 's' : ''}` : '',
    ]
      .filter((p) => p !== '' && p !== undefined)
      .join('  ');
  }
  if (msg === 'request') {
    if (rest.outcome === 'result' && typeof rest.status === 'number' && rest.status < 500) return undefined;
    const stack = Array.isArray(rest.stack) ? `\n    ${(rest.stack as string[]).slice(0, 8).join('\n    ')}` : '';
    const why = rest.error ?? rest.reason;
    // A request that named no function is shown by its method and path (`POST /`).
    const who =
      rest.function === undefined
        ? [rest.method, rest.path].filter((p) => typeof p === 'string').join(' ') || '-'
        : caller(rest.function, rest.cluster);
    return `${clock(time)}  ${who}  ${rest.status} ${rest.outcome}${why ? `  ${why}` : ''}${stack}`;
  }
  const extra = Object.entries(rest)
    .map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`)
    .join(' ');
  const prefix = level === 'warn' || level === 'error' ? `${level}: ` : '';
  return `${clock(time)}  ${prefix}${String(msg ?? '')}${extra ? `  ${extra}` : ''}`;
}

/** Where log lines go: stderr in the chosen format, and every line as it came (JSON) to `file` when given. */
export function logSink(
  format: LogFormat,
  file?: string,
  write: (text: string) => void = (t) => process.stderr.write(t),
): (line: string) => void {
  return (line) => {
    if (file) appendFileSafely(file, line.endsWith('\n') ? line : `${line}\n`);
    const shown = format === 'json' ? line : readableLine(line);
    if (shown !== undefined) write(`${shown}\n`);
  };
}
