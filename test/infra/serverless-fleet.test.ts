// serverless.yml with the plugin and a fleet file: each function names its clusters and reads each
// cluster's own secret parameter, and may read no other.
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { stringify } from 'yaml';
import { loadFunctions } from '../../infra/functions.ts';
import { parseFleet } from '../../infra/fleet/file.ts';
import { clusterPathSecretParameterName, pathSecretParameterName } from '../../infra/secrets/secrets.ts';
import { functionDefinition, pluginParams, secretsStatement } from '../../infra/deploy/serverless-plugin.ts';
import { readServerless, runServerless } from '../../infra/deploy/serverless.ts';
import { clusterParameterName, fleetFromEnv } from '../../lib/fleet.ts';
import { FIXTURE_FUNCTIONS, FIXTURE_PROJECT } from '../helpers.ts';

type Json = Record<string, any>;
const root = process.cwd();
const registrations = (await loadFunctions(FIXTURE_PROJECT)).map((f) => f.registration);
const FLEET =
  'clusters:\n  - name: east\n  - name: west\n    kubeVersion: "1.29"\n    enforcement: { pod-policy: Warn }\n';
const fleet = parseFleet(FLEET, 'clusters.yaml', registrations);
const target = { service: 'klw-fixture', stage: 'test' };
const arn = (name: string) => ({
  'Fn::Sub': `arn:\${AWS::Partition}:ssm:\${AWS::Region}:\${AWS::AccountId}:parameter${name}`,
});
/** The ARN of each cluster's parameter, in the fleet's order. */
const clusterArns = ['east', 'west'].map((c) => arn(clusterPathSecretParameterName('klw-fixture', 'test', c)));

describe('the plugin with a fleet file', () => {
  const params = pluginParams({}, 'test', undefined);
  const policy = registrations.find((r) => r.name === 'pod-policy')!;

  it("gives a function KLW_FLEET and the template of its clusters' parameters, not the service secret", () => {
    const env = functionDefinition(policy, target, params, fleet).environment as Record<string, string>;
    assert.equal(env.KLW_PATH_SECRET_SSM, undefined);
    const runtime = fleetFromEnv(env)!;
    assert.deepEqual(Object.fromEntries(runtime), { east: {}, west: { enforcement: 'Warn', kubeVersion: '1.29' } });
    const west = clusterPathSecretParameterName('klw-fixture', 'test', 'west');
    assert.equal(clusterParameterName(env.KLW_FLEET_PATH_SECRET_SSM!, 'west'), west);
    const plain = functionDefinition(policy, target, params).environment as Record<string, string>;
    assert.equal(plain.KLW_FLEET, undefined, 'no fleet file: as before');
    assert.equal(plain.KLW_PATH_SECRET_SSM, pathSecretParameterName('klw-fixture', 'test'));
  });

  it('lets the functions read each cluster parameter by name, and nothing else', () => {
    const statement = secretsStatement(registrations, target, params, fleet)!;
    assert.deepEqual(statement.Resource, clusterArns);
  });
});

describe('serverless package (osls, offline) with the plugin and a fleet file', () => {
  const work = mkdtempSync(join(root, '.klw-test-fleet-'));
  const out = mkdtempSync(join(root, '.klw-test-fleet-out-'));
  const env = { ...process.env, AWS_ACCESS_KEY_ID: '', AWS_SECRET_ACCESS_KEY: '' };

  before(() => {
    cpSync(FIXTURE_FUNCTIONS, join(work, 'functions'), { recursive: true });
    writeFileSync(join(work, 'clusters.yaml'), FLEET);
  });
  after(() => {
    rmSync(work, { recursive: true, force: true });
    rmSync(out, { recursive: true, force: true });
  });

  it('packages every function with its fleet settings and IAM read access to the cluster parameters', async () => {
    writeFileSync(join(work, 'serverless.yml'), stringify({ ...readServerless(root), service: 'klw-fixture' }));
    const dir = join(out, 'fleet');
    const result = await runServerless(work, ['package', '--stage', 'test', '--package', dir], env);
    assert.equal(result.code, 0, result.stdout + result.stderr);
    const template = JSON.parse(readFileSync(join(dir, 'cloudformation-template-update-stack.json'), 'utf8')) as Json;
    const lambdas = Object.values(template.Resources as Json).filter((r: Json) => r.Type === 'AWS::Lambda::Function');
    assert.equal(lambdas.length, registrations.length);
    for (const reg of registrations) {
      const fn = lambdas.find((l: Json) => l.Properties.FunctionName === `klw-fixture-test-${reg.name}`)!;
      const vars = fn.Properties.Environment.Variables as Record<string, string>;
      assert.equal(vars.KLW_FLEET_PATH_SECRET_SSM, clusterPathSecretParameterName('klw-fixture', 'test', '{cluster}'));
      assert.equal(vars.KLW_PATH_SECRET_SSM, undefined);
      const settings = JSON.parse(vars.KLW_FLEET!) as Json;
      assert.deepEqual(Object.keys(settings), ['east', 'west']);
      assert.equal(settings.west.enforcement, reg.name === 'pod-policy' ? 'Warn' : undefined);
    }
    const statements = template.Resources.IamRoleLambdaExecution.Properties.Policies[0].PolicyDocument.Statement;
    const ssm = statements.find((s: Json) => JSON.stringify(s.Action).includes('ssm:GetParameter'));
    assert.deepEqual(ssm.Resource, clusterArns);
  });
});
