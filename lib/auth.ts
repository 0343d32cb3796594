import { readFileSync } from 'node:fs';

/** Environment variable holding the bearer token admission webhooks require. */
export const TOKEN_ENV = 'KLW_BEARER_TOKEN';
/** Environment variable naming a file that holds the token (a mounted secret, say). */
export const TOKEN_FILE_ENV = 'KLW_BEARER_TOKEN_FILE';
/** Environment variable naming an SSM parameter (String or SecureString) that holds the token. */
export const TOKEN_SSM_ENV = 'KLW_BEARER_TOKEN_SSM';

let cached: { key: string; token: string | undefined } | undefined;

/**
 * The expected token: KLW_BEARER_TOKEN, else the trimmed contents of KLW_BEARER_TOKEN_FILE.
 * Read once per distinct setting, so warm invocations do no I/O.
 */
export function expectedToken(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const key = `${env[TOKEN_ENV] ?? ''}\u0000${env[TOKEN_FILE_ENV] ?? ''}`;
  if (cached?.key === key) return cached.token;
  let token = env[TOKEN_ENV] || undefined;
  if (!token && env[TOKEN_FILE_ENV]) token = readFileSync(env[TOKEN_FILE_ENV], 'utf8').trim() || undefined;
  cached = { key, token };
  return token;
}

const ssmTokens = new Map<string, Promise<string | undefined>>();

async function fetchSsmToken(name: string): Promise<string | undefined> {
  // The Lambda Node.js runtime ships AWS SDK v3; it is loaded only when a parameter is named.
  const { SSMClient, GetParameterCommand } = await import('@aws-sdk/client-ssm');
  const out = await new SSMClient({}).send(new GetParameterCommand({ Name: name, WithDecryption: true }));
  return out.Parameter?.Value?.trim() || undefined;
}

/**
 * The expected token from the environment, the token file or, failing both, the SSM
 * parameter named by KLW_BEARER_TOKEN_SSM (fetched once per execution environment; a
 * failed fetch is tried again on the next call).
 */
export async function resolveToken(env: NodeJS.ProcessEnv = process.env): Promise<string | undefined> {
  const local = expectedToken(env);
  const name = env[TOKEN_SSM_ENV];
  if (local || !name) return local;
  let pending = ssmTokens.get(name);
  if (!pending) {
    pending = fetchSsmToken(name);
    ssmTokens.set(name, pending);
    pending.catch(() => ssmTokens.delete(name));
  }
  return pending;
}

// node:crypto costs milliseconds of cold start; it is loaded only once a token is configured.
let crypto: Promise<typeof import('node:crypto')> | undefined;

/**
 * True when the Authorization header carries `Bearer <expected>`. Both sides are hashed
 * first, so the comparison takes the same time whatever the lengths.
 */
export async function checkBearer(authorization: string | undefined, expected: string): Promise<boolean> {
  const { createHash, timingSafeEqual } = await (crypto ??= import('node:crypto'));
  const digest = (value: string) => createHash('sha256').update(value, 'utf8').digest();
  const match = /^Bearer[ ]+(\S+)\s*$/i.exec(authorization ?? '');
  const given = match?.[1] ?? '';
  return timingSafeEqual(digest(given), digest(expected)) && given.length > 0;
}
