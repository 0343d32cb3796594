// The 2.0 payload that API Gateway HTTP APIs and Lambda function URLs share; the two
// sources differ only in the domain and route key of their events.
import { randomUUID } from 'node:crypto';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import {
  API_ID,
  bodyBytes,
  clfTime,
  isTextContentType,
  lastHeader,
  parseQuery,
  resultBody,
  resultHeaders,
} from './emulate.ts';
import { isRecord, type Loose, str, stringMap } from './fields.ts';
import type { EventSource, GatewayRequest, HttpRequestInput, HttpResponse } from './types.ts';

/** A 2.0 event: `version: "2.0"` and `requestContext.http`. */
export function isV2(event: unknown): event is Loose & { requestContext: Loose & { http: Loose } } {
  return (
    isRecord(event) && event.version === '2.0' && isRecord(event.requestContext) && isRecord(event.requestContext.http)
  );
}

/**
 * Function URL events carry the `<url-id>.lambda-url.<region>.on.aws` domain AWS puts in
 * requestContext.domainName; HTTP API events never do.
 */
export function isFunctionUrlDomain(event: { requestContext: Loose }): boolean {
  const domain = str(event.requestContext.domainName) ?? '';
  return domain.includes('.lambda-url.');
}

/** Reads a 2.0 event (only called on one `isV2` accepted). */
export function readV2(event: unknown, source: EventSource): GatewayRequest {
  const e = event as Partial<APIGatewayProxyEventV2> & { requestContext: Loose & { http: Loose } };
  return {
    source,
    method: (str(e.requestContext.http.method) ?? '').toUpperCase(),
    path: str(e.rawPath) ?? str(e.requestContext.http.path) ?? '/',
    pathParameters: stringMap(e.pathParameters, false),
    headers: stringMap(e.headers, true),
    query: stringMap(e.queryStringParameters, false),
    body: str(e.body),
    isBase64Encoded: e.isBase64Encoded === true,
    requestId: str(e.requestContext.requestId),
  };
}

/**
 * The 2.0 event of an HTTP request: names lower-cased, repeats joined with commas, cookies
 * moved to `cookies`, and bodies that are not text base64-encoded.
 */
export function sampleV2(
  req: HttpRequestInput,
  place: { domainName: string; routeKey: string; accountId: string },
): Record<string, unknown> {
  const now = req.now ?? new Date();
  const requestId = req.requestId ?? randomUUID();
  const rawQuery = req.rawQuery ?? '';
  const body = bodyBytes(req.body);
  const headers: Record<string, string> = {};
  const cookies: string[] = [];
  for (const [name, value] of req.headers) {
    const key = name.toLowerCase();
    if (key === 'cookie') cookies.push(...value.split(/;\s*/).filter(Boolean));
    else headers[key] = headers[key] === undefined ? value : `${headers[key]},${value}`;
  }
  const base64 = body !== undefined && (req.base64 ?? !isTextContentType(headers['content-type']));
  const event: Record<string, unknown> = {
    version: '2.0',
    routeKey: place.routeKey,
    rawPath: req.path,
    rawQueryString: rawQuery,
  };
  if (cookies.length) event.cookies = cookies;
  event.headers = headers;
  if (rawQuery) event.queryStringParameters = parseQuery(rawQuery).joined;
  const sourceIp = req.sourceIp ?? '127.0.0.1';
  const userAgent = lastHeader(req.headers, 'user-agent') ?? '';
  event.requestContext = {
    accountId: place.accountId,
    apiId: API_ID,
    domainName: place.domainName,
    domainPrefix: API_ID,
    http: { method: req.method, path: req.path, protocol: 'HTTP/1.1', sourceIp, userAgent },
    requestId,
    routeKey: place.routeKey,
    stage: '$default',
    time: clfTime(now),
    timeEpoch: now.getTime(),
  };
  if (body !== undefined) event.body = base64 ? body.toString('base64') : body.toString('utf8');
  event.isBase64Encoded = base64;
  return event;
}

/**
 * The 2.0 response: a result without a numeric `statusCode` is a bare value, sent as JSON
 * with status 200; `cookies` become Set-Cookie headers.
 */
export function respondV2(result: unknown): HttpResponse {
  if (!isRecord(result) || typeof result.statusCode !== 'number') {
    const text = typeof result === 'string' ? result : JSON.stringify(result ?? null);
    return { status: 200, headers: { 'content-type': 'application/json' }, body: Buffer.from(text) };
  }
  const headers = resultHeaders(result);
  if (Array.isArray(result.cookies) && result.cookies.length) headers['set-cookie'] = result.cookies.map(String);
  return { status: result.statusCode, headers, body: resultBody(result) };
}
