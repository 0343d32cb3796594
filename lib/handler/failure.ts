/** How the handler and the engines log what failed: error ids, thrown values described safely. */
import { DeadlineExceeded } from '../deadline.ts';
import type { FailureKind } from '../metrics.ts';
import type { RunContext } from './types.ts';

/**
 * Short id joining a response message to its log line: 8 hex digits, unique enough to find
 * one line in a function's logs (not a secret, so no cryptographic randomness is needed).
 */
export function newErrorId(): string {
  return Math.floor(Math.random() * 0x1_0000_0000)
    .toString(16)
    .padStart(8, '0');
}

/** A user function's failure as logged: the id its response message names, and its kind for the metrics. */
export interface LoggedFailure {
  errorId: string;
  failure: FailureKind;
}

/**
 * Logs a user function's failure with its stack under a fresh error id, and returns the id
 * for the response message (which never carries the stack) and the failure's kind.
 */
export function logFailure(ctx: RunContext, message: string, err: unknown): LoggedFailure {
  const errorId = newErrorId();
  ctx.log.error(message, { requestId: ctx.requestId, errorId, ...describeThrown(err) });
  return { errorId, failure: isInstance(err, DeadlineExceeded) ? 'timeout' : 'error' };
}

/** `value instanceof type`, false where asking throws (a revoked Proxy). */
export function isInstance<T>(value: unknown, type: abstract new (...args: never[]) => T): value is T {
  try {
    return value instanceof type;
  } catch {
    return false;
  }
}

/** What `fn` returns, or undefined when it throws. */
export function attempt<T>(fn: () => T): T | undefined {
  try {
    return fn();
  } catch {
    return undefined;
  }
}

/**
 * A thrown value as the log shows it: `name: message` of an Error, `String()` of anything else;
 * a value that throws when asked (no prototype, a throwing `toString` or `message`, a revoked
 * Proxy) is described by its `Object.prototype.toString` tag, or its type.
 */
export function describeThrown(err: unknown): { error: string; stack?: string } {
  const error =
    attempt(() => (err instanceof Error ? `${err.name}: ${err.message}` : String(err))) ??
    attempt(() => Object.prototype.toString.call(err)) ??
    typeof err;
  const stack = attempt(() => (err instanceof Error && typeof err.stack === 'string' ? err.stack : undefined));
  return stack === undefined ? { error } : { error, stack };
}
