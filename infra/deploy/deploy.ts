import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { CloudFormationClient } from '@aws-sdk/client-cloudformation';
import type { LambdaClient } from '@aws-sdk/client-lambda';
import type { Registration } from '../../lib/internal.ts';
import { awsError } from '../aws-errors.ts';
import { zipPath } from '../build.ts';
import { KlwError } from '../errors.ts';
import type { Endpoints } from '../manifests.ts';
import { lambdaName } from './serverless.ts';

/** Where a deployment lives. */
export interface Target {
  service: string;
  stage: string;
  region: string;
}

/** The AWS clients deploy uses; tests pass mocked ones. */
export interface AwsClients {
  lambda: LambdaClient;
  cloudformation: CloudFormationClient;
}

// The SDK's modules are loaded where they are used, not with this module: the commands that
// import deploy/ only to read serverless.yml never load them.
const lambdaSdk = () => import('@aws-sdk/client-lambda');
const cloudformationSdk = () => import('@aws-sdk/client-cloudformation');

/** Clients for a region with the default credential chain. */
export async function awsClients(region: string): Promise<AwsClients> {
  const [{ LambdaClient }, { CloudFormationClient }] = await Promise.all([lambdaSdk(), cloudformationSdk()]);
  return { lambda: new LambdaClient({ region }), cloudformation: new CloudFormationClient({ region }) };
}

/** The CloudFormation stack the Serverless Framework deploys: `<service>-<stage>`. */
export function stackName(target: Target): string {
  return `${target.service}-${target.stage}`;
}

/** The HTTP API base URL from the stack outputs (Serverless writes it as `HttpApiUrl`). */
export async function httpApiUrl(clients: AwsClients, target: Target): Promise<string> {
  const { DescribeStacksCommand } = await cloudformationSdk();
  const out = await clients.cloudformation
    .send(new DescribeStacksCommand({ StackName: stackName(target) }))
    .catch((err: unknown) => {
      throw awsError(err, { action: `reading the outputs of stack ${stackName(target)}`, region: target.region });
    });
  const url = out.Stacks?.[0]?.Outputs?.find((o) => o.OutputKey === 'HttpApiUrl')?.OutputValue;
  if (!url)
    throw new KlwError(`stack ${stackName(target)} has no HttpApiUrl output; was it deployed with httpApi events?`);
  return url;
}

/** Each function's Lambda function URL (deployed with the functionUrls param). */
export async function functionUrls(
  clients: AwsClients,
  target: Target,
  registrations: Registration[],
): Promise<Record<string, string>> {
  const { GetFunctionUrlConfigCommand } = await lambdaSdk();
  const urls: Record<string, string> = {};
  for (const reg of registrations) {
    const FunctionName = lambdaName(target.service, target.stage, reg.name);
    const out = await clients.lambda.send(new GetFunctionUrlConfigCommand({ FunctionName })).catch((err: unknown) => {
      throw awsError(err, { action: `reading the function URL of ${FunctionName}`, region: target.region });
    });
    if (!out.FunctionUrl)
      throw new KlwError(`function ${reg.name} has no function URL; deploy with --param functionUrls=true`);
    urls[reg.name] = out.FunctionUrl;
  }
  return urls;
}

/** The endpoints of a deployed service, for manifests. */
export async function deployedEndpoints(
  clients: AwsClients,
  target: Target,
  registrations: Registration[],
  useFunctionUrls: boolean,
): Promise<Endpoints> {
  return useFunctionUrls
    ? { functionUrls: await functionUrls(clients, target, registrations) }
    : { baseUrl: await httpApiUrl(clients, target) };
}

/** What `--direct` did with one function. */
export interface DirectUpdate {
  name: string;
  updated: boolean;
}

/**
 * Updates the code of deployed functions whose zip changed (Lambda's CodeSha256 is the
 * base64 SHA-256 of the zip), without a CloudFormation deployment.
 */
export async function updateChangedCode(
  root: string,
  clients: AwsClients,
  target: Target,
  registrations: Registration[],
  onUpdate: (u: DirectUpdate) => void = () => {},
): Promise<DirectUpdate[]> {
  const { GetFunctionCommand, UpdateFunctionCodeCommand } = await lambdaSdk();
  const results: DirectUpdate[] = [];
  for (const reg of registrations) {
    const FunctionName = lambdaName(target.service, target.stage, reg.name);
    const zip = readFileSync(zipPath(root, reg.name));
    const local = createHash('sha256').update(zip).digest('base64');
    const call = { action: `updating the code of ${FunctionName}`, region: target.region };
    const fail = (err: unknown): never => {
      throw awsError(err, call);
    };
    const remote = await clients.lambda.send(new GetFunctionCommand({ FunctionName })).catch(fail);
    const updated = remote.Configuration?.CodeSha256 !== local;
    if (updated) await clients.lambda.send(new UpdateFunctionCodeCommand({ FunctionName, ZipFile: zip })).catch(fail);
    const result = { name: reg.name, updated };
    onUpdate(result);
    results.push(result);
  }
  return results;
}
