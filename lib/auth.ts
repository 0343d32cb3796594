import { readFileSync } from 'node:fs';
import type { HttpReply } from './gateway/sources.ts';
import type { Registration } from './registration.ts';

/** Environment variable holding the bearer token admission webhooks require. */
export const TOKEN_ENV = 'KLW_BEARER_TOKEN';
/** Environment variable naming a file that holds the token (a mounted secret, say). */
export const TOKEN_FILE_ENV = 'KLW_BEARER_TOKEN_FILE';
/** Environment variable naming an SSM parameter (String or SecureString) that holds the token. */
export const TOKEN_SSM_ENV = 'KLW_BEARER_TOKEN_SSM';
/** Environment variable holding the path secret(s) locally: `current` or `current,previous`. */
export const PATH_SECRET_ENV = 'KLW_PATH_SECRET';
/** Environment variable naming the SSM parameter that holds the path secret(s) when deployed. */
export const PATH_SECRET_SSM_ENV = 'KLW_PATH_SECRET_SSM';

/**
 * Fewest characters of a path secret: 22 base64url characters are the fewest that carry 128
 * bits, so shorter ones are refused (klw makes 43: base64url of 32 random bytes).
 */
export const PATH_SECRET_MIN_LENGTH = 22;
/** Most characters of a path secret: one URL path segment, well within what proxies pass on. */
export const PATH_SECRET_MAX_LENGTH = 256;
/** A path secret: base64url characters, PATH_SECRET_MIN_LENGTH to PATH_SECRET_MAX_LENGTH of them. */
export const PATH_SECRET_PATTERN = new RegExp(`^[A-Za-z0-9_-]{${PATH_SECRET_MIN_LENGTH},${PATH_SECRET_MAX_LENGTH}}$`);

/** Authentication is configured in a way that cannot work (an empty token, a short secret). */
export class AuthConfigError extends Error {
  override name = 'AuthConfigError';
}

let cached: { key: string; token: string | undefined } | undefined;

/**
 * The expected token: KLW_BEARER_TOKEN, else the contents of KLW_BEARER_TOKEN_FILE, both
 * trimmed. Read once per distinct setting, so warm invocations do no I/O. A variable that is
 * set but holds only white space (or names an empty file) throws AuthConfigError: an empty
 * token is a misconfiguration, never "no authentication".
 */
export function expectedToken(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const key = `${env[TOKEN_ENV] ?? '\u0001'}\u0000${env[TOKEN_FILE_ENV] ?? ''}`;
  if (cached?.key === key) return cached.token;
  let token: string | undefined;
  if (env[TOKEN_ENV] !== undefined) {
    token = checkedToken(env[TOKEN_ENV], `${TOKEN_ENV} is set but empty`, TOKEN_ENV);
  } else if (env[TOKEN_FILE_ENV] !== undefined) {
    const file = env[TOKEN_FILE_ENV];
    if (!file.trim()) throw new AuthConfigError(`${TOKEN_FILE_ENV} is set but empty`);
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (err) {
      throw new AuthConfigError(
        `${TOKEN_FILE_ENV} names ${file}, which cannot be read (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`,
      );
    }
    token = checkedToken(text, `${TOKEN_FILE_ENV} names an empty file`, `the file ${TOKEN_FILE_ENV} names`);
  }
  cached = { key, token };
  return token;
}

/**
 * A configured token, trimmed. Empty, or with white space inside (a bearer token is one word:
 * the header `Bearer a b` can never match it), it is a misconfiguration, never "no authentication".
 */
function checkedToken(value: string, emptyMessage: string, origin: string): string {
  const token = value.trim();
  if (!token) throw new AuthConfigError(emptyMessage);
  if (/\s/.test(token))
    throw new AuthConfigError(`${origin} holds white space inside the token; a bearer token is one word`);
  return token;
}

/**
 * How long a path-secret value fetched from SSM is used before it is fetched again, so that
 * `klw secret retire` takes effect in running execution environments within this time.
 */
export const PATH_SECRET_MAX_AGE_MS = 5 * 60_000;
/**
 * A request whose path secret does not match refetches the value when it is older than this,
 * so a secret just made current by `klw secret rotate` works within seconds; a flood of wrong
 * secrets costs at most one SSM call per execution environment per interval.
 */
export const PATH_SECRET_REFRESH_ON_MISS_MS = 30_000;

/**
 * How long a failed SSM read (a missing parameter, no permission, throttling) stands before a
 * request reads again. Without it every request of every execution environment would call SSM
 * for the same error, adding its latency to each refusal and spending the account's
 * GetParameter throughput, shared with every other application, while a repaired parameter
 * still takes effect within half a minute.
 */
export const PARAMETER_FAILURE_RETRY_MS = 30_000;

/**
 * Most time one SSM read may take, whatever time the request has: GetParameter answers in tens
 * of milliseconds; 3 s leaves room for a cold start's SDK load and a retry, and keeps a read
 * from an endpoint that never answers well inside the default 10 s webhook timeout.
 */
export const PARAMETER_READ_MAX_MS = 3_000;

/**
 * The time a request's SSM reads may take: half its time budget (the rest is the function's), at
 * most PARAMETER_READ_MAX_MS; PARAMETER_READ_MAX_MS when the budget is not known.
 */
export function parameterReadMs(budgetMs?: number): number {
  if (budgetMs === undefined || !Number.isFinite(budgetMs) || budgetMs <= 0) return PARAMETER_READ_MAX_MS;
  return Math.max(1, Math.min(PARAMETER_READ_MAX_MS, Math.floor(budgetMs / 2)));
}

/** An SSM read that did not finish in the time it had; it was aborted. */
export class ParameterTimeout extends Error {
  override name = 'ParameterTimeout';
  constructor(
    readonly parameter: string,
    readonly timeoutMs: number,
  ) {
    super(`SSM parameter ${parameter} not read within ${timeoutMs} ms`);
  }
}

/** A fetched parameter: its value (or failure), when it was fetched, and until when a failure stands. */
interface CachedParameter {
  value: Promise<string>;
  at: number;
  /** Set after a failed fetch: no fetch before this time. */
  retryAt?: number;
  /** The fetch failed and there was no earlier value: `value` rejects. */
  failed?: boolean;
}

const parameters = new Map<string, CachedParameter>();

/** Reads a parameter from SSM; `signal` aborts the call. */
async function readParameter(name: string, signal: AbortSignal): Promise<string> {
  // The Lambda Node.js runtime ships AWS SDK v3; it is loaded only when a parameter is named.
  const { SSMClient, GetParameterCommand } = await import('@aws-sdk/client-ssm');
  signal.throwIfAborted();
  const command = new GetParameterCommand({ Name: name, WithDecryption: true });
  const out = await new SSMClient({}).send(command, { abortSignal: signal });
  return out.Parameter?.Value?.trim() ?? '';
}

/**
 * Reads a parameter within `timeoutMs`: past it the SDK call is aborted and the read rejects
 * with ParameterTimeout at once, whatever the SDK is waiting for (a connection, an answer, a
 * retry's delay, credentials).
 */
async function fetchParameter(name: string, timeoutMs: number): Promise<string> {
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(new ParameterTimeout(name, timeoutMs)), timeoutMs);
  try {
    return await new Promise<string>((resolve, reject) => {
      abort.signal.addEventListener('abort', () => reject(abort.signal.reason), { once: true });
      readParameter(name, abort.signal).then(resolve, reject);
    });
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The trimmed value of an SSM parameter, fetched once per execution environment and again
 * once it is older than `maxAgeMs`; a fetch that takes more than `timeoutMs` is aborted and
 * fails with ParameterTimeout. A failed fetch stands for PARAMETER_FAILURE_RETRY_MS: until
 * then calls answer with the value it was to replace, or fail as it did, without calling SSM.
 */
export async function cachedParameter(
  name: string,
  maxAgeMs = Infinity,
  timeoutMs = PARAMETER_READ_MAX_MS,
): Promise<string> {
  const entry = parameters.get(name);
  const now = Date.now();
  if (entry) {
    const holding = entry.retryAt !== undefined && now < entry.retryAt;
    if (entry.failed ? holding : holding || now - entry.at <= maxAgeMs) return entry.value;
  }
  const fresh: CachedParameter = { value: fetchParameter(name, timeoutMs), at: now };
  parameters.set(name, fresh);
  try {
    return await fresh.value;
  } catch (err) {
    const kept = entry && !entry.failed ? entry : undefined;
    if (parameters.get(name) === fresh) {
      const retryAt = now + PARAMETER_FAILURE_RETRY_MS;
      parameters.set(name, kept ? { ...kept, retryAt } : { value: fresh.value, at: now, retryAt, failed: true });
    }
    if (kept) return kept.value;
    throw err;
  }
}

/**
 * The expected token from the environment, the token file or, failing both, the SSM
 * parameter named by KLW_BEARER_TOKEN_SSM (fetched once per execution environment, within
 * `timeoutMs`; a failed fetch is tried again after PARAMETER_FAILURE_RETRY_MS). Undefined
 * when none is configured; AuthConfigError when one is configured but empty.
 */
export async function resolveToken(
  env: NodeJS.ProcessEnv = process.env,
  timeoutMs = PARAMETER_READ_MAX_MS,
): Promise<string | undefined> {
  const local = expectedToken(env);
  const name = env[TOKEN_SSM_ENV];
  if (local || !name) return local;
  const origin = `SSM parameter ${name} (${TOKEN_SSM_ENV})`;
  return checkedToken(await cachedParameter(name, Infinity, timeoutMs), `${origin} is empty`, origin);
}

/**
 * Splits a path-secret setting, `current` or `current,previous` (both valid while a rotation
 * is under way), into its secrets. Throws AuthConfigError when it holds none, more than two,
 * or one that is not URL-safe or carries fewer than 128 bits.
 */
export function parsePathSecrets(value: string, origin: string): string[] {
  const secrets = value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (!secrets.length) throw new AuthConfigError(`${origin} is set but empty`);
  if (secrets.length > 2)
    throw new AuthConfigError(`${origin} holds ${secrets.length} secrets; at most two (current,previous)`);
  if (!secrets.every((s) => PATH_SECRET_PATTERN.test(s))) {
    throw new AuthConfigError(
      `${origin} holds a secret that is not ${PATH_SECRET_MIN_LENGTH} to ${PATH_SECRET_MAX_LENGTH} URL-safe characters (A-Z a-z 0-9 _ -)`,
    );
  }
  return secrets;
}

/**
 * The valid path secrets, current first: KLW_PATH_SECRET, else the SSM parameter named by
 * KLW_PATH_SECRET_SSM (fetched once per execution environment, within `timeoutMs`). Undefined
 * when neither is set; AuthConfigError when the setting is empty or malformed.
 */
export async function resolvePathSecrets(
  env: NodeJS.ProcessEnv = process.env,
  maxAgeMs = PATH_SECRET_MAX_AGE_MS,
  timeoutMs = PARAMETER_READ_MAX_MS,
): Promise<string[] | undefined> {
  const local = env[PATH_SECRET_ENV];
  if (local !== undefined) return parsePathSecrets(local, PATH_SECRET_ENV);
  const name = env[PATH_SECRET_SSM_ENV];
  if (!name) return undefined;
  const value = await cachedParameter(name, maxAgeMs, timeoutMs);
  return parsePathSecrets(value, `SSM parameter ${name} (${PATH_SECRET_SSM_ENV})`);
}

// node:crypto costs milliseconds of cold start; it is loaded only once authentication is configured.
let crypto: Promise<typeof import('node:crypto')> | undefined;

async function digester(): Promise<{ digest: (value: string) => Buffer; equal: (a: Buffer, b: Buffer) => boolean }> {
  const { createHash, timingSafeEqual } = await (crypto ??= import('node:crypto'));
  return { digest: (value) => createHash('sha256').update(value, 'utf8').digest(), equal: timingSafeEqual };
}

/**
 * True when the Authorization header carries `Bearer <expected>`. Both sides are hashed
 * first, so the comparison takes the same time whatever the lengths.
 */
export async function checkBearer(authorization: string | undefined, expected: string): Promise<boolean> {
  const { digest, equal } = await digester();
  const match = /^Bearer[ ]+(\S+)\s*$/i.exec(authorization ?? '');
  const given = match?.[1] ?? '';
  return equal(digest(given), digest(expected)) && given.length > 0;
}

/**
 * True when `given` is one of the valid secrets. Each comparison is of SHA-256 digests in
 * constant time, and every secret is compared (no early exit), so the time says nothing
 * about which secret or how much of it matched.
 */
export async function checkPathSecret(given: string | undefined, secrets: readonly string[]): Promise<boolean> {
  const { digest, equal } = await digester();
  const mine = digest(given ?? '');
  let found = false;
  for (const secret of secrets) found = equal(mine, digest(secret)) || found;
  return found && !!given;
}

/** The path secret a request carries: API Gateway's `secret` path parameter, else the last path segment. */
export function pathSecretOf(path: string, pathParameters: Record<string, string> = {}): string | undefined {
  if (pathParameters.secret) return pathParameters.secret;
  const last = path.slice(path.lastIndexOf('/') + 1);
  return last || undefined;
}

/**
 * A request path fit for logs: everything after the function's own segment is replaced by
 * `***` (`/prod/pod-policy/<secret>` → `/prod/pod-policy/***`), and so is every segment before
 * it that is long enough to be a secret (a function URL called as `/<secret>/pod-policy`); a
 * path without that segment (a function URL's `/<secret>`) becomes `/***`.
 */
export function redactPath(path: string, functionName: string): string {
  const segments = path.split('/');
  const at = segments.indexOf(functionName);
  if (at < 0) return path === '/' || path === '' ? path : '/***';
  // A segment as long as the shortest secret could be one; a stage or a prefix is shorter.
  const before = segments.slice(0, at).map((s) => (s.length >= PATH_SECRET_MIN_LENGTH ? '***' : s));
  return [...before, functionName, ...(segments.length > at + 1 ? ['***'] : [])].join('/');
}

/** The caller authentication a registration asks for; `auto` is resolved per environment. */
export type AuthMode = 'auto' | 'bearer' | 'path-secret' | 'none';

/** A refused request: the log line to write and the reply to send. */
export interface AuthRefusal {
  level: 'warn' | 'error';
  msg: string;
  fields: Record<string, unknown>;
  reply: HttpReply;
}

const JSON_HEADERS = { 'content-type': 'application/json' };
/** What an unknown route answers (API Gateway HTTP API's and the emulator's 404); a wrong path secret answers the same. */
export const NOT_FOUND_REPLY: HttpReply = { statusCode: 404, headers: JSON_HEADERS, body: '{"message":"Not Found"}' };
const MISCONFIGURED_REPLY: HttpReply = {
  statusCode: 500,
  headers: JSON_HEADERS,
  body: '{"error":"webhook authentication is misconfigured"}',
};

function misconfigured(msg: string): AuthRefusal {
  return {
    level: 'error',
    msg: `webhook authentication is misconfigured: ${msg}`,
    fields: { status: 500 },
    reply: MISCONFIGURED_REPLY,
  };
}

/** The request fields authentication reads. */
export interface AuthRequest {
  path: string;
  headers: Record<string, string>;
  pathParameters?: Record<string, string>;
}

/**
 * Checks the caller of one request before its body is looked at, its SSM reads (if any) taking
 * at most {@link parameterReadMs} of `budgetMs`, the request's time budget. Modes: `bearer` (the
 * Authorization header; admission only, the API server sends no credentials to conversion
 * webhooks), `path-secret` (the last path segment), `none`, and `auto`: bearer when a token
 * is configured (admission), else path-secret when a secret is configured, else, inside
 * Lambda, a misconfiguration (so a deployment is never open by accident); outside Lambda
 * (unit tests) no check. Returns undefined when the request may go on, else the refusal:
 * 404 like an unknown route for a wrong or missing path secret, 401 for a wrong token, 500
 * when the configuration cannot work.
 */
export async function authenticate(
  registration: Registration,
  req: AuthRequest,
  env: NodeJS.ProcessEnv = process.env,
  budgetMs?: number,
): Promise<AuthRefusal | undefined> {
  const mode: AuthMode = registration.auth;
  if (mode === 'none') return undefined;
  const admission = registration.type !== 'conversion';
  // One deadline for every SSM read of this request (a read, then a reread after a mismatch).
  const readUntil = performance.now() + parameterReadMs(budgetMs);
  const readLeft = () => Math.max(0, Math.floor(readUntil - performance.now()));
  try {
    if (admission && mode !== 'path-secret') {
      // resolveToken, without a wait when the token is local or none is configured.
      const local = expectedToken(env);
      const token = local || !env[TOKEN_SSM_ENV] ? local : await resolveToken(env, readLeft());
      if (token) {
        if (await checkBearer(req.headers.authorization, token)) return undefined;
        return {
          level: 'warn',
          msg: 'rejected',
          fields: {
            status: 401,
            reason: 'missing or wrong bearer token',
            path: redactPath(req.path, registration.name),
          },
          reply: {
            statusCode: 401,
            headers: { ...JSON_HEADERS, 'www-authenticate': 'Bearer' },
            body: '{"error":"missing or wrong bearer token"}',
          },
        };
      }
      if (mode === 'bearer')
        return misconfigured(
          `bearer auth is on but no token is configured (${TOKEN_ENV}, ${TOKEN_FILE_ENV} or ${TOKEN_SSM_ENV})`,
        );
    }
    // resolvePathSecrets, without a wait when the secret is local or none is configured.
    const localSecrets = env[PATH_SECRET_ENV];
    const secrets =
      localSecrets !== undefined
        ? parsePathSecrets(localSecrets, PATH_SECRET_ENV)
        : env[PATH_SECRET_SSM_ENV]
          ? await resolvePathSecrets(env, PATH_SECRET_MAX_AGE_MS, readLeft())
          : undefined;
    if (!secrets) {
      if (mode === 'path-secret')
        return misconfigured(
          `path-secret auth is on but no secret is configured (${PATH_SECRET_ENV} or ${PATH_SECRET_SSM_ENV})`,
        );
      if (env.AWS_LAMBDA_FUNCTION_NAME) {
        const bearer = admission ? ` or a bearer token (${TOKEN_ENV}, ${TOKEN_FILE_ENV}, ${TOKEN_SSM_ENV})` : '';
        return misconfigured(
          `no caller authentication is configured: set a path secret (${PATH_SECRET_ENV} or ${PATH_SECRET_SSM_ENV})${bearer}, or auth: 'none' in the registration`,
        );
      }
      return undefined;
    }
    const given = pathSecretOf(req.path, req.pathParameters);
    if (await checkPathSecret(given, secrets)) return undefined;
    // A secret from SSM may have been rotated since it was fetched: look again (rate-limited), if time is left.
    if (env[PATH_SECRET_ENV] === undefined && readLeft() > 0) {
      const fresh = await resolvePathSecrets(env, PATH_SECRET_REFRESH_ON_MISS_MS, readLeft());
      if (await checkPathSecret(given, fresh!)) return undefined;
    }
    return {
      level: 'warn',
      msg: 'rejected',
      fields: { status: 404, reason: 'missing or wrong path secret', path: redactPath(req.path, registration.name) },
      reply: NOT_FOUND_REPLY,
    };
  } catch (err) {
    if (err instanceof AuthConfigError) return misconfigured(err.message);
    // A failed read, ParameterTimeout included: 500, counted as AuthMisconfigured.
    const refusal = misconfigured('could not read the SSM parameter');
    refusal.fields.error = String(err);
    return refusal;
  }
}
