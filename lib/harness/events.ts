import { randomUUID } from 'node:crypto';
import { type EventSource, type HttpRequestInput, toolsFor } from '../gateway/sources.ts';
import { stringifyJson } from '../json.ts';

export type { HttpRequestInput } from '../gateway/sources.ts';

/** How to wrap a body in a Lambda event with `toEvent`. */
export interface EventOptions {
  /** Event source; default `http` (API Gateway HTTP API, payload 2.0). */
  format?: EventSource;
  /** Request path; default `/`. */
  path?: string;
  method?: string;
  /** Extra headers; `content-type: application/json` is set unless given. */
  headers?: Record<string, string>;
  /** Send the body base64-encoded, as API Gateway does for binary media types. */
  base64?: boolean;
  /** The `timeout` query parameter the API server appends, e.g. `5s`. */
  timeout?: string;
  /** Time of the request; default now. */
  now?: Date;
}

/**
 * Builds the Lambda event an event source (API Gateway REST or HTTP API, a function URL, an
 * ALB target group) makes of an HTTP request; each source's module knows its own shape.
 */
export function eventFromHttp(format: EventSource, req: HttpRequestInput): Record<string, unknown> {
  return toolsFor(format).sample(req);
}

/** Wraps a review (or any body) in the Lambda event of an event source (default: an HTTP API). */
export function toEvent(body: unknown, options: EventOptions = {}): Record<string, unknown> {
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    accept: 'application/json, */*',
    'user-agent': 'kube-apiserver-admission',
    ...options.headers,
  };
  return eventFromHttp(options.format ?? 'http', {
    method: options.method ?? 'POST',
    path: options.path ?? '/',
    rawQuery: options.timeout ? `timeout=${options.timeout}` : '',
    headers: Object.entries(headers),
    body: typeof body === 'string' ? body : stringifyJson(body),
    base64: options.base64 === true,
    ...(options.now ? { now: options.now } : {}),
  });
}

/** A Lambda context for tests: a request id and a remaining time that counts down. */
export function lambdaContext(timeoutMs = 30_000): { awsRequestId: string; getRemainingTimeInMillis: () => number } {
  const deadline = Date.now() + timeoutMs;
  return { awsRequestId: randomUUID(), getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()) };
}
