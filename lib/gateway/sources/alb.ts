import { randomUUID } from 'node:crypto';
import type { ALBEvent, ALBResult } from 'aws-lambda';
import {
  ACCOUNT,
  API_ID,
  addMultiValueHeaders,
  bodyBytes,
  mediaType,
  REGION,
  resultBody,
  resultHeaders,
} from './emulate.ts';
import { isRecord, mergeMultiValue, str, stringMap } from './fields.ts';
import type { GatewayResult, GatewaySource, HttpRequestInput, HttpResponse, SourceTools } from './types.ts';

/** Reason phrases for the statuses the handler sends; ALB passes `statusDescription` on as the status line. */
const REASONS: Record<number, string> = {
  200: 'OK',
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  413: 'Payload Too Large',
  415: 'Unsupported Media Type',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
};

/**
 * Query values as the function should see them: the load balancer passes them on as sent,
 * percent-encoded, so they are decoded here (a value that does not decode is kept as sent).
 */
function decodedQuery(single: unknown, multi: unknown): Record<string, string> {
  const raw = stringMap(single, false);
  if (isRecord(multi))
    for (const [key, values] of Object.entries(multi))
      if (Array.isArray(values) && typeof values.at(-1) === 'string') raw[key] = values.at(-1) as string;
  const out: Record<string, string> = {};
  for (const key of Object.keys(raw)) out[decodeQueryPart(key)] = decodeQueryPart(raw[key]!);
  return out;
}

function decodeQueryPart(part: string): string {
  if (!part.includes('%') && !part.includes('+')) return part;
  try {
    return decodeURIComponent(part.replaceAll('+', ' '));
  } catch {
    return part;
  }
}

/**
 * Application Load Balancer target groups: `requestContext.elb`. With the target group's
 * multi-value headers on, the event carries only `multiValueHeaders` and
 * `multiValueQueryStringParameters`, and the result must answer with `multiValueHeaders`.
 */
export const albSource: GatewaySource<'alb'> = {
  name: 'alb',
  describe: 'Application Load Balancer target group',
  detect: (event) => isRecord(event) && isRecord(event.requestContext) && isRecord(event.requestContext.elb),
  read(event) {
    const e = event as Partial<ALBEvent>;
    const headers = stringMap(e.headers, true);
    mergeMultiValue(headers, e.multiValueHeaders, true);
    return {
      source: 'alb',
      method: (str(e.httpMethod) ?? '').toUpperCase(),
      path: str(e.path) ?? '/',
      headers,
      query: decodedQuery(e.queryStringParameters, e.multiValueQueryStringParameters),
      body: str(e.body),
      isBase64Encoded: e.isBase64Encoded === true,
      // ALB events carry no request id; the trace header names the request in ALB's logs.
      requestId: headers['x-amzn-trace-id'],
      multiValue: isRecord(e.multiValueHeaders) && !isRecord(e.headers),
    };
  },
  write(reply, request): GatewayResult {
    const statusDescription = `${reply.statusCode} ${REASONS[reply.statusCode] ?? ''}`.trimEnd();
    const result: GatewayResult = {
      statusCode: reply.statusCode,
      statusDescription,
      headers: reply.headers,
      body: reply.body,
      isBase64Encoded: false,
    } satisfies ALBResult;
    if (!request?.multiValue) return result;
    const multiValueHeaders: Record<string, string[]> = {};
    for (const key of Object.keys(reply.headers)) multiValueHeaders[key] = [reply.headers[key]!];
    return { ...result, headers: {}, multiValueHeaders };
  },
};

/** Media types an ALB passes as text; every other body reaches the function base64-encoded. */
function isAlbText(contentType: string | undefined): boolean {
  const media = mediaType(contentType);
  return (
    media.startsWith('text/') ||
    media === 'application/json' ||
    media === 'application/javascript' ||
    media === 'application/xml'
  );
}

/** Splits a query string without decoding it, as the load balancer does. */
function rawQueryMaps(raw: string): { last: Record<string, string>; multi: Record<string, string[]> } {
  const last: Record<string, string> = {};
  const multi: Record<string, string[]> = {};
  for (const part of raw.split('&')) {
    if (!part) continue;
    const eq = part.indexOf('=');
    const key = eq < 0 ? part : part.slice(0, eq);
    const value = eq < 0 ? '' : part.slice(eq + 1);
    last[key] = value;
    (multi[key] ??= []).push(value);
  }
  return { last, multi };
}

/**
 * The ALB event of an HTTP request: names lower-cased; without multi-value headers the last
 * of repeated headers and query parameters wins; query values stay percent-encoded; the
 * body is `""` when there is none and base64 unless it is text, JSON, JavaScript or XML.
 */
function sample(req: HttpRequestInput): Record<string, unknown> {
  const multi = req.multiValue === true;
  const now = req.now ?? new Date();
  const trace = (req.requestId ?? randomUUID()).replaceAll('-', '').slice(0, 24).padEnd(24, '0');
  const pairs: Array<[string, string]> = [
    ...req.headers.map(([k, v]): [string, string] => [k.toLowerCase(), v]),
    ['x-forwarded-for', req.sourceIp ?? '127.0.0.1'],
    ['x-amzn-trace-id', `Root=1-${Math.floor(now.getTime() / 1000).toString(16)}-${trace}`],
  ];
  const headers: Record<string, string> = {};
  const multiValueHeaders: Record<string, string[]> = {};
  for (const [key, value] of pairs) {
    headers[key] = value;
    (multiValueHeaders[key] ??= []).push(value);
  }
  const query = rawQueryMaps(req.rawQuery ?? '');
  const body = bodyBytes(req.body);
  const base64 = body !== undefined && (req.base64 ?? !isAlbText(headers['content-type']));
  return {
    requestContext: {
      elb: { targetGroupArn: `arn:aws:elasticloadbalancing:${REGION}:${ACCOUNT}:targetgroup/klw-local/${API_ID}` },
    },
    httpMethod: req.method,
    path: req.path,
    ...(multi ? { multiValueQueryStringParameters: query.multi } : { queryStringParameters: query.last }),
    ...(multi ? { multiValueHeaders } : { headers }),
    body: body === undefined ? '' : base64 ? body.toString('base64') : body.toString('utf8'),
    isBase64Encoded: base64,
  };
}

/** The load balancer's own page for a result it cannot use. */
const ALB_BAD_GATEWAY =
  '<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad Gateway</h1></center>\r\n</body>\r\n</html>\r\n';

/**
 * A result needs a numeric `statusCode` (else 502); the load balancer reads `multiValueHeaders`
 * when the target group has multi-value headers on (the event says so), else `headers`.
 */
function respond(result: unknown, event?: Record<string, unknown>): HttpResponse {
  if (!isRecord(result) || typeof result.statusCode !== 'number')
    return { status: 502, headers: { 'content-type': 'text/html' }, body: Buffer.from(ALB_BAD_GATEWAY) };
  let headers: Record<string, string | string[]> = {};
  if (isRecord(event?.multiValueHeaders)) addMultiValueHeaders(headers, result.multiValueHeaders);
  else headers = resultHeaders(result);
  return { status: result.statusCode, headers, body: resultBody(result) };
}

/** The ALB source's event builder and result reader, for the test kit and the emulator. */
export const albTools: SourceTools<'alb'> = { source: albSource, sample, respond };
