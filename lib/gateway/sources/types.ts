/**
 * What every event source module provides. A source is two objects in one file: a
 * `GatewaySource` the Lambda handler uses (detect, read, write) and a `SourceTools` the test
 * kit and the emulator use (sample, respond). The handler imports only the first, so the
 * tools' code is left out of function bundles.
 */

/**
 * Which AWS front door delivered the event: the name of one of the sources in `SOURCES`
 * (lib/gateway/sources.ts, which checks at compile time that the two lists agree).
 */
export type EventSource = 'url' | 'http' | 'alb' | 'rest';

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
  /** The event carried only multi-value maps (an ALB target group with multi-value headers on): answer in kind. */
  multiValue?: boolean;
}

/** An HTTP answer before it is put in the event source's result shape. */
export interface HttpReply {
  statusCode: number;
  headers: Record<string, string>;
  body: string;
}

/**
 * The result this adapter returns to Lambda; it fits the REST, HTTP API, function URL and
 * Application Load Balancer result types alike.
 */
export interface GatewayResult {
  statusCode: number;
  headers: Record<string, string>;
  body: string;
  isBase64Encoded: boolean;
  /** The status line's text (`200 OK`), which an Application Load Balancer sends on. */
  statusDescription?: string;
  /** Headers as lists, for an Application Load Balancer target group with multi-value headers on. */
  multiValueHeaders?: Record<string, string[]>;
}

/**
 * One event source as the Lambda handler sees it. A source module names its own
 * (`GatewaySource<'alb'>`), and `EventSource` is the union of the names in the source list.
 */
export interface GatewaySource<Name extends string = EventSource> {
  /** The short name the CLI, the test kit and the logs use. */
  name: Name;
  /** What delivers this event, for help texts and error messages. */
  describe: string;
  /** True when the event has this source's shape. */
  detect(event: unknown): boolean;
  /** Reads the HTTP request out of the event (only called when `detect` said yes). */
  read(event: unknown): GatewayRequest;
  /** Puts an HTTP reply in this source's result shape; `request` is the one `read` returned, when there is one. */
  write(reply: HttpReply, request?: GatewayRequest): GatewayResult;
}

/** An HTTP request as it reaches API Gateway, a function URL or a load balancer. */
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
  /** For sources where it is a setting (ALB target groups): send multi-value header and query maps. */
  multiValue?: boolean;
}

/** An HTTP response made from a Lambda result. */
export interface HttpResponse {
  status: number;
  headers: Record<string, string | string[]>;
  body: Buffer;
}

/** One event source as the test kit and the local emulator see it. */
export interface SourceTools<Name extends string = EventSource> {
  source: GatewaySource<Name>;
  /** The Lambda event this source makes of an HTTP request. */
  sample(req: HttpRequestInput): Record<string, unknown>;
  /**
   * The HTTP response this source sends for a Lambda result (a malformed one included);
   * `event` is the event the function was given.
   */
  respond(result: unknown, event?: Record<string, unknown>): HttpResponse;
}
