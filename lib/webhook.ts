import { type AuthRefusal, authenticate } from './auth.ts';
import { cachedParameter, parameterReadMs } from './parameters.ts';
import {
  authenticateFleet,
  clusterDimension,
  fleetFromEnv,
  fleetLeftOut,
  type FleetRuntime,
  type ParameterReader,
} from './fleet.ts';
import { budgetMs, DeadlineExceeded, defaultClock } from './deadline.ts';
import { errorReply, jsonReply, MAX_BODY_BYTES, parseGoDuration, readJsonBody } from './gateway/http.ts';
import {
  detectSource,
  type GatewayRequest,
  type GatewayResult,
  type GatewaySource,
  httpApiSource,
  BUNDLED_SOURCES,
} from './gateway/sources.ts';
import { stringifyJson } from './json.ts';
import { createLogger, requestLogger, writesRawJson, type Logger } from './log.ts';
import { metricsFor, requestMetricsFor, type FailureKind } from './metrics.ts';
import type { Enforcement, Registration } from './registration.ts';
import type { ReviewResult } from './review/envelope.ts';

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

/** What an engine needs to answer one review. */
export interface RunContext {
  requestId: string;
  budgetMs: number;
  /** When the invocation began, on `now`. */
  startedAt: number;
  /** The clock the budget is measured on (ms). */
  now: () => number;
  log: Logger;
  /** Set by logFailure: how the user function failed, for the review's metrics. */
  failure?: FailureKind;
  /** The environment the handler reads its settings from (enforcement overrides). */
  env: NodeJS.ProcessEnv;
  /** The calling cluster, identified by its path secret, when the function serves a fleet. */
  cluster?: string;
  /** The clusters this function serves (KLW_FLEET), when it serves a fleet. */
  fleet?: FleetRuntime;
  /** Set by the test kit: the request is frozen before the function sees it. */
  freezeRequest?: boolean;
}

/** The answer of an engine: the review response and the fields of its log line. */
export interface EngineAnswer {
  body: object;
  fields: Record<string, unknown>;
}

/** One kind of review (admission or conversion): how to read it and how to answer it. */
export interface ReviewEngine<R> {
  parse(body: unknown): ReviewResult<R>;
  run(review: R, ctx: RunContext): Promise<EngineAnswer>;
  /** The answer when the response would be larger than Lambda can return. */
  oversized(review: R, bytes: number, ctx: RunContext): EngineAnswer;
  /** The answer when `body` cannot be written as JSON (nested too deeply, a cycle, a BigInt). */
  unserializable(review: R, body: object, err: unknown, ctx: RunContext): EngineAnswer;
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

/**
 * Short id joining a response message to its log line: 8 hex digits, unique enough to find
 * one line in a function's logs (not a secret, so no cryptographic randomness is needed).
 */
export function newErrorId(): string {
  return Math.floor(Math.random() * 0x1_0000_0000)
    .toString(16)
    .padStart(8, '0');
}

/**
 * Logs a user function's failure with its stack under a fresh error id, and returns the id
 * for the response message (which never carries the stack).
 */
export function logFailure(ctx: RunContext, message: string, err: unknown): string {
  const errorId = newErrorId();
  ctx.failure = isInstance(err, DeadlineExceeded) ? 'timeout' : 'error';
  ctx.log.error(message, { requestId: ctx.requestId, errorId, ...describeThrown(err) });
  return errorId;
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
function attempt<T>(fn: () => T): T | undefined {
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
function describeThrown(err: unknown): { error: string; stack?: string } {
  const error =
    attempt(() => (err instanceof Error ? `${err.name}: ${err.message}` : String(err))) ??
    attempt(() => Object.prototype.toString.call(err)) ??
    typeof err;
  const stack = attempt(() => (err instanceof Error && typeof err.stack === 'string' ? err.stack : undefined));
  return stack === undefined ? { error } : { error, stack };
}

/** A defined webhook: the Lambda handler, the registration infra reads, and a way to rebuild the handler. */
export interface DefinedWebhook<R extends Registration> {
  handler: WebhookHandler;
  registration: R;
  /** Builds a handler with other options (a test logger, a smaller body limit). */
  withOptions(options: HandlerOptions): WebhookHandler;
}

/** Puts a registration and its engine together as a defined webhook. */
export function defineWebhook<R extends Registration, V>(registration: R, engine: ReviewEngine<V>): DefinedWebhook<R> {
  return {
    handler: createHandler(registration, engine),
    registration,
    withOptions: (options) => createHandler(registration, engine, options),
  };
}

/** Builds the WebhookContext handed to user functions; `ctx.warn` calls `warn`. */
export function userContext(ctx: RunContext, warn: (message: string) => void): WebhookContext {
  const user: WebhookContext = {
    requestId: ctx.requestId,
    remainingMs: () => Math.max(0, ctx.budgetMs - (ctx.now() - ctx.startedAt)),
    log: ctx.log,
    warn: (message) => {
      warn(message);
    },
  };
  if (ctx.cluster !== undefined) {
    user.cluster = ctx.cluster;
    const kubeVersion = ctx.fleet?.get(ctx.cluster)?.kubeVersion;
    if (kubeVersion !== undefined) user.kubeVersion = kubeVersion;
    const enforcement = ctx.fleet?.get(ctx.cluster)?.enforcement;
    if (enforcement !== undefined) user.enforcement = enforcement;
  }
  return user;
}

/** The message for an event no source reads, naming the sources that are read. */
const UNKNOWN_EVENT = `event comes from no known source; expected one of: ${BUNDLED_SOURCES.map((s) => s.describe).join('; ')}`;

/** The 400 for an event no source reads, in the HTTP API's shape (the caller is unknown). */
function unknownEvent(log: Logger): GatewayResult {
  log.warn('rejected', { status: 400, reason: 'unknown event source' });
  return httpApiSource.write(errorReply({ status: 400, message: UNKNOWN_EVENT }));
}

/**
 * The log line of a refused caller. Counted in EMF on the same line, so a misconfiguration or a
 * flood of wrong secrets can be alarmed on.
 */
function refusalLine(
  refusal: AuthRefusal,
  requestId: string,
  durationMs: number,
  requestMetrics: ReturnType<typeof requestMetricsFor>,
): Record<string, unknown> {
  return { requestId, ...refusal.fields, durationMs, ...requestMetrics.refusal(refusal.reply.statusCode) };
}

/**
 * Builds the Lambda handler for an engine: reads the event, checks method, content type,
 * size and token, parses the review, lets the engine answer, and writes the result in the
 * event source's shape. Unreadable requests get a 4xx `{ "error": ... }`; nothing throws.
 */
export function createHandler<R>(
  registration: Registration,
  engine: ReviewEngine<R>,
  options: HandlerOptions = {},
): WebhookHandler {
  const log = options.logger ?? createLogger({ base: { webhook: registration.name } });
  const maxBodyBytes = options.maxBodyBytes ?? MAX_BODY_BYTES;
  const metrics = metricsFor(registration, options.env, writesRawJson(log));
  const requestMetrics = requestMetricsFor(registration, options.env);
  const now = options.clock ?? defaultClock;
  const elapsed = (startedAt: number) => Math.round((now() - startedAt) * 1000) / 1000;
  const env = options.env ?? process.env;

  return async function handler(event, context) {
    const startedAt = now();
    let source: GatewaySource = httpApiSource;
    let req: GatewayRequest | undefined;
    let reqLog: Logger | undefined;
    try {
      const detected = detectSource(event);
      if (!detected) return unknownEvent(log);
      source = detected;
      req = source.read(event);
      const requestId = context?.awsRequestId ?? req.requestId ?? 'local';
      const reject = (status: number, message: string, headers?: Record<string, string>) => {
        (reqLog ?? log).warn('rejected', { requestId, status, reason: message, durationMs: elapsed(startedAt) });
        return source.write(errorReply({ status, message, ...(headers ? { headers } : {}) }), req);
      };

      const budget = budgetMs({
        timeoutSeconds: registration.timeoutSeconds,
        requestTimeoutMs: parseGoDuration(req.query.timeout),
        remainingMs: context?.getRemainingTimeInMillis?.(),
      });
      // Caller authentication comes first: a refused request costs no body decoding or parsing.
      // Its SSM reads, if any, take part of the budget, well inside the webhook's timeout.
      const { refusal, fleet, cluster, caller } = await identifyCaller(registration, req, env, options.env, budget);
      if (refusal) {
        log[refusal.level](refusal.msg, refusalLine(refusal, requestId, elapsed(startedAt), requestMetrics));
        return source.write(refusal.reply, req);
      }
      // Every later line of the request (the user's ctx.log included) names it and its cluster;
      // the review line below names them itself, so it costs no merge.
      reqLog = requestLogger(log, requestId, cluster);
      const body = readJsonBody(req, maxBodyBytes);
      if (!body.ok) return reject(body.error.status, body.error.message, body.error.headers);
      const parsed = engine.parse(body.value);
      if (!parsed.ok) return reject(400, parsed.message);

      const ctx: RunContext = { requestId, startedAt, now, log: reqLog, env, budgetMs: budget };
      if (options.freezeRequest) ctx.freezeRequest = true;
      if (fleet) {
        ctx.fleet = fleet;
        if (caller) ctx.cluster = caller;
      }
      const write = (text: string) =>
        source.write({ statusCode: 200, headers: { 'content-type': 'application/json' }, body: text }, req);
      const { answer, result } = await answerReview(engine, parsed.review, ctx, write, maxBodyBytes);
      const durationMs = elapsed(startedAt);
      // The review's EMF metrics ride in the same line (no extra call, line or serialisation).
      const line: Record<string, unknown> = { requestId, source: source.name, ...answer.fields, durationMs };
      if (cluster !== undefined) line.cluster = cluster;
      metrics(line, answer.fields, durationMs, ctx.failure);
      log.info('review', line);
      return result;
    } catch (err) {
      // Only a fault in the adapter itself lands here; user functions are caught by the engines.
      const errorId = newErrorId();
      (reqLog ?? log).error('adapter fault', { errorId, ...describeThrown(err), ...requestMetrics.fault() });
      return source.write(jsonReply(500, { error: `internal error (error id ${errorId})` }), req);
    }
  };
}

/** Who called: a refusal, or the fleet and the calling cluster (its name, and as metrics name it). */
interface Caller {
  refusal?: AuthRefusal;
  fleet?: FleetRuntime;
  cluster?: string;
  caller?: string;
}

/**
 * Authenticates the caller. A fleet function names its caller by the path secret, the one check
 * it makes; a bundle built for a deployment without a fleet has no fleet code (infra/build.ts sets
 * KLW_BUNDLE_NO_FLEET) and refuses to run as one.
 */
async function identifyCaller(
  registration: Registration,
  req: GatewayRequest,
  env: NodeJS.ProcessEnv,
  optionsEnv: NodeJS.ProcessEnv | undefined,
  budget: number,
): Promise<Caller> {
  const fleetAuth =
    process.env.KLW_BUNDLE_NO_FLEET === '1'
      ? fleetLeftOut(env)
      : await authenticateFleet(registration, req, env, fleetReader(budget));
  const refusal = fleetAuth ? fleetAuth.refusal : await authenticate(registration, req, optionsEnv, budget);
  if (refusal) return { refusal };
  if (process.env.KLW_BUNDLE_NO_FLEET !== '1' && fleetAuth) {
    // Parsed already by authenticateFleet when it let the request through; `auth: 'none'` skips it.
    const fleet = attempt(() => fleetFromEnv(env));
    return { fleet, cluster: clusterDimension(fleetAuth.cluster, fleet), caller: fleetAuth.cluster };
  }
  return {};
}

/**
 * Runs the engine and writes its answer with `write`; an answer that cannot be written as
 * JSON, or whose result is larger than Lambda returns, is replaced by the engine's own.
 */
async function answerReview<R>(
  engine: ReviewEngine<R>,
  review: R,
  ctx: RunContext,
  write: (text: string) => GatewayResult,
  maxBodyBytes: number,
): Promise<{ answer: EngineAnswer; result: GatewayResult }> {
  let answer = await engine.run(review, ctx);
  let text: string;
  try {
    text = stringifyJson(answer.body);
  } catch (err) {
    answer = engine.unserializable(review, answer.body, err, ctx);
    text = JSON.stringify(answer.body);
  }
  let result = write(text);
  // Lambda's limit applies to the whole result as the runtime sends it, body escaped inside.
  const bytes = resultBytes(result, maxBodyBytes);
  if (bytes > maxBodyBytes) {
    answer = engine.oversized(review, bytes, ctx);
    result = write(stringifyJson(answer.body));
  }
  return { answer, result };
}

/**
 * Reads a fleet's SSM parameters within the time a request may spend on them (parameterReadMs
 * of its budget), one deadline for every read of the request, a reread after a miss included.
 */
function fleetReader(budget: number): ParameterReader {
  const readUntil = performance.now() + parameterReadMs(budget);
  return (name, maxAgeMs) => cachedParameter(name, maxAgeMs, Math.max(1, Math.floor(readUntil - performance.now())));
}

/**
 * Size in bytes of a result as the Lambda runtime sends it (its JSON text, UTF-8), or 0 when
 * it surely fits in `limit`. Inside that JSON the body is a string again: one of its UTF-16
 * units takes at most 6 bytes there (`\u001f`), so most results need no count at all.
 */
export function resultBytes(result: GatewayResult, limit: number): number {
  if (result.body.length * 6 + FRAME_ALLOWANCE <= limit) return 0;
  return Buffer.byteLength(JSON.stringify(result), 'utf8');
}

/** Room for the result's other members (a status code, the content-type header, a flag): far less is used. */
const FRAME_ALLOWANCE = 4096;
