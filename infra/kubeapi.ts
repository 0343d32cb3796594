import { execFileSync } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { request as httpsRequest, type RequestOptions } from 'node:https';
import { request as httpRequest } from 'node:http';
import { homedir } from 'node:os';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { parse } from 'yaml';
import { KlwError } from './functions.ts';
import type { AuthorizationAttributes, AuthorizationDecision } from '../lib/matchconditions/cel.ts';

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
  if (env.KUBECONFIG) return env.KUBECONFIG.split(process.platform === 'win32' ? ';' : ':').filter((f) => f && existsSync(f));
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

/** Runs a client-go exec credential plugin (aws eks get-token, gke-gcloud-auth-plugin, ...). */
function execCredential(exec: Json, base: string): ExecResult {
  const command = String(exec.command ?? '');
  if (!command) throw new KlwError('kubeconfig: exec credential plugin without a command');
  const env = { ...process.env } as Record<string, string>;
  for (const e of Array.isArray(exec.env) ? exec.env : []) if (e?.name) env[e.name] = String(e.value ?? '');
  // The plugin learns which API version to answer in from KUBERNETES_EXEC_INFO.
  const apiVersion = String(exec.apiVersion ?? 'client.authentication.k8s.io/v1beta1');
  env.KUBERNETES_EXEC_INFO = JSON.stringify({ apiVersion, kind: 'ExecCredential', spec: { interactive: false } });
  const cmd = command.includes('/') && !isAbsolute(command) ? resolve(base, command) : command;
  let out: string;
  try {
    out = execFileSync(cmd, Array.isArray(exec.args) ? exec.args.map(String) : [], { env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (err) {
    const stderr = String((err as { stderr?: string }).stderr ?? '').trim();
    throw new KlwError(`kubeconfig: exec credential plugin ${command} failed${stderr ? `: ${stderr.split('\n')[0]}` : ''}`);
  }
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
  if (!result.token && !result.cert) throw new KlwError(`kubeconfig: exec credential plugin ${command} returned neither a token nor a client certificate`);
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
    throw new KlwError('no kubeconfig (--kubeconfig, KUBECONFIG or ~/.kube/config) and not running in a cluster (KUBERNETES_SERVICE_HOST and a service account token)');
  }
  const connection: KubeConnection = { server: `https://${host.includes(':') ? `[${host}]` : host}:${port}`, source: 'in-cluster', tokenFile: join(dir, 'token') };
  if (existsSync(join(dir, 'ca.crt'))) connection.ca = readFileSync(join(dir, 'ca.crt'), 'utf8');
  if (existsSync(join(dir, 'namespace'))) connection.namespace = readFileSync(join(dir, 'namespace'), 'utf8').trim();
  return connection;
}

/**
 * The connection kubectl would use: `kubeconfig` (or KUBECONFIG, or ~/.kube/config) at `context`
 * (or the current context); without any kubeconfig, the in-cluster service account.
 */
export function loadConnection(options: { kubeconfig?: string; context?: string; env?: NodeJS.ProcessEnv } = {}): KubeConnection {
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
  if (!cluster?.server) throw new KlwError(`context "${contextName}": cluster "${context.cluster}" not found or has no server`);
  const user: Json = config.users.find((u: Json) => u.name === context.user)?.user ?? {};
  const clusterBase = baseOf('clusters', context.cluster);
  const userBase = baseOf('users', context.user);

  const connection: KubeConnection = { server: String(cluster.server).replace(/\/+$/, ''), source: `${files[0]} context ${contextName}` };
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
  else if (user.tokenFile) connection.tokenFile = isAbsolute(user.tokenFile) ? user.tokenFile : resolve(userBase, user.tokenFile);
  if (user.username) {
    connection.username = String(user.username);
    connection.password = String(user.password ?? '');
  }
  if (user.exec) {
    connection.exec = { config: user.exec as Json, base: userBase };
    Object.assign(connection, execCredential(user.exec, userBase));
  }
  if (user['auth-provider']) throw new KlwError(`context "${contextName}": auth-provider ${user['auth-provider'].name ?? ''} is not supported; use an exec credential plugin`);
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
/** An API request that takes longer than this has failed. */
const REQUEST_TIMEOUT_MS = 60_000;
/** An exec plugin's credential this close to its expirationTimestamp is renewed before a request (EKS tokens last 15 minutes). */
export const EXEC_RENEW_BEFORE_MS = 60_000;

/** A minimal Kubernetes API client over HTTPS: JSON GET and POST, and paginated lists. */
export class KubeClient {
  constructor(readonly connection: KubeConnection) {}

  /**
   * Sends one request; resolves with the parsed JSON body, rejects with {@link KubeApiError} on a
   * non-2xx answer. With an exec credential plugin, the plugin runs again first when its
   * credential is within {@link EXEC_RENEW_BEFORE_MS} of expiring, and once after a 401 (then
   * the request is sent again), as client-go does.
   */
  async request(method: 'GET' | 'POST', path: string, body?: unknown): Promise<any> {
    const c = this.connection;
    if (c.exec && c.expiresAt !== undefined && Date.now() >= c.expiresAt - EXEC_RENEW_BEFORE_MS) this.renewCredential();
    const sent = c.token ?? c.cert;
    try {
      return await this.send(method, path, body);
    } catch (err) {
      if (!(err instanceof KubeApiError) || err.status !== 401 || !c.exec) throw err;
      // Renewed unless another request already did since this one was sent.
      if ((c.token ?? c.cert) === sent) this.renewCredential();
      return this.send(method, path, body);
    }
  }

  /** Runs the exec plugin again and takes its credential. */
  private renewCredential(): void {
    const c = this.connection;
    const renewed = execCredential(c.exec!.config as Json, c.exec!.base);
    delete c.expiresAt;
    Object.assign(c, renewed);
  }

  /** One attempt of {@link request}. */
  private send(method: 'GET' | 'POST', path: string, body?: unknown): Promise<any> {
    const c = this.connection;
    const url = new URL(path, `${c.server}/`);
    const text = body === undefined ? undefined : JSON.stringify(body);
    const headers: Record<string, string> = { accept: 'application/json', 'user-agent': 'klw-audit' };
    if (text !== undefined) headers['content-type'] = 'application/json';
    const token = c.tokenFile ? readFileSync(c.tokenFile, 'utf8').trim() : c.token;
    if (token) headers.authorization = `Bearer ${token}`;
    else if (c.username !== undefined) headers.authorization = `Basic ${Buffer.from(`${c.username}:${c.password ?? ''}`).toString('base64')}`;
    const options: RequestOptions = { method, headers, timeout: REQUEST_TIMEOUT_MS };
    if (c.ca) options.ca = c.ca;
    if (c.cert) options.cert = c.cert;
    if (c.key) options.key = c.key;
    if (c.insecure) options.rejectUnauthorized = false;
    if (c.serverName) options.servername = c.serverName;
    const send = url.protocol === 'http:' ? httpRequest : httpsRequest;
    return new Promise((resolvePromise, reject) => {
      const req = send(url, options, (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > MAX_RESPONSE_BYTES) req.destroy(new KlwError(`${url.pathname}: answer larger than ${MAX_RESPONSE_BYTES} bytes`));
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
          if (status < 200 || status > 299) reject(new KubeApiError(status, url.pathname, parsed?.message ?? raw.slice(0, 200).trim()));
          else if (parsed === undefined) reject(new KlwError(`${url.pathname}: the API server did not answer JSON`));
          else resolvePromise(parsed);
        });
        res.on('error', reject);
      });
      req.on('timeout', () => req.destroy(new KlwError(`${url.pathname}: no answer within ${REQUEST_TIMEOUT_MS / 1000} s`)));
      req.on('error', (err) => reject(err instanceof KlwError ? err : new KlwError(`cannot reach the API server at ${c.server} (${c.source}): ${(err as Error).message}`)));
      req.end(text);
    });
  }

  /**
   * Lists a collection page by page (`limit` and `continue`), calling `onPage` with each page's
   * items and the number of items the server says remain (when it says). When a continue token
   * has expired (HTTP 410: the snapshot it pages through was compacted away while the pages
   * were being processed), the list restarts once from the beginning as client-go's pager does:
   * one full list without `limit`, whose page comes with `restarted` true and holds the items
   * already seen again.
   */
  async list(
    path: string,
    query: Record<string, string>,
    limit: number,
    onPage: (items: Json[], remaining: number | undefined, restarted: boolean) => Promise<void> | void,
  ): Promise<void> {
    let token: string | undefined;
    let restarted = false;
    for (;;) {
      const params = new URLSearchParams(query);
      if (!restarted) params.set('limit', String(limit));
      if (token) params.set('continue', token);
      let page: any;
      try {
        const search = params.toString();
        page = await this.request('GET', search ? `${path}?${search}` : path);
      } catch (err) {
        if (!(err instanceof KubeApiError) || err.status !== 410 || !token || restarted) throw err;
        restarted = true;
        token = undefined;
        continue;
      }
      if (!Array.isArray(page?.items)) throw new KlwError(`${path}: not a list`);
      const remaining = page.metadata?.remainingItemCount;
      await onPage(page.items, typeof remaining === 'number' ? remaining : undefined, restarted);
      token = page.metadata?.continue || undefined;
      if (!token) return;
    }
  }
}

/** Who the API server would say a connection's user is, when it cannot tell us: from the client certificate or a service account token. */
export function identityFromCredentials(connection: KubeConnection): { username: string; groups: string[] } | undefined {
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
  const token = connection.tokenFile && existsSync(connection.tokenFile) ? readFileSync(connection.tokenFile, 'utf8').trim() : connection.token;
  const payload = token?.split('.')[1];
  if (payload) {
    try {
      const claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as Json;
      const sub = String(claims.sub ?? '');
      const match = /^system:serviceaccount:([^:]+):[^:]+$/.exec(sub);
      if (match) return { username: sub, groups: ['system:serviceaccounts', `system:serviceaccounts:${match[1]}`, 'system:authenticated'] };
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
export async function whoAmI(client: KubeClient): Promise<{ username: string; uid?: string; groups?: string[]; extra?: Record<string, string[]> } | undefined> {
  for (const version of ['v1', 'v1beta1', 'v1alpha1']) {
    try {
      const review = await client.request('POST', `/apis/authentication.k8s.io/${version}/selfsubjectreviews`, { apiVersion: `authentication.k8s.io/${version}`, kind: 'SelfSubjectReview' });
      if (review?.status?.userInfo?.username) return review.status.userInfo;
    } catch (err) {
      if (!(err instanceof KubeApiError) || ![403, 404, 405].includes(err.status)) throw err;
    }
  }
  const c = client.connection;
  const token = c.tokenFile && existsSync(c.tokenFile) ? readFileSync(c.tokenFile, 'utf8').trim() : c.token;
  if (token) {
    try {
      const review = await client.request('POST', '/apis/authentication.k8s.io/v1/tokenreviews', { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token } });
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
export async function accessReview(client: KubeClient, attributes: AuthorizationAttributes, self: boolean): Promise<AuthorizationDecision> {
  const spec: Json = {};
  if (attributes.path !== undefined) spec.nonResourceAttributes = { path: attributes.path, verb: attributes.verb };
  else {
    const resourceAttributes: Json = { verb: attributes.verb };
    for (const field of ['group', 'resource', 'subresource', 'namespace', 'name'] as const) if (attributes[field]) resourceAttributes[field] = attributes[field];
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
  const review = await client.request('POST', `/apis/authorization.k8s.io/v1/${kind.toLowerCase()}s`, { apiVersion: 'authorization.k8s.io/v1', kind, spec });
  const status: Json = review?.status ?? {};
  const reason = typeof status.reason === 'string' && status.reason ? { reason: status.reason } : {};
  if (status.allowed === true) return { decision: 'Allow', ...reason };
  if (status.denied === true) return { decision: 'Deny', ...reason };
  if (typeof status.evaluationError === 'string' && status.evaluationError) throw new KlwError(status.evaluationError);
  return { decision: 'NoOpinion', ...reason };
}
