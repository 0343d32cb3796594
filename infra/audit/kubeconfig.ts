// Reaching an API server as kubectl would: the kubeconfig (files, contexts, exec credential
// plugins) or, inside a pod, the service account.
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { parse } from 'yaml';
import { KlwError } from '../errors.ts';
import { DEFAULT_KUBE_LIMITS, formatMs } from './limits.ts';
import { isRecord, valueAt } from '../json.ts';

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

/** A kubeconfig entry or section read as an object: `{}` for anything else (missing, a string, a list). */
type Entry = Record<string, unknown>;

/** `value` as an object to read members of, or `{}` when it is none. */
function entryOf(value: unknown): Entry {
  return isRecord(value) ? value : {};
}

/** Reads a kubeconfig's file reference relative to the kubeconfig, or its inline base64 `-data`. */
function material(entry: Entry, field: string, base: string, what: string): string | undefined {
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
export async function execCredential(exec: Entry, base: string, timeoutMs: number): Promise<ExecResult> {
  const command = String(exec.command ?? '');
  if (!command) throw new KlwError('kubeconfig: exec credential plugin without a command');
  const env = { ...process.env } as Record<string, string>;
  for (const e of Array.isArray(exec.env) ? exec.env.map(entryOf) : [])
    if (e.name) env[String(e.name)] = String(e.value ?? '');
  // The plugin learns which API version to answer in from KUBERNETES_EXEC_INFO.
  const apiVersion = String(exec.apiVersion ?? 'client.authentication.k8s.io/v1beta1');
  env.KUBERNETES_EXEC_INFO = JSON.stringify({ apiVersion, kind: 'ExecCredential', spec: { interactive: false } });
  const cmd = command.includes('/') && !isAbsolute(command) ? resolve(base, command) : command;
  const args = Array.isArray(exec.args) ? exec.args.map(String) : [];
  const out = await runPlugin(cmd, args, env, timeoutMs, command);
  let status: Entry;
  try {
    const credential: unknown = JSON.parse(out);
    if (credential === null) throw new TypeError('null');
    status = entryOf(valueAt(credential, 'status'));
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
/** Merged kubeconfig files: the current context, and each section's named entries. */
interface MergedKubeconfig {
  'current-context'?: unknown;
  clusters: Entry[];
  users: Entry[];
  contexts: Entry[];
}

function mergeKubeconfigs(files: string[]): {
  config: MergedKubeconfig;
  baseOf: (section: string, name: unknown) => string;
} {
  const config: MergedKubeconfig = { clusters: [], users: [], contexts: [] };
  const bases = new Map<string, string>();
  for (const file of files) {
    let parsed: unknown;
    try {
      parsed = parse(readFileSync(file, 'utf8')) ?? {};
    } catch (err) {
      throw new KlwError(`kubeconfig ${file} is not YAML: ${(err as Error).message.split('\n')[0]}`);
    }
    if (typeof parsed !== 'object') throw new KlwError(`kubeconfig ${file} is not a kubeconfig`);
    const doc = entryOf(parsed);
    config['current-context'] ??= doc['current-context'] || undefined;
    for (const section of ['clusters', 'users', 'contexts'] as const) {
      const entries: unknown[] = Array.isArray(doc[section]) ? doc[section] : [];
      for (const entry of entries) {
        if (!isRecord(entry) || !entry.name || config[section].some((e) => e.name === entry.name)) continue;
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
  const contextName = options.context ?? config['current-context'];
  if (!contextName) throw new KlwError(`kubeconfig ${files.join(', ')} has no current-context; give --context`);
  const found = config.contexts.find((c) => c.name === contextName)?.context;
  if (!found) throw new KlwError(`kubeconfig ${files.join(', ')} has no context "${contextName}"`);
  const context = entryOf(found);
  const cluster = entryOf(config.clusters.find((c) => c.name === context.cluster)?.cluster);
  if (!cluster.server)
    throw new KlwError(`context "${contextName}": cluster "${context.cluster}" not found or has no server`);
  const user = entryOf(config.users.find((u) => u.name === context.user)?.user);
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
  else if (user.tokenFile) {
    const tokenFile = String(user.tokenFile);
    connection.tokenFile = isAbsolute(tokenFile) ? tokenFile : resolve(userBase, tokenFile);
  }
  if (user.username) {
    connection.username = String(user.username);
    connection.password = String(user.password ?? '');
  }
  if (user['auth-provider'])
    throw new KlwError(
      `context "${contextName}": auth-provider ${valueAt(user['auth-provider'], 'name') ?? ''} is not supported; use an exec credential plugin`,
    );
  if (user.exec) {
    const timeoutMs = options.execTimeoutMs ?? DEFAULT_KUBE_LIMITS.execMs;
    connection.exec = { config: entryOf(user.exec), base: userBase, timeoutMs };
    Object.assign(connection, await execCredential(entryOf(user.exec), userBase, timeoutMs));
  }
  return connection;
}
