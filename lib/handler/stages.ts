/**
 * The handler: an ordered list of stages, each taking one step of a request and either handing
 * it on or answering it (an unknown event, a refused caller, an unreadable body or review).
 * The last stage runs the engine and always answers.
 */
import { authenticate, type AuthOutcome, UNCHECKED } from '../auth.ts';
import { budgetMs, defaultClock } from '../deadline.ts';
import { errorReply, jsonReply, MAX_BODY_BYTES, parseGoDuration, readJsonBody } from '../gateway/http.ts';
import {
  BUNDLED_SOURCES,
  detectSource,
  type GatewayRequest,
  type GatewayResult,
  type GatewaySource,
  httpApiSource,
} from '../gateway/sources.ts';
import { stringifyJson } from '../json.ts';
import { createLogger, requestLogger, writesRawJson, type Logger } from '../log.ts';
import { metricsFor, requestMetricsFor, type MetricsWriter, type RequestMetricsWriter } from '../metrics.ts';
import type { Registration } from '../registration.ts';
import type { ReviewResult } from '../review/envelope.ts';
import { describeThrown, newErrorId } from './failure.ts';
import { authenticateFleet, fleetLeftOut, fleetReader, servesFleet } from './fleet.ts';
import type {
  Caller,
  EngineAnswer,
  HandlerOptions,
  LambdaContextLike,
  ReviewEngine,
  RunContext,
  UnsendableAnswer,
  WebhookHandler,
} from './types.ts';

/** What every request of one handler shares: its registration, engine, settings, logger and metrics. */
interface Setup<R> {
  registration: Registration;
  engine: ReviewEngine<R>;
  /** The one environment the handler reads: options.env, else process.env. */
  env: NodeJS.ProcessEnv;
  log: Logger;
  maxBodyBytes: number;
  metrics: MetricsWriter;
  requestMetrics: RequestMetricsWriter;
  now: () => number;
}

/**
 * One request on its way through the stages: each stage fills in what it learns. Once the
 * caller is known it is the engine's RunContext too (read-only there).
 */
interface Exchange<R> extends RunContext {
  readonly event: unknown;
  readonly context: LambdaContextLike | undefined;
  /** The event's source; the HTTP API's until one is detected (an unknown event is answered in its shape). */
  source: GatewaySource;
  req?: GatewayRequest;
  requestId: string;
  budgetMs: number;
  caller: Caller;
  /** The request's logger once the caller is known (it names both), the handler's before. */
  log: Logger;
  body?: unknown;
  review?: R;
}

/** A step of the handler: undefined hands the request on, a result answers it. */
type Stage = <R>(setup: Setup<R>, x: Exchange<R>) => GatewayResult | undefined | Promise<GatewayResult | undefined>;

/** Milliseconds since the request began, to the microsecond. */
const elapsed = (setup: Setup<unknown>, x: Exchange<unknown>) => Math.round((setup.now() - x.startedAt) * 1000) / 1000;

/** A 4xx for a request the handler cannot read, logged as `rejected`. */
function reject<R>(
  setup: Setup<R>,
  x: Exchange<R>,
  status: number,
  message: string,
  headers?: Record<string, string>,
): GatewayResult {
  x.log.warn('rejected', { requestId: x.requestId, status, reason: message, durationMs: elapsed(setup, x) });
  return x.source.write(errorReply({ status, message, ...(headers ? { headers } : {}) }), x.req);
}

/** The message for an event no source reads, naming the sources that are read. */
const UNKNOWN_EVENT = `event comes from no known source; expected one of: ${BUNDLED_SOURCES.map((s) => s.describe).join('; ')}`;

/**
 * Which source sent the event (by its shape), its request, and the time the request may take
 * (the registration's timeout, the API server's, Lambda's); an event no source reads is a 400.
 */
const readEvent: Stage = (setup, x) => {
  const detected = detectSource(x.event);
  if (!detected) {
    x.log.warn('rejected', { status: 400, reason: 'unknown event source' });
    return httpApiSource.write(errorReply({ status: 400, message: UNKNOWN_EVENT }));
  }
  x.source = detected;
  x.req = detected.read(x.event);
  x.requestId = x.context?.awsRequestId ?? x.req.requestId ?? 'local';
  x.budgetMs = budgetMs({
    timeoutSeconds: setup.registration.timeoutSeconds,
    requestTimeoutMs: parseGoDuration(x.req.query.timeout),
    remainingMs: x.context?.getRemainingTimeInMillis?.(),
  });
  return undefined;
};

/**
 * Who called, before the body is read, so a refused request costs no decoding or parsing: a
 * fleet function names its cluster by the path secret, any other checks its path secret or
 * bearer token. A bundle built for a deployment without a fleet has no fleet code
 * (infra/build.ts sets KLW_BUNDLE_NO_FLEET) and refuses to run as one. Its SSM reads, if any,
 * take part of the budget, well inside the webhook's timeout.
 */
const authenticateCaller: Stage = async (setup, x) => {
  const { registration, env } = setup;
  const req = x.req!;
  const fleet: AuthOutcome | undefined =
    process.env.KLW_BUNDLE_NO_FLEET === '1'
      ? fleetLeftOut(env)
      : await authenticateFleet(registration, req, env, fleetReader(x.budgetMs));
  const outcome = fleet ?? (await authenticate(registration, req, env, x.budgetMs));
  const { refusal } = outcome;
  if (refusal) {
    // Counted in EMF on the same line, so a misconfiguration or a flood of wrong secrets can be alarmed on.
    const metrics = setup.requestMetrics.refusal(refusal.reply.statusCode);
    setup.log[refusal.level](refusal.msg, {
      requestId: x.requestId,
      ...refusal.fields,
      durationMs: elapsed(setup, x),
      ...metrics,
    });
    return x.source.write(refusal.reply, req);
  }
  x.caller = outcome.caller;
  // Every later line of the request (the user's ctx.log included) names it and its cluster;
  // the review line names them itself, so it costs no merge.
  x.log = requestLogger(setup.log, x.requestId, outcome.caller.dimension);
  return undefined;
};

/** Method, content type, size and encoding of the body, read as JSON. */
const readBody: Stage = (setup, x) => {
  const body = readJsonBody(x.req!, setup.maxBodyBytes);
  if (!body.ok) return reject(setup, x, body.error.status, body.error.message, body.error.headers);
  x.body = body.value;
  return undefined;
};

/** The review the engine reads (AdmissionReview or ConversionReview, v1 or v1beta1). */
const parseReview: Stage = (setup, x) => {
  const parsed = setup.engine.parse(x.body);
  // A well-formed review is read at once: no promise on the way of every request.
  return parsed instanceof Promise ? parsed.then((p) => takeReview(setup, x, p)) : takeReview(setup, x, parsed);
};

/** Keeps the review read, or rejects the request with its problem. */
function takeReview<R>(setup: Setup<R>, x: Exchange<R>, parsed: ReviewResult<R>): GatewayResult | undefined {
  if (!parsed.ok) return reject(setup, x, 400, parsed.message);
  x.review = parsed.review;
  return undefined;
}

/**
 * Runs the engine, sends its answer in the source's shape and logs the review line with its
 * metrics: the last stage, which always answers.
 */
async function answerReview<R>(setup: Setup<R>, x: Exchange<R>): Promise<GatewayResult> {
  const write = (text: string) =>
    x.source.write({ statusCode: 200, headers: { 'content-type': 'application/json' }, body: text }, x.req);
  const { answer, result } = await sendAnswer(setup, x.review!, x, write);
  const durationMs = elapsed(setup, x);
  // The review's EMF metrics ride in the same line (no extra call, line or serialisation).
  const line: Record<string, unknown> = { requestId: x.requestId, source: x.source.name, ...answer.fields, durationMs };
  if (x.caller.dimension !== undefined) line.cluster = x.caller.dimension;
  setup.metrics(line, answer.fields, durationMs, answer.failure);
  setup.log.info('review', line);
  return result;
}

/** The handler's stages, in order, before the last (answerReview). */
const STAGES: readonly Stage[] = [readEvent, authenticateCaller, readBody, parseReview];

/**
 * Runs the engine and writes its answer with `write`. An answer that cannot be sent, as it
 * cannot be written as JSON or its result is larger than Lambda returns, is replaced by the
 * engine's answer for that failure: the same for admission and conversion.
 */
async function sendAnswer<R>(
  setup: Setup<R>,
  review: R,
  ctx: RunContext,
  write: (text: string) => GatewayResult,
): Promise<{ answer: EngineAnswer; result: GatewayResult }> {
  const { engine, maxBodyBytes } = setup;
  let answer = await engine.run(review, ctx);
  const replace = (why: UnsendableAnswer) => {
    const replaced = engine.unsendable(review, why, ctx);
    // A failure met while replacing is the one the metrics count; else the run's stands.
    return { ...replaced, failure: replaced.failure ?? answer.failure };
  };
  let text: string;
  try {
    text = stringifyJson(answer.body);
  } catch (error) {
    answer = replace({ kind: 'unserializable', error, body: answer.body });
    text = JSON.stringify(answer.body);
  }
  let result = write(text);
  // Lambda's limit applies to the whole result as the runtime sends it, body escaped inside.
  const bytes = resultBytes(result, maxBodyBytes);
  if (bytes > maxBodyBytes) {
    answer = replace({ kind: 'oversized', bytes });
    result = write(stringifyJson(answer.body));
  }
  return { answer, result };
}

/**
 * Builds the Lambda handler for an engine: its stages read the event, check method, content
 * type, size and caller, parse the review, let the engine answer, and write the result in the
 * event source's shape. Unreadable requests get a 4xx `{ "error": ... }`; nothing throws.
 */
export function createHandler<R>(
  registration: Registration,
  engine: ReviewEngine<R>,
  options: HandlerOptions = {},
): WebhookHandler {
  const env = options.env ?? process.env;
  const log = options.logger ?? createLogger({ base: { webhook: registration.name } });
  const setup: Setup<R> = {
    registration,
    engine,
    env,
    log,
    maxBodyBytes: options.maxBodyBytes ?? MAX_BODY_BYTES,
    metrics: metricsFor(registration, env, writesRawJson(log), servesFleet(env)),
    requestMetrics: requestMetricsFor(registration, env),
    now: options.clock ?? defaultClock,
  };
  return async function handler(event, context) {
    const x: Exchange<R> = {
      event,
      context,
      startedAt: setup.now(),
      now: setup.now,
      env,
      source: httpApiSource,
      requestId: 'local',
      budgetMs: 0,
      // No stage before authentication reads the caller.
      caller: UNCHECKED.caller,
      log,
      ...(options.freezeRequest ? { freezeRequest: true } : {}),
    };
    try {
      for (const stage of STAGES) {
        const result = await stage(setup, x);
        if (result) return result;
      }
      return await answerReview(setup, x);
    } catch (err) {
      // Only a fault in the adapter itself lands here; user functions are caught by the engines.
      const errorId = newErrorId();
      x.log.error('adapter fault', { errorId, ...describeThrown(err), ...setup.requestMetrics.fault() });
      return x.source.write(jsonReply(500, { error: `internal error (error id ${errorId})` }), x.req);
    }
  };
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
