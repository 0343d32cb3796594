import { readFileSync } from 'node:fs';
import type { HttpReply } from './gateway/sources.ts';
import { cachedParameter, PARAMETER_READ_MAX_MS, parameterReadMs } from './parameters.ts';
import type { Registration } from './registration.ts';
import type { Caller, CallerIdentity } from './handler/types.ts';
import { WebhookError } from './errors.ts';

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
export class AuthConfigError extends WebhookError {
  override name = 'AuthConfigError';
  readonly code = 'AUTH_MISCONFIGURED';
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

/** What caller authentication decided: who called, or the refusal to send. */
export type AuthOutcome = { caller: Caller; refusal?: undefined } | { refusal: AuthRefusal; caller?: undefined };

/** A caller identified as it proved who it is, and no more: frozen, shared by every request. */
const identified = (identity: CallerIdentity): { caller: Caller } => ({ caller: Object.freeze({ identity }) });
const BY_TOKEN = identified('bearer');
const BY_SECRET = identified('path-secret');
/** The caller of `auth: 'none'`, or of a function without authentication outside Lambda: no one in particular. */
export const UNCHECKED = identified('none');

const JSON_HEADERS = { 'content-type': 'application/json' };
/** What an unknown route answers (API Gateway HTTP API's and the emulator's 404); a wrong path secret answers the same. */
export const NOT_FOUND_REPLY: HttpReply = { statusCode: 404, headers: JSON_HEADERS, body: '{"message":"Not Found"}' };
const MISCONFIGURED_REPLY: HttpReply = {
  statusCode: 500,
  headers: JSON_HEADERS,
  body: '{"error":"webhook authentication is misconfigured"}',
};

/** The refusal of a request whose authentication is configured in a way that cannot work (500). */
export function misconfigured(msg: string, fields: Record<string, unknown> = {}): AuthOutcome {
  return {
    refusal: {
      level: 'error',
      msg: `webhook authentication is misconfigured: ${msg}`,
      fields: { status: 500, ...fields },
      reply: MISCONFIGURED_REPLY,
    },
  };
}

/** A caller refused: 401 with a Bearer challenge for a token, 404 like an unknown route for a path secret. */
function rejected(status: 401 | 404, reason: string, path: string, functionName: string): AuthOutcome {
  const reply: HttpReply =
    status === 404
      ? NOT_FOUND_REPLY
      : {
          statusCode: 401,
          headers: { ...JSON_HEADERS, 'www-authenticate': 'Bearer' },
          body: JSON.stringify({ error: reason }),
        };
  const fields = { status, reason, path: redactPath(path, functionName) };
  return { refusal: { level: 'warn', msg: 'rejected', fields, reply } };
}

/**
 * No secret (and no token) is configured: a misconfiguration when the mode asks for one, or
 * inside Lambda (never open by accident); outside Lambda (unit tests) the request goes on.
 */
function unconfigured(mode: AuthMode, admission: boolean, env: NodeJS.ProcessEnv): AuthOutcome {
  if (mode === 'path-secret')
    return misconfigured(
      `path-secret auth is on but no secret is configured (${PATH_SECRET_ENV} or ${PATH_SECRET_SSM_ENV})`,
    );
  if (!env.AWS_LAMBDA_FUNCTION_NAME) return UNCHECKED;
  const bearer = admission ? ` or a bearer token (${TOKEN_ENV}, ${TOKEN_FILE_ENV}, ${TOKEN_SSM_ENV})` : '';
  return misconfigured(
    `no caller authentication is configured: set a path secret (${PATH_SECRET_ENV} or ${PATH_SECRET_SSM_ENV})${bearer}, or auth: 'none' in the registration`,
  );
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
 * (unit tests) no check. Returns the caller when the request may go on, else the refusal:
 * 404 like an unknown route for a wrong or missing path secret, 401 for a wrong token, 500
 * when the configuration cannot work.
 */
export async function authenticate(
  registration: Registration,
  req: AuthRequest,
  env: NodeJS.ProcessEnv = process.env,
  budgetMs?: number,
): Promise<AuthOutcome> {
  const mode: AuthMode = registration.auth;
  if (mode === 'none') return UNCHECKED;
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
        if (await checkBearer(req.headers.authorization, token)) return BY_TOKEN;
        return rejected(401, 'missing or wrong bearer token', req.path, registration.name);
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
    if (!secrets) return unconfigured(mode, admission, env);
    const given = pathSecretOf(req.path, req.pathParameters);
    if (await checkPathSecret(given, secrets)) return BY_SECRET;
    // A secret from SSM may have been rotated since it was fetched: look again (rate-limited), if time is left.
    if (env[PATH_SECRET_ENV] === undefined && readLeft() > 0) {
      const fresh = await resolvePathSecrets(env, PATH_SECRET_REFRESH_ON_MISS_MS, readLeft());
      if (await checkPathSecret(given, fresh!)) return BY_SECRET;
    }
    return rejected(404, 'missing or wrong path secret', req.path, registration.name);
  } catch (err) {
    if (err instanceof AuthConfigError) return misconfigured(err.message);
    // A failed read, ParameterTimeout included: 500, counted as AuthMisconfigured.
    return misconfigured('could not read the SSM parameter', { error: String(err) });
  }
}
