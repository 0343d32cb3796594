// serverless.yml with the plugin and a fleet file: each function names its clusters and reads each
// cluster's own secret parameter, and may read no other.
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { stringify } from 'yaml';
import { loadFunctions } from '../../../infra/functions.ts';
import { parseFleet } from '../../../infra/fleet/file.ts';
import { clusterPathSecretParameterName, pathSecretParameterName } from '../../../infra/secrets/secrets.ts';
import { functionDefinition, pluginParams, secretsStatement } from '../../../infra/deploy/serverless-plugin.ts';
import { addFloodSafetyAndAlarms, DURATION_ALARM_SHARE, type DeployedFunction } from '../../../infra/deploy/alarms.ts';
import { alarmedClusters, clusterLogicalId, parseClusterAlarms } from '../../../infra/fleet/alarms.ts';
import { readServerless } from '../../../infra/deploy/serverless.ts';
import { clusterParameterName, fleetFromEnv } from '../../../lib/handler/fleet.ts';
import { FIXTURE_FUNCTIONS, FIXTURE_PROJECT } from '../../helpers.ts';
import { serverlessPackage } from './serverless-package.ts';

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
    const result = await serverlessPackage(work, ['--stage', 'test', '--param', 'clusterAlarms=west'], dir, env);
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
    // clusterAlarms=west: two alarms per function on west's metrics, none on east's.
    const alarms = Object.entries(template.Resources as Json).filter(([, r]) => r.Type === 'AWS::CloudWatch::Alarm');
    const west = alarms.filter(([, r]) => JSON.stringify(r.Properties).includes('"cluster"'));
    assert.equal(west.length, registrations.length * 2);
    for (const [id, r] of west) {
      assert.match(id, /ClusterwestDurationAlarm$|ClusterwestErrorsAlarm$/);
      assert.match(r.Properties.AlarmDescription, / in cluster west: /);
    }
  });
});

describe('per-cluster alarms', () => {
  const fn: DeployedFunction = {
    registration: registrations.find((r) => r.name === 'pod-policy')!,
    lambdaLogicalId: 'PodDashpolicyLambdaFunction',
    logicalIdPrefix: 'PodDashpolicy',
    reservedConcurrency: 20,
    routeKeys: ['POST /pod-policy/{secret}'],
  };
  const topic = 'arn:aws:sns:eu-west-1:123456789012:oncall';

  it("alarm on each named cluster's errors and p99 duration, with the webhook and cluster dimensions", () => {
    const params = pluginParams({ params: { test: { clusterAlarms: 'west', alarmTopicArn: topic } } }, 'test');
    assert.deepEqual(params.clusterAlarms, ['west']);
    const clusters = alarmedClusters(fleet, params.clusterAlarms, 1);
    assert.deepEqual(clusters, ['west']);
    const template: Json = { Resources: {} };
    addFloodSafetyAndAlarms(template, [fn], params, 'KubeLambdaWebhooks', clusters);
    const errors = template.Resources.PodDashpolicyClusterwestErrorsAlarm.Properties;
    assert.deepEqual(errors.AlarmActions, [topic]);
    const dims = [
      { Name: 'webhook', Value: 'pod-policy' },
      { Name: 'cluster', Value: 'west' },
    ];
    assert.deepEqual(
      errors.Metrics.filter((m: Json) => m.MetricStat).map((m: Json) => [
        m.MetricStat.Metric.MetricName,
        m.MetricStat.Metric.Dimensions,
      ]),
      [
        ['Errored', dims],
        ['TimedOut', dims],
      ],
    );
    const duration = template.Resources.PodDashpolicyClusterwestDurationAlarm.Properties;
    assert.deepEqual([duration.MetricName, duration.Dimensions, duration.ExtendedStatistic], ['Duration', dims, 'p99']);
    assert.equal(duration.Threshold, Math.round(fn.registration.timeoutSeconds * 1000 * DURATION_ALARM_SHARE));
    assert.equal(Object.keys(template.Resources).filter((k) => k.includes('Clustereast')).length, 0);
    const all = { Resources: {} as Json };
    addFloodSafetyAndAlarms(
      all,
      [fn],
      pluginParams({}, 'test', ['clusterAlarms=all']),
      'N',
      alarmedClusters(fleet, 'all', 1),
    );
    assert.equal(Object.keys(all.Resources).filter((k) => k.includes('Cluster')).length, 4);
  });

  it('none without the param, or with alarms off', () => {
    assert.equal(pluginParams({}, 'test').clusterAlarms, undefined);
    assert.deepEqual(alarmedClusters(fleet, undefined, 3), []);
    const off = { Resources: {} as Json };
    addFloodSafetyAndAlarms(off, [fn], pluginParams({}, 'test', ['alarms=false', 'clusterAlarms=all']), 'N', ['east']);
    assert.deepEqual(off.Resources, {});
  });

  it('refuses unknown clusters, a missing fleet file and more alarms than a template holds', () => {
    assert.deepEqual(parseClusterAlarms(' west , east,west '), ['west', 'east']);
    assert.throws(
      () => alarmedClusters(fleet, ['west', 'north'], 1),
      /param clusterAlarms: no cluster named "north" in clusters\.yaml; the clusters are east, west/,
    );
    assert.throws(() => alarmedClusters(undefined, 'all', 1), /needs the fleet file clusters\.yaml/);
    const big = parseFleet(
      `clusters:\n${Array.from({ length: 100 }, (_, i) => `  - name: c${i}\n`).join('')}`,
      'clusters.yaml',
      registrations,
    );
    assert.equal(alarmedClusters(big, 'all', 1).length, 100);
    assert.throws(() => alarmedClusters(big, 'all', 2), /100 clusters x 2 functions would add 400 alarms; at most 200/);
  });

  it('keeps distinct cluster names distinct in logical ids', () => {
    assert.notEqual(clusterLogicalId('a-b'), clusterLogicalId('ab'));
    assert.match(clusterLogicalId('prod-eu-1'), /^[A-Za-z0-9]+$/);
  });
});
