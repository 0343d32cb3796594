import type { GatewayResult, HttpReply } from './types.ts';

/** A JSON object as an event holds it, fields not yet checked. */
export type Loose = Record<string, unknown>;

/** True for a plain object (not null, not an array). */
export function isRecord(value: unknown): value is Loose {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The value when it is a string, else undefined. */
export function str(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

/** Copies the string-valued entries of a header or query map, lower-casing keys when asked. */
export function stringMap(value: unknown, lowerKeys: boolean): Record<string, string> {
  const out: Record<string, string> = {};
  if (!isRecord(value)) return out;
  // Object.entries without a pair per entry: the same keys, order and reads.
  for (const key of Object.keys(value)) {
    const v = value[key];
    if (typeof v === 'string') out[lowerKeys ? key.toLowerCase() : key] = v;
  }
  return out;
}

/** Merges `multiValueHeaders` into single values the way HTTP joins repeated headers. */
export function mergeMultiValue(headers: Record<string, string>, multi: unknown, lowerKeys: boolean): void {
  if (!isRecord(multi)) return;
  for (const [key, values] of Object.entries(multi)) {
    if (!Array.isArray(values)) continue;
    const strings = values.filter((v): v is string => typeof v === 'string');
    if (strings.length) headers[lowerKeys ? key.toLowerCase() : key] = strings.join(', ');
  }
}

/** The plain proxy result (status, headers, text body) the API Gateway formats share. */
export function proxyResult(reply: HttpReply): GatewayResult {
  return { statusCode: reply.statusCode, headers: reply.headers, body: reply.body, isBase64Encoded: false };
}
