import { spawn } from 'node:child_process';
import { createHash, X509Certificate } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { request as httpsRequest, type RequestOptions } from 'node:https';
import { request as httpRequest } from 'node:http';
import { homedir } from 'node:os';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { parse } from 'yaml';
import { parseGoDuration } from '../../lib/gateway/http.ts';
import { KlwError } from '../errors.ts';
import type { AuthorizationAttributes, AuthorizationDecision } from '../../lib/matchconditions/cel.ts';

/** How to reach one API server and who to be there, read from a kubeconfig or the pod's service account. */
export interface KubeConnection {
  /** `https://host:port` (no trailing slash). */
  server: string;
  /** Where the credentials came from, for messages: `<file> context <name>` or `in-cluster`. */
  source: string;
  ca?: string;
  /** Skip server certificate verification (`insecure-skip-tls-verify`). */
  insecure?: boolean;
  /** TLS server name to verify instead of the server's host (`tls-server-name`). */
  serverName?: string;
  cert?: string;
  key?: string;
  token?: string;
  /** Re-read on every request: projected service account tokens rotate. */
  tokenFile?: string;
  username?: string;
  password?: string;
  /** The context's default namespace. */
  namespace?: string;
  /** The exec credential plugin that gave `token` (or `cert` and `key`), run again when they expire or are refused. */
  exec?: ExecPlugin;
  /** When the plugin's credential expires (`status.expirationTimestamp`, ms since the epoch). */
  expiresAt?: number;
}

/** A kubeconfig user's `exec` entry and the folder relative commands are found from. */
export interface ExecPlugin {
  config: Record<string, unknown>;
  base: string;
  /** Most time one run may take before the plugin and its process group are killed. */
  timeoutMs: number;
}

/** A credential an exec plugin returned. */
interface ExecResult {
  token?: string;
  cert?: string;
  key?: string;
  expiresAt?: number;
}

/** The service account files every pod gets (in-cluster configuration). */
export const SERVICE_ACCOUNT_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';

type Json = Record<string, any>;

/** Where a kubeconfig is looked for: the option, then KUBECONFIG (a path list), then ~/.kube/config. */
function kubeconfigFiles(explicit: string | undefined, env: NodeJS.ProcessEnv): string[] {
  if (explicit) {
    if (!existsSync(explicit)) throw new KlwError(`kubeconfig ${explicit} not found`);
    return [explicit];
  }
  if (env.KUBECONFIG)
    return env.KUBECONFIG.split(process.platform === 'win32' ? ';' : ':').filter((f) => f && existsSync(f));
  const home = join(env.HOME ?? homedir(), '.kube', 'config');
  return existsSync(home) ? [home] : [];
}

/** Reads a kubeconfig's file reference relative to the kubeconfig, or its inline base64 `-data`. */
function material(entry: Json, field: string, base: string, what: string): string | undefined {
  const data = entry[`${field}-data`];
  if (typeof data === 'string' && data) return Buffer.from(data, 'base64').toString('utf8');
  const file = entry[field];
  if (typeof file !== 'string' || !file) return undefined;
  const path = isAbsolute(file) ? file : resolve(base, file);
  try {
    return readFileSync(path, 'utf8');
  } catch {
    throw new KlwError(`kubeconfig: ${what} ${path} cannot be read`);
  }
}

/** Most bytes of an exec plugin's output read: an ExecCredential is a few kilobytes, a certificate chain included. */
const MAX_EXEC_OUTPUT_BYTES = 1024 * 1024;
/** Most characters of a failing plugin's stderr kept; only its first line is shown. */
const MAX_EXEC_STDERR_CHARS = 4096;

/**
 * Runs one exec plugin command: its stdout, or a KlwError when it cannot start, fails, prints
 * more than MAX_EXEC_OUTPUT_BYTES or runs longer than `timeoutMs` (then its whole process group,
 * children included, is killed).
 */
function runPlugin(
  cmd: string,
  args: string[],
  env: Record<string, string>,
  timeoutMs: number,
  command: string,
): Promise<string> {
  const what = `kubeconfig: exec credential plugin ${command}`;
  return new Promise((resolvePromise, reject) => {
    // Its own process group (POSIX), so a timeout kills what it started too.
    const child = spawn(cmd, args, { env, stdio: ['ignore', 'pipe', 'pipe'], detached: process.platform !== 'win32' });
    const out: Buffer[] = [];
    let outBytes = 0;
    let stderr = '';
    let settled = false;
    const settle = (err: KlwError | undefined, value = '') => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (err) reject(err);
      else resolvePromise(value);
    };
    const kill = (err: KlwError) => {
      try {
        if (child.pid !== undefined && process.platform !== 'win32') process.kill(-child.pid, 'SIGKILL');
        else child.kill('SIGKILL');
      } catch {
        // already gone
      }
      // A grandchild that left the group may hold the pipes open: stop reading them.
      child.stdout.destroy();
      child.stderr.destroy();
      settle(err);
    };
    const timer = setTimeout(() => {
      kill(new KlwError(`${what} did not finish within ${formatMs(timeoutMs)}; killed it (--exec-timeout)`));
    }, timeoutMs);
    child.stdout.on('data', (chunk: Buffer) => {
      outBytes += chunk.length;
      if (outBytes <= MAX_EXEC_OUTPUT_BYTES) out.push(chunk);
      else kill(new KlwError(`${what} printed more than ${MAX_EXEC_OUTPUT_BYTES} bytes; killed it`));
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      if (stderr.length < MAX_EXEC_STDERR_CHARS) stderr += chunk;
    });
    child.on('error', (err) => settle(new KlwError(`${what} cannot be run: ${err.message}`)));
    child.on('close', (code, signal) => {
      if (code === 0) return settle(undefined, Buffer.concat(out).toString('utf8'));
      const first = stderr.trim().split('\n')[0];
      settle(new KlwError(`${what} failed${first ? `: ${first}` : signal ? ` (${signal})` : ` (exit ${code})`}`));
    });
  });
}

/** Runs a client-go exec credential plugin (aws eks get-token, gke-gcloud-auth-plugin, ...), at most `timeoutMs`. */
async function execCredential(exec: Json, base: string, timeoutMs: number): Promise<ExecResult> {
  const command = String(exec.command ?? '');
  if (!command) throw new KlwError('kubeconfig: exec credential plugin without a command');
  const env = { ...process.env } as Record<string, string>;
  for (const e of Array.isArray(exec.env) ? exec.env : []) if (e?.name) env[e.name] = String(e.value ?? '');
  // The plugin learns which API version to answer in from KUBERNETES_EXEC_INFO.
  const apiVersion = String(exec.apiVersion ?? 'client.authentication.k8s.io/v1beta1');
  env.KUBERNETES_EXEC_INFO = JSON.stringify({ apiVersion, kind: 'ExecCredential', spec: { interactive: false } });
  const cmd = command.includes('/') && !isAbsolute(command) ? resolve(base, command) : command;
  const args = Array.isArray(exec.args) ? exec.args.map(String) : [];
  const out = await runPlugin(cmd, args, env, timeoutMs, command);
  let status: Json;
  try {
    status = (JSON.parse(out) as Json).status ?? {};
  } catch {
    throw new KlwError(`kubeconfig: exec credential plugin ${command} did not print an ExecCredential`);
  }
  const result: ExecResult = {};
  if (status.token) result.token = String(status.token);
  if (status.clientCertificateData) result.cert = String(status.clientCertificateData);
  if (status.clientKeyData) result.key = String(status.clientKeyData);
  const expires = typeof status.expirationTimestamp === 'string' ? Date.parse(status.expirationTimestamp) : NaN;
  if (Number.isFinite(expires)) result.expiresAt = expires;
  if (!result.token && !result.cert)
    throw new KlwError(
      `kubeconfig: exec credential plugin ${command} returned neither a token nor a client certificate`,
    );
  return result;
}

/** Merges kubeconfig files as kubectl does: the first file to name an entry (or current-context) wins. */
function mergeKubeconfigs(files: string[]): { config: Json; baseOf: (section: string, name: string) => string } {
  const config: Json = { clusters: [], users: [], contexts: [] };
  const bases = new Map<string, string>();
  for (const file of files) {
    let doc: Json;
    try {
      doc = (parse(readFileSync(file, 'utf8')) ?? {}) as Json;
    } catch (err) {
      throw new KlwError(`kubeconfig ${file} is not YAML: ${(err as Error).message.split('\n')[0]}`);
    }
    if (typeof doc !== 'object') throw new KlwError(`kubeconfig ${file} is not a kubeconfig`);
    config['current-context'] ??= doc['current-context'] || undefined;
    for (const section of ['clusters', 'users', 'contexts'] as const) {
      for (const entry of Array.isArray(doc[section]) ? doc[section] : []) {
        if (!entry?.name || config[section].some((e: Json) => e.name === entry.name)) continue;
        config[section].push(entry);
        bases.set(`${section}/${entry.name}`, dirname(resolve(file)));
      }
    }
  }
  return { config, baseOf: (section, name) => bases.get(`${section}/${name}`) ?? process.cwd() };
}

/** The in-cluster configuration: the API server's service address and the pod's service account. */
export function inClusterConnection(env: NodeJS.ProcessEnv = process.env, dir = SERVICE_ACCOUNT_DIR): KubeConnection {
  const host = env.KUBERNETES_SERVICE_HOST;
  const port = env.KUBERNETES_SERVICE_PORT;
  if (!host || !port || !existsSync(join(dir, 'token'))) {
    throw new KlwError(
      'no kubeconfig (--kubeconfig, KUBECONFIG or ~/.kube/config) and not running in a cluster (KUBERNETES_SERVICE_HOST and a service account token)',
    );
  }
  const connection: KubeConnection = {
    server: `https://${host.includes(':') ? `[${host}]` : host}:${port}`,
    source: 'in-cluster',
    tokenFile: join(dir, 'token'),
  };
  if (existsSync(join(dir, 'ca.crt'))) connection.ca = readFileSync(join(dir, 'ca.crt'), 'utf8');
  if (existsSync(join(dir, 'namespace'))) connection.namespace = readFileSync(join(dir, 'namespace'), 'utf8').trim();
  return connection;
}

/** Options of {@link loadConnection}. */
export interface ConnectionOptions {
  kubeconfig?: string;
  context?: string;
  env?: NodeJS.ProcessEnv;
  /** Most time an exec credential plugin may run; default {@link DEFAULT_KUBE_LIMITS}.execMs. */
  execTimeoutMs?: number;
}

/**
 * The connection kubectl would use: `kubeconfig` (or KUBECONFIG, or ~/.kube/config) at `context`
 * (or the current context); without any kubeconfig, the in-cluster service account. A user's
 * exec credential plugin runs once here.
 */
export async function loadConnection(options: ConnectionOptions = {}): Promise<KubeConnection> {
  const env = options.env ?? process.env;
  const files = kubeconfigFiles(options.kubeconfig, env);
  if (!files.length) {
    if (options.context) throw new KlwError(`no kubeconfig to find context ${options.context} in`);
    return inClusterConnection(env);
  }
  const { config, baseOf } = mergeKubeconfigs(files);
  const contextName: string | undefined = options.context ?? config['current-context'];
  if (!contextName) throw new KlwError(`kubeconfig ${files.join(', ')} has no current-context; give --context`);
  const context = config.contexts.find((c: Json) => c.name === contextName)?.context;
  if (!context) throw new KlwError(`kubeconfig ${files.join(', ')} has no context "${contextName}"`);
  const cluster = config.clusters.find((c: Json) => c.name === context.cluster)?.cluster;
  if (!cluster?.server)
    throw new KlwError(`context "${contextName}": cluster "${context.cluster}" not found or has no server`);
  const user: Json = config.users.find((u: Json) => u.name === context.user)?.user ?? {};
  const clusterBase = baseOf('clusters', context.cluster);
  const userBase = baseOf('users', context.user);

  const connection: KubeConnection = {
    server: String(cluster.server).replace(/\/+$/, ''),
    source: `${files[0]} context ${contextName}`,
  };
  const ca = material(cluster, 'certificate-authority', clusterBase, 'certificate authority');
  if (ca) connection.ca = ca;
  if (cluster['insecure-skip-tls-verify'] === true) connection.insecure = true;
  if (cluster['tls-server-name']) connection.serverName = String(cluster['tls-server-name']);
  if (context.namespace) connection.namespace = String(context.namespace);

  const cert = material(user, 'client-certificate', userBase, 'client certificate');
  const key = material(user, 'client-key', userBase, 'client key');
  if (cert) connection.cert = cert;
  if (key) connection.key = key;
  if (user.token) connection.token = String(user.token);
  else if (user.tokenFile)
    connection.tokenFile = isAbsolute(user.tokenFile) ? user.tokenFile : resolve(userBase, user.tokenFile);
  if (user.username) {
    connection.username = String(user.username);
    connection.password = String(user.password ?? '');
  }
  if (user['auth-provider'])
    throw new KlwError(
      `context "${contextName}": auth-provider ${user['auth-provider'].name ?? ''} is not supported; use an exec credential plugin`,
    );
  if (user.exec) {
    const timeoutMs = options.execTimeoutMs ?? DEFAULT_KUBE_LIMITS.execMs;
    connection.exec = { config: user.exec as Json, base: userBase, timeoutMs };
    Object.assign(connection, await execCredential(user.exec, userBase, timeoutMs));
  }
  return connection;
}

/** An error answer of the API server. */
export class KubeApiError extends KlwError {
  constructor(
    readonly status: number,
    readonly path: string,
    message: string,
  ) {
    super(`${path}: HTTP ${status}${message ? `: ${message}` : ''}`);
  }
}

/** Largest API answer read (a list page); pages are asked for with `limit`, so this is generous. */
const MAX_RESPONSE_BYTES = 256 * 1024 * 1024;
/** An exec plugin's credential this close to its expirationTimestamp is renewed before a request (EKS tokens last 15 minutes). */
export const EXEC_RENEW_BEFORE_MS = 60_000;

/** How long and how far the client goes before it gives up on a stalling API server or plugin. */
export interface KubeLimits {
  /** Most time one request may take, from connecting to the answer's last byte (`--request-timeout`). */
  requestMs: number;
  /** Most time the API server may take over all the pages of one list, restarts included (`--list-timeout`). */
  listMs: number;
  /** Most pages one list may have (`--max-pages`). */
  maxPages: number;
  /** Most time one run of an exec credential plugin may take before it is killed (`--exec-timeout`). */
  execMs: number;
}

/**
 * The limits unless told otherwise. A request: 60 s, the API server's own default request
 * timeout (a page the server does not finish in that time it will not finish). A list: 15
 * minutes of the server's time (processing the objects is not counted), far beyond the 200
 * pages of 100,000 objects at 500 a page. Pages: 10,000, five million objects at the default
 * page size. A plugin: 60 s; `aws eks get-token` takes a second or two.
 */
export const DEFAULT_KUBE_LIMITS: Readonly<KubeLimits> = {
  requestMs: 60_000,
  listMs: 15 * 60_000,
  maxPages: 10_000,
  execMs: 60_000,
};

/** `1.5 s`, `250 ms`: a limit in messages. */
function formatMs(ms: number): string {
  return ms >= 1000 ? `${Math.round(ms) / 1000} s` : `${Math.round(ms)} ms`;
}

/** Longest delay a Node.js timer takes (2^31 - 1 ms, about 24.8 days); a longer one would fire at once. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** A duration option (`30s`, `2m`, `1m30s`, `500ms`) in ms; a KlwError naming the option otherwise. */
function durationOption(value: string | undefined, option: string, fallback: number): number {
  if (value === undefined) return fallback;
  const ms = parseGoDuration(value.trim());
  if (ms === undefined || !(ms >= 1)) {
    throw new KlwError(`${option} must be a duration of at least 1ms, such as 30s, 2m or 1m30s`);
  }
  return Math.min(ms, MAX_TIMER_MS);
}

/** `klw audit`'s options that set {@link KubeLimits}, as given on the command line. */
export interface LimitOptions {
  requestTimeout?: string;
  listTimeout?: string;
  maxPages?: string;
  execTimeout?: string;
}

/** The limits from `klw audit`'s options (strings as given), defaults for those not given. */
export function kubeLimitsFrom(options: LimitOptions): KubeLimits {
  const maxPages = options.maxPages === undefined ? DEFAULT_KUBE_LIMITS.maxPages : Number(options.maxPages);
  if (!Number.isSafeInteger(maxPages) || maxPages < 1) {
    throw new KlwError('--max-pages must be a whole number of at least 1');
  }
  return {
    requestMs: durationOption(options.requestTimeout, '--request-timeout', DEFAULT_KUBE_LIMITS.requestMs),
    listMs: durationOption(options.listTimeout, '--list-timeout', DEFAULT_KUBE_LIMITS.listMs),
    maxPages,
    execMs: durationOption(options.execTimeout, '--exec-timeout', DEFAULT_KUBE_LIMITS.execMs),
  };
}

/** When one request gives up, and the error it gives up with. */
interface RequestDeadline {
  ms: number;
  error: () => KlwError;
}

/** `null`, `a string`, `an array`: what a list item that is not an object is. */
function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return `a ${typeof value}`;
}

/** A minimal Kubernetes API client over HTTPS: JSON GET and POST, and paginated lists, within {@link KubeLimits}. */
export class KubeClient {
  readonly limits: KubeLimits;
  /** The exec plugin run under way, so concurrent requests wait for one run. */
  private renewing: Promise<void> | undefined;

  constructor(
    readonly connection: KubeConnection,
    limits: Partial<KubeLimits> = {},
  ) {
    this.limits = { ...DEFAULT_KUBE_LIMITS, ...limits };
  }

  /**
   * Sends one request; resolves with the parsed JSON body, rejects with {@link KubeApiError} on a
   * non-2xx answer, with a KlwError when the whole answer has not arrived within the request
   * limit (or `deadline`). With an exec credential plugin, the plugin runs again first when its
   * credential is within {@link EXEC_RENEW_BEFORE_MS} of expiring, and once after a 401 (then
   * the request is sent again), as client-go does.
   */
  async request(method: 'GET' | 'POST', path: string, body?: unknown, deadline?: RequestDeadline): Promise<any> {
    const c = this.connection;
    const expiring = c.expiresAt !== undefined && Date.now() >= c.expiresAt - EXEC_RENEW_BEFORE_MS;
    if (c.exec && expiring) await this.renewCredential();
    const sent = c.token ?? c.cert;
    try {
      return await this.send(method, path, body, deadline);
    } catch (err) {
      if (!(err instanceof KubeApiError) || err.status !== 401 || !c.exec) throw err;
      // Renewed unless another request already did since this one was sent.
      if ((c.token ?? c.cert) === sent) await this.renewCredential();
      return this.send(method, path, body, deadline);
    }
  }

  /** Runs the exec plugin again and takes its credential; one run at a time. */
  private renewCredential(): Promise<void> {
    const c = this.connection;
    this.renewing ??= execCredential(c.exec!.config as Json, c.exec!.base, c.exec!.timeoutMs)
      .then((renewed) => {
        delete c.expiresAt;
        Object.assign(c, renewed);
      })
      .finally(() => (this.renewing = undefined));
    return this.renewing;
  }

  /** One attempt of {@link request}. */
  private send(method: 'GET' | 'POST', path: string, body: unknown, deadline?: RequestDeadline): Promise<any> {
    const c = this.connection;
    const url = new URL(path, `${c.server}/`);
    const text = body === undefined ? undefined : JSON.stringify(body);
    const headers: Record<string, string> = { accept: 'application/json', 'user-agent': 'klw-audit' };
    if (text !== undefined) headers['content-type'] = 'application/json';
    const token = c.tokenFile ? readFileSync(c.tokenFile, 'utf8').trim() : c.token;
    if (token) headers.authorization = `Bearer ${token}`;
    else if (c.username !== undefined)
      headers.authorization = `Basic ${Buffer.from(`${c.username}:${c.password ?? ''}`).toString('base64')}`;
    const options: RequestOptions = { method, headers };
    if (c.ca) options.ca = c.ca;
    if (c.cert) options.cert = c.cert;
    if (c.key) options.key = c.key;
    if (c.insecure) options.rejectUnauthorized = false;
    if (c.serverName) options.servername = c.serverName;
    const send = url.protocol === 'http:' ? httpRequest : httpsRequest;
    const { requestMs } = this.limits;
    const limit = deadline ?? {
      ms: requestMs,
      error: () => {
        const within = `within ${formatMs(requestMs)} (--request-timeout)`;
        return new KlwError(`${method} ${url.pathname} at ${c.server}: no complete answer ${within}`);
      },
    };
    return new Promise((resolvePromise, reject) => {
      let settled = false;
      const settle = (err: unknown, value?: unknown) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        if (err) reject(err);
        else resolvePromise(value);
      };
      const req = send(url, options, (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > MAX_RESPONSE_BYTES)
            req.destroy(new KlwError(`${url.pathname}: answer larger than ${MAX_RESPONSE_BYTES} bytes`));
          else chunks.push(chunk);
        });
        res.on('end', () => {
          const raw = Buffer.concat(chunks).toString('utf8');
          let parsed: any;
          try {
            parsed = raw ? JSON.parse(raw) : undefined;
          } catch {
            parsed = undefined;
          }
          const status = res.statusCode ?? 0;
          const message = parsed?.message ?? raw.slice(0, 200).trim();
          if (status < 200 || status > 299) settle(new KubeApiError(status, url.pathname, message));
          else if (parsed === undefined) settle(new KlwError(`${url.pathname}: the API server did not answer JSON`));
          else settle(undefined, parsed);
        });
        res.on('error', (err) => {
          settle(err instanceof KlwError ? err : new KlwError(`${url.pathname}: the answer broke off: ${err.message}`));
        });
      });
      // The whole exchange, not each idle gap: a server trickling its answer is cut off all the same.
      const timer = setTimeout(() => {
        const err = limit.error();
        settle(err);
        req.destroy(err);
      }, limit.ms);
      req.on('error', (err) => {
        const reach = `cannot reach the API server at ${c.server} (${c.source})`;
        settle(err instanceof KlwError ? err : new KlwError(`${reach}: ${(err as Error).message}`));
      });
      req.end(text);
    });
  }

  /**
   * Lists a collection page by page (`limit` and `continue`), calling `onPage` with each page's
   * items and the number of items the server says remain (when it says). When a continue token
   * has expired (HTTP 410: the snapshot it pages through was compacted away while the pages
   * were being processed), the list restarts once from the beginning as client-go's pager does:
   * one full list without `limit`, whose page comes with `restarted` true and holds the items
   * already seen again. A KlwError naming the collection and the server ends a list that is not
   * a list, holds an item that is not an object, repeats a continue token (its pages would never
   * end), has more than {@link KubeLimits.maxPages} pages, or takes the server more than
   * {@link KubeLimits.listMs} in all.
   */
  async list(
    path: string,
    query: Record<string, string>,
    limit: number,
    onPage: (items: Json[], remaining: number | undefined, restarted: boolean) => Promise<void> | void,
  ): Promise<void> {
    const { requestMs, listMs, maxPages } = this.limits;
    const where = `listing ${path} at ${this.connection.server}`;
    const listStalled = () => {
      return new KlwError(`${where}: not done within ${formatMs(listMs)} of the API server's time (--list-timeout)`);
    };
    // Digests of the continue tokens seen: 32 bytes each however long the server makes them.
    const tokens = new Set<string>();
    let token: string | undefined;
    let restarted = false;
    let pages = 0;
    let waited = 0;
    for (;;) {
      if (++pages > maxPages) throw new KlwError(`${where}: more than ${maxPages} pages (--max-pages)`);
      const left = listMs - waited;
      if (left <= 0) throw listStalled();
      const params = new URLSearchParams(query);
      if (!restarted) params.set('limit', String(limit));
      if (token) params.set('continue', token);
      let page: any;
      const started = performance.now();
      try {
        const search = params.toString();
        const deadline = left < requestMs ? { ms: left, error: listStalled } : undefined;
        page = await this.request('GET', search ? `${path}?${search}` : path, undefined, deadline);
      } catch (err) {
        if (!(err instanceof KubeApiError) || err.status !== 410 || !token || restarted) throw err;
        restarted = true;
        token = undefined;
        continue;
      } finally {
        waited += performance.now() - started;
      }
      if (!Array.isArray(page?.items)) throw new KlwError(`${where}: the answer is not a list`);
      const items: unknown[] = page.items;
      for (let i = 0; i < items.length; i++) {
        const item = items[i];
        if (typeof item !== 'object' || item === null || Array.isArray(item)) {
          throw new KlwError(`${where}: items[${i}] of page ${pages} is ${describeValue(item)}, not an object`);
        }
      }
      const remaining = page.metadata?.remainingItemCount;
      await onPage(items as Json[], typeof remaining === 'number' ? remaining : undefined, restarted);
      token = page.metadata?.continue ? String(page.metadata.continue) : undefined;
      if (!token) return;
      const digest = createHash('sha256').update(token).digest('base64');
      if (tokens.has(digest)) {
        const endless = "repeats an earlier page's continue token; its pages would never end";
        throw new KlwError(`${where}: page ${pages} ${endless}`);
      }
      tokens.add(digest);
    }
  }
}

/** Who the API server would say a connection's user is, when it cannot tell us: from the client certificate or a service account token. */
export function identityFromCredentials(
  connection: KubeConnection,
): { username: string; groups: string[] } | undefined {
  if (connection.cert) {
    try {
      const subject = new X509Certificate(connection.cert).subject.split('\n');
      const cn = subject.find((s) => s.startsWith('CN='))?.slice(3);
      const groups = subject.filter((s) => s.startsWith('O=')).map((s) => s.slice(2));
      if (cn) return { username: cn, groups: [...groups, 'system:authenticated'] };
    } catch {
      // not a certificate we can read: fall through
    }
  }
  const token =
    connection.tokenFile && existsSync(connection.tokenFile)
      ? readFileSync(connection.tokenFile, 'utf8').trim()
      : connection.token;
  const payload = token?.split('.')[1];
  if (payload) {
    try {
      const claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as Json;
      const sub = String(claims.sub ?? '');
      const match = /^system:serviceaccount:([^:]+):[^:]+$/.exec(sub);
      if (match)
        return {
          username: sub,
          groups: ['system:serviceaccounts', `system:serviceaccounts:${match[1]}`, 'system:authenticated'],
        };
    } catch {
      // not a JWT
    }
  }
  if (connection.username) return { username: connection.username, groups: ['system:authenticated'] };
  return undefined;
}

/**
 * The user the API server authenticates this connection as: a SelfSubjectReview (1.26+), else a
 * TokenReview of our own token, else what the credentials say.
 */
export async function whoAmI(
  client: KubeClient,
): Promise<{ username: string; uid?: string; groups?: string[]; extra?: Record<string, string[]> } | undefined> {
  for (const version of ['v1', 'v1beta1', 'v1alpha1']) {
    try {
      const review = await client.request('POST', `/apis/authentication.k8s.io/${version}/selfsubjectreviews`, {
        apiVersion: `authentication.k8s.io/${version}`,
        kind: 'SelfSubjectReview',
      });
      if (review?.status?.userInfo?.username) return review.status.userInfo;
    } catch (err) {
      if (!(err instanceof KubeApiError) || ![403, 404, 405].includes(err.status)) throw err;
    }
  }
  const c = client.connection;
  const token = c.tokenFile && existsSync(c.tokenFile) ? readFileSync(c.tokenFile, 'utf8').trim() : c.token;
  if (token) {
    try {
      const review = await client.request('POST', '/apis/authentication.k8s.io/v1/tokenreviews', {
        apiVersion: 'authentication.k8s.io/v1',
        kind: 'TokenReview',
        spec: { token },
      });
      if (review?.status?.authenticated && review.status.user?.username) return review.status.user;
    } catch (err) {
      if (!(err instanceof KubeApiError)) throw err;
    }
  }
  return identityFromCredentials(c);
}

/**
 * Asks the cluster's authorizer one `authorizer` check of a matchCondition: a
 * SelfSubjectAccessReview when `self` (the connection's own user, which needs no permission),
 * else a SubjectAccessReview naming the check's user (which needs `create` on
 * subjectaccessreviews). Allowed is `Allow`, denied `Deny`, neither `NoOpinion`; an
 * authorizer that failed to evaluate without deciding rejects, as the API server's check errors.
 */
export async function accessReview(
  client: KubeClient,
  attributes: AuthorizationAttributes,
  self: boolean,
): Promise<AuthorizationDecision> {
  const spec: Json = {};
  if (attributes.path !== undefined) spec.nonResourceAttributes = { path: attributes.path, verb: attributes.verb };
  else {
    const resourceAttributes: Json = { verb: attributes.verb };
    for (const field of ['group', 'resource', 'subresource', 'namespace', 'name'] as const)
      if (attributes[field]) resourceAttributes[field] = attributes[field];
    spec.resourceAttributes = resourceAttributes;
  }
  const kind = self ? 'SelfSubjectAccessReview' : 'SubjectAccessReview';
  if (!self) {
    const { username, uid, groups, extra } = attributes.user;
    spec.user = username;
    if (uid) spec.uid = uid;
    if (groups?.length) spec.groups = groups;
    if (extra && Object.keys(extra).length) spec.extra = extra;
  }
  const review = await client.request('POST', `/apis/authorization.k8s.io/v1/${kind.toLowerCase()}s`, {
    apiVersion: 'authorization.k8s.io/v1',
    kind,
    spec,
  });
  const status: Json = review?.status ?? {};
  const reason = typeof status.reason === 'string' && status.reason ? { reason: status.reason } : {};
  if (status.allowed === true) return { decision: 'Allow', ...reason };
  if (status.denied === true) return { decision: 'Deny', ...reason };
  if (typeof status.evaluationError === 'string' && status.evaluationError) throw new KlwError(status.evaluationError);
  return { decision: 'NoOpinion', ...reason };
}
