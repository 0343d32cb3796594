import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { resolve } from 'node:path';
import { ensureLocalPathSecret, PATH_SECRET_ENV } from '../secrets/index.ts';
import {
  BodyBudget,
  DEFAULT_MAX_BUFFERED_BYTES,
  DEFAULT_TIMEOUTS,
  dropSlowReader,
  readBody,
  refuseAndClose,
  requestTarget,
  serverOptions,
  type ServerTimeouts,
} from './front/http.ts';
import type { FunctionPool, Invocation, InvocationTimer } from './back/pool.ts';
import { LocalProject, type EnvVarsFile } from './back/project.ts';

/** Options of `klw local start-lambda`. */
export interface StartLambdaOptions {
  root: string;
  host?: string;
  port?: number;
  concurrency?: number;
  build?: boolean;
  log?: (line: string) => void;
  /** Client timeouts (default DEFAULT_TIMEOUTS). */
  timeouts?: Partial<ServerTimeouts>;
  /** Where the local path secret is kept (default `.klw/local`): functions get it as they do behind start-api. */
  stateDir?: string;
  /** `--env-vars` contents (SAM format). */
  envVars?: EnvVarsFile;
  /** Rebuild on change; pick up new, removed and re-registered functions. */
  watch?: boolean;
  /** Where the functions' own log lines go; default stdout. */
  functionLog?: (line: string) => void;
  /** Most request-body bytes held at once across all connections (default DEFAULT_MAX_BUFFERED_BYTES). */
  maxBufferedBytes?: number;
  /** Runs the functions' timeout clocks (default: the wall clock). */
  invocationTimer?: InvocationTimer;
}

/** A running Invoke API. */
export interface RunningLambda {
  endpoint: string;
  port: number;
  pools: Map<string, FunctionPool>;
  /** The local path secret the functions check (`<path>/<secret>` in events). */
  pathSecret: string;
  /** The request-body bytes held now and at most, across all connections. */
  bodies: BodyBudget;
  close(): Promise<void>;
}

/** Lambda's payload limit for synchronous invocations: 6 MB (6,291,456 bytes). */
export const MAX_PAYLOAD_BYTES = 6 * 1024 * 1024;

const INVOKE_PATH = /^\/2015-03-31\/functions\/([^/]+)\/invocations$/;

/** JSON replies, each dropped if the client has not taken it within `sendMs`. */
function replies(sendMs: number) {
  const reply = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void => {
    const text = body === undefined ? '' : typeof body === 'string' ? body : JSON.stringify(body);
    res.writeHead(status, {
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(text),
      ...headers,
    });
    res.end(text);
    dropSlowReader(res, sendMs);
  };
  /** An error the Lambda service itself returns, in the shape the AWS SDK parses. */
  const serviceError = (res: ServerResponse, status: number, type: string, message: string, requestId: string): void =>
    reply(res, status, { Type: 'User', message }, { 'x-amzn-errortype': type, 'x-amzn-requestid': requestId });
  return { reply, serviceError };
}

/** The function error Lambda returns when the execution environment died (exited, or was killed past its memory size). */
export function crashPayload(
  outcome: Extract<Invocation, { kind: 'crash' }>,
  requestId: string,
): { errorType: string; errorMessage: string } {
  if (outcome.errorType === 'Runtime.OutOfMemory')
    return {
      errorType: 'Runtime.OutOfMemory',
      errorMessage: `RequestId: ${requestId} Error: Runtime exited with error: signal: killed`,
    };
  return {
    errorType: 'Runtime.ExitError',
    errorMessage: `RequestId: ${requestId} Error: Runtime exited: ${outcome.message}`,
  };
}

/** Function name from a path segment holding a name, a partial ARN or a full ARN; undefined when its %-escapes are malformed. */
export function functionNameOf(segment: string): string | undefined {
  let decoded: string;
  try {
    decoded = decodeURIComponent(segment);
  } catch {
    return undefined;
  }
  const arn = /:function:([^:]+)/.exec(decoded);
  return arn ? arn[1]! : decoded.split(':')[0]!;
}

/**
 * Starts the Lambda Invoke API (`POST /2015-03-31/functions/{name}/invocations`), so
 * `new LambdaClient({ endpoint })` with `InvokeCommand` works unchanged: RequestResponse,
 * Event and DryRun invocation types, `X-Amz-Function-Error` on function errors.
 */
export async function startLambda(options: StartLambdaOptions): Promise<RunningLambda> {
  const root = resolve(options.root);
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const secret = ensureLocalPathSecret(resolve(root, options.stateDir ?? '.klw/local'), (m) =>
    log(JSON.stringify({ level: 'warn', msg: m })),
  );
  const project = await LocalProject.open({
    root,
    ...(options.build === false ? { build: false } : {}),
    ...(options.concurrency ? { concurrency: options.concurrency } : {}),
    ...(options.envVars ? { envVars: options.envVars } : {}),
    extraEnv: { [PATH_SECRET_ENV]: secret.value },
    ...(options.functionLog ? { functionLog: options.functionLog } : {}),
    ...(options.invocationTimer ? { invocationTimer: options.invocationTimer } : {}),
    log,
  });
  const pools = project.pools;

  const timeouts = { ...DEFAULT_TIMEOUTS, ...options.timeouts };
  const { reply, serviceError } = replies(timeouts.sendMs);
  const bodies = new BodyBudget(options.maxBufferedBytes ?? DEFAULT_MAX_BUFFERED_BYTES);
  // A refused payload up to twice the limit (anything just over it) is read to its end, so its client gets the answer.
  const drain = { bytes: 2 * MAX_PAYLOAD_BYTES, ms: timeouts.requestMs };
  const serving: InvokeServing = { pools, bodies, drain, reply, serviceError, log };
  const server: Server = createServer(serverOptions(timeouts), (req, res) => {
    handleInvoke(serving, req, res).catch((err: unknown) => {
      if (!res.headersSent) serviceError(res, 500, 'ServiceException', 'emulator fault', 'error');
      log(JSON.stringify({ msg: 'emulator fault', error: String(err) }));
    });
  });
  try {
    await new Promise<void>((resolvePromise, reject) => {
      server.once('error', reject);
      server.listen(options.port ?? 3001, options.host ?? '127.0.0.1', () => resolvePromise());
    });
  } catch (err) {
    await project.close();
    throw err;
  }
  if (options.watch) await project.watch();
  const port = (server.address() as AddressInfo).port;
  return {
    endpoint: `http://${options.host ?? '127.0.0.1'}:${port}`,
    port,
    pools,
    pathSecret: secret.current,
    bodies,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
      await project.close();
    },
  };
}

/** What the Invoke API's request handler needs of the running emulator. */
interface InvokeServing extends ReturnType<typeof replies> {
  pools: Map<string, FunctionPool>;
  bodies: BodyBudget;
  /** How much of a refused payload is read to its end, so its client gets the answer. */
  drain: { bytes: number; ms: number };
  log: (line: string) => void;
}

/** Answers one Invoke request as the Lambda service would. */
async function handleInvoke(serving: InvokeServing, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const { bodies, drain, reply, serviceError, log } = serving;
  const requestId = randomUUID();
  const target = invokeTarget(serving, req, res, requestId);
  if (!target) return;
  const { name, pool } = target;
  const body = await readBody(req, MAX_PAYLOAD_BYTES, { budget: bodies, until: res });
  if (body === 'gone') return;
  const refusalHeaders = (type: string) => ({
    'content-type': 'application/json',
    'x-amzn-errortype': type,
    'x-amzn-requestid': requestId,
  });
  if (body === 'too-large') {
    const message = `Request must be smaller than ${MAX_PAYLOAD_BYTES} bytes for the InvokeFunction operation`;
    const text = JSON.stringify({ Type: 'User', message });
    return refuseAndClose(req, res, 413, refusalHeaders('RequestTooLargeException'), text, drain);
  }
  if (body === 'busy') {
    const message = `the emulator holds ${bodies.limit} bytes of request bodies already; retry later`;
    const reason = `request bodies held past ${bodies.limit} bytes`;
    log(JSON.stringify({ msg: 'invoke', function: name, outcome: 'refused', reason }));
    const headers = { ...refusalHeaders('ServiceException'), 'retry-after': '1' };
    return refuseAndClose(req, res, 503, headers, JSON.stringify({ Type: 'Service', message }), drain);
  }
  let event: unknown = null;
  if (body.length) {
    try {
      event = JSON.parse(body.toString('utf8'));
    } catch {
      return serviceError(
        res,
        400,
        'InvalidRequestContentException',
        'Could not parse request body into json',
        requestId,
      );
    }
  }
  const type = String(req.headers['x-amz-invocation-type'] ?? 'RequestResponse');
  const headers = { 'x-amzn-requestid': requestId, 'x-amz-executed-version': '$LATEST' };
  if (type === 'DryRun') return reply(res, 204, undefined, headers);
  if (type === 'Event') {
    reply(res, 202, undefined, headers);
    const outcome = await pool.invoke(event, requestId);
    log(JSON.stringify({ msg: 'invoke', function: name, type, outcome: outcome.kind }));
    return;
  }
  if (type !== 'RequestResponse')
    return serviceError(res, 400, 'InvalidParameterValueException', `unknown invocation type ${type}`, requestId);
  const outcome = await pool.invoke(event, requestId);
  log(
    JSON.stringify({
      msg: 'invoke',
      function: name,
      type,
      outcome: outcome.kind,
      durationMs: 'durationMs' in outcome ? Math.round(outcome.durationMs) : 0,
      cold: 'cold' in outcome ? outcome.cold : false,
    }),
  );
  return answerOutcome(serving, res, outcome, headers, requestId);
}

/** The function an Invoke request names and its pool; undefined once the request is answered with the service's error. */
function invokeTarget(
  serving: InvokeServing,
  req: IncomingMessage,
  res: ServerResponse,
  requestId: string,
): { name: string; pool: FunctionPool } | undefined {
  const { pools, serviceError } = serving;
  const match = INVOKE_PATH.exec(requestTarget(req.url).path);
  if (req.method !== 'POST' || !match) {
    serviceError(res, 404, 'UnknownOperationException', `unknown operation ${req.method} ${req.url}`, requestId);
    return undefined;
  }
  const name = functionNameOf(match[1]!);
  if (name === undefined) {
    serviceError(
      res,
      400,
      'InvalidParameterValueException',
      `function name ${JSON.stringify(match[1])} has a malformed %-escape`,
      requestId,
    );
    return undefined;
  }
  const pool = pools.get(name);
  if (!pool) {
    serviceError(
      res,
      404,
      'ResourceNotFoundException',
      `Function not found: arn:aws:lambda:us-east-1:123456789012:function:${name}`,
      requestId,
    );
    return undefined;
  }
  return { name, pool };
}

/** The Invoke API's answer to a synchronous invocation's outcome. */
function answerOutcome(
  serving: InvokeServing,
  res: ServerResponse,
  outcome: Invocation,
  headers: Record<string, string>,
  requestId: string,
) {
  const { reply, serviceError } = serving;
  switch (outcome.kind) {
    case 'result':
      return reply(res, 200, outcome.result === undefined ? 'null' : JSON.stringify(outcome.result), headers);
    case 'error':
      return reply(res, 200, outcome.error, { ...headers, 'x-amz-function-error': 'Unhandled' });
    case 'timeout':
      return reply(
        res,
        200,
        {
          errorType: 'Sandbox.Timedout',
          errorMessage: `${new Date().toISOString()} ${requestId} Task timed out after ${(outcome.durationMs / 1000).toFixed(2)} seconds`,
        },
        { ...headers, 'x-amz-function-error': 'Unhandled' },
      );
    case 'throttled':
      return serviceError(res, 429, 'TooManyRequestsException', 'Rate Exceeded.', requestId);
    default:
      return reply(res, 200, crashPayload(outcome, requestId), { ...headers, 'x-amz-function-error': 'Unhandled' });
  }
}
