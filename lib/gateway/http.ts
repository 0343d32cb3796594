import { parseJson } from '../json.ts';
import type { GatewayRequest, HttpReply } from './sources.ts';

/**
 * Largest request body accepted, in bytes: Lambda's synchronous invocation payload limit
 * (6 MB, 6,291,456 bytes). API Gateway and function URLs reject larger events before Lambda
 * sees them; the local emulator and direct invocations rely on this check.
 */
export const MAX_BODY_BYTES = 6 * 1024 * 1024;

/** A request that cannot be read as a review: the HTTP status and a one-line reason. */
export interface HttpError {
  status: number;
  message: string;
  headers?: Record<string, string>;
}

const JSON_HEADERS = { 'content-type': 'application/json' } as const;

/** A JSON reply with the given status. */
export function jsonReply(statusCode: number, body: unknown, headers: Record<string, string> = {}): HttpReply {
  return { statusCode, headers: { ...JSON_HEADERS, ...headers }, body: JSON.stringify(body) };
}

/** The `{ "error": ... }` reply for a request that is not a readable review. */
export function errorReply(error: HttpError): HttpReply {
  return jsonReply(error.status, { error: error.message }, error.headers);
}

/**
 * Decodes base64 as AWS writes it (groups of four, `=` padding only at the end), or returns
 * undefined. Node's decoder skips characters outside the alphabet and stops at padding, so a
 * body is valid exactly when it decodes to the length its size promises: an O(1) check
 * instead of a regular expression over the whole body.
 */
export function decodeBase64(raw: string): Buffer | undefined {
  if (raw.length % 4 !== 0) return undefined;
  const padding = raw.endsWith('==') ? 2 : raw.endsWith('=') ? 1 : 0;
  const decoded = Buffer.from(raw, 'base64');
  return decoded.length === (raw.length / 4) * 3 - padding ? decoded : undefined;
}

/** True when a content-type header value names JSON (`application/json`, any parameters, any case). */
export function isJsonContentType(value: string | undefined): boolean {
  if (!value) return false;
  // What the API server sends; anything else is looked at closely.
  if (value === 'application/json') return true;
  const media = value.split(';', 1)[0]!.trim().toLowerCase();
  return media === 'application/json';
}

/**
 * Checks method, content type and size, decodes base64 and parses JSON.
 * Returns the parsed body, or the HTTP error that answers the request.
 */
export function readJsonBody(
  req: GatewayRequest,
  maxBytes = MAX_BODY_BYTES,
): { ok: true; value: unknown } | { ok: false; error: HttpError } {
  if (req.method !== 'POST') {
    return {
      ok: false,
      error: {
        status: 405,
        message: `method ${req.method || '(none)'} not allowed; use POST`,
        headers: { allow: 'POST' },
      },
    };
  }
  const contentType = req.headers['content-type'];
  if (!isJsonContentType(contentType)) {
    return {
      ok: false,
      error: {
        status: 415,
        message: `content type ${JSON.stringify(contentType ?? null)} not supported; use application/json`,
      },
    };
  }
  const raw = req.body;
  if (raw === undefined || raw.length === 0) {
    return { ok: false, error: { status: 400, message: 'request body is empty' } };
  }
  // A base64 body decodes to 3/4 of its length; check the size before decoding anything.
  const decodedBytes = req.isBase64Encoded ? Math.floor((raw.length * 3) / 4) : Buffer.byteLength(raw, 'utf8');
  if (decodedBytes > maxBytes) {
    return {
      ok: false,
      error: { status: 413, message: `request body of ${decodedBytes} bytes exceeds the limit of ${maxBytes} bytes` },
    };
  }
  let text = raw;
  if (req.isBase64Encoded) {
    const decoded = decodeBase64(raw);
    if (!decoded)
      return { ok: false, error: { status: 400, message: 'request body is marked base64 but is not valid base64' } };
    text = decoded.toString('utf8');
  }
  try {
    return { ok: true, value: parseJson(text) };
  } catch (err) {
    return { ok: false, error: { status: 400, message: `request body is not valid JSON: ${(err as Error).message}` } };
  }
}

/**
 * Parses the `timeout` query parameter the API server appends to webhook URLs
 * (a Go duration such as `10s`, `1m0s` or `2.5s`) into milliseconds.
 */
export function parseGoDuration(value: string | undefined): number | undefined {
  if (!value) return undefined;
  // The API server sends the same timeout with every request of a webhook.
  if (value === lastDuration.value) return lastDuration.ms;
  let total = 0;
  let consumed = 0;
  for (const match of value.matchAll(DURATION_PART)) {
    total += Number(match[1]) * DURATION_UNITS[match[2]!]!;
    consumed += match[0].length;
  }
  const ms = consumed === value.length && consumed > 0 ? total : undefined;
  lastDuration = { value, ms };
  return ms;
}

const DURATION_UNITS: Record<string, number> = {
  h: 3_600_000,
  m: 60_000,
  s: 1000,
  ms: 1,
  us: 0.001,
  µs: 0.001,
  ns: 0.000001,
};
/**
 * One number and unit of a Go duration (matchAll works on a copy, so one instance serves every call).
 * `µ` escaped: a bundle with a character beyond ASCII is read into a string twice as large.
 */
const DURATION_PART = /(\d+(?:\.\d+)?)(ms|us|\u00b5s|ns|h|m|s)/gy;
/** The last duration parsed and its value. */
let lastDuration: { value: string; ms: number | undefined } = { value: '', ms: undefined };
