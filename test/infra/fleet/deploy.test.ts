// `klw deploy` with a fleet file: each cluster's secret parameter exists before the deployment
// (created when missing, kept when present), and each cluster gets its own manifests file.
import assert from 'node:assert/strict';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { CloudFormationClient, DescribeStacksCommand } from '@aws-sdk/client-cloudformation';
import { GetParameterCommand, ParameterNotFound, PutParameterCommand, SSMClient } from '@aws-sdk/client-ssm';
import { mockClient } from 'aws-sdk-client-mock';
import { parseAllDocuments } from 'yaml';
import { main } from '../../../infra/cli.ts';
import { parseFleet } from '../../../infra/fleet/file.ts';
import { clusterSecretsLines, ensureClusterPathSecrets } from '../../../infra/fleet/deploy.ts';
import { loadFunctions } from '../../../infra/functions.ts';
import { clusterPathSecretParameterName, pathSecretParameterName } from '../../../infra/secrets/index.ts';
import { FIXTURE_FUNCTIONS } from '../../helpers.ts';

const work = mkdtempSync(join(process.cwd(), '.klw-test-fleet-deploy-'));
cpSync(FIXTURE_FUNCTIONS, join(work, 'functions'), { recursive: true });
const registrations = (await loadFunctions(work)).map((f) => f.registration);
const API_URL = 'https://abc123.execute-api.eu-west-1.amazonaws.com';
const EAST = `${'e'.repeat(43)}`;
const param = (cluster: string) => clusterPathSecretParameterName('svc', 'prod', cluster);
const target = { service: 'svc', stage: 'prod', region: 'eu-west-1' };

before(() => {
  writeFileSync(
    join(work, 'serverless.yml'),
    'service: svc\nplugins:\n  - kube-lambda-webhooks/serverless\nprovider:\n  name: aws\n  runtime: nodejs24.x\n  region: eu-west-1\n',
  );
  writeFileSync(join(work, 'clusters.yaml'), 'clusters:\n  - name: east\n  - name: west\n');
});
after(() => rmSync(work, { recursive: true, force: true }));

/** A mocked SSM holding `store`: GetParameter reads it, PutParameter (Overwrite false) adds to it. */
function fakeSsm(store: Map<string, string>, fail?: (name: string) => Error | undefined) {
  const ssm = mockClient(SSMClient);
  ssm.on(GetParameterCommand).callsFake((input: { Name: string }) => {
    const failure = fail?.(input.Name);
    if (failure) throw failure;
    const value = store.get(input.Name);
    if (value === undefined) throw new ParameterNotFound({ message: 'not found', $metadata: {} });
    return { Parameter: { Name: input.Name, Value: value } };
  });
  ssm.on(PutParameterCommand).callsFake((input: { Name: string; Value: string; Overwrite: boolean }) => {
    assert.equal(input.Overwrite, false);
    assert.ok(!store.has(input.Name));
    store.set(input.Name, input.Value);
    return {};
  });
  return ssm;
}

describe('klw deploy with a fleet file', () => {
  it("creates the missing cluster secrets before deploying, then writes each cluster's manifests", async () => {
    const store = new Map([[param('east'), EAST]]);
    const ssm = fakeSsm(store);
    const cfn = mockClient(CloudFormationClient);
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
    const writes: string[] = [];
    const original = process.stderr.write.bind(process.stderr);
    const secretsAtDeploy: string[][] = [];
    let code: number;
    try {
      process.stderr.write = ((c: string) => (writes.push(String(c)), true)) as typeof process.stderr.write;
      code = await main(['node', 'klw', '--root', work, 'deploy', '--stage', 'prod', '--out-dir', 'dist/fleet'], {
        runServerless: async () => {
          secretsAtDeploy.push([...store.keys()]);
          return { code: 0, stdout: 'Service deployed\n', stderr: '' };
        },
      });
    } finally {
      process.stderr.write = original;
      ssm.restore();
      cfn.restore();
    }
    const output = writes.join('');
    assert.equal(code, 0, output);
    assert.deepEqual(secretsAtDeploy, [[param('east'), param('west')]], 'both exist before serverless deploy');
    assert.ok(!store.has(pathSecretParameterName('svc', 'prod')), "no service secret: a fleet's functions refuse it");
    assert.equal(store.get(param('east')), EAST, "east's secret is kept");
    assert.match(output, /created the path secret of cluster west \(stage prod, eu-west-1\)/);
    assert.match(output, /kept the path secret of cluster east/);
    for (const cluster of ['east', 'west']) {
      const file = join(work, 'dist', 'fleet', `${cluster}.yaml`);
      assert.equal(statSync(file).mode & 0o777, 0o600);
      const docs = parseAllDocuments(readFileSync(file, 'utf8')).map((d) => d.toJS());
      const urls = docs.flatMap((d) => (d.webhooks ?? []).map((w: any) => w.clientConfig.url as string));
      assert.ok(urls.length > 0);
      const secret = store.get(param(cluster))!;
      for (const url of urls) assert.ok(url.startsWith(`${API_URL}/`) && url.endsWith(`/${secret}`), url);
      assert.ok(!output.includes(secret), 'no secret is printed');
    }
    assert.equal(existsSync(join(work, 'dist', 'manifests.yaml')), false, 'no manifests with the service secret');
    assert.match(output, /kubectl --context <context> apply -f dist\/fleet\/<cluster>\.yaml/);
  });

  it('stops before deploying when a cluster secret cannot be read', async () => {
    const ssm = fakeSsm(new Map(), (name) =>
      name === param('west')
        ? Object.assign(new Error('not allowed: ssm:GetParameter'), { name: 'AccessDeniedException' })
        : undefined,
    );
    let deployed = false;
    const writes: string[] = [];
    const original = process.stderr.write.bind(process.stderr);
    let code: number;
    try {
      process.stderr.write = ((c: string) => (writes.push(String(c)), true)) as typeof process.stderr.write;
      code = await main(['node', 'klw', '--root', work, 'deploy', '--stage', 'prod'], {
        runServerless: async () => {
          deployed = true;
          return { code: 0, stdout: '', stderr: '' };
        },
      });
    } finally {
      process.stderr.write = original;
      ssm.restore();
    }
    assert.notEqual(code, 0);
    assert.equal(deployed, false);
    assert.match(writes.join(''), /not allowed: ssm:GetParameter/);
  });

  it('creates nothing when no function checks a path secret', async () => {
    const fleet = parseFleet('clusters:\n  - name: east\n', 'clusters.yaml', registrations);
    const open = registrations.map((r) => ({ ...r, auth: 'none' as const }));
    const store = new Map<string, string>();
    const ssm = fakeSsm(store);
    try {
      const report = await ensureClusterPathSecrets(target, fleet, open as typeof registrations, new SSMClient({}));
      assert.deepEqual(report, { created: [], existing: [] });
      assert.deepEqual(clusterSecretsLines(report, target), []);
      assert.equal(ssm.commandCalls(GetParameterCommand).length, 0);
    } finally {
      ssm.restore();
    }
  });
});
