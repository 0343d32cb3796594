// What the sources' tools share: building events the way AWS does and reading results back.
// Only the test kit and the emulator reach this file; function bundles leave it out.
import { isRecord } from './fields.ts';
import type { HttpResponse } from './types.ts';

/** The account the emulator's events name. */
export const ACCOUNT = '123456789012';
/** The API id (and host prefix) the emulator's events name. */
export const API_ID = 'klwlocal01';
/** The region the emulator's events name. */
export const REGION = 'us-east-1';

/** `17/Jun/2024:15:52:39 +0000`, the CLF time format API Gateway puts in requestContext. */
export function clfTime(date: Date): string {
  const months = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${pad(date.getUTCDate())}/${months[date.getUTCMonth()]}/${date.getUTCFullYear()}:${pad(date.getUTCHours())}:${pad(date.getUTCMinutes())}:${pad(date.getUTCSeconds())} +0000`;
}

/** The media type of a content-type value, lower-cased, without parameters. */
export function mediaType(contentType: string | undefined): string {
  return (contentType ?? '').split(';', 1)[0]!.trim().toLowerCase();
}

/**
 * True for content types whose bodies HTTP APIs and function URLs pass as text; any other
 * body reaches Lambda base64-encoded.
 */
export function isTextContentType(contentType: string | undefined): boolean {
  const media = mediaType(contentType);
  return (
    media.startsWith('text/') ||
    /^application\/([\w.+-]+\+)?(json|xml|yaml)$/.test(media) ||
    media === 'application/javascript' ||
    media === 'application/x-www-form-urlencoded'
  );
}

/** Splits a query string into single (last value wins), joined (comma) and multi-value maps. */
export function parseQuery(raw: string): {
  last: Record<string, string>;
  joined: Record<string, string>;
  multi: Record<string, string[]>;
} {
  const multi: Record<string, string[]> = {};
  for (const [key, value] of new URLSearchParams(raw)) (multi[key] ??= []).push(value);
  const last = Object.fromEntries(Object.entries(multi).map(([k, v]) => [k, v.at(-1)!]));
  const joined = Object.fromEntries(Object.entries(multi).map(([k, v]) => [k, v.join(',')]));
  return { last, joined, multi };
}

/** A request body as bytes, or undefined when there is none. */
export function bodyBytes(body: Buffer | string | undefined): Buffer | undefined {
  return body === undefined ? undefined : Buffer.isBuffer(body) ? body : Buffer.from(body, 'utf8');
}

/** The last value of a header (any case) in a list of pairs. */
export function lastHeader(headers: Array<[string, string]>, name: string): string | undefined {
  let value: string | undefined;
  for (const [k, v] of headers) if (k.toLowerCase() === name) value = v;
  return value;
}

/** `{ "message": ... }` with a status, the way API Gateway reports its own errors. */
export function jsonMessage(status: number, message: string): HttpResponse {
  return { status, headers: { 'content-type': 'application/json' }, body: Buffer.from(JSON.stringify({ message })) };
}

/** API Gateway's own answer when a Lambda proxy result is malformed or the function failed. */
// Marked pure so bundles that never use it drop it.
export const BAD_GATEWAY: HttpResponse = /* @__PURE__ */ jsonMessage(502, 'Internal server error');

/** A result's body as bytes, decoding base64 when the result says so. */
export function resultBody(result: Record<string, unknown>): Buffer {
  const body = typeof result.body === 'string' ? result.body : '';
  return result.isBase64Encoded === true ? Buffer.from(body, 'base64') : Buffer.from(body, 'utf8');
}

/** A result's `headers` map with lower-cased names and string values. */
export function resultHeaders(result: Record<string, unknown>): Record<string, string | string[]> {
  const headers: Record<string, string | string[]> = {};
  if (isRecord(result.headers))
    for (const [k, v] of Object.entries(result.headers)) headers[k.toLowerCase()] = String(v);
  return headers;
}

/** Adds a result's `multiValueHeaders` lists to `headers` (lower-cased names, string values). */
export function addMultiValueHeaders(headers: Record<string, string | string[]>, multi: unknown): void {
  if (!isRecord(multi)) return;
  for (const [k, v] of Object.entries(multi)) if (Array.isArray(v)) headers[k.toLowerCase()] = v.map(String);
}
