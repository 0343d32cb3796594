// klw deploy, klw build and the Serverless plugin deploy a policy's function only where some
// cluster serves the policy from Lambda, and say so; the manifests of each cluster then name only
// deployed functions. AWS is mocked, serverless deploy is a stub, as in deploy.test.ts.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { CloudFormationClient, DescribeStacksCommand } from '@aws-sdk/client-cloudformation';
import { GetParameterCommand, ParameterNotFound, PutParameterCommand, SSMClient } from '@aws-sdk/client-ssm';
import { mockClient } from 'aws-sdk-client-mock';
import { parseAllDocuments } from 'yaml';
import { zipPath } from '../../../infra/build.ts';
import { main } from '../../../infra/cli.ts';
import KubeLambdaWebhooksPlugin from '../../../infra/deploy/serverless-plugin.ts';
import { loadFleet } from '../../../infra/fleet/file.ts';
import { loadFunctions } from '../../../infra/functions.ts';
import { selectDeployed } from '../../../infra/policies/deploy.ts';
import { withCapturedOutput } from '../../helpers.ts';
import { VALIDATING, writeFunction, writePolicyProject } from './project.ts';

const work = mkdtempSync(join(process.cwd(), '.klw-test-policies-deploy-'));
after(() => rmSync(work, { recursive: true, force: true }));
writePolicyProject(work);
writeFileSync(
  join(work, 'serverless.yml'),
  'service: svc\nplugins:\n  - kube-lambda-webhooks/serverless\nprovider:\n  name: aws\n  runtime: nodejs24.x\n  region: eu-west-1\n',
);
const fleetFile = (...versions: string[]) =>
  writeFileSync(
    join(work, 'clusters.yaml'),
    `clusters:\n${versions.map((v) => `  - name: k${v.replace('.', '-')}\n    kubeVersion: "${v}"\n`).join('')}`,
  );
const functions = await loadFunctions(work);
const API_URL = 'https://abc123.execute-api.eu-west-1.amazonaws.com';

/** Runs `klw <args>` with SSM and CloudFormation mocked and serverless a stub; what it printed. */
async function klw(...args: string[]): Promise<{ code: number; output: string; serverlessRuns: number }> {
  const ssm = mockClient(SSMClient);
  const cfn = mockClient(CloudFormationClient);
  let serverlessRuns = 0;
  try {
    // Parameters exist once put, as in SSM.
    const stored = new Map<string, string>();
    ssm.on(GetParameterCommand).callsFake((input: { Name: string }) => {
      const value = stored.get(input.Name);
      if (value === undefined) throw new ParameterNotFound({ message: 'not found', $metadata: {} });
      return { Parameter: { Name: input.Name, Value: value } };
    });
    ssm.on(PutParameterCommand).callsFake((input: { Name: string; Value: string }) => {
      stored.set(input.Name, input.Value);
      return {};
    });
    cfn.on(DescribeStacksCommand).resolves({
      Stacks: [
        {
          StackName: 'svc-prod',
          CreationTime: new Date(),
          StackStatus: 'UPDATE_COMPLETE',
          Outputs: [{ OutputKey: 'HttpApiUrl', OutputValue: API_URL }],
        },
      ],
    });
    const runServerless = async () => {
      serverlessRuns++;
      return { code: 0, stdout: 'Service deployed\n', stderr: '' };
    };
    const { result, stderr } = await withCapturedOutput(() =>
      main(['node', 'klw', '--root', work, ...args], { runServerless }),
    );
    return { code: result, output: stderr, serverlessRuns };
  } finally {
    ssm.restore();
    cfn.restore();
  }
}

describe('selectDeployed', () => {
  it('a policy every cluster runs natively is left out; one some cluster serves from Lambda is kept', () => {
    fleetFile('1.31', '1.36');
    const registrations = functions.map((f) => f.registration);
    const selection = selectDeployed(work, functions, loadFleet(work, registrations));
    assert.deepEqual(
      selection.deployed.map((f) => f.name),
      ['add-team'],
    );
    assert.deepEqual(selection.skipped, ['replica-limit']);
    assert.deepEqual(selection.lines, [
      'policy add-team: deployed, served from Lambda for k1-31',
      'policy replica-limit: not deployed, every cluster evaluates it natively',
    ]);
    fleetFile('1.36');
    assert.deepEqual(selectDeployed(work, functions, loadFleet(work, registrations)).deployed, []);
    // Without a fleet nor a version, every cluster takes the webhook: both are deployed.
    assert.equal(selectDeployed(work, functions, undefined).deployed.length, 2);
  });
});

describe('klw deploy with policies', () => {
  it('builds and registers only the functions some cluster calls, and says which', async () => {
    fleetFile('1.31', '1.36');
    rmSync(join(work, 'dist'), { recursive: true, force: true });
    const run = await klw('deploy', '--stage', 'prod');
    assert.equal(run.code, 0, run.output);
    assert.equal(run.serverlessRuns, 1);
    assert.match(run.output, /policy replica-limit: not deployed, every cluster evaluates it natively/);
    assert.match(run.output, /policy add-team: deployed, served from Lambda for k1-31/);
    assert.match(run.output, /building 1 functions/);
    assert.ok(existsSync(zipPath(work, 'add-team')));
    assert.ok(!existsSync(zipPath(work, 'replica-limit')), 'no zip for a function nobody calls');
    const kinds = (cluster: string) =>
      parseAllDocuments(readFileSync(join(work, 'dist', 'clusters', `${cluster}.yaml`), 'utf8')).map(
        (d) => d.toJS().kind,
      );
    assert.deepEqual(kinds('k1-31'), [
      'MutatingWebhookConfiguration',
      'ValidatingAdmissionPolicy',
      'ValidatingAdmissionPolicyBinding',
    ]);
    assert.deepEqual(kinds('k1-36'), [
      'MutatingAdmissionPolicy',
      'MutatingAdmissionPolicyBinding',
      'ValidatingAdmissionPolicy',
      'ValidatingAdmissionPolicyBinding',
    ]);
  });

  it("serve: 'native' where a cluster cannot: refused before anything is deployed", async () => {
    fleetFile('1.20');
    writeFunction(work, 'replica-limit', VALIDATING('native'));
    try {
      const run = await klw('deploy', '--stage', 'prod');
      assert.equal(run.code, 1);
      assert.equal(run.serverlessRuns, 0);
      assert.match(run.output, /functions\/replica-limit\/index.ts: serve is 'native', but cluster k1-20/);
    } finally {
      writeFunction(work, 'replica-limit', VALIDATING());
    }
  });

  it('klw build leaves out a policy no cluster calls, and builds it when named', async () => {
    fleetFile('1.36');
    rmSync(join(work, 'dist'), { recursive: true, force: true });
    let run = await klw('build');
    assert.equal(run.code, 0, run.output);
    assert.match(run.output, /building 0 functions/);
    assert.match(run.output, /policy add-team: not deployed/);
    run = await klw('build', 'add-team');
    assert.equal(run.code, 0, run.output);
    assert.ok(existsSync(zipPath(work, 'add-team')));
  });
});

describe('the Serverless plugin with policies', () => {
  it('declares only the functions some cluster serves from Lambda, with a notice for each policy', async () => {
    fleetFile('1.31', '1.36');
    const notices: string[] = [];
    const input: Record<string, any> = { service: 'svc', provider: { name: 'aws' } };
    const serverless = {
      serviceDir: work,
      configurationInput: input,
      service: { service: 'svc', functions: {}, provider: { compiledCloudFormationTemplate: {} } },
      getProvider: () => ({ getStage: () => 'prod', naming: {} }),
      classes: { Error },
    };
    const plugin = new KubeLambdaWebhooksPlugin(serverless as never, {}, { log: { notice: (m) => notices.push(m) } });
    await plugin.asyncInit();
    assert.deepEqual(Object.keys(input.functions), ['add-team']);
    assert.deepEqual(notices, [
      'kube-lambda-webhooks: policy add-team: deployed, served from Lambda for k1-31',
      'kube-lambda-webhooks: policy replica-limit: not deployed, every cluster evaluates it natively',
    ]);
  });
});
