// How long and how far the API client goes before it gives up, and the audit options that say so.
import { parseGoDuration } from '../../lib/internal.ts';
import { KlwError } from '../errors.ts';

/** How long and how far the client goes before it gives up on a stalling API server or plugin. */
export interface KubeLimits {
  /** Most time one request may take, from connecting to the answer's last byte (`--request-timeout`). */
  requestMs: number;
  /** Most time the API server may take over all the pages of one list, restarts included (`--list-timeout`). */
  listMs: number;
  /** Most pages one list may have (`--max-pages`). */
  maxPages: number;
  /** Most time one run of an exec credential plugin may take before it is killed (`--exec-timeout`). */
  execMs: number;
}

/**
 * The limits unless told otherwise. A request: 60 s, the API server's own default request
 * timeout (a page the server does not finish in that time it will not finish). A list: 15
 * minutes of the server's time (processing the objects is not counted), far beyond the 200
 * pages of 100,000 objects at 500 a page. Pages: 10,000, five million objects at the default
 * page size. A plugin: 60 s; `aws eks get-token` takes a second or two.
 */
export const DEFAULT_KUBE_LIMITS: Readonly<KubeLimits> = {
  requestMs: 60_000,
  listMs: 15 * 60_000,
  maxPages: 10_000,
  execMs: 60_000,
};

/** `1.5 s`, `250 ms`: a limit in messages. */
export function formatMs(ms: number): string {
  return ms >= 1000 ? `${Math.round(ms) / 1000} s` : `${Math.round(ms)} ms`;
}

/** Longest delay a Node.js timer takes (2^31 - 1 ms, about 24.8 days); a longer one would fire at once. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** A duration option (`30s`, `2m`, `1m30s`, `500ms`) in ms; a KlwError naming the option otherwise. */
function durationOption(value: string | undefined, option: string, fallback: number): number {
  if (value === undefined) return fallback;
  const ms = parseGoDuration(value.trim());
  if (ms === undefined || !(ms >= 1)) {
    throw new KlwError(`${option} must be a duration of at least 1ms, such as 30s, 2m or 1m30s`);
  }
  return Math.min(ms, MAX_TIMER_MS);
}

/** `klw audit`'s options that set {@link KubeLimits}, as given on the command line. */
export interface LimitOptions {
  requestTimeout?: string;
  listTimeout?: string;
  maxPages?: string;
  execTimeout?: string;
}

/** The limits from `klw audit`'s options (strings as given), defaults for those not given. */
export function kubeLimitsFrom(options: LimitOptions): KubeLimits {
  const maxPages = options.maxPages === undefined ? DEFAULT_KUBE_LIMITS.maxPages : Number(options.maxPages);
  if (!Number.isSafeInteger(maxPages) || maxPages < 1) {
    throw new KlwError('--max-pages must be a whole number of at least 1');
  }
  return {
    requestMs: durationOption(options.requestTimeout, '--request-timeout', DEFAULT_KUBE_LIMITS.requestMs),
    listMs: durationOption(options.listTimeout, '--list-timeout', DEFAULT_KUBE_LIMITS.listMs),
    maxPages,
    execMs: durationOption(options.execTimeout, '--exec-timeout', DEFAULT_KUBE_LIMITS.execMs),
  };
}
