import { KlwError } from './errors.ts';

/**
 * The AWS SDK's documented switch for its warning that releases after January 2027 need Node 22
 * (eight lines on every AWS command under Node 20). klw supports Node 20 with the SDK it installs,
 * so the warning tells its users nothing they can act on; a value the user set is kept. Set when
 * this module loads: before any client is made (the SDK checks when a client is constructed),
 * and inherited by the Serverless Framework klw runs.
 */
export const SDK_NODE_WARNING_ENV = 'AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED';
process.env[SDK_NODE_WARNING_ENV] ??= 'true';

/** What an AWS call was for, for its error message. */
export interface AwsCall {
  /** What klw was doing: `reading stack klw-dev's outputs`. */
  action: string;
  region: string;
}

/** Error names the SDK gives when there are no usable credentials, or they are wrong or expired. */
const CREDENTIAL_ERRORS = new Set([
  'CredentialsProviderError',
  'ExpiredToken',
  'ExpiredTokenException',
  'InvalidClientTokenId',
  'InvalidSignatureException',
  'SignatureDoesNotMatch',
  'UnrecognizedClientException',
  'TokenRefreshRequired',
]);
/** Error names of credentials that work but may not do what was asked. */
const PERMISSION_ERRORS = new Set([
  'AccessDenied',
  'AccessDeniedException',
  'UnauthorizedOperation',
  'AuthorizationError',
]);
/** Error names of something that is not there: in another region or stage, or not deployed. */
const MISSING_ERRORS = new Set(['ResourceNotFoundException', 'ParameterNotFound', 'NotFoundException']);
/** Network errors: the region's endpoint could not be reached (or named). */
const NETWORK_CODES = new Set(['ENOTFOUND', 'EAI_AGAIN', 'ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT']);

/** The profile the default credential chain uses, as messages name it. */
function profile(env: NodeJS.ProcessEnv): string {
  return env.AWS_PROFILE
    ? `profile ${JSON.stringify(env.AWS_PROFILE)} (AWS_PROFILE)`
    : 'the default profile (AWS_PROFILE unset)';
}

/**
 * An AWS SDK error as a KlwError that says what klw was doing, where, and what to check:
 * credentials and profile, permissions, the region and stage, or the network. Other errors
 * (klw's own among them) are returned as they are.
 */
export function awsError(err: unknown, call: AwsCall, env: NodeJS.ProcessEnv = process.env): unknown {
  if (!(err instanceof Error) || err instanceof KlwError) return err;
  const name = err.name;
  const code = (err as { code?: string }).code ?? '';
  const what = `${call.action} in ${call.region} failed: ${name}: ${err.message}`;
  let check: string | undefined;
  if (CREDENTIAL_ERRORS.has(name) || /credential/i.test(err.message)) {
    check =
      `check the AWS credentials: ${profile(env)}; ` +
      'run aws configure (or aws sso login --profile <p>), or set AWS_PROFILE';
  } else if (PERMISSION_ERRORS.has(name)) {
    check =
      `the credentials of ${profile(env)} work but may not do this: ` +
      "check that identity's IAM policy (aws sts get-caller-identity names it)";
  } else if (MISSING_ERRORS.has(name) || (name === 'ValidationError' && /does not exist/.test(err.message))) {
    check = `check --region (here ${call.region}) and --stage: is the service deployed there?`;
  } else if (NETWORK_CODES.has(code) || /getaddrinfo|ENOTFOUND|Region is missing|Invalid region/i.test(err.message)) {
    check =
      `check the region name (--region, AWS_REGION; here ${JSON.stringify(call.region)}) ` +
      'and that AWS is reachable from here';
  }
  return check ? new KlwError(`${what}; ${check}`, { cause: err }) : err;
}

/** A client of the AWS SDK, as far as its region goes. */
interface RegionalClient {
  config: { region: () => Promise<string> };
}

/** The region a client calls, as its configuration resolves it. */
export async function regionOf(client: RegionalClient): Promise<string> {
  try {
    return await client.config.region();
  } catch {
    return 'an unknown region';
  }
}

/**
 * Runs one AWS call of `client`; its failure is awsError's: what was being done (`action`),
 * in the client's region, and what to check.
 */
export async function callAws<T>(client: RegionalClient, action: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    throw awsError(err, { action, region: await regionOf(client) });
  }
}
