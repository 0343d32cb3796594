// Lambda runtimes (default, esbuild target, AWS's deprecation schedule) and the plugin's
// pure parts: parameters, generated definitions, overrides.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { bundleOptions } from '../../../infra/build.ts';
import {
  checkRuntime,
  DEFAULT_RUNTIME,
  esbuildTarget,
  projectRuntime,
  RUNTIME_SCHEDULE,
} from '../../../infra/runtimes.ts';
import { serverlessBin } from '../../../infra/deploy/serverless.ts';
import {
  addFloodSafetyAndAlarms,
  DEFAULT_API_CLIENT_ERRORS_THRESHOLD,
  throttleFor,
} from '../../../infra/deploy/alarms.ts';
import {
  deploymentOf,
  functionDefinition,
  mergeFunctions,
  type ServerlessFunction,
  pluginParams,
  routePath,
} from '../../../infra/deploy/serverless-plugin.ts';
import { HOOKS } from '../../../infra/bin/serverless-plugin.mjs';
import KubeLambdaWebhooksPlugin from '../../../infra/deploy/serverless-plugin.ts';
import { completeAdmissionRegistration, completeConversionRegistration } from '../../../lib/registration.ts';

const dir = mkdtempSync(join(tmpdir(), 'klw-runtime-'));
after(() => rmSync(dir, { recursive: true, force: true }));

describe('Lambda runtimes', () => {
  it('defaults to nodejs24.x and builds for the runtime the project picks', () => {
    assert.equal(DEFAULT_RUNTIME, 'nodejs24.x');
    assert.equal(projectRuntime(dir), 'nodejs24.x', 'no serverless.yml');
    writeFileSync(join(dir, 'serverless.yml'), 'service: x\nprovider:\n  name: aws\n  runtime: nodejs22.x\n');
    assert.equal(projectRuntime(dir), 'nodejs22.x');
    assert.equal(bundleOptions(dir, { name: 'f', entry: join(dir, 'f.ts') }).target, 'node22');
    writeFileSync(join(dir, 'serverless.yml'), 'service: x\nprovider:\n  runtime: ${param:runtime}\n');
    assert.equal(projectRuntime(dir), 'nodejs24.x', 'a variable is not a runtime');
    assert.equal(bundleOptions(dir, { name: 'f', entry: join(dir, 'f.ts') }).target, 'node24');
    writeFileSync(join(dir, 'serverless.yml'), ': not yaml : [');
    assert.equal(projectRuntime(dir), 'nodejs24.x');
    assert.equal(esbuildTarget('nodejs24.x'), 'node24');
    assert.throws(() => esbuildTarget('python3.13'), /not a Lambda Node.js runtime/);
  });

  it('knows the schedule AWS publishes for nodejs18.x to nodejs24.x', () => {
    assert.deepEqual(Object.keys(RUNTIME_SCHEDULE), ['nodejs18.x', 'nodejs20.x', 'nodejs22.x', 'nodejs24.x']);
    assert.deepEqual(RUNTIME_SCHEDULE['nodejs20.x'], {
      deprecated: '2026-04-30',
      blockCreate: '2026-08-31',
      blockUpdate: '2026-09-30',
    });
    assert.deepEqual(RUNTIME_SCHEDULE['nodejs24.x'], {
      deprecated: '2028-04-30',
      blockCreate: '2028-06-01',
      blockUpdate: '2028-07-01',
    });
    for (const s of Object.values(RUNTIME_SCHEDULE))
      assert.ok(s.deprecated <= s.blockCreate && s.blockCreate <= s.blockUpdate);
  });

  const at = (runtime: string, day: string) =>
    checkRuntime(runtime, 'r', new Date(`${day}T00:00:00Z`)).map((f) => `${f.level}: ${f.message}`);
  it('passes a supported runtime, warns once deprecated, errors once creation and then updates are blocked', () => {
    assert.deepEqual(at('nodejs20.x', '2026-04-29'), []);
    assert.match(at('nodejs20.x', '2026-04-30')[0]!, /^warning: nodejs20.x is deprecated since 2026-04-30/);
    assert.match(at('nodejs20.x', '2026-08-30')[0]!, /^warning: /);
    assert.match(
      at('nodejs20.x', '2026-08-31')[0]!,
      /^error: AWS Lambda blocks creating nodejs20.x functions since 2026-08-31 \(updates until 2026-09-30\)/,
    );
    assert.match(
      at('nodejs20.x', '2026-09-30')[0]!,
      /^error: AWS Lambda blocks creating and updating nodejs20.x functions since 2026-09-30/,
    );
    assert.deepEqual(at('nodejs24.x', '2026-11-22'), []);
    assert.deepEqual(at('nodejs22.x', '2026-11-22'), []);
    assert.match(
      at('nodejs16.x', '2026-11-22')[0]!,
      /^error: nodejs16.x is not a Lambda Node.js runtime this toolkit knows/,
    );
    assert.match(checkRuntime(42, 'r')[0]!.message, /runtime must be a Lambda Node.js runtime/);
  });
});

describe("the plugin's definitions", () => {
  const policy = completeAdmissionRegistration('validating', {
    name: 'pod-policy',
    rules: [],
    lambda: { environment: { A: '1' }, provisionedConcurrency: 30 },
  });
  const open = completeAdmissionRegistration('mutating', { name: 'open', rules: [], auth: 'none', timeoutSeconds: 2 });
  const conversion = completeConversionRegistration({ name: 'conv', crd: 'x.example.com' });
  const target = { service: 'svc', stage: 'prod' };

  it('reads params as ${param:} does: --param over params.<stage> over params.default', () => {
    const config = {
      params: {
        default: { reservedConcurrency: 10, throttleRate: 3, functionUrls: false },
        prod: { reservedConcurrency: 11 },
      },
    };
    const p = pluginParams(config, 'prod', ['throttleRate=4', 'functionUrls=true']);
    assert.equal(p.reservedConcurrency, 11);
    assert.equal(p.throttleRate, 4);
    assert.equal(p.functionUrls, true);
    assert.equal(p.alarms, true);
    assert.equal(pluginParams(config, 'dev').reservedConcurrency, 10);
    assert.throws(
      () => pluginParams({ params: { default: { reservedConcurrency: 'many' } } }, 'dev'),
      /param reservedConcurrency must be a whole number/,
    );
    assert.throws(() => pluginParams({}, 'dev', ['reservedConcurrency=0']), /would disable every function; use off/);
    assert.throws(
      () => pluginParams({}, 'dev', 'throttleRate=-1'),
      /param throttleRate must be a whole number of at least 0/,
    );
    assert.equal(pluginParams({}, 'dev', 'reservedConcurrency=off').reservedConcurrency, 'off');
  });

  it('generates a function from its registration', () => {
    const params = pluginParams({}, 'prod');
    const fn = functionDefinition(policy, target, params);
    assert.deepEqual(fn, {
      handler: 'index.handler',
      package: { artifact: 'dist/functions/pod-policy.zip' },
      architecture: 'arm64',
      timeout: 5,
      memorySize: 256,
      environment: { A: '1', KLW_PATH_SECRET_SSM: '/kube-lambda-webhooks/svc/prod/path-secret' },
      reservedConcurrency: 30,
      provisionedConcurrency: 30,
      events: [{ httpApi: { method: 'POST', path: '/pod-policy/{secret}' } }],
    });
    assert.equal(routePath(open), '/open', 'auth none: no secret in the route');
    assert.equal(functionDefinition(open, target, params).environment.KLW_PATH_SECRET_SSM, undefined);
    assert.equal(functionDefinition(open, target, params).reservedConcurrency, 20);
    assert.equal(routePath(conversion), '/conv/{secret}');
    assert.equal(
      'reservedConcurrency' in
        functionDefinition(policy, target, pluginParams({}, 'prod', ['reservedConcurrency=off'])),
      false,
      'off: nothing reserved',
    );
    assert.deepEqual(throttleFor(20, params), { rate: 100, burst: 200 });
  });

  it('bundles each function for the sources of its events and its fleet, everything when it cannot tell', () => {
    const params = pluginParams({}, 'prod');
    const fn = functionDefinition(policy, target, params);
    assert.deepEqual(deploymentOf(fn), { sources: ['http'], fleet: false });
    assert.deepEqual(deploymentOf({ ...fn, url: true }, { KLW_FLEET: '{}' }), {
      sources: ['http', 'url'],
      fleet: true,
    });
    const alb = { alb: { listenerArn: 'arn', priority: 1, conditions: { path: '/p' } } };
    assert.deepEqual(deploymentOf({ events: [alb, { http: { path: '/p', method: 'post' } }] }).sources, [
      'alb',
      'rest',
    ]);
    assert.deepEqual(deploymentOf({ events: [{ sqs: 'arn' }, alb] }).sources, ['url', 'http', 'alb', 'rest']);
    assert.deepEqual(deploymentOf({}).sources, ['url', 'http', 'alb', 'rest']);
    assert.equal(deploymentOf({ environment: { KLW_FLEET: '{"a":{}}' } }).fleet, true);
  });

  it('runs a function on the architecture its registration asks for, arm64 unless it says x86_64', () => {
    const params = pluginParams({}, 'prod');
    const x86 = completeAdmissionRegistration('validating', {
      name: 'x86',
      rules: [],
      lambda: { architecture: 'x86_64' },
    });
    assert.equal(functionDefinition(x86, target, params).architecture, 'x86_64');
    assert.equal(
      functionDefinition(
        completeConversionRegistration({ name: 'conv-x86', crd: 'x.example.com', lambda: { architecture: 'x86_64' } }),
        target,
        params,
      ).architecture,
      'x86_64',
    );
    assert.equal(
      functionDefinition(
        completeAdmissionRegistration('mutating', { name: 'arm', rules: [], lambda: { architecture: 'arm64' } }),
        target,
        params,
      ).architecture,
      'arm64',
    );
    assert.equal(functionDefinition(conversion, target, params).architecture, 'arm64');
    for (const architecture of ['amd64', 'x86-64', 'ARM64']) {
      const lambda = { architecture } as unknown as { architecture: 'arm64' };
      assert.throws(
        () => completeAdmissionRegistration('validating', { name: 'bad', rules: [], lambda }),
        new RegExp(`lambda.architecture must be one of arm64, x86_64, got "${architecture}"`),
      );
      assert.throws(
        () => completeConversionRegistration({ name: 'bad', crd: 'x.example.com', lambda }),
        /lambda.architecture must be one of arm64, x86_64/,
      );
    }
  });

  it('keeps what serverless.yml says of a function, key by key', () => {
    const merged = mergeFunctions(
      [policy, open],
      { 'pod-policy': { timeout: 2, environment: { B: '2' } }, mine: { handler: 'mine.handler' } },
      target,
      pluginParams({}, 'prod'),
    ) as Record<string, ServerlessFunction>;
    assert.equal(merged['pod-policy']?.timeout, 2);
    assert.deepEqual(merged['pod-policy']?.environment, {
      A: '1',
      KLW_PATH_SECRET_SSM: '/kube-lambda-webhooks/svc/prod/path-secret',
      B: '2',
      NODE_OPTIONS: '--enable-source-maps',
    });
    assert.equal(merged['pod-policy']?.memorySize, 256);
    assert.deepEqual(merged.mine, { handler: 'mine.handler' });
    assert.ok(merged.open);
  });

  it('turns source maps on for stack traces through the map the zip ships, keeping NODE_OPTIONS given', () => {
    const params = pluginParams({}, 'prod');
    const nodeOptions = (manual: Record<string, any> | undefined, provider?: Record<string, unknown>) =>
      (mergeFunctions([policy], manual, target, params, provider)['pod-policy'] as ServerlessFunction).environment
        ?.NODE_OPTIONS;
    assert.equal(nodeOptions(undefined), '--enable-source-maps');
    assert.equal(
      nodeOptions({ 'pod-policy': { environment: { NODE_OPTIONS: '--max-old-space-size=200' } } }),
      '--max-old-space-size=200 --enable-source-maps',
    );
    assert.equal(
      nodeOptions(undefined, { NODE_OPTIONS: '--no-warnings' }),
      '--no-warnings --enable-source-maps',
      "the provider's options are kept, not masked",
    );
    assert.equal(
      nodeOptions({ 'pod-policy': { environment: { NODE_OPTIONS: '--enable-source-maps --x' } } }),
      '--enable-source-maps --x',
    );
    assert.deepEqual(
      nodeOptions(undefined, { NODE_OPTIONS: { Ref: 'Options' } }),
      undefined,
      'a reference is left to CloudFormation',
    );
  });

  it('adds alarms without an HTTP API, and keeps what the stage already depended on', () => {
    const params = pluginParams({}, 'prod');
    const fn = {
      registration: policy,
      lambdaLogicalId: 'PodDashpolicyLambdaFunction',
      logicalIdPrefix: 'PodDashpolicy',
      reservedConcurrency: 20,
      routeKeys: ['POST /pod-policy/{secret}'],
    };
    const bare: Record<string, any> = {};
    addFloodSafetyAndAlarms(bare, [fn], params, 'NS');
    assert.deepEqual(Object.keys(bare.Resources).sort(), [
      'PodDashpolicyDurationAlarm',
      'PodDashpolicyErrorsAlarm',
      'PodDashpolicyThrottlesAlarm',
    ]);
    const withStage: Record<string, any> = {
      Resources: {
        HttpApiStage: { Type: 'AWS::ApiGatewayV2::Stage', Properties: {}, DependsOn: 'Other' },
        Route: { Type: 'AWS::ApiGatewayV2::Route', Properties: { RouteKey: 'POST /pod-policy/{secret}' } },
        Unrelated: { Type: 'AWS::ApiGatewayV2::Route', Properties: { RouteKey: 'GET /x' } },
      },
    };
    addFloodSafetyAndAlarms(withStage, [fn], { ...params, alarms: false }, 'NS');
    assert.deepEqual(withStage.Resources.HttpApiStage.DependsOn, ['Other', 'Route']);
    assert.deepEqual(withStage.Resources.HttpApiStage.Properties.RouteSettings, {
      'POST /pod-policy/{secret}': { ThrottlingRateLimit: 100, ThrottlingBurstLimit: 200 },
    });
    assert.equal(Object.keys(withStage.Resources).length, 3, 'alarms: false adds none');
  });

  it('the errors alarm also fires on a refusal for misconfigured authentication and on an adapter fault', () => {
    const params = pluginParams({}, 'prod');
    const fn = {
      registration: policy,
      lambdaLogicalId: 'PodDashpolicyLambdaFunction',
      logicalIdPrefix: 'PodDashpolicy',
      reservedConcurrency: 20,
      routeKeys: [],
    };
    const template: Record<string, any> = {};
    addFloodSafetyAndAlarms(template, [fn], params, 'NS');
    const metrics: Array<Record<string, any>> = template.Resources.PodDashpolicyErrorsAlarm.Properties.Metrics;
    const stats = metrics.filter((m) => m.MetricStat);
    assert.deepEqual(stats.map((m) => `${m.MetricStat.Metric.Namespace}/${m.MetricStat.Metric.MetricName}`).sort(), [
      'AWS/Lambda/Errors',
      'NS/AdapterFault',
      'NS/AuthMisconfigured',
      'NS/Errored',
      'NS/TimedOut',
    ]);
    for (const m of stats.filter((s) => s.MetricStat.Metric.Namespace === 'NS'))
      assert.deepEqual(
        m.MetricStat.Metric.Dimensions,
        [{ Name: 'webhook', Value: 'pod-policy' }],
        'the dimension set the metric lines carry',
      );
    const expression = metrics.find((m) => m.ReturnData)!.Expression as string;
    for (const m of stats) assert.match(expression, new RegExp(`FILL\\(${m.Id}, 0\\)`), `${m.Id} is summed`);
  });

  it("alarms on the HTTP API stage's 4xx (wrong secrets, throttling) and 5xx, per API and stage", () => {
    const fn = {
      registration: policy,
      lambdaLogicalId: 'PodDashpolicyLambdaFunction',
      logicalIdPrefix: 'PodDashpolicy',
      reservedConcurrency: 20,
      routeKeys: ['POST /pod-policy/{secret}'],
    };
    const withStage = (): Record<string, any> => ({
      Resources: {
        HttpApiStage: {
          Type: 'AWS::ApiGatewayV2::Stage',
          Properties: { ApiId: { Ref: 'HttpApi' }, StageName: '$default' },
        },
      },
    });
    const template = withStage();
    addFloodSafetyAndAlarms(
      template,
      [fn],
      pluginParams({ params: { default: { alarmTopicArn: 'arn:aws:sns:eu-west-1:1:t' } } }, 'prod'),
      'NS',
    );
    const dimensions = [
      { Name: 'ApiId', Value: { Ref: 'HttpApi' } },
      { Name: 'Stage', Value: '$default' },
    ];
    const client = template.Resources.HttpApiClientErrorsAlarm.Properties;
    assert.deepEqual(
      [client.Namespace, client.MetricName, client.Statistic, client.Period, client.Threshold],
      ['AWS/ApiGateway', '4xx', 'Sum', 60, DEFAULT_API_CLIENT_ERRORS_THRESHOLD],
    );
    assert.deepEqual(client.Dimensions, dimensions);
    assert.deepEqual(client.AlarmActions, ['arn:aws:sns:eu-west-1:1:t']);
    const server = template.Resources.HttpApiServerErrorsAlarm.Properties;
    assert.deepEqual(
      [server.Namespace, server.MetricName, server.Statistic, server.Period, server.Threshold],
      ['AWS/ApiGateway', '5xx', 'Sum', 60, 1],
    );
    assert.deepEqual(server.Dimensions, dimensions);

    const tuned = withStage();
    addFloodSafetyAndAlarms(tuned, [fn], pluginParams({}, 'prod', ['apiClientErrorsThreshold=500']), 'NS');
    assert.equal(tuned.Resources.HttpApiClientErrorsAlarm.Properties.Threshold, 500);
    const off = withStage();
    addFloodSafetyAndAlarms(off, [fn], pluginParams({}, 'prod', ['alarms=false']), 'NS');
    assert.deepEqual(Object.keys(off.Resources), ['HttpApiStage']);
    assert.throws(() => pluginParams({}, 'prod', ['apiClientErrorsThreshold=0']), /apiClientErrorsThreshold/);
  });

  it("the package's plugin entry hooks exactly the plugin's lifecycle events", () => {
    const plugin = new KubeLambdaWebhooksPlugin({} as never);
    assert.deepEqual(Object.keys(plugin.hooks).sort(), [...HOOKS].sort());
  });
});

describe('serverlessBin', () => {
  it("prefers osls's own bin, from the project or a folder above, then its serverless bin", () => {
    const project = join(dir, 'bins', 'project');
    mkdirSync(join(project, 'node_modules', '.bin'), { recursive: true });
    mkdirSync(join(dir, 'bins', 'node_modules', '.bin'), { recursive: true });
    writeFileSync(join(dir, 'bins', 'node_modules', '.bin', 'serverless'), '');
    assert.equal(serverlessBin(project), join(dir, 'bins', 'node_modules', '.bin', 'serverless'));
    writeFileSync(join(dir, 'bins', 'node_modules', '.bin', 'osls'), '');
    assert.equal(serverlessBin(project), join(dir, 'bins', 'node_modules', '.bin', 'osls'));
    writeFileSync(join(project, 'node_modules', '.bin', 'osls'), '');
    assert.equal(serverlessBin(project), join(project, 'node_modules', '.bin', 'osls'));
  });
});
