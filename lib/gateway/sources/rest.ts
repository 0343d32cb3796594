import { randomUUID } from 'node:crypto';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import {
  ACCOUNT,
  API_ID,
  addMultiValueHeaders,
  BAD_GATEWAY,
  bodyBytes,
  clfTime,
  lastHeader,
  parseQuery,
  REGION,
  resultBody,
  resultHeaders,
} from './emulate.ts';
import { isRecord, type Loose, mergeMultiValue, proxyResult, str, stringMap } from './fields.ts';
import type { GatewaySource, HttpRequestInput, HttpResponse, SourceTools } from './types.ts';

/** API Gateway REST APIs and HTTP API payload format 1.0: `httpMethod` at the top level. */
export const restSource: GatewaySource<'rest'> = {
  name: 'rest',
  describe: 'API Gateway REST API (payload format 1.0)',
  detect: (event) => isRecord(event) && typeof event.httpMethod === 'string' && isRecord(event.requestContext),
  read(event) {
    const e = event as Partial<APIGatewayProxyEvent> & { requestContext: Loose };
    const headers = stringMap(e.headers, true);
    mergeMultiValue(headers, e.multiValueHeaders, true);
    return {
      source: 'rest',
      method: (str(e.httpMethod) ?? '').toUpperCase(),
      path: str(e.path) ?? '/',
      pathParameters: stringMap(e.pathParameters, false),
      headers,
      query: stringMap(e.queryStringParameters, false),
      body: str(e.body),
      isBase64Encoded: e.isBase64Encoded === true,
      requestId: str(e.requestContext.requestId),
    };
  },
  write: (reply) => proxyResult(reply) satisfies APIGatewayProxyResult,
};

/**
 * The REST event of an HTTP request: header case kept, with `multiValueHeaders` and
 * `multiValueQueryStringParameters`; without binary media types the body is never base64.
 */
function sample(req: HttpRequestInput): Record<string, unknown> {
  const now = req.now ?? new Date();
  const requestId = req.requestId ?? randomUUID();
  const rawQuery = req.rawQuery ?? '';
  const query = parseQuery(rawQuery);
  const body = bodyBytes(req.body);
  const headers: Record<string, string> = {};
  const multiValueHeaders: Record<string, string[]> = {};
  for (const [name, value] of req.headers) {
    headers[name] = value;
    (multiValueHeaders[name] ??= []).push(value);
  }
  const base64 = req.base64 === true;
  const identity = { sourceIp: req.sourceIp ?? '127.0.0.1', userAgent: lastHeader(req.headers, 'user-agent') ?? '' };
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
      identity: { ...identity, accessKey: null, accountId: null, caller: null, user: null, userArn: null },
      domainName: `${API_ID}.execute-api.${REGION}.amazonaws.com`,
    },
    body: body === undefined ? null : base64 ? body.toString('base64') : body.toString('utf8'),
    isBase64Encoded: base64,
  };
}

/** REST needs a numeric `statusCode` (else 502) and merges `multiValueHeaders` over `headers`. */
function respond(result: unknown): HttpResponse {
  if (!isRecord(result) || typeof result.statusCode !== 'number') return BAD_GATEWAY;
  const headers = resultHeaders(result);
  addMultiValueHeaders(headers, result.multiValueHeaders);
  return { status: result.statusCode, headers, body: resultBody(result) };
}

/** The REST source's event builder and result reader, for the test kit and the emulator. */
export const restTools: SourceTools<'rest'> = { source: restSource, sample, respond };
