import { randomUUID } from 'node:crypto';
import type { EventSource } from '../gateway/sources.ts';
import { stringifyJson } from '../json.ts';

/** An HTTP request as it reaches API Gateway or a function URL. */
export interface HttpRequestInput {
  method: string;
  /** Path without the query string. */
  path: string;
  /** Query string without `?`, as sent. */
  rawQuery?: string;
  /** Headers in the order and case they were sent; repeated names allowed. */
  headers: Array<[string, string]>;
  body?: Buffer | string;
  sourceIp?: string;
  requestId?: string;
  now?: Date;
  /** Force base64 (true) or text (false); by default AWS's rule for the source decides. */
  base64?: boolean;
}

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

const ACCOUNT = '123456789012';
const API_ID = 'klwlocal01';
const REGION = 'us-east-1';

/** `17/Jun/2024:15:52:39 +0000`, the CLF time format API Gateway puts in requestContext. */
export function clfTime(date: Date): string {
  const months = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${pad(date.getUTCDate())}/${months[date.getUTCMonth()]}/${date.getUTCFullYear()}:${pad(date.getUTCHours())}:${pad(date.getUTCMinutes())}:${pad(date.getUTCSeconds())} +0000`;
}

/**
 * True for content types whose bodies HTTP APIs and function URLs pass as text; any other
 * body reaches Lambda base64-encoded.
 */
export function isTextContentType(contentType: string | undefined): boolean {
  const media = (contentType ?? '').split(';', 1)[0]!.trim().toLowerCase();
  return (
    media.startsWith('text/') ||
    /^application\/([\w.+-]+\+)?(json|xml|yaml)$/.test(media) ||
    media === 'application/javascript' ||
    media === 'application/x-www-form-urlencoded'
  );
}

/** Splits a query string into single (last value wins), joined (comma) and multi-value maps. */
function parseQuery(raw: string): {
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

/**
 * Builds the Lambda event API Gateway (REST or HTTP API) or a function URL makes of an
 * HTTP request: REST keeps header case with `multiValueHeaders`; 2.0 lower-cases names,
 * joins repeats with commas and moves cookies to `cookies`; HTTP API and function URL
 * bodies that are not text arrive base64-encoded (REST without binary media types: never).
 */
export function eventFromHttp(format: EventSource, req: HttpRequestInput): Record<string, unknown> {
  const now = req.now ?? new Date();
  const requestId = req.requestId ?? randomUUID();
  const sourceIp = req.sourceIp ?? '127.0.0.1';
  const rawQuery = req.rawQuery ?? '';
  const query = parseQuery(rawQuery);
  const body =
    req.body === undefined ? undefined : Buffer.isBuffer(req.body) ? req.body : Buffer.from(req.body, 'utf8');
  const headerValue = (name: string) =>
    req.headers
      .filter(([k]) => k.toLowerCase() === name)
      .map(([, v]) => v)
      .at(-1);
  const userAgent = headerValue('user-agent') ?? '';

  if (format === 'rest') {
    const headers: Record<string, string> = {};
    const multiValueHeaders: Record<string, string[]> = {};
    for (const [name, value] of req.headers) {
      headers[name] = value;
      (multiValueHeaders[name] ??= []).push(value);
    }
    const base64 = req.base64 === true;
    return {
      resource: req.path,
      path: req.path,
      httpMethod: req.method,
      headers,
      multiValueHeaders,
      queryStringParameters: rawQuery ? query.last : null,
      multiValueQueryStringParameters: rawQuery ? query.multi : null,
      pathParameters: null,
      stageVariables: null,
      requestContext: {
        accountId: ACCOUNT,
        apiId: API_ID,
        resourceId: 'klw001',
        resourcePath: req.path,
        httpMethod: req.method,
        extendedRequestId: requestId,
        path: `/local${req.path}`,
        protocol: 'HTTP/1.1',
        stage: 'local',
        domainPrefix: API_ID,
        requestId,
        requestTime: clfTime(now),
        requestTimeEpoch: now.getTime(),
        identity: { sourceIp, userAgent, accessKey: null, accountId: null, caller: null, user: null, userArn: null },
        domainName: `${API_ID}.execute-api.${REGION}.amazonaws.com`,
      },
      body: body === undefined ? null : base64 ? body.toString('base64') : body.toString('utf8'),
      isBase64Encoded: base64,
    };
  }

  const url = format === 'url';
  const headers: Record<string, string> = {};
  const cookies: string[] = [];
  for (const [name, value] of req.headers) {
    const key = name.toLowerCase();
    if (key === 'cookie') cookies.push(...value.split(/;\s*/).filter(Boolean));
    else headers[key] = headers[key] === undefined ? value : `${headers[key]},${value}`;
  }
  const base64 = body !== undefined && (req.base64 ?? !isTextContentType(headers['content-type']));
  const domainName = url ? `${API_ID}.lambda-url.${REGION}.on.aws` : `${API_ID}.execute-api.${REGION}.amazonaws.com`;
  const routeKey = url ? '$default' : `${req.method} ${req.path}`;
  const event: Record<string, unknown> = {
    version: '2.0',
    routeKey,
    rawPath: req.path,
    rawQueryString: rawQuery,
  };
  if (cookies.length) event.cookies = cookies;
  event.headers = headers;
  if (rawQuery) event.queryStringParameters = query.joined;
  event.requestContext = {
    accountId: url ? 'anonymous' : ACCOUNT,
    apiId: API_ID,
    domainName,
    domainPrefix: API_ID,
    http: { method: req.method, path: req.path, protocol: 'HTTP/1.1', sourceIp, userAgent },
    requestId,
    routeKey,
    stage: '$default',
    time: clfTime(now),
    timeEpoch: now.getTime(),
  };
  if (body !== undefined) event.body = base64 ? body.toString('base64') : body.toString('utf8');
  event.isBase64Encoded = base64;
  return event;
}

/** Wraps a review (or any body) in an API Gateway REST, HTTP API or function URL event. */
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
