/**
 * The types the handler's stages and the engines share: a leaf module, so the engines, the
 * stages and the fleet code all read them without importing one another.
 */
import type { GatewayResult } from '../gateway/sources.ts';
import type { Logger } from '../log.ts';
import type { FailureKind } from '../metrics.ts';
import type { Enforcement } from '../registration.ts';
import type { ReviewResult } from '../review/envelope.ts';

/** The subset of the Lambda context the adapter reads; any real context fits. */
export interface LambdaContextLike {
  awsRequestId?: string;
  getRemainingTimeInMillis?: () => number;
}

/** A Lambda handler answering API Gateway and function URL events. */
export type WebhookHandler = (event: unknown, context?: LambdaContextLike) => Promise<GatewayResult>;

/** What a user function is given besides the review: identity, time left, a logger and a way to warn. */
export interface WebhookContext {
  /** The Lambda request id (or API Gateway's when Lambda gives none). */
  requestId: string;
  /** Milliseconds the function may still take before the adapter answers for it. */
  remainingMs(): number;
  /** The structured logger; never log object contents or secrets. */
  log: Logger;
  /** Adds a warning to the response (admission) or to the log (conversion). */
  warn(message: string): void;
  /** The calling fleet cluster, named by its path secret; unset without a fleet. */
  cluster?: string;
  /** The calling cluster's Kubernetes version (`1.29`) as the fleet sets it (KLW_FLEET); unset otherwise. */
  kubeVersion?: string;
  /** The calling cluster's enforcement as the fleet sets it (KLW_FLEET); unset otherwise. */
  enforcement?: Enforcement;
}

/** How a caller proved who it is: its bearer token, its path secret, its fleet cluster's path secret, or not at all. */
export type CallerIdentity = 'bearer' | 'path-secret' | 'fleet' | 'none';

/**
 * Who called, decided once per request by the authentication stage, before the body is read,
 * and frozen: the same for the service's path secret, a bearer token and a fleet's clusters.
 */
export interface Caller {
  /**
   * How the caller was identified; `none` for `auth: 'none'`, or where no authentication is
   * configured outside Lambda (unit tests).
   */
  readonly identity: CallerIdentity;
  /** The calling fleet cluster; unset without a fleet, or when no cluster called (`auth: 'none'`). */
  readonly cluster?: string;
  /**
   * The cluster as logs and metrics name it: `cluster`, or `unknown` when a fleet function is
   * called by no cluster in particular (a bounded dimension); unset without a fleet.
   */
  readonly dimension?: string;
  /** The calling cluster's enforcement as the fleet sets it; unset otherwise. */
  readonly enforcement?: Enforcement;
  /** The calling cluster's Kubernetes version (`1.29`) as the fleet sets it; unset otherwise. */
  readonly kubeVersion?: string;
}

/** What an engine needs to answer one review; the same for every stage that reads it. */
export interface RunContext {
  readonly requestId: string;
  readonly budgetMs: number;
  /** When the invocation began, on `now`. */
  readonly startedAt: number;
  /** The clock the budget is measured on (ms). */
  readonly now: () => number;
  readonly log: Logger;
  /** The environment the handler reads its settings from (enforcement overrides). */
  readonly env: NodeJS.ProcessEnv;
  /** Who called. */
  readonly caller: Caller;
  /** Set by the test kit: the request is frozen before the function sees it. */
  readonly freezeRequest?: boolean;
}

/** The answer of an engine: the review response, the fields of its log line, and how the user function failed. */
export interface EngineAnswer {
  body: object;
  fields: Record<string, unknown>;
  /** Set when the user function threw or was late: the review's metrics count it as such. */
  failure?: FailureKind;
}

/**
 * Why an engine's answer cannot be sent: written as JSON it is larger than Lambda returns (the
 * whole result as the runtime sends it, in bytes), or it cannot be written as JSON at all
 * (nested too deeply, a cycle, a BigInt).
 */
export type UnsendableAnswer =
  | { kind: 'oversized'; bytes: number }
  | { kind: 'unserializable'; error: unknown; body: object };

/** One kind of review (admission or conversion): how to read it and how to answer it. */
export interface ReviewEngine<R> {
  /** The review in a body: at once, or once what reads a malformed one is loaded. */
  parse(body: unknown): ReviewResult<R> | Promise<ReviewResult<R>>;
  run(review: R, ctx: RunContext): Promise<EngineAnswer>;
  /** The answer in place of one the handler cannot send, and why it cannot. */
  unsendable(review: R, why: UnsendableAnswer, ctx: RunContext): EngineAnswer;
}

/** Options of a handler; tests and the emulator set them, deployments use the defaults. */
export interface HandlerOptions {
  logger?: Logger;
  /** Largest request body, and largest result as Lambda returns it, in bytes; default Lambda's 6 MB. */
  maxBodyBytes?: number;
  /** Environment to read the bearer token and path secret from; default process.env. */
  env?: NodeJS.ProcessEnv;
  /** The clock the time budget is measured on, in ms (default `performance.now`); tests pass one to make time pass. */
  clock?: () => number;
  /** Freeze each review's request before the function sees it, so a write to it throws (the test kit sets it). */
  freezeRequest?: boolean;
}
