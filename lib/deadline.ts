import { WebhookError } from './errors.ts';

/** Thrown when a user function has not answered within its budget. */
export class DeadlineExceeded extends WebhookError {
  readonly code = 'DEADLINE_EXCEEDED';
  constructor(readonly budgetMs: number) {
    super(`webhook did not answer within ${budgetMs} ms`);
    this.name = 'DeadlineExceeded';
  }
}

/** What bounds one invocation's time. */
export interface BudgetInputs {
  /** The registration's timeoutSeconds. */
  timeoutSeconds: number;
  /** The `timeout` the API server put on the URL, in ms, if any. */
  requestTimeoutMs?: number | undefined;
  /** `context.getRemainingTimeInMillis()`, if any. */
  remainingMs?: number | undefined;
}

/**
 * Time the user function may take, in ms: the tightest of the three bounds, less a margin
 * for the response to travel back through API Gateway to the API server (a fifth of the
 * bound, at least 100 ms and at most 1 s).
 */
export function budgetMs(inputs: BudgetInputs): number {
  // The least of the bounds that are finite positive numbers (Infinity when none is).
  let bound = Infinity;
  for (const n of [inputs.timeoutSeconds * 1000, inputs.requestTimeoutMs, inputs.remainingMs]) {
    if (typeof n === 'number' && Number.isFinite(n) && n > 0 && n < bound) bound = n;
  }
  const margin = Math.min(1000, Math.max(100, bound * 0.2));
  return Math.max(1, Math.floor(bound - margin));
}

/** The clock budgets are measured on by default: milliseconds, monotonic. */
export const defaultClock = (): number => performance.now();

/**
 * Runs `fn`, rejecting with DeadlineExceeded once `ms` have passed since `startedAt`
 * (a time of `now`, by default `performance.now()`; default start: now). A synchronous
 * function that never returns cannot be interrupted (Lambda's own timeout ends it); one that
 * returns after the deadline is late all the same, so its answer is refused with
 * DeadlineExceeded too.
 */
export async function withDeadline<T>(
  fn: () => T | Promise<T>,
  ms: number,
  startedAt?: number,
  now: () => number = defaultClock,
): Promise<T> {
  const start = startedAt ?? now();
  let timer: NodeJS.Timeout | undefined;
  try {
    // A race of the function and the timer, settled by whichever comes first.
    const value = await new Promise<T>((resolve, reject) => {
      timer = setTimeout(() => reject(new DeadlineExceeded(ms)), Math.max(0, ms - (now() - start)));
      Promise.resolve().then(fn).then(resolve, reject);
    });
    if (now() - start > ms) throw new DeadlineExceeded(ms);
    return value;
  } finally {
    clearTimeout(timer);
  }
}
