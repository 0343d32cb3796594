import { randomUUID } from 'node:crypto';
import { createServer as createHttpsServer, type Server } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join, resolve } from 'node:path';
import type { EventSource } from '../../lib/gateway/sources.ts';
import type { Registration } from '../../lib/registration.ts';
import { checkPathSecret, PATH_SECRET_MIN_LENGTH } from '../../lib/auth.ts';
import { eventFromHttp } from '../../lib/harness/events.ts';
import { KlwError } from '../functions.ts';
import { lintDocuments } from '../lint.ts';
import { checkWebhookUrl, generateManifests } from '../manifests.ts';
import {
  clusterStateDir,
  ensureLocalPathSecret,
  PATH_SECRET_ENV,
  usesPathSecret,
  type PathSecrets,
} from '../secrets.ts';
import { FLEET_ENV, FLEET_PATH_SECRETS_ENV, matchCluster, type ClusterSecrets } from '../../lib/fleet.ts';
import { fleetEnvValue, loadFleet, type Fleet } from '../fleet/file.ts';
import { renderDocuments } from '../output.ts';
import { ensureLocalCertificates, serverNames, writePrivate } from './certs.ts';
import { ConditionPool, hasMatchConditions } from './match-conditions.ts';
import type { FunctionPool, Invocation, InvocationTimer } from './pool.ts';
import { BAD_GATEWAY, httpFromResult, jsonMessage, type HttpResponse } from './results.ts';
import { LocalProject, type EnvVarsFile } from './project.ts';
import { DEFAULT_CONCURRENCY } from './runtime.ts';
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
} from './http.ts';

/** API Gateway's largest request payload (10 MB); bodies past it get 413 before any function runs. */
export const MAX_REQUEST_BYTES = 10 * 1024 * 1024;

/** Options of `klw local start-api`. */
export interface StartApiOptions {
  root: string;
  host?: string;
  port?: number;
  format?: EventSource;
  stateDir?: string;
  watch?: boolean;
  /** Workers per function. */
  concurrency?: number;
  /** Build before starting (default true). */
  build?: boolean;
  /** Where request log lines go; default stderr. */
  log?: (line: string) => void;
  /** Where the functions' own log lines go; default stdout. */
  functionLog?: (line: string) => void;
  /** Client timeouts (default DEFAULT_TIMEOUTS). */
  timeouts?: Partial<ServerTimeouts>;
  /** The URL the API server calls (`https://host:port[/prefix]`), when it is not the bind address: written into the manifests and the certificate. */
  publicUrl?: string;
  /** More names (DNS or IP) for the server certificate. */
  san?: string[];
  /** `--env-vars` contents (SAM format). */
  envVars?: EnvVarsFile;
  /** Debugger port of the first function's worker (`--inspect`); the next functions get the next ports. */
  inspectPort?: number;
  /** Called with the manifests file each time it is (re)written, e.g. to apply it. */
  onManifests?: (path: string) => void | Promise<void>;
  /** Most request-body bytes held at once across all connections (default DEFAULT_MAX_BUFFERED_BYTES). */
  maxBufferedBytes?: number;
  /** How long a review's matchConditions may take (ms), instead of the webhook's timeout. */
  conditionsTimeoutMs?: number;
  /** Heap of each matchConditions thread (MB; default CONDITIONS_HEAP_MB). */
  conditionsHeapMb?: number;
  /** The module of the matchConditions threads (default conditions-worker.mjs), for tests and diagnostics. */
  conditionsWorker?: URL;
  /** The Kubernetes version ("1.30") whose CEL environment evaluates matchConditions (`--kube-version`). */
  kubeVersion?: string;
  /** Runs the functions' timeout clocks (default: the wall clock). */
  invocationTimer?: InvocationTimer;
}

/** A running emulator. */
export interface RunningApi {
  /** Base URL of the functions: the public URL when given, else the bind address. */
  url: string;
  port: number;
  caPath: string;
  manifestsPath: string;
  /** Functions served now (changes with --watch). */
  readonly functions: string[];
  pools: Map<string, FunctionPool>;
  /** The local path secret in the functions' URLs (`<url>/<name>/<secret>`), when any function checks one. */
  pathSecret?: string;
  /** The project being served. */
  project: LocalProject;
  /** `<url>/<name>[/<secret>]`: where the API server (of `cluster`, in a fleet) sends a function's reviews. */
  functionUrl(name: string, cluster?: string): string;
  /** The request-body bytes held now and at most, across all connections. */
  bodies: BodyBudget;
  /** The threads that evaluate a function's matchConditions (started when first needed). */
  conditions(name: string): ConditionPool;
  close(): Promise<void>;
}

/** The host of a URL for the certificate (without IPv6 brackets). */
function hostOf(url: string): string {
  return new URL(url).hostname.replace(/^\[(.*)\]$/, '$1');
}

/** Checks `--public-url`: https, by the API server's URL rules. */
export function checkPublicUrl(url: string): string {
  const problem = checkWebhookUrl(url);
  if (problem) throw new KlwError(`--public-url: ${problem}`);
  return url.replace(/\/+$/, '');
}

export { readBody } from './http.ts';

function rawHeaderPairs(req: IncomingMessage): Array<[string, string]> {
  const pairs: Array<[string, string]> = [];
  for (let i = 0; i + 1 < req.rawHeaders.length; i += 2) pairs.push([req.rawHeaders[i]!, req.rawHeaders[i + 1]!]);
  return pairs;
}

/** The HTTP answer to an invocation outcome, as API Gateway gives it. */
export function responseFor(format: EventSource, outcome: Invocation): HttpResponse {
  switch (outcome.kind) {
    case 'result':
      return httpFromResult(format, outcome.result);
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

/** `https://127.0.0.1:3443`, with IPv6 hosts in brackets and wildcard hosts as loopback. */
export function baseUrlFor(host: string, port: number): string {
  const shown = host === '0.0.0.0' ? '127.0.0.1' : host === '::' ? '::1' : host;
  return `https://${shown.includes(':') ? `[${shown}]` : shown}:${port}`;
}

/**
 * Starts the local HTTPS API: each function at `POST /<name>/<secret>` (`POST /<name>` for
 * `auth: 'none'`; a missing or wrong secret gets the 404 of an unknown route before the body
 * is read), every request turned into the chosen event format and run in the function's
 * worker pool; writes the CA and the manifests for this URL into the state dir.
 */
export async function startApi(options: StartApiOptions): Promise<RunningApi> {
  const root = resolve(options.root);
  const host = options.host ?? '127.0.0.1';
  const format = options.format ?? 'http';
  const stateDir = resolve(root, options.stateDir ?? '.klw/local');
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const publicUrl = options.publicUrl ? checkPublicUrl(options.publicUrl) : undefined;
  const extraNames = [
    ...(options.san ?? []),
    ...(publicUrl ? [hostOf(publicUrl)] : []),
    ...(['0.0.0.0', '::', '127.0.0.1', '::1', 'localhost'].includes(host) ? [] : [host]),
  ];
  let names: ReturnType<typeof serverNames>;
  try {
    names = serverNames(extraNames);
  } catch (err) {
    throw new KlwError(`--san: ${(err as Error).message}`);
  }

  const certs = await ensureLocalCertificates(stateDir, (m) => log(JSON.stringify({ level: 'warn', msg: m })), names);
  const secret = ensureLocalPathSecret(stateDir, (m) => log(JSON.stringify({ level: 'warn', msg: m })));
  const validSecrets = secret.previous ? [secret.current, secret.previous] : [secret.current];
  // With a fleet file, each cluster calls with its own secret (`<stateDir>/clusters/<name>/path-secret`)
  // and the functions name it; loaded once, with the functions first served.
  let fleet: { file: Fleet; secrets: Map<string, PathSecrets>; value: string } | null | undefined;
  const fleetOf = (functions: readonly Registration[]) => {
    if (fleet !== undefined) return fleet;
    const file = loadFleet(root, functions);
    if (!file) return (fleet = null);
    const warn = (m: string) => log(JSON.stringify({ level: 'warn', msg: m }));
    const secrets = new Map(
      file.clusters.map((c) => [c.name, ensureLocalPathSecret(clusterStateDir(stateDir, c.name), warn)]),
    );
    const value = JSON.stringify(Object.fromEntries([...secrets].map(([name, s]) => [name, s.value])));
    return (fleet = { file, secrets, value });
  };
  const project = await LocalProject.open({
    root,
    ...(options.build === false ? { build: false } : {}),
    ...(options.concurrency ? { concurrency: options.concurrency } : {}),
    ...(options.inspectPort !== undefined ? { inspectPort: options.inspectPort } : {}),
    ...(options.envVars ? { envVars: options.envVars } : {}),
    extraEnv: { [PATH_SECRET_ENV]: secret.value },
    envFor: (reg, functions): Record<string, string> => {
      const served = fleetOf(functions);
      if (!served) return {};
      return { [FLEET_ENV]: fleetEnvValue(served.file, reg.name), [FLEET_PATH_SECRETS_ENV]: served.value };
    },
    ...(options.functionLog ? { functionLog: options.functionLog } : {}),
    ...(options.invocationTimer ? { invocationTimer: options.invocationTimer } : {}),
    log,
  });
  const pools = project.pools;
  // The path the API server calls starts with the public URL's path (a tunnel's prefix).
  const prefix = publicUrl ? new URL(publicUrl).pathname.replace(/\/+$/, '') : '';

  /** True when the function's URL, and so every call of it, carries the path secret. */
  const usesSecret = (name: string) => {
    const reg = project.registration(name);
    return reg !== undefined && usesPathSecret(reg);
  };

  const conditionPools = new Map<string, ConditionPool>();
  const conditions = (name: string) => {
    let pool = conditionPools.get(name);
    if (!pool) {
      const heapMb = options.conditionsHeapMb;
      const heap = heapMb !== undefined ? { resourceLimits: { maxOldGenerationSizeMb: heapMb } } : {};
      const size = options.concurrency ?? DEFAULT_CONCURRENCY;
      const kubeVersion = options.kubeVersion ? { kubeVersion: options.kubeVersion } : {};
      pool = new ConditionPool(name, { size, log, ...heap, ...kubeVersion, worker: options.conditionsWorker });
      conditionPools.set(name, pool);
    }
    return pool;
  };

  const timeouts = { ...DEFAULT_TIMEOUTS, ...options.timeouts };
  const bodies = new BodyBudget(options.maxBufferedBytes ?? DEFAULT_MAX_BUFFERED_BYTES);
  // A refused body up to twice the limit (anything just over it) is read to its end, so its client gets the answer.
  const drain = { bytes: 2 * MAX_REQUEST_BYTES, ms: timeouts.requestMs };
  const server: Server = createHttpsServer(
    { key: certs.keyPem, cert: certs.certPem, ...serverOptions(timeouts) },
    (req, res) => {
      void (async () => {
        const requestId = randomUUID();
        const url = requestTarget(req.url);
        const routed = prefix && url.path.startsWith(`${prefix}/`) ? url.path.slice(prefix.length) : url.path;
        const name = routed.split('/')[1] ?? '';
        const pool = pools.get(name);
        if (!pool) {
          send(res, jsonMessage(404, 'Not Found'), requestId, timeouts.sendMs);
          // Logged, so a URL that names no function is seen: segments long enough to be a secret
          // hidden, the path bounded.
          const segments = routed.slice(0, 256).split('/');
          const shown = segments.map((s) => (s.length >= PATH_SECRET_MIN_LENGTH ? '***' : s)).join('/');
          const functions = [...pools.keys()];
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
          return;
        }
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
        if (body === 'too-large' || body === 'busy') {
          const busy = body === 'busy';
          const refusal = busy ? jsonMessage(503, 'Service Unavailable') : jsonMessage(413, 'Request Too Large');
          const headers = { ...(refusal.headers as Record<string, string>), 'apigw-requestid': requestId };
          const sent = busy ? { ...headers, 'retry-after': '1' } : headers;
          refuseAndClose(req, res, refusal.status, sent, refusal.body, drain);
          if (busy) {
            const line = { msg: 'request', function: name, method: req.method, status: 503, outcome: 'refused' };
            log(JSON.stringify({ ...line, reason: `request bodies held past ${bodies.limit} bytes` }));
          }
          return;
        }
        // A review the function's matchConditions exclude is answered as the API server would, without invoking it;
        // they are evaluated in threads of their own, within the webhook's timeout.
        const registration = project.registration(name);
        if (hasMatchConditions(registration)) {
          const timeoutMs = options.conditionsTimeoutMs ?? registration.timeoutSeconds * 1000;
          // A client that goes away (the API server gave up at its timeout) no longer holds a thread.
          const gone = new AbortController();
          const onClose = () => (res.writableFinished ? undefined : gone.abort());
          res.once('close', onClose);
          const byConditions = await conditions(name).evaluate(registration, body, timeoutMs, gone.signal);
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
        const outcome = await pool.invoke(event, requestId);
        const response = responseFor(format, outcome);
        send(res, response, requestId, timeouts.sendMs);
        log(
          JSON.stringify({
            msg: 'request',
            function: name,
            ...(cluster ? { cluster } : {}),
            method: req.method,
            status: response.status,
            outcome: outcome.kind,
            durationMs: 'durationMs' in outcome ? Math.round(outcome.durationMs * 100) / 100 : 0,
            cold: 'cold' in outcome ? outcome.cold : false,
            ...(outcome.kind === 'error'
              ? { error: `${outcome.error.errorType}: ${outcome.error.errorMessage}`, stack: outcome.error.stackTrace }
              : {}),
            ...(outcome.kind === 'crash'
              ? { error: `${outcome.errorType ?? 'Runtime.ExitError'}: ${outcome.message}` }
              : {}),
          }),
        );
      })().catch((err: unknown) => {
        if (!res.headersSent) send(res, BAD_GATEWAY, 'error', timeouts.sendMs);
        log(JSON.stringify({ msg: 'emulator fault', error: String(err) }));
      });
    },
  );
  try {
    await new Promise<void>((resolvePromise, reject) => {
      server.once('error', reject);
      server.listen(options.port ?? 3443, host, () => resolvePromise());
    });
  } catch (err) {
    await project.close();
    throw err;
  }
  const port = (server.address() as AddressInfo).port;
  const url = publicUrl ?? baseUrlFor(host, port);
  // A fleet's functions refuse the service secret: the URLs carry the first cluster's (the others':
  // `klw manifests --cluster <name> --path-secret local`).
  const urlSecret = fleet ? fleet.secrets.get(fleet.file.clusters[0]!.name)!.current : secret.current;
  if (fleet) {
    const clusters = fleet.file.clusters.map((c) => c.name);
    log(JSON.stringify({ msg: 'fleet', clusters, manifests: `cluster ${clusters[0]}` }));
  }
  const endpoints = { baseUrl: url, caBundlePem: certs.caPem, pathSecret: urlSecret };
  const manifestsPath = join(stateDir, 'manifests.yaml');
  const writeManifests = () => {
    const set = generateManifests(
      root,
      project.functions.map((f) => f.registration),
      endpoints,
    );
    const errors = lintDocuments(set.documents).filter((f) => f.level === 'error');
    if (errors.length) log(JSON.stringify({ msg: 'manifests have lint errors', errors }));
    // The URLs carry the path secret: owner-only, like the secret itself.
    writePrivate(manifestsPath, renderDocuments(set.documents, 'yaml'));
  };
  writeManifests();
  await options.onManifests?.(manifestsPath);
  if (options.watch) {
    project.onChange(async () => {
      writeManifests();
      log(
        JSON.stringify({
          msg: 'manifests rewritten',
          path: manifestsPath,
          functions: project.functions.map((f) => f.name),
        }),
      );
      await options.onManifests?.(manifestsPath);
    });
    await project.watch();
  }
  return {
    url,
    port,
    caPath: certs.caPath,
    manifestsPath,
    get functions() {
      return project.functions.map((f) => f.name);
    },
    pools,
    pathSecret: urlSecret,
    project,
    functionUrl: (name, cluster) => {
      const clusterSecret = cluster === undefined ? urlSecret : fleet?.secrets.get(cluster)?.current;
      if (clusterSecret === undefined) throw new KlwError(`no cluster named ${JSON.stringify(cluster)} is served`);
      return `${url}/${name}${usesSecret(name) ? `/${clusterSecret}` : ''}`;
    },
    bodies,
    conditions,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
      await Promise.all([...conditionPools.values()].map((p) => p.close()));
      await project.close();
    },
  };
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
