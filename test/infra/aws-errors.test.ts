import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CloudFormationClient, DescribeStacksCommand } from '@aws-sdk/client-cloudformation';
import { CloudWatchLogsClient, FilterLogEventsCommand } from '@aws-sdk/client-cloudwatch-logs';
import { GetFunctionUrlConfigCommand, InvokeCommand, LambdaClient } from '@aws-sdk/client-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { awsError } from '../../infra/aws-errors.ts';
import { awsClients, deployedEndpoints } from '../../infra/deploy/deploy.ts';
import { KlwError } from '../../infra/errors.ts';
import { printLogs } from '../../infra/logs.ts';
import { smoke } from '../../infra/deploy/smoke.ts';
import { defineValidatingWebhook, allow } from '../../lib/index.ts';

/** An error as the AWS SDK throws it: a name, a message, sometimes a code. */
function sdkError(name: string, message: string, code?: string): Error {
  const err = new Error(message);
  err.name = name;
  if (code) (err as Error & { code: string }).code = code;
  return err;
}

const call = { action: 'reading the outputs of stack svc-dev', region: 'eu-west-1' };

describe('AWS errors', () => {
  it('say what klw did, where, and what to check', () => {
    const cases: Array<[Error, RegExp]> = [
      [
        sdkError('CredentialsProviderError', 'Could not load credentials from any providers'),
        /check the AWS credentials: profile "ops" \(AWS_PROFILE\); run aws configure/,
      ],
      [
        sdkError('ExpiredTokenException', 'The security token included in the request is expired'),
        /check the AWS credentials/,
      ],
      [
        sdkError('AccessDeniedException', 'User: arn:aws:iam::1:user/x is not authorized'),
        /credentials of profile "ops" \(AWS_PROFILE\) work but may not do this: check that identity's IAM policy/,
      ],
      [
        sdkError('ValidationError', 'Stack with id svc-dev does not exist'),
        /check --region \(here eu-west-1\) and --stage: is the service deployed there\?/,
      ],
      [sdkError('ResourceNotFoundException', 'Function not found'), /check --region \(here eu-west-1\) and --stage/],
      [
        sdkError('Error', 'getaddrinfo ENOTFOUND cloudformation.eu-wst-1.amazonaws.com', 'ENOTFOUND'),
        /check the region name \(--region, AWS_REGION; here "eu-west-1"\)/,
      ],
    ];
    for (const [err, check] of cases) {
      const out = awsError(err, call, { AWS_PROFILE: 'ops' });
      assert.ok(out instanceof KlwError, err.name);
      assert.match(out.message, new RegExp(`^reading the outputs of stack svc-dev in eu-west-1 failed: ${err.name}: `));
      assert.match(out.message, check);
      assert.equal(out.cause, err);
    }
    assert.match((awsError(cases[0]![0], call, {}) as Error).message, /the default profile \(AWS_PROFILE unset\)/);
  });

  it('leave other errors alone', () => {
    const bug = new TypeError('x is undefined');
    assert.equal(awsError(bug, call), bug);
    const own = new KlwError('stack has no HttpApiUrl output');
    assert.equal(awsError(own, call), own);
    assert.equal(awsError('a string', call), 'a string');
  });

  it('reach the deploy, smoke and logs commands', async () => {
    const cfn = mockClient(CloudFormationClient);
    const lambda = mockClient(LambdaClient);
    const logs = mockClient(CloudWatchLogsClient);
    try {
      const target = { service: 'svc', stage: 'dev', region: 'eu-west-1' };
      cfn
        .on(DescribeStacksCommand)
        .rejects(sdkError('CredentialsProviderError', 'Could not load credentials from any providers'));
      await assert.rejects(
        deployedEndpoints(await awsClients('eu-west-1'), target, [], false),
        /^KlwError: reading the outputs of stack svc-dev in eu-west-1 failed: CredentialsProviderError: .*check the AWS credentials/,
      );
      const reg = defineValidatingWebhook({
        name: 'p',
        rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'] }],
        validate: () => allow(),
      }).registration;
      lambda
        .on(GetFunctionUrlConfigCommand)
        .rejects(sdkError('AccessDeniedException', 'not authorized to perform: lambda:GetFunctionUrlConfig'));
      await assert.rejects(
        deployedEndpoints(await awsClients('eu-west-1'), target, [reg], true),
        /reading the function URL of svc-dev-p in eu-west-1 failed: AccessDeniedException: .*check that identity's IAM policy/,
      );
      lambda.on(InvokeCommand).rejects(sdkError('ResourceNotFoundException', 'Function not found: svc-dev-p'));
      const [result] = await smoke(new LambdaClient({ region: 'eu-west-1' }), [reg], (n) => `svc-dev-${n}`);
      assert.equal(result!.ok, false);
      assert.match(
        result!.detail,
        /^invoking svc-dev-p in eu-west-1 failed: ResourceNotFoundException: .*check --region \(here eu-west-1\) and --stage/,
      );
      logs
        .on(FilterLogEventsCommand)
        .rejects(sdkError('UnrecognizedClientException', 'The security token included in the request is invalid'));
      await assert.rejects(
        printLogs(
          new CloudWatchLogsClient({ region: 'us-east-2' }),
          { service: 'svc', stage: 'dev', function: 'p', startTime: 0 },
          () => {},
        ),
        /reading log group \/aws\/lambda\/svc-dev-p in us-east-2 failed: UnrecognizedClientException: .*check the AWS credentials/,
      );
    } finally {
      cfn.restore();
      lambda.restore();
      logs.restore();
    }
  });
});
