import { createServer as createHttpsServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join, resolve } from 'node:path';
import type { EventSource, Registration } from '../../lib/internal.ts';
import { KlwError } from '../errors.ts';
import { lintDocuments } from '../lint.ts';
import { checkWebhookUrl, generateManifests, type Endpoints } from '../manifests.ts';
import { ensureLocalPathSecret, localSecretSource, PATH_SECRET_ENV, usesPathSecret } from '../secrets/index.ts';
import { FLEET_ENV, FLEET_PATH_SECRETS_ENV } from '../../lib/handler/fleet.ts';
import { fleetEnvValue } from '../fleet/file.ts';
import { renderDocuments } from '../output.ts';
import { ensureLocalCertificates, serverNames, writePrivate } from './certs.ts';
import { ConditionPool } from './back/condition-pool.ts';
import type { FunctionPool } from './back/pool.ts';
import { LocalProject, type EnvVarsFile } from './back/project.ts';
import { DEFAULT_CONCURRENCY } from './back/runtime.ts';
import { projectInvoker } from './back/served.ts';
import {
  fleetLoader,
  type SecretsWatcher,
  watchFleetSecrets,
  watchSecretDirs,
  watchServiceSecret,
} from './front/fleet-secrets.ts';
import { type ApiServing, MAX_REQUEST_BYTES, type ServedFleet, serveRequest } from './front/api-request.ts';
import {
  BodyBudget,
  DEFAULT_MAX_BUFFERED_BYTES,
  DEFAULT_TIMEOUTS,
  serverOptions,
  type ServerTimeouts,
} from './front/http.ts';
import type { Invoker, InvocationTimer } from './invoker.ts';

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
  /** The threads that evaluate matchConditions before a function is invoked. */
  conditions?: ConditionsOptions;
  /** The Kubernetes version ("1.30") whose CEL environment evaluates matchConditions (`--kube-version`). */
  kubeVersion?: string;
  /** Runs the functions' timeout clocks (default: the wall clock). */
  invocationTimer?: InvocationTimer;
  /** Watches a fleet's cluster secret directories (default: fs.watch), for tests. */
  watchSecrets?: SecretsWatcher;
}

/** How start-api evaluates matchConditions. */
export interface ConditionsOptions {
  /** How long a review's matchConditions may take (ms), instead of the webhook's timeout. */
  timeoutMs?: number;
  /** Heap of each matchConditions thread (MB; default CONDITIONS_HEAP_MB). */
  heapMb?: number;
  /** The module of the matchConditions threads (default conditions-worker.mjs), for tests and diagnostics. */
  worker?: URL;
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
  /** Where that secret is kept: the service's file, or in a fleet the first cluster's (whose URLs the manifests hold). */
  pathSecretSource(): { file: string; cluster?: string };
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

export { readBody } from './front/http.ts';

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
  const names = serverNamesFor(options.san ?? [], host, publicUrl);

  const certs = await ensureLocalCertificates(stateDir, (m) => log(JSON.stringify({ level: 'warn', msg: m })), names);
  const secret = ensureLocalPathSecret(stateDir, (m) => log(JSON.stringify({ level: 'warn', msg: m })));
  const validSecrets = secret.previous ? [secret.current, secret.previous] : [secret.current];
  // With a fleet file, each cluster calls with its own secret (`<stateDir>/clusters/<name>/path-secret`)
  // and the functions name it; loaded with the functions first served, and again when a secret changes.
  const fleets = fleetLoader(root, stateDir, log);
  const project = await openProject(root, options, secret.value, fleets.of, log);
  // The path the API server calls starts with the public URL's path (a tunnel's prefix).
  const prefix = publicUrl ? new URL(publicUrl).pathname.replace(/\/+$/, '') : '';

  const usesSecret = pathSecretCheck(project);

  const { conditionPools, conditions } = conditionPoolsFor(options, log);
  // The front half (serving) reaches the functions only through the back half's Invoker.
  const invoker = projectInvoker(project, conditions);

  const serving = apiServing(options, { format, prefix, validSecrets, fleet: fleets.get, usesSecret, log }, invoker);
  const { timeouts, bodies } = serving;
  // The secret files are read again when they change; a new secret of the URLs goes into the manifests.
  let onNewSecrets: () => Promise<void> = async () => {};
  const reloaded = () =>
    void onNewSecrets().catch((err: unknown) =>
      log(JSON.stringify({ level: 'warn', msg: 'manifests not rewritten', error: String(err) })),
    );
  const watcher = options.watchSecrets ?? watchSecretDirs(log);
  const service = { stateDir, secrets: secret, serving, invoker, usesSecret, log };
  const secretsWatch = fleets.get()
    ? watchFleetSecrets(fleets, invoker, usesSecret, watcher, reloaded)
    : watchServiceSecret(service, watcher, reloaded);
  const server: Server = createHttpsServer(
    { key: certs.keyPem, cert: certs.certPem, ...serverOptions(timeouts) },
    (req, res) => serveRequest(serving, req, res),
  );
  await listen(server, options.port ?? 3443, host, [secretsWatch, project]);
  const port = (server.address() as AddressInfo).port;
  const url = publicUrl ?? baseUrlFor(host, port);
  const urlSecret = urlSecretFor(fleets.get(), secret.current);
  logFleet(fleets.get(), log);
  const endpoints = { baseUrl: url, caBundlePem: certs.caPem, pathSecret: urlSecret };
  const manifests = await serveManifests(root, stateDir, project, endpoints, options, log);
  onNewSecrets = async () => {
    const next = urlSecretFor(fleets.get(), service.secrets.current, endpoints.pathSecret);
    if (next === endpoints.pathSecret) return;
    endpoints.pathSecret = next;
    await manifests.write('path secret rotated');
  };
  return {
    url,
    port,
    caPath: certs.caPath,
    manifestsPath: manifests.path,
    get functions() {
      return project.functions.map((f) => f.name);
    },
    pools: project.pools,
    get pathSecret() {
      return endpoints.pathSecret;
    },
    pathSecretSource: () => localSecretSource(stateDir, fleets.get()?.file.clusters[0]?.name),
    project,
    functionUrl: (name, cluster) => {
      const clusterSecret = cluster === undefined ? endpoints.pathSecret : fleets.get()?.secrets.get(cluster)?.current;
      return functionUrlOf(url, name, cluster, clusterSecret, usesSecret(name));
    },
    bodies,
    conditions,
    close: () => closeApi(server, secretsWatch, conditionPools, project),
  };
}

/** A function's URL with a cluster's secret (none for a function that takes none). */
function functionUrlOf(
  url: string,
  name: string,
  cluster: string | undefined,
  secret: string | undefined,
  withSecret: boolean,
): string {
  if (secret === undefined) throw new KlwError(`no cluster named ${JSON.stringify(cluster)} is served`);
  return `${url}/${name}${withSecret ? `/${secret}` : ''}`;
}

/** Stops watching, closes every connection and the server, then the condition threads and the functions. */
async function closeApi(
  server: Server,
  secretsWatch: { close(): void } | undefined,
  conditionPools: Map<unknown, { close(): Promise<void> }>,
  project: { close(): Promise<void> },
): Promise<void> {
  secretsWatch?.close();
  server.closeAllConnections();
  await new Promise<void>((r) => server.close(() => r()));
  await Promise.all([...conditionPools.values()].map((p) => p.close()));
  await project.close();
}

/** What serveRequest needs: the options' limits (or their defaults) and the project's parts. */
function apiServing(
  options: StartApiOptions,
  parts: Pick<ApiServing, 'format' | 'prefix' | 'validSecrets' | 'fleet' | 'usesSecret' | 'log'>,
  invoker: Invoker,
): ApiServing {
  const timeouts = { ...DEFAULT_TIMEOUTS, ...options.timeouts };
  return {
    ...parts,
    invoker,
    timeouts,
    bodies: new BodyBudget(options.maxBufferedBytes ?? DEFAULT_MAX_BUFFERED_BYTES),
    // A refused body up to twice the limit (anything just over it) is read to its end, so its client gets the answer.
    drain: { bytes: 2 * MAX_REQUEST_BYTES, ms: timeouts.requestMs },
    conditionsTimeoutMs: options.conditions?.timeoutMs,
  };
}

/** The server certificate's names: those asked for, the public URL's host, and a bind address that is not a wildcard or loopback. */
function serverNamesFor(san: string[], host: string, publicUrl: string | undefined): ReturnType<typeof serverNames> {
  const extraNames = [
    ...san,
    ...(publicUrl ? [hostOf(publicUrl)] : []),
    ...(['0.0.0.0', '::', '127.0.0.1', '::1', 'localhost'].includes(host) ? [] : [host]),
  ];
  try {
    return serverNames(extraNames);
  } catch (err) {
    throw new KlwError(`--san: ${(err as Error).message}`);
  }
}

/** The matchConditions threads of each function, started when first needed. */
function conditionPoolsFor(
  options: StartApiOptions,
  log: (line: string) => void,
): { conditionPools: Map<string, ConditionPool>; conditions: (name: string) => ConditionPool } {
  const conditionPools = new Map<string, ConditionPool>();
  const conditions = (name: string) => {
    let pool = conditionPools.get(name);
    if (!pool) {
      const heapMb = options.conditions?.heapMb;
      const heap = heapMb !== undefined ? { resourceLimits: { maxOldGenerationSizeMb: heapMb } } : {};
      const size = options.concurrency ?? DEFAULT_CONCURRENCY;
      const kubeVersion = options.kubeVersion ? { kubeVersion: options.kubeVersion } : {};
      pool = new ConditionPool(name, { size, log, ...heap, ...kubeVersion, worker: options.conditions?.worker });
      conditionPools.set(name, pool);
    }
    return pool;
  };
  return { conditionPools, conditions };
}

/**
 * Writes the manifests for the served URL into the state dir, and again on every change with
 * --watch; returns their path and a way to write them again (`why` is logged).
 */
async function serveManifests(
  root: string,
  stateDir: string,
  project: LocalProject,
  endpoints: Endpoints,
  options: StartApiOptions,
  log: (line: string) => void,
): Promise<{ path: string; write: (why: string) => Promise<void> }> {
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
  const rewrite = async (why: string) => {
    writeManifests();
    const functions = project.functions.map((f) => f.name);
    log(JSON.stringify({ msg: 'manifests rewritten', path: manifestsPath, functions, why }));
    await options.onManifests?.(manifestsPath);
  };
  writeManifests();
  await options.onManifests?.(manifestsPath);
  if (options.watch) {
    project.onChange(() => rewrite('functions changed'));
    await project.watch();
  }
  return { path: manifestsPath, write: rewrite };
}

/** The project served, its functions given the path secret (and, in a fleet, their cluster's). */
function openProject(
  root: string,
  options: StartApiOptions,
  pathSecret: string,
  fleetOf: (functions: readonly Registration[]) => ServedFleet | null,
  log: (line: string) => void,
): Promise<LocalProject> {
  return LocalProject.open({
    root,
    ...(options.build === false ? { build: false } : {}),
    ...(options.concurrency ? { concurrency: options.concurrency } : {}),
    ...(options.inspectPort !== undefined ? { inspectPort: options.inspectPort } : {}),
    ...(options.envVars ? { envVars: options.envVars } : {}),
    extraEnv: { [PATH_SECRET_ENV]: pathSecret },
    envFor: (reg, functions): Record<string, string> => {
      const served = fleetOf(functions);
      if (!served) return {};
      return { [FLEET_ENV]: fleetEnvValue(served.file, reg.name), [FLEET_PATH_SECRETS_ENV]: served.value };
    },
    ...(options.functionLog ? { functionLog: options.functionLog } : {}),
    ...(options.invocationTimer ? { invocationTimer: options.invocationTimer } : {}),
    log,
  });
}

/** Listens on host:port; the project is closed when the server cannot listen. */
/** Listens; on failure (a port in use) closes what the start opened, so nothing keeps the process alive. */
async function listen(
  server: Server,
  port: number,
  host: string,
  opened: Array<{ close(): unknown } | undefined>,
): Promise<void> {
  try {
    await new Promise<void>((resolvePromise, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => resolvePromise());
    });
  } catch (err) {
    for (const part of opened) await part?.close();
    throw err;
  }
}

/** The path secret in the URLs of the manifests; a fleet's is its first cluster's current one. */
function urlSecretFor(fleet: ServedFleet | null | undefined, current: string, kept = current): string {
  // A fleet's functions refuse the service secret: the URLs carry the first cluster's (the others':
  // `klw manifests --cluster <name> --path-secret local`).
  // A first cluster whose secret was deleted keeps the URLs as they were (`kept`) until a new one is written.
  return fleet ? (fleet.secrets.get(fleet.file.clusters[0]!.name)?.current ?? kept) : current;
}

/** Logs the clusters of a served fleet, and whose secret the manifests carry. */
function logFleet(fleet: ServedFleet | null | undefined, log: (line: string) => void): void {
  if (!fleet) return;
  const clusters = fleet.file.clusters.map((c) => c.name);
  log(JSON.stringify({ msg: 'fleet', clusters, manifests: `cluster ${clusters[0]}` }));
}

/** A check that is true when the function's URL, and so every call of it, carries the path secret. */
function pathSecretCheck(project: LocalProject): (name: string) => boolean {
  return (name: string) => {
    const reg = project.registration(name);
    return reg !== undefined && usesPathSecret(reg);
  };
}
