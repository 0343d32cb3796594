import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { CloudFormationClient, DescribeStacksCommand } from '@aws-sdk/client-cloudformation';
import {
  GetFunctionCommand,
  GetFunctionUrlConfigCommand,
  LambdaClient,
  UpdateFunctionCodeCommand,
} from '@aws-sdk/client-lambda';
import { GetParameterCommand, ParameterNotFound, PutParameterCommand, SSMClient } from '@aws-sdk/client-ssm';
import { mockClient } from 'aws-sdk-client-mock';
import { parse, parseAllDocuments } from 'yaml';
import { main } from '../../../infra/cli.ts';
import { credentialName, writeAuthConfig } from '../../../infra/auth-config.ts';
import { buildAll, zipPath } from '../../../infra/build.ts';
import { awsClients, deployedEndpoints, updateChangedCode } from '../../../infra/deploy/deploy.ts';
import { loadFunctions } from '../../../infra/functions.ts';
import { generateManifests } from '../../../infra/manifests.ts';
import { pathSecretParameterName, usesPathSecret } from '../../../infra/secrets/secrets.ts';
import { startLambda, type RunningLambda } from '../../../infra/local/lambda-api.ts';
import { sampleObject, smoke } from '../../../infra/deploy/smoke.ts';
import { FIXTURE_FUNCTIONS, ManualTimer, withCapturedOutput } from '../../helpers.ts';

/** The functions' timeouts never run out: a cold start on a loaded machine takes as long as it takes. */
const never = new ManualTimer().timer;

const root = process.cwd();
const work = mkdtempSync(join(root, '.klw-test-'));
cpSync(FIXTURE_FUNCTIONS, join(work, 'functions'), { recursive: true });
const functions = await loadFunctions(work);
const registrations = functions.map((f) => f.registration);
const target = { service: 'kube-lambda-webhooks', stage: 'prod', region: 'eu-west-1' };
let lambdaApi: RunningLambda;

before(async () => {
  await buildAll(work, functions);
});
after(async () => {
  await lambdaApi?.close();
  rmSync(work, { recursive: true, force: true });
});

describe('klw deploy', () => {
  it('finds the HTTP API URL in the stack outputs and writes manifests for it', async () => {
    const cfn = mockClient(CloudFormationClient);
    try {
      cfn.on(DescribeStacksCommand, { StackName: 'kube-lambda-webhooks-prod' }).resolves({
        Stacks: [
          {
            StackName: 'kube-lambda-webhooks-prod',
            CreationTime: new Date(),
            StackStatus: 'UPDATE_COMPLETE',
            Outputs: [{ OutputKey: 'HttpApiUrl', OutputValue: 'https://abc123.execute-api.eu-west-1.amazonaws.com' }],
          },
        ],
      });
      const endpoints = await deployedEndpoints(await awsClients(target.region), target, registrations, false);
      assert.deepEqual(endpoints, { baseUrl: 'https://abc123.execute-api.eu-west-1.amazonaws.com' });
      const { documents } = generateManifests(work, registrations, endpoints);
      const validating = documents.find((d) => d.kind === 'ValidatingWebhookConfiguration') as any;
      assert.equal(
        validating.webhooks[0].clientConfig.url,
        'https://abc123.execute-api.eu-west-1.amazonaws.com/pod-policy',
      );
    } finally {
      cfn.restore();
    }
  });

  it('finds each function URL with GetFunctionUrlConfig', async () => {
    const lambda = mockClient(LambdaClient);
    try {
      for (const reg of registrations) {
        lambda.on(GetFunctionUrlConfigCommand, { FunctionName: `kube-lambda-webhooks-prod-${reg.name}` }).resolves({
          FunctionUrl: `https://${reg.name}.lambda-url.eu-west-1.on.aws/`,
          FunctionArn: 'arn',
          AuthType: 'NONE',
          CreationTime: '',
          LastModifiedTime: '',
        });
      }
      const endpoints = await deployedEndpoints(await awsClients(target.region), target, registrations, true);
      assert.equal(endpoints.functionUrls?.['pod-policy'], 'https://pod-policy.lambda-url.eu-west-1.on.aws/');
    } finally {
      lambda.restore();
    }
  });

  it('--direct updates the code of changed zips only', async () => {
    const lambda = mockClient(LambdaClient);
    try {
      const sha = (name: string) =>
        createHash('sha256')
          .update(readFileSync(zipPath(work, name)))
          .digest('base64');
      // The generic answer first: aws-sdk-client-mock lets later, more specific ones win.
      lambda.on(GetFunctionCommand).resolves({ Configuration: { CodeSha256: 'old-code' } });
      lambda
        .on(GetFunctionCommand, { FunctionName: 'kube-lambda-webhooks-prod-pod-policy' })
        .resolves({ Configuration: { CodeSha256: sha('pod-policy') } });
      lambda.on(UpdateFunctionCodeCommand).resolves({});
      const results = await updateChangedCode(work, await awsClients(target.region), target, registrations);
      assert.deepEqual(
        results.map((r) => [r.name, r.updated]),
        [
          ['crontab-conversion', true],
          ['pod-defaults', true],
          ['pod-policy', false],
        ],
      );
      const updates = lambda.commandCalls(UpdateFunctionCodeCommand).map((c) => c.args[0].input.FunctionName);
      assert.deepEqual(updates, [
        'kube-lambda-webhooks-prod-crontab-conversion',
        'kube-lambda-webhooks-prod-pod-defaults',
      ]);
    } finally {
      lambda.restore();
    }
  });
});

describe('klw deploy, the command', () => {
  const API_URL = 'https://abc123.execute-api.eu-west-1.amazonaws.com';
  const parameter = pathSecretParameterName('kube-lambda-webhooks', 'prod');
  type Runner = (root: string, args: string[]) => Promise<{ code: number; stdout: string; stderr: string }>;

  before(() => {
    // The region comes from serverless.yml, as `serverless deploy` alone would take it.
    writeFileSync(
      join(work, 'serverless.yml'),
      "service: kube-lambda-webhooks\nplugins:\n  - kube-lambda-webhooks/serverless\nprovider:\n  name: aws\n  runtime: nodejs24.x\n  region: ${opt:region, 'eu-west-1'}\n",
    );
  });

  /** Runs `klw deploy --stage prod --out <out>` against mocked SSM and CloudFormation, with the runner `runnerFor` makes as the Serverless Framework. */
  async function deploy(out: string, runnerFor: (secretsPut: () => number) => Runner) {
    const ssm = mockClient(SSMClient);
    const cfn = mockClient(CloudFormationClient);
    try {
      ssm.on(GetParameterCommand).rejects(new ParameterNotFound({ message: 'not found', $metadata: {} }));
      ssm.on(PutParameterCommand).resolves({});
      cfn.on(DescribeStacksCommand, { StackName: 'kube-lambda-webhooks-prod' }).resolves({
        Stacks: [
          {
            StackName: 'kube-lambda-webhooks-prod',
            CreationTime: new Date(),
            StackStatus: 'UPDATE_COMPLETE',
            Outputs: [{ OutputKey: 'HttpApiUrl', OutputValue: API_URL }],
          },
        ],
      });
      const runner = runnerFor(() => ssm.commandCalls(PutParameterCommand).length);
      const { result: code, stderr } = await withCapturedOutput(() =>
        main(['node', 'klw', '--root', work, 'deploy', '--stage', 'prod', '--out', out], { runServerless: runner }),
      );
      const puts = ssm.commandCalls(PutParameterCommand).map((c) => c.args[0].input);
      return {
        code,
        puts,
        stacksRead: cfn.commandCalls(DescribeStacksCommand).length,
        ssmRegion: await ssm.commandCalls(GetParameterCommand)[0]?.thisValue.config.region(),
        output: stderr,
      };
    } finally {
      ssm.restore();
      cfn.restore();
    }
  }

  it('creates the secret before serverless deploy runs, then writes 0600 manifests whose URLs end in it', async () => {
    const out = join('dist', 'deployed.yaml');
    const file = join(work, out);
    const runs: Array<{ args: string[]; secretsPut: number; manifestsWritten: boolean }> = [];
    const result = await deploy(out, (secretsPut) => async (root, args) => {
      runs.push({ args, secretsPut: secretsPut(), manifestsWritten: existsSync(file) });
      assert.equal(root, work);
      return { code: 0, stdout: 'Service deployed\n', stderr: '' };
    });
    assert.equal(result.code, 0, result.output);
    assert.equal(runs.length, 1);
    assert.deepEqual(runs[0]!.args, ['deploy', '--stage', 'prod', '--region', 'eu-west-1']);
    assert.equal(runs[0]!.secretsPut, 1, 'the secret exists before the functions that read it are deployed');
    assert.equal(runs[0]!.manifestsWritten, false, 'manifests come after the deployment');
    assert.equal(result.ssmRegion, 'eu-west-1');
    assert.equal(result.puts.length, 1);
    const put = result.puts[0]!;
    assert.deepEqual([put.Name, put.Type, put.Overwrite], [parameter, 'SecureString', false]);
    const secret = put.Value!;

    const documents = parseAllDocuments(readFileSync(file, 'utf8')).map((d) => d.toJS());
    const urls = new Map<string, string>();
    for (const doc of documents) {
      for (const hook of doc.webhooks ?? []) urls.set(hook.name, hook.clientConfig.url);
      if (doc.kind === 'CustomResourceDefinition')
        urls.set(doc.metadata.name, doc.spec.conversion.webhook.clientConfig.url);
    }
    assert.equal(urls.size, registrations.length);
    for (const reg of registrations) {
      const url = [...urls.values()].find((u) => u.startsWith(`${API_URL}/${reg.name}`));
      assert.equal(url, usesPathSecret(reg) ? `${API_URL}/${reg.name}/${secret}` : `${API_URL}/${reg.name}`, reg.name);
    }
    assert.equal(statSync(file).mode & 0o777, 0o600, 'the manifests hold the secret: owner only');
    assert.ok(!result.output.includes(secret), 'the secret is never printed');
    assert.match(result.output, /Service deployed/);
  });

  it('exits non-zero and writes no manifests when serverless deploy fails', async () => {
    const out = join('dist', 'failed.yaml');
    const result = await deploy(out, () => async () => ({ code: 2, stdout: '', stderr: 'CloudFormation said no\n' }));
    assert.equal(result.code, 1);
    assert.match(result.output, /CloudFormation said no/);
    assert.match(result.output, /klw: serverless deploy failed \(exit 2\)/);
    assert.equal(existsSync(join(work, out)), false);
    assert.equal(result.stacksRead, 0, 'no stack outputs are read after a failed deployment');
  });
});

describe('klw smoke', () => {
  // One emulator for both smoke tests, serving the shipped functions and a liar beside them.
  let withLiar: Awaited<ReturnType<typeof loadFunctions>>;
  let client: LambdaClient;
  before(async () => {
    mkdirSync(join(work, 'functions', 'liar'), { recursive: true });
    writeFileSync(
      join(work, 'functions', 'liar', 'index.ts'),
      `import { allow, defineValidatingWebhook } from 'kube-lambda-webhooks';
const webhook = defineValidatingWebhook({ name: 'liar', rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'] }], validate: () => allow() });
// Answers with another uid, which the API server rejects.
export const handler = async (event: any, ctx: any) => { const r = await webhook.handler(event, ctx); return { ...r, body: r.body.replace(/"uid":"[^"]+"/, '"uid":"wrong"') }; };
export default webhook;
`,
    );
    withLiar = await loadFunctions(work);
    await buildAll(
      work,
      withLiar.filter((f) => f.name === 'liar'),
    );
    lambdaApi = await startLambda({ root: work, port: 0, build: false, log: () => {}, invocationTimer: never });
    client = new LambdaClient({
      endpoint: lambdaApi.endpoint,
      region: 'us-east-1',
      credentials: { accessKeyId: 'l', secretAccessKey: 'l' },
    });
  });
  after(() => rmSync(join(work, 'functions', 'liar'), { recursive: true, force: true }));

  it('passes every shipped function through the local Invoke API', async () => {
    const results = await smoke(client, registrations, (n) => n, undefined, lambdaApi.pathSecret);
    assert.deepEqual(
      results.map((r) => [r.name, r.ok]),
      registrations.map((r) => [r.name, true]),
      JSON.stringify(results),
    );
  });

  it('reports a function whose answer the API server would not accept', async () => {
    const results = await smoke(
      client,
      withLiar.map((f) => f.registration),
      (n) => n,
      undefined,
      lambdaApi.pathSecret,
    );
    const liar = results.find((r) => r.name === 'liar')!;
    assert.equal(liar.ok, false);
    assert.match(liar.detail, /uid must echo the request uid/);
    const missing = await smoke(
      client,
      [{ ...registrations[0]!, name: 'not-deployed' }],
      (n) => n,
      undefined,
      lambdaApi.pathSecret,
    );
    assert.equal(missing[0]!.ok, false);
  });

  it('guesses a sample object from the rules', () => {
    assert.deepEqual(sampleObject(registrations.find((r) => r.name === 'pod-policy')!), {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'klw-smoke', namespace: 'default' },
    });
  });
});

describe('klw auth-config', () => {
  it('names the credentials by host and port, as the API server looks them up', () => {
    assert.equal(credentialName('https://127.0.0.1:3443/pod-policy'), '127.0.0.1:3443');
    assert.equal(credentialName('https://hooks.example.com/x'), 'hooks.example.com');
    assert.equal(credentialName('https://[::1]:3443'), '[::1]:3443');
  });

  it('writes an AdmissionConfiguration for both webhook plugins and a kubeconfig with the token', () => {
    const files = writeAuthConfig(join(work, 'auth'), 'https://127.0.0.1:3443', 'sekret\n');
    const admission = parse(readFileSync(files.admissionConfig, 'utf8'));
    assert.equal(admission.apiVersion, 'apiserver.config.k8s.io/v1');
    assert.equal(admission.kind, 'AdmissionConfiguration');
    assert.deepEqual(
      admission.plugins.map((p: any) => [p.name, p.configuration.kind, p.configuration.kubeConfigFile]),
      [
        ['ValidatingAdmissionWebhook', 'WebhookAdmissionConfiguration', files.kubeconfig],
        ['MutatingAdmissionWebhook', 'WebhookAdmissionConfiguration', files.kubeconfig],
      ],
    );
    const kubeconfig = parse(readFileSync(files.kubeconfig, 'utf8'));
    assert.deepEqual(kubeconfig.users, [{ name: '127.0.0.1:3443', user: { token: 'sekret' } }]);
    assert.throws(() => writeAuthConfig(join(work, 'auth2'), 'https://h', '  '), /token is empty/);
  });
});
