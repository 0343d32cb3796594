import {
  type CloudWatchLogsClient,
  FilterLogEventsCommand,
  type FilterLogEventsCommandOutput,
  ResourceNotFoundException,
  type FilteredLogEvent,
} from '@aws-sdk/client-cloudwatch-logs';
import { awsError, regionOf } from './aws-errors.ts';
import { KlwError } from './errors.ts';
import { lambdaName } from './deploy/index.ts';
import { clusterFilterPattern, isClusterLine } from './fleet/logs.ts';

/** The CloudWatch log group of a deployed function: `/aws/lambda/<service>-<stage>-<name>`. */
export function logGroupName(service: string, stage: string, name: string): string {
  return `/aws/lambda/${lambdaName(service, stage, name)}`;
}

/**
 * Server-side filter: review lines, and the warnings and errors around them (refused
 * requests, failed user functions); the platform's START/END/REPORT lines are left out.
 */
export const LOGS_FILTER_PATTERN = '{ ($.msg = "review") || ($.level = "warn") || ($.level = "error") }';

const UNITS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** Reads `--since`: a duration back from now (`30s`, `10m`, `2h`, `1d`) or an ISO 8601 time; returns epoch ms. */
export function parseSince(value: string, now = Date.now()): number {
  const match = /^(\d+)(s|m|h|d)$/.exec(value.trim());
  if (match) return now - Number(match[1]) * UNITS[match[2]!]!;
  const time = Date.parse(value);
  if (/^\d{4}-\d{2}-\d{2}/.test(value) && Number.isFinite(time)) return time;
  throw new KlwError(
    `--since ${JSON.stringify(value)}: give a duration such as 30s, 10m, 2h or 1d, or an ISO 8601 time`,
  );
}

type Line = Record<string, unknown>;

/** The JSON object a log event carries (our logger's line, possibly behind a runtime prefix), or undefined. */
function jsonOf(message: string): Line | undefined {
  const start = message.indexOf('{');
  if (start < 0) return undefined;
  try {
    const value = JSON.parse(message.slice(start)) as unknown;
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Line) : undefined;
  } catch {
    return undefined;
  }
}

const text = (v: unknown) => (typeof v === 'string' || typeof v === 'number' ? String(v) : undefined);

function duration(line: Line): string {
  return typeof line.durationMs === 'number'
    ? `${line.durationMs < 10 ? line.durationMs.toFixed(1) : Math.round(line.durationMs)}ms`
    : '';
}

/**
 * One readable line for a log event, or undefined for events that are not the adapter's:
 * `<time> <function> <operation> <kind> <namespace/name> <decision> <duration> [warnings=n]`
 * for admission reviews, the objects and result for conversions, the level, status and
 * reason for refused requests and failures.
 */
export function formatLogEvent(event: FilteredLogEvent, fallbackFunction: string): string | undefined {
  const line = jsonOf(event.message ?? '');
  if (!line) return undefined;
  const time = new Date(event.timestamp ?? (Date.parse(text(line.time) ?? '') || 0)).toISOString();
  const fn = text(line.webhook) ?? fallbackFunction;
  if (line.msg === 'review') {
    if (line.result !== undefined || line.desiredAPIVersion !== undefined) {
      const parts = [
        time,
        fn,
        'CONVERT',
        `${text(line.objects) ?? '?'} objects`,
        `-> ${text(line.desiredAPIVersion) ?? '?'}`,
        text(line.result) ?? '?',
        duration(line),
      ];
      if (line.result === 'Failed' && line.message) parts.push(JSON.stringify(line.message));
      return parts.join(' ');
    }
    const object = [text(line.namespace), text(line.name)].filter(Boolean).join('/') || '-';
    const decision = `${text(line.decision) ?? '?'}${line.code !== undefined && line.decision === 'denied' ? ` (${text(line.code)})` : ''}`;
    const parts = [time, fn, text(line.operation) ?? '?', text(line.kind) ?? '?', object, decision, duration(line)];
    if (typeof line.warnings === 'number' && line.warnings > 0) parts.push(`warnings=${line.warnings}`);
    if (line.dryRun === true) parts.push('dry-run');
    if (typeof line.cluster === 'string') parts.push(`cluster=${line.cluster}`);
    return parts.join(' ');
  }
  if (line.level !== 'warn' && line.level !== 'error') return undefined;
  const parts = [time, fn, String(line.level).toUpperCase(), text(line.msg) ?? ''];
  if (line.status !== undefined) parts.push(String(line.status));
  for (const key of ['reason', 'path', 'error', 'errorId'])
    if (line[key] !== undefined)
      parts.push(`${key}=${typeof line[key] === 'string' ? JSON.stringify(line[key]) : String(line[key])}`);
  if (typeof line.cluster === 'string') parts.push(`cluster=${line.cluster}`);
  return parts.join(' ');
}

/** What `klw logs` reads. */
export interface LogsOptions {
  service: string;
  stage: string;
  function: string;
  /** Only the lines of this fleet cluster's calls. */
  cluster?: string;
  /** Epoch ms of the first event. */
  startTime: number;
  /** Keep polling for new events until `signal` aborts. */
  follow?: boolean;
  /** Milliseconds between polls with `follow`; default 2000. */
  pollMs?: number;
  signal?: AbortSignal;
}

/** True unless `cluster` is given and the event is not one of its lines (the server's filter is not trusted alone). */
function ofCluster(event: FilteredLogEvent, cluster: string | undefined): boolean {
  if (cluster === undefined) return true;
  const line = jsonOf(event.message ?? '');
  return line !== undefined && isClusterLine(line, cluster);
}

/**
 * Prints one line per review (and per refused request or failure) of a deployed function,
 * from CloudWatch Logs; with `follow`, keeps polling, never printing an event twice.
 * Returns the number of lines printed.
 */
export async function printLogs(
  client: CloudWatchLogsClient,
  options: LogsOptions,
  print: (line: string) => void,
): Promise<number> {
  const group = logGroupName(options.service, options.stage, options.function);
  let startTime = options.startTime;
  // Events at the newest timestamp seen: the next poll starts at that timestamp again.
  let seenAtStart = new Set<string>();
  let printed = 0;
  for (;;) {
    let nextToken: string | undefined;
    let newest = startTime;
    const seen = new Set<string>();
    do {
      let page: FilterLogEventsCommandOutput;
      try {
        page = await client.send(
          new FilterLogEventsCommand({
            logGroupName: group,
            startTime,
            filterPattern: options.cluster ? clusterFilterPattern(options.cluster) : LOGS_FILTER_PATTERN,
            ...(nextToken ? { nextToken } : {}),
          }),
          options.signal ? { abortSignal: options.signal } : {},
        );
      } catch (err) {
        if (options.signal?.aborted) return printed;
        if (err instanceof ResourceNotFoundException || (err as Error).name === 'ResourceNotFoundException') {
          throw new KlwError(
            `log group ${group} not found: is ${options.function} deployed to stage ${options.stage} (and has it run yet)?`,
          );
        }
        throw awsError(err, { action: `reading log group ${group}`, region: await regionOf(client) });
      }
      for (const event of page.events ?? []) {
        const id = event.eventId ?? `${event.timestamp}:${event.message}`;
        if (seenAtStart.has(id) || seen.has(id)) continue;
        seen.add(id);
        const line = ofCluster(event, options.cluster) ? formatLogEvent(event, options.function) : undefined;
        if (line) {
          print(line);
          printed++;
        }
        if ((event.timestamp ?? 0) > newest) newest = event.timestamp ?? newest;
      }
      nextToken = page.nextToken;
    } while (nextToken && !options.signal?.aborted);
    if (!options.follow || options.signal?.aborted) return printed;
    if (newest > startTime) seenAtStart = new Set();
    for (const id of seen) seenAtStart.add(id);
    startTime = newest;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, options.pollMs ?? 2000);
      options.signal?.addEventListener(
        'abort',
        () => {
          clearTimeout(timer);
          resolve();
        },
        { once: true },
      );
    });
    if (options.signal?.aborted) return printed;
  }
}
