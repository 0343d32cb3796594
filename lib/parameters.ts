import { WebhookError } from './errors.ts';
// SSM parameters read at run time (tokens, path secrets), cached per execution environment.

/**
 * How long a failed SSM read (a missing parameter, no permission, throttling) stands before a
 * request reads again. Without it every request of every execution environment would call SSM
 * for the same error, adding its latency to each refusal and spending the account's
 * GetParameter throughput, shared with every other application, while a repaired parameter
 * still takes effect within half a minute.
 */
export const PARAMETER_FAILURE_RETRY_MS = 30_000;

/**
 * Most time one SSM read may take, whatever time the request has: GetParameter answers in tens
 * of milliseconds; 3 s leaves room for a cold start's SDK load and a retry, and keeps a read
 * from an endpoint that never answers well inside the default 10 s webhook timeout.
 */
export const PARAMETER_READ_MAX_MS = 3_000;

/**
 * The time a request's SSM reads may take: half its time budget (the rest is the function's), at
 * most PARAMETER_READ_MAX_MS; PARAMETER_READ_MAX_MS when the budget is not known.
 */
export function parameterReadMs(budgetMs?: number): number {
  if (budgetMs === undefined || !Number.isFinite(budgetMs) || budgetMs <= 0) return PARAMETER_READ_MAX_MS;
  return Math.max(1, Math.min(PARAMETER_READ_MAX_MS, Math.floor(budgetMs / 2)));
}

/** An SSM read that did not finish in the time it had; it was aborted. */
export class ParameterTimeout extends WebhookError {
  override name = 'ParameterTimeout';
  readonly code = 'PARAMETER_TIMEOUT';
  constructor(
    readonly parameter: string,
    readonly timeoutMs: number,
  ) {
    super(`SSM parameter ${parameter} not read within ${timeoutMs} ms`);
  }
}

/** A fetched parameter: its value (or failure), when it was fetched, and until when a failure stands. */
interface CachedParameter {
  value: Promise<string>;
  at: number;
  /** Set after a failed fetch: no fetch before this time. */
  retryAt?: number;
  /** The fetch failed and there was no earlier value: `value` rejects. */
  failed?: boolean;
}

const parameters = new Map<string, CachedParameter>();

/** Reads a parameter from SSM; `signal` aborts the call. */
async function readParameter(name: string, signal: AbortSignal): Promise<string> {
  // The Lambda Node.js runtime ships AWS SDK v3; it is loaded only when a parameter is named.
  const { SSMClient, GetParameterCommand } = await import('@aws-sdk/client-ssm');
  signal.throwIfAborted();
  const command = new GetParameterCommand({ Name: name, WithDecryption: true });
  const out = await new SSMClient({}).send(command, { abortSignal: signal });
  return out.Parameter?.Value?.trim() ?? '';
}

/**
 * Reads a parameter within `timeoutMs`: past it the SDK call is aborted and the read rejects
 * with ParameterTimeout at once, whatever the SDK is waiting for (a connection, an answer, a
 * retry's delay, credentials).
 */
async function fetchParameter(name: string, timeoutMs: number): Promise<string> {
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(new ParameterTimeout(name, timeoutMs)), timeoutMs);
  try {
    return await new Promise<string>((resolve, reject) => {
      abort.signal.addEventListener('abort', () => reject(abort.signal.reason), { once: true });
      readParameter(name, abort.signal).then(resolve, reject);
    });
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The trimmed value of an SSM parameter, fetched once per execution environment and again
 * once it is older than `maxAgeMs`; a fetch that takes more than `timeoutMs` is aborted and
 * fails with ParameterTimeout. A failed fetch stands for PARAMETER_FAILURE_RETRY_MS: until
 * then calls answer with the value it was to replace, or fail as it did, without calling SSM.
 */
export async function cachedParameter(
  name: string,
  maxAgeMs = Infinity,
  timeoutMs = PARAMETER_READ_MAX_MS,
): Promise<string> {
  const entry = parameters.get(name);
  const now = Date.now();
  if (entry) {
    const holding = entry.retryAt !== undefined && now < entry.retryAt;
    if (entry.failed ? holding : holding || now - entry.at <= maxAgeMs) return entry.value;
  }
  const fresh: CachedParameter = { value: fetchParameter(name, timeoutMs), at: now };
  parameters.set(name, fresh);
  try {
    return await fresh.value;
  } catch (err) {
    const kept = entry && !entry.failed ? entry : undefined;
    if (parameters.get(name) === fresh) {
      const retryAt = now + PARAMETER_FAILURE_RETRY_MS;
      parameters.set(name, kept ? { ...kept, retryAt } : { value: fresh.value, at: now, retryAt, failed: true });
    }
    if (kept) return kept.value;
    throw err;
  }
}
