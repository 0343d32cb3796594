// One request to the local HTTPS API: routed to its function, its path secret checked, its body
// read within the budget, its matchConditions evaluated, then the function invoked.
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { type EventSource, checkPathSecret, PATH_SECRET_MIN_LENGTH } from '../../../lib/internal.ts';
import { eventFromHttp } from '../../../lib/harness/events.ts';
import { matchCluster, type ClusterSecrets } from '../../../lib/handler/fleet.ts';
import type { Fleet } from '../../fleet/file.ts';
import type { PathSecrets } from '../../secrets/index.ts';
import {
  type BodyBudget,
  dropSlowReader,
  readBody,
  refuseAndClose,
  requestTarget,
  type ServerTimeouts,
} from './http.ts';
import type { Invocation, Invoker } from '../invoker.ts';
import { BAD_GATEWAY, httpFromResult, jsonMessage, type HttpResponse } from './results.ts';

/** API Gateway's largest request payload (10 MB); bodies past it get 413 before any function runs. */
export const MAX_REQUEST_BYTES = 10 * 1024 * 1024;

/** A fleet's clusters as the emulator serves them: each cluster's path secrets, and the functions' view of them. */
export interface ServedFleet {
  file: Fleet;
  secrets: Map<string, PathSecrets>;
  value: string;
}

/** What the request handler needs of the running emulator. */
export interface ApiServing {
  format: EventSource;
  /** The public URL's path (a tunnel's prefix), or ''. */
  prefix: string;
  /** The functions served, behind the back half's one interface. */
  invoker: Invoker;
  timeouts: ServerTimeouts;
  bodies: BodyBudget;
  /** How much of a refused body is read to its end, so its client gets the answer. */
  drain: { bytes: number; ms: number };
  /** The path secrets a call may carry (current, then previous). */
  validSecrets: readonly string[];
  /** The fleet served, once loaded (null: none). */
  fleet: () => ServedFleet | null | undefined;
  /** True when the function's URL, and so every call of it, carries the path secret. */
  usesSecret: (name: string) => boolean;
  /** How long a review's matchConditions may take (ms), instead of the webhook's timeout. */
  conditionsTimeoutMs: number | undefined;
  log: (line: string) => void;
}

/** Answers one request; a fault of the emulator itself is a 502 and a log line. */
export function serveRequest(serving: ApiServing, req: IncomingMessage, res: ServerResponse): void {
  handleRequest(serving, req, res).catch((err: unknown) => {
    if (!res.headersSent) send(res, BAD_GATEWAY, 'error', serving.timeouts.sendMs);
    serving.log(JSON.stringify({ msg: 'emulator fault', error: String(err) }));
  });
}

async function handleRequest(serving: ApiServing, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const { format, prefix, invoker, timeouts, bodies, validSecrets, usesSecret, log } = serving;
  const fleet = serving.fleet();
  const requestId = randomUUID();
  const url = requestTarget(req.url);
  const routed = prefix && url.path.startsWith(`${prefix}/`) ? url.path.slice(prefix.length) : url.path;
  const name = routed.split('/')[1] ?? '';
  if (!invoker.names().includes(name)) return refuseUnknown(serving, req, res, routed, requestId);
  // A function without a path secret is routed at `/<name>` only (API Gateway ignores a trailing
  // slash): anything under it is a path no route matches.
  if (!usesSecret(name) && routed !== `/${name}` && routed !== `/${name}/`)
    return refuseUnknown(serving, req, res, routed, requestId);
  // As API Gateway's `/<name>/{secret}` route and the function itself would: the path secret is
  // checked before the body is read or the matchConditions evaluated, and a missing or wrong
  // one is answered exactly like an unknown route.
  // A fleet's caller is the cluster whose secret the path carries.
  const cluster = fleet && usesSecret(name) ? await callingCluster(routed, fleet.secrets) : undefined;
  const refused = fleet
    ? usesSecret(name) && !cluster
    : usesSecret(name) && !(await hasPathSecret(routed, validSecrets));
  if (refused) {
    send(res, jsonMessage(404, 'Not Found'), requestId, timeouts.sendMs);
    log(
      JSON.stringify({
        msg: 'request',
        function: name,
        method: req.method,
        status: 404,
        outcome: 'refused',
        reason: 'missing or wrong path secret',
      }),
    );
    return;
  }
  const body = await readBody(req, MAX_REQUEST_BYTES, { budget: bodies, until: res });
  if (body === 'gone') return;
  if (body === 'too-large' || body === 'busy') return refuseBody(serving, req, res, body, name, requestId);
  // A review the function's matchConditions exclude is answered as the API server would, without invoking it;
  // they are evaluated in threads of their own, within the webhook's timeout.
  const screen = invoker.conditions(name);
  const registration = invoker.registration(name);
  if (screen && registration && registration.type !== 'conversion') {
    const timeoutMs = serving.conditionsTimeoutMs ?? registration.timeoutSeconds * 1000;
    // A client that goes away (the API server gave up at its timeout) no longer holds a thread.
    const gone = new AbortController();
    const onClose = () => (res.writableFinished ? undefined : gone.abort());
    res.once('close', onClose);
    // As the calling cluster's API server: in its Kubernetes version's CEL environment, when the fleet sets one.
    const version = cluster && fleet?.file.clusters.find((c) => c.name === cluster)?.kubeVersion?.text;
    const asCluster = version ? { ...registration, kubernetesVersion: version } : registration;
    const byConditions = await screen(asCluster, body, timeoutMs, gone.signal);
    res.off('close', onClose);
    if (byConditions) return send(res, byConditions, requestId, timeouts.sendMs);
  }
  const event = eventFromHttp(format, {
    method: req.method ?? 'GET',
    path: url.path,
    rawQuery: url.query,
    headers: rawHeaderPairs(req),
    ...(body.length ? { body } : {}),
    sourceIp: req.socket.remoteAddress ?? '127.0.0.1',
    requestId,
  });
  const outcome = (await invoker.invoke(name, event, requestId)) ?? goneOutcome(requestId);
  const response = responseFor(format, outcome, event);
  send(res, response, requestId, timeouts.sendMs);
  log(JSON.stringify(invocationLine(name, cluster, req.method, response, outcome)));
}

/** The 404 of a path that names no function, logged so the URL is seen. */
function refuseUnknown(
  serving: ApiServing,
  req: IncomingMessage,
  res: ServerResponse,
  routed: string,
  requestId: string,
): void {
  const { invoker, timeouts, log } = serving;
  send(res, jsonMessage(404, 'Not Found'), requestId, timeouts.sendMs);
  // Logged, so a URL that names no function is seen: segments long enough to be a secret
  // hidden, the path bounded.
  const segments = routed.slice(0, 256).split('/');
  const shown = segments.map((s) => (s.length >= PATH_SECRET_MIN_LENGTH ? '***' : s)).join('/');
  const functions = invoker.names();
  const reason = 'no function at this path';
  const line = {
    msg: 'request',
    method: req.method,
    path: shown,
    status: 404,
    outcome: 'refused',
    reason,
    functions,
  };
  log(JSON.stringify(line));
}

/** The 413 of a body over the limit, or the 503 of one past the emulator's buffer budget. */
function refuseBody(
  serving: ApiServing,
  req: IncomingMessage,
  res: ServerResponse,
  body: 'too-large' | 'busy',
  name: string,
  requestId: string,
): void {
  const { bodies, drain, log } = serving;
  const busy = body === 'busy';
  const refusal = busy ? jsonMessage(503, 'Service Unavailable') : jsonMessage(413, 'Request Too Large');
  const headers = { ...(refusal.headers as Record<string, string>), 'apigw-requestid': requestId };
  const sent = busy ? { ...headers, 'retry-after': '1' } : headers;
  refuseAndClose(req, res, refusal.status, sent, refusal.body, drain);
  if (busy) {
    const line = { msg: 'request', function: name, method: req.method, status: 503, outcome: 'refused' };
    log(JSON.stringify({ ...line, reason: `request bodies held past ${bodies.limit} bytes` }));
  }
}

/** The outcome of a call to a function that went away (--watch) after the request was routed to it. */
function goneOutcome(requestId: string): Invocation {
  return { kind: 'crash', message: 'function no longer served', cold: false, durationMs: 0, requestId };
}

/** The log line of one invocation. */
function invocationLine(
  name: string,
  cluster: string | undefined,
  method: string | undefined,
  response: HttpResponse,
  outcome: Invocation,
): Record<string, unknown> {
  return {
    msg: 'request',
    function: name,
    ...(cluster ? { cluster } : {}),
    method,
    status: response.status,
    outcome: outcome.kind,
    durationMs: 'durationMs' in outcome ? Math.round(outcome.durationMs * 100) / 100 : 0,
    cold: 'cold' in outcome ? outcome.cold : false,
    ...(outcome.kind === 'error'
      ? { error: `${outcome.error.errorType}: ${outcome.error.errorMessage}`, stack: outcome.error.stackTrace }
      : {}),
    ...(outcome.kind === 'crash' ? { error: `${outcome.errorType ?? 'Runtime.ExitError'}: ${outcome.message}` } : {}),
  };
}

function rawHeaderPairs(req: IncomingMessage): Array<[string, string]> {
  const pairs: Array<[string, string]> = [];
  for (let i = 0; i + 1 < req.rawHeaders.length; i += 2) pairs.push([req.rawHeaders[i]!, req.rawHeaders[i + 1]!]);
  return pairs;
}

/** The HTTP answer to an invocation outcome, as API Gateway gives it. */
export function responseFor(format: EventSource, outcome: Invocation, event?: Record<string, unknown>): HttpResponse {
  switch (outcome.kind) {
    case 'result':
      return httpFromResult(format, outcome.result, event);
    case 'timeout':
      return jsonMessage(504, 'Endpoint request timed out');
    case 'throttled':
      return jsonMessage(429, 'Too Many Requests');
    default:
      return BAD_GATEWAY;
  }
}

function send(res: ServerResponse, response: HttpResponse, requestId: string, sendMs: number): void {
  res.writeHead(response.status, {
    ...response.headers,
    'content-length': response.body.length,
    'apigw-requestid': requestId,
  });
  res.end(response.body);
  dropSlowReader(res, sendMs);
}

/** The fleet cluster whose secret a routed path `/<name>/<secret>` carries (compared in constant time), if any. */
async function callingCluster(routed: string, secrets: ReadonlyMap<string, PathSecrets>): Promise<string | undefined> {
  const segments = routed.split('/');
  if (segments.length !== 3) return undefined;
  const clusters: ClusterSecrets[] = [...secrets].map(([cluster, s]) => ({
    cluster,
    secrets: s.previous ? [s.current, s.previous] : [s.current],
  }));
  return matchCluster(segments[2], clusters);
}

/** True when a routed path is `/<name>/<secret>` with one of the valid secrets (compared in constant time). */
async function hasPathSecret(routed: string, secrets: readonly string[]): Promise<boolean> {
  const segments = routed.split('/');
  return segments.length === 3 && (await checkPathSecret(segments[2], secrets));
}
