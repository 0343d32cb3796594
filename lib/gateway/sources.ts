import type {
  APIGatewayProxyEvent,
  APIGatewayProxyEventV2,
  APIGatewayProxyResult,
  APIGatewayProxyStructuredResultV2,
  LambdaFunctionURLResult,
} from 'aws-lambda';

/** Which AWS front door delivered the event. */
export type EventSource = 'rest' | 'http' | 'url';

/** The HTTP request carried by a Lambda event, with header names lower-cased. */
export interface GatewayRequest {
  source: EventSource;
  method: string;
  path: string;
  /** API Gateway's path parameters (`{secret}` of a `POST /<name>/{secret}` route); empty for function URLs. */
  pathParameters?: Record<string, string>;
  headers: Record<string, string>;
  query: Record<string, string>;
  body: string | undefined;
  isBase64Encoded: boolean;
  requestId: string | undefined;
}

/** An HTTP answer before it is put in the event source's result shape. */
export interface HttpReply {
  statusCode: number;
  headers: Record<string, string>;
  body: string;
}

/** The result this adapter returns to Lambda; it fits the REST, HTTP API and function URL result types alike. */
export interface GatewayResult {
  statusCode: number;
  headers: Record<string, string>;
  body: string;
  isBase64Encoded: boolean;
}

/** One event source: how to recognise its events, read them and write its results. */
export interface SourceProcessor {
  source: EventSource;
  /** True when the event has this source's shape. */
  is(event: unknown): boolean;
  /** Reads the HTTP request out of the event. */
  read(event: unknown): GatewayRequest;
  /** Puts an HTTP reply in this source's result shape. */
  write(reply: HttpReply): GatewayResult;
}

type Loose = Record<string, unknown>;

function isRecord(value: unknown): value is Loose {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function str(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

/** Copies the string-valued entries of a header or query map, lower-casing keys when asked. */
function stringMap(value: unknown, lowerKeys: boolean): Record<string, string> {
  const out: Record<string, string> = {};
  if (!isRecord(value)) return out;
  // Object.entries without a pair per entry: the same keys, order and reads.
  for (const key of Object.keys(value)) {
    const v = value[key];
    if (typeof v === 'string') out[lowerKeys ? key.toLowerCase() : key] = v;
  }
  return out;
}

/** Merges REST `multiValueHeaders` into single values the way HTTP joins repeated headers. */
function mergeMultiValue(headers: Record<string, string>, multi: unknown, lowerKeys: boolean): void {
  if (!isRecord(multi)) return;
  for (const [key, values] of Object.entries(multi)) {
    if (!Array.isArray(values)) continue;
    const strings = values.filter((v): v is string => typeof v === 'string');
    if (strings.length) headers[lowerKeys ? key.toLowerCase() : key] = strings.join(', ');
  }
}

// Function URL events use the HTTP API 2.0 payload; they are told apart by the
// `<url-id>.lambda-url.<region>.on.aws` domain AWS puts in requestContext.domainName.
function isV2(event: unknown): event is Loose & { requestContext: Loose & { http: Loose } } {
  return (
    isRecord(event) && event.version === '2.0' && isRecord(event.requestContext) && isRecord(event.requestContext.http)
  );
}

function isFunctionUrlDomain(event: { requestContext: Loose }): boolean {
  const domain = str(event.requestContext.domainName) ?? '';
  return domain.includes('.lambda-url.');
}

function readV2(event: unknown, source: EventSource): GatewayRequest {
  const e = event as Partial<APIGatewayProxyEventV2> & { requestContext: Loose & { http: Loose } };
  const headers = stringMap(e.headers, true);
  return {
    source,
    method: (str(e.requestContext.http.method) ?? '').toUpperCase(),
    path: str(e.rawPath) ?? str(e.requestContext.http.path) ?? '/',
    pathParameters: stringMap(e.pathParameters, false),
    headers,
    query: stringMap(e.queryStringParameters, false),
    body: str(e.body),
    isBase64Encoded: e.isBase64Encoded === true,
    requestId: str(e.requestContext.requestId),
  };
}

function writeV2(reply: HttpReply): GatewayResult {
  return {
    statusCode: reply.statusCode,
    headers: reply.headers,
    body: reply.body,
    isBase64Encoded: false,
  } satisfies APIGatewayProxyStructuredResultV2;
}

/** API Gateway REST APIs and HTTP API payload format 1.0: `httpMethod` at the top level. */
export const restSource: SourceProcessor = {
  source: 'rest',
  is: (event) => isRecord(event) && typeof event.httpMethod === 'string' && isRecord(event.requestContext),
  read(event) {
    const e = event as Partial<APIGatewayProxyEvent> & { requestContext: Loose };
    const headers = stringMap(e.headers, true);
    mergeMultiValue(headers, e.multiValueHeaders, true);
    const query = stringMap(e.queryStringParameters, false);
    return {
      source: 'rest',
      method: (str(e.httpMethod) ?? '').toUpperCase(),
      path: str(e.path) ?? '/',
      pathParameters: stringMap(e.pathParameters, false),
      headers,
      query,
      body: str(e.body),
      isBase64Encoded: e.isBase64Encoded === true,
      requestId: str(e.requestContext.requestId),
    };
  },
  write: (reply) =>
    ({
      statusCode: reply.statusCode,
      headers: reply.headers,
      body: reply.body,
      isBase64Encoded: false,
    }) satisfies APIGatewayProxyResult,
};

/** API Gateway HTTP APIs, payload format 2.0: `version: "2.0"` and `requestContext.http`. */
export const httpSource: SourceProcessor = {
  source: 'http',
  is: (event) => isV2(event) && !isFunctionUrlDomain(event),
  read: (event) => readV2(event, 'http'),
  write: writeV2,
};

/** Lambda function URLs: the 2.0 payload with a `.lambda-url.` domain. */
export const urlSource: SourceProcessor = {
  source: 'url',
  is: (event) => isV2(event) && isFunctionUrlDomain(event),
  read: (event) => readV2(event, 'url'),
  write: (reply) => writeV2(reply) satisfies LambdaFunctionURLResult,
};

/** Every processor, most specific first. */
export const SOURCES: readonly SourceProcessor[] = [urlSource, httpSource, restSource];

/** Finds the processor for an event, or undefined when it came from no API Gateway or function URL. */
export function detectSource(event: unknown): SourceProcessor | undefined {
  return SOURCES.find((s) => s.is(event));
}
