// The one interface between the emulator's two halves. The front half (front/: routing, the
// caller decided once at start, the body budget, API Gateway's answers) sees the back half
// (back/: worker processes that invoke a function with an event, matchConditions threads) only
// as an Invoker; neither half imports the other.
import type { AdmissionRegistration, HttpResponse, Registration } from '../../lib/internal.ts';

/** The outcome of one invocation. */
export type Invocation =
  | { kind: 'result'; result: unknown; cold: boolean; durationMs: number; requestId: string }
  | {
      kind: 'error';
      error: { errorType: string; errorMessage: string; stackTrace: string[] };
      cold: boolean;
      durationMs: number;
      requestId: string;
    }
  | { kind: 'timeout'; cold: boolean; durationMs: number; requestId: string }
  | { kind: 'crash'; message: string; cold: boolean; durationMs: number; requestId: string; errorType?: CrashType }
  | { kind: 'throttled'; requestId: string };

/** Why an execution environment died, as Lambda names it. */
export type CrashType = 'Runtime.ExitError' | 'Runtime.OutOfMemory';

/**
 * Starts one invocation's timeout clock: calls `onTimeout` after `ms` unless the returned
 * function cancels it first. Tests pass one they move on themselves.
 */
export type InvocationTimer = (ms: number, onTimeout: () => void) => () => void;

/**
 * Evaluates a registration's matchConditions for a request body within `timeoutMs`: the answer
 * to send when the function is not to be invoked, undefined when it is. Once `signal` aborts
 * (the client went away) the review is dropped.
 */
export type ConditionsScreen = (
  registration: AdmissionRegistration,
  body: Buffer,
  timeoutMs: number,
  signal?: AbortSignal,
) => Promise<HttpResponse | undefined>;

/** The back half as the front half sees it: the functions served, by name. */
export interface Invoker {
  /** The names of the functions served now (they change with --watch). */
  names(): string[];
  /** The registration of a function served now. */
  registration(name: string): Registration | undefined;
  /** Invokes a function with an event; undefined when no such function is served. */
  invoke(name: string, event: unknown, requestId: string): Promise<Invocation> | undefined;
  /** The matchConditions screen of a function, undefined when it has none to evaluate before being invoked. */
  conditions(name: string): ConditionsScreen | undefined;
  /**
   * Sets an environment variable of every function (a rotated secret) and replaces the workers
   * of those `which` selects with their environment read again, as their calls end.
   */
  renew(which: (name: string) => boolean, variable?: { name: string; value: string }): void;
}
