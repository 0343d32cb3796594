import type { EventSource } from '../../lib/gateway/sources.ts';

/** An HTTP response made from a Lambda result. */
export interface HttpResponse {
  status: number;
  headers: Record<string, string | string[]>;
  body: Buffer;
}

/** API Gateway's own answer when a Lambda proxy result is malformed or the function failed. */
export const BAD_GATEWAY: HttpResponse = jsonMessage(502, 'Internal server error');

/** `{ "message": ... }` with a status, the way API Gateway reports its own errors. */
export function jsonMessage(status: number, message: string): HttpResponse {
  return { status, headers: { 'content-type': 'application/json' }, body: Buffer.from(JSON.stringify({ message })) };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function bodyOf(result: Record<string, unknown>): Buffer {
  const body = typeof result.body === 'string' ? result.body : '';
  return result.isBase64Encoded === true ? Buffer.from(body, 'base64') : Buffer.from(body, 'utf8');
}

/**
 * Turns a Lambda result into the HTTP response the event source would send: REST needs
 * `statusCode` (else 502) and merges `multiValueHeaders`; the 2.0 format also accepts a
 * bare value (sent as JSON with status 200) and sends `cookies` as Set-Cookie.
 */
export function httpFromResult(format: EventSource, result: unknown): HttpResponse {
  if (format === 'rest') {
    if (!isRecord(result) || typeof result.statusCode !== 'number') return BAD_GATEWAY;
    const headers: Record<string, string | string[]> = {};
    if (isRecord(result.headers))
      for (const [k, v] of Object.entries(result.headers)) headers[k.toLowerCase()] = String(v);
    if (isRecord(result.multiValueHeaders)) {
      for (const [k, v] of Object.entries(result.multiValueHeaders))
        if (Array.isArray(v)) headers[k.toLowerCase()] = v.map(String);
    }
    return { status: result.statusCode, headers, body: bodyOf(result) };
  }
  if (!isRecord(result) || typeof result.statusCode !== 'number') {
    const text = typeof result === 'string' ? result : JSON.stringify(result ?? null);
    return { status: 200, headers: { 'content-type': 'application/json' }, body: Buffer.from(text) };
  }
  const headers: Record<string, string | string[]> = {};
  if (isRecord(result.headers))
    for (const [k, v] of Object.entries(result.headers)) headers[k.toLowerCase()] = String(v);
  if (Array.isArray(result.cookies) && result.cookies.length) headers['set-cookie'] = result.cookies.map(String);
  return { status: result.statusCode, headers, body: bodyOf(result) };
}
