import { randomUUID } from 'node:crypto';
import type { EventSource } from '../gateway/sources.ts';

/** How to wrap a body in a Lambda event. */
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

const ACCOUNT = '123456789012';
const API_ID = 'klwlocal01';

/** `17/Jun/2024:15:52:39 +0000`, the CLF time format API Gateway puts in requestContext. */
export function clfTime(date: Date): string {
  const months = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${pad(date.getUTCDate())}/${months[date.getUTCMonth()]}/${date.getUTCFullYear()}:${pad(date.getUTCHours())}:${pad(date.getUTCMinutes())}:${pad(date.getUTCSeconds())} +0000`;
}

/** Wraps a review (or any body) in an API Gateway REST, HTTP API or function URL event. */
export function toEvent(body: unknown, options: EventOptions = {}): Record<string, unknown> {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  const format = options.format ?? 'http';
  const path = options.path ?? '/';
  const method = options.method ?? 'POST';
  const now = options.now ?? new Date();
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    accept: 'application/json, */*',
    'user-agent': 'kube-apiserver-admission',
    ...options.headers,
  };
  const query = options.timeout ? { timeout: options.timeout } : undefined;
  const encoded = options.base64 ? Buffer.from(text, 'utf8').toString('base64') : text;
  const requestId = randomUUID();

  if (format === 'rest') {
    return {
      resource: path,
      path,
      httpMethod: method,
      headers,
      multiValueHeaders: Object.fromEntries(Object.entries(headers).map(([k, v]) => [k, [v]])),
      queryStringParameters: query ?? null,
      multiValueQueryStringParameters: query ? { timeout: [query.timeout] } : null,
      pathParameters: null,
      stageVariables: null,
      requestContext: {
        accountId: ACCOUNT,
        apiId: API_ID,
        resourceId: 'abc123',
        resourcePath: path,
        httpMethod: method,
        path: `/prod${path}`,
        protocol: 'HTTP/1.1',
        stage: 'prod',
        requestId,
        requestTime: clfTime(now),
        requestTimeEpoch: now.getTime(),
        identity: { sourceIp: '127.0.0.1', userAgent: headers['user-agent'] },
        domainName: `${API_ID}.execute-api.us-east-1.amazonaws.com`,
      },
      body: encoded,
      isBase64Encoded: options.base64 === true,
    };
  }
  const url = format === 'url';
  const domainName = url ? `${API_ID}.lambda-url.us-east-1.on.aws` : `${API_ID}.execute-api.us-east-1.amazonaws.com`;
  const routeKey = url ? '$default' : `${method} ${path}`;
  return {
    version: '2.0',
    routeKey,
    rawPath: path,
    rawQueryString: query ? `timeout=${query.timeout}` : '',
    headers,
    ...(query ? { queryStringParameters: query } : {}),
    requestContext: {
      accountId: url ? 'anonymous' : ACCOUNT,
      apiId: API_ID,
      domainName,
      domainPrefix: API_ID,
      http: { method, path, protocol: 'HTTP/1.1', sourceIp: '127.0.0.1', userAgent: headers['user-agent'] },
      requestId,
      routeKey,
      stage: '$default',
      time: clfTime(now),
      timeEpoch: now.getTime(),
    },
    body: encoded,
    isBase64Encoded: options.base64 === true,
  };
}

/** A Lambda context for tests: a request id and a remaining time that counts down. */
export function lambdaContext(timeoutMs = 30_000): { awsRequestId: string; getRemainingTimeInMillis: () => number } {
  const deadline = Date.now() + timeoutMs;
  return { awsRequestId: randomUUID(), getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()) };
}
