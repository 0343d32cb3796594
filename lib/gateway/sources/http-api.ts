import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { ACCOUNT, API_ID, REGION } from './emulate.ts';
import { proxyResult } from './fields.ts';
import { isFunctionUrlDomain, isV2, readV2, respondV2, sampleV2 } from './payload-v2.ts';
import type { GatewaySource, SourceTools } from './types.ts';

/** API Gateway HTTP APIs, payload format 2.0: `version: "2.0"` and `requestContext.http`. */
export const httpApiSource: GatewaySource<'http'> = {
  name: 'http',
  describe: 'API Gateway HTTP API (payload format 2.0)',
  detect: (event) => isV2(event) && !isFunctionUrlDomain(event),
  read: (event) => readV2(event, 'http'),
  write: (reply) => proxyResult(reply) satisfies APIGatewayProxyStructuredResultV2,
};

/** The HTTP API source's event builder and result reader, for the test kit and the emulator. */
export const httpApiTools: SourceTools<'http'> = {
  source: httpApiSource,
  sample: (req) =>
    sampleV2(req, {
      domainName: `${API_ID}.execute-api.${REGION}.amazonaws.com`,
      routeKey: `${req.method} ${req.path}`,
      accountId: ACCOUNT,
    }),
  respond: respondV2,
};
