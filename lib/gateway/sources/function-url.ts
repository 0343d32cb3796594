import type { LambdaFunctionURLResult } from 'aws-lambda';
import { API_ID, REGION } from './emulate.ts';
import { proxyResult } from './fields.ts';
import { isFunctionUrlDomain, isV2, readV2, respondV2, sampleV2 } from './payload-v2.ts';
import type { GatewaySource, SourceTools } from './types.ts';

/** Lambda function URLs: the 2.0 payload with a `.lambda-url.` domain. */
export const functionUrlSource: GatewaySource<'url'> = {
  name: 'url',
  describe: 'Lambda function URL',
  detect: (event) => isV2(event) && isFunctionUrlDomain(event),
  read: (event) => readV2(event, 'url'),
  write: (reply) => proxyResult(reply) satisfies LambdaFunctionURLResult,
};

/** The function URL source's event builder and result reader, for the test kit and the emulator. */
export const functionUrlTools: SourceTools<'url'> = {
  source: functionUrlSource,
  sample: (req) =>
    sampleV2(req, {
      domainName: `${API_ID}.lambda-url.${REGION}.on.aws`,
      routeKey: '$default',
      accountId: 'anonymous',
    }),
  respond: respondV2,
};
