import { createHash, timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';

/** Environment variable holding the bearer token admission webhooks require. */
export const TOKEN_ENV = 'KLW_BEARER_TOKEN';
/** Environment variable naming a file that holds the token (a mounted secret, say). */
export const TOKEN_FILE_ENV = 'KLW_BEARER_TOKEN_FILE';

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

function digest(value: string): Buffer {
  return createHash('sha256').update(value, 'utf8').digest();
}

/**
 * True when the Authorization header carries `Bearer <expected>`. Both sides are hashed
 * first, so the comparison takes the same time whatever the lengths.
 */
export function checkBearer(authorization: string | undefined, expected: string): boolean {
  const match = /^Bearer[ ]+(\S+)\s*$/i.exec(authorization ?? '');
  const given = match?.[1] ?? '';
  return timingSafeEqual(digest(given), digest(expected)) && given.length > 0;
}
