// serverless.yml with the kube-lambda-webhooks plugin: lint of the file and its overrides, and
// offline `serverless package` (osls) of a copy of the fixture project into CloudFormation, whose
// resource types docs/deploying.md's AWS permissions list.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { parse, stringify } from 'yaml';
import { loadFunctions } from '../../../infra/functions.ts';
import { scaffold } from '../../../infra/scaffold.ts';
import { pathSecretParameterName } from '../../../infra/secrets/secrets.ts';
import { checkServerless, editDistance, nearestName, readServerless } from '../../../infra/deploy/serverless.ts';
import { FIXTURE_FUNCTIONS, FIXTURE_PROJECT, runKlw } from '../../helpers.ts';
import { EVERY_PARAM, PATH_SECRET, packagingProject, serverlessPackage } from './serverless-package.ts';

const root = process.cwd();
const registrations = (await loadFunctions(FIXTURE_PROJECT)).map((f) => f.registration);
/** A day on which nodejs24.x is supported and nodejs20.x blocked. */
const NOW = new Date('2026-11-22T12:00:00Z');

type Json = Record<string, any>;

/** The resource types of docs/deploying.md's AWS permissions table (its first column). */
function documentedTypes(): Set<string> {
  const text = readFileSync(join(root, 'docs', 'deploying.md'), 'utf8');
  const section = text.slice(text.indexOf('## AWS permissions'));
  const table = section.split('\n').filter((l) => l.startsWith('| `AWS::'));
  return new Set(table.flatMap((row) => [...row.split('|')[1]!.matchAll(/`(AWS::[A-Za-z0-9:]+)`/g)].map((m) => m[1]!)));
}

describe('checkServerless', () => {
  const messages = (config: Json, now = NOW) =>
    checkServerless(config, registrations, now).map((f) => `${f.level} ${f.rule} ${f.subject}: ${f.message}`);

  it('refuses a serverless.yml that is empty or not a mapping, naming the file', () => {
    const dir = mkdtempSync(join(root, '.klw-test-empty-yml-'));
    try {
      for (const text of ['', '# nothing\n', '- a list\n', 'just text\n']) {
        writeFileSync(join(dir, 'serverless.yml'), text);
        assert.throws(
          () => readServerless(dir),
          /serverless\.yml is not a mapping: write service:/,
          JSON.stringify(text),
        );
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("passes this repository's serverless.yml and the one klw init writes", () => {
    assert.deepEqual(messages(readServerless(root)), []);
    const init = parse(readFileSync(join(root, 'infra', 'templates', 'project', 'serverless.yml.tmpl'), 'utf8'));
    assert.deepEqual(messages(init), []);
    assert.equal(init.provider.runtime, 'nodejs24.x');
    assert.deepEqual(init.plugins, ['kube-lambda-webhooks/serverless']);
    assert.equal(init.functions, undefined, 'the init project lists no function: the plugin adds them');
  });

  const broken: Array<[string, (c: Json) => void, RegExp]> = [
    [
      'no plugin',
      (c) => delete c.plugins,
      /error serverless-plugin serverless.yml: plugins must list kube-lambda-webhooks\/serverless, or crontab-conversion, pod-defaults, pod-policy are not deployed/,
    ],
    [
      'frameworkVersion 3',
      (c) => {
        c.frameworkVersion = '3';
      },
      /error serverless-framework serverless.yml: frameworkVersion "3" is refused by osls 4/,
    ],
    [
      'a runtime whose creation is blocked',
      (c) => {
        c.provider.runtime = 'nodejs20.x';
      },
      /error lambda-runtime serverless.yml provider.runtime: AWS Lambda blocks creating and updating nodejs20.x functions since 2026-09-30/,
    ],
    [
      'an unknown runtime',
      (c) => {
        c.provider.runtime = 'python3.13';
      },
      /error lambda-runtime .*python3.13 is not a Lambda Node.js runtime/,
    ],
    [
      'a function override with a blocked runtime',
      (c) => {
        c.functions = { 'pod-policy': { runtime: 'nodejs18.x' } };
      },
      /error lambda-runtime pod-policy runtime: AWS Lambda blocks creating and updating nodejs18.x/,
    ],
    [
      "a Lambda timeout longer than the webhook's",
      (c) => {
        c.functions = { 'pod-policy': { timeout: 30 } };
      },
      /error serverless-override pod-policy: timeout 30 is longer than the webhook's timeoutSeconds 5/,
    ],
    [
      'a route the manifests do not point at',
      (c) => {
        c.functions = { 'pod-defaults': { events: [{ httpApi: { method: 'POST', path: '/pod-defaults' } }] } };
      },
      /error serverless-override pod-defaults: events must keep the route POST \/pod-defaults\/\{secret\}/,
    ],
    [
      "an environment value unlike the registration's",
      (c) => {
        c.functions = { 'pod-defaults': { environment: { DEFAULT_CPU_LIMIT: '1' } } };
      },
      /warning serverless-override pod-defaults: environment DEFAULT_CPU_LIMIT overrides/,
    ],
    [
      'reserved concurrency 0',
      (c) => {
        c.functions = { 'pod-policy': { reservedConcurrency: 0 } };
      },
      /error serverless-override pod-policy: reservedConcurrency 0 disables the function/,
    ],
    [
      'a misspelt override',
      (c) => {
        c.functions = { 'pod-plicy': { timeout: 3 } };
      },
      /^error serverless-function functions.pod-plicy: pod-plicy is not a function in functions\/ \(did you mean pod-policy\?\) and has no handler or image of its own: serverless package fails with: Either "handler" or "image" property needs to be set$/,
    ],
    [
      'an override of no function at all',
      (c) => {
        c.functions = { checker: { timeout: 3 } };
      },
      /^error serverless-function functions.checker: checker is not a function in functions\/ \(those are crontab-conversion, pod-defaults, pod-policy\) and has no handler/,
    ],
    [
      'an empty function entry',
      (c) => {
        c.functions = { 'pod-default': null };
      },
      /^error serverless-function functions.pod-default: .*did you mean pod-defaults\?/,
    ],
    [
      'reserved below provisioned concurrency',
      (c) => {
        c.functions = { 'pod-policy': { reservedConcurrency: 2, provisionedConcurrency: 4 } };
      },
      /reservedConcurrency 2 is below provisionedConcurrency 4/,
    ],
  ];
  for (const [name, change, pattern] of broken) {
    it(`reports ${name}`, () => {
      const config = readServerless(root);
      change(config);
      const found = messages(config);
      assert.ok(
        found.some((m) => pattern.test(m)),
        found.join('\n') || 'no findings',
      );
    });
  }

  it('warns on a deprecated runtime and errors once creating functions with it is blocked', () => {
    const config = {
      ...readServerless(root),
      provider: { ...(readServerless(root).provider as object), runtime: 'nodejs22.x' },
    };
    assert.deepEqual(messages(config, new Date('2027-04-29T23:00:00Z')), []);
    assert.match(
      messages(config, new Date('2027-05-15T00:00:00Z')).join('\n'),
      /^warning lambda-runtime .*nodejs22.x is deprecated since 2027-04-30/,
    );
    assert.match(
      messages(config, new Date('2027-06-01T00:00:00Z')).join('\n'),
      /^error lambda-runtime .*blocks creating nodejs22.x functions since 2027-06-01/,
    );
  });

  it('accepts overrides that keep the rules', () => {
    const config = readServerless(root);
    config.functions = {
      'pod-policy': {
        timeout: 3,
        memorySize: 1024,
        reservedConcurrency: 50,
        provisionedConcurrency: 2,
        events: [{ httpApi: { method: 'POST', path: '/pod-policy/{secret}' } }],
      },
      other: { handler: 'x.handler' },
      'pod-polcy': { image: 'repo/img:1' },
    };
    assert.deepEqual(messages(config), []);
  });

  it('names a near miss only when it is a slip of the keyboard', () => {
    assert.equal(nearestName('by-hnad', ['by-hand', 'by-head']), 'by-hand');
    assert.equal(editDistance('by-hnad', 'by-hand'), 1, 'two letters swapped is one edit');
    assert.equal(nearestName('pod-polcy', ['pod-defaults', 'pod-policy']), 'pod-policy');
    assert.equal(nearestName('podpolicy-x', ['pod-policy']), undefined, 'three edits away');
    assert.equal(nearestName('api', ['app-b']), undefined, 'most of a short name');
    assert.equal(nearestName('anything', []), undefined);
  });
});

describe('serverless package (osls, offline) with the plugin', () => {
  // With a secret as klw keeps it locally: the template must never hold its value.
  const { work, env } = packagingProject('.klw-test-', FIXTURE_FUNCTIONS);
  const SECRET = PATH_SECRET;
  const out = mkdtempSync(join(root, '.klw-test-out-'));
  const yml = (extra: Json = {}) => stringify({ ...readServerless(root), ...extra });

  after(() => {
    rmSync(work, { recursive: true, force: true });
    rmSync(out, { recursive: true, force: true });
  });

  async function packageWith(
    name: string,
    config: string,
    args: string[] = [],
    fresh = false,
  ): Promise<{ template: Json; text: string; output: string }> {
    writeFileSync(join(work, 'serverless.yml'), config);
    const dir = join(out, name);
    const result = await serverlessPackage(work, ['--stage', 'test', ...args], dir, env, { fresh });
    const output = result.stdout + result.stderr;
    assert.equal(result.code, 0, output);
    const text = readFileSync(join(dir, 'cloudformation-template-update-stack.json'), 'utf8');
    return { template: JSON.parse(text), text, output };
  }
  const ofType = (template: Json, type: string): Array<[string, Json]> =>
    Object.entries(template.Resources).filter(([, r]) => (r as Json).Type === type) as Array<[string, Json]>;
  const lambdaOf = (template: Json, name: string): Json =>
    ofType(template, 'AWS::Lambda::Function').find(
      ([, r]) => r.Properties.FunctionName === `klw-fixture-test-${name}`,
    )![1].Properties;

  type Packaged = { template: Json; text: string; output: string };
  let plain: Promise<Packaged> | undefined;
  let everyParam: Promise<Packaged> | undefined;
  /**
   * The plain configuration: the one successful osls run that is real on every run (fresh), the
   * cheapest that exercises the whole plugin. The others may be kept runs. Made once, for the
   * tests of the template and of the documented permissions.
   */
  const packagePlain = () => (plain ??= packageWith('default', yml({ service: 'klw-fixture' }), [], true));
  /** Every param that adds resources or settings, made once for the tests of the params and the permissions. */
  const packageEveryParam = () => (everyParam ??= packageWith('params', yml({ service: 'klw-fixture' }), EVERY_PARAM));

  let overridden: Promise<Packaged> | undefined;
  /**
   * One package for two tests (an osls run costs about 3 s of CPU): pod-policy overridden in
   * serverless.yml, a function added to functions/ with no YAML edit, throttling and alarms set by
   * params, all on a runtime AWS Lambda blocks creating functions with.
   */
  const packageOverridden = () =>
    (overridden ??= (async () => {
      scaffold(work, 'validating', 'added-later');
      const added = join(work, 'functions', 'added-later', 'index.ts');
      writeFileSync(
        added,
        readFileSync(added, 'utf8').replace(
          "name: 'added-later',",
          "name: 'added-later',\n  lambda: { architecture: 'x86_64' },",
        ),
      );
      try {
        return await packageWith(
          'override',
          yml({
            service: 'klw-fixture',
            provider: { ...(readServerless(root).provider as object), runtime: 'nodejs20.x' },
            params: { default: { throttleRate: 7, alarms: false } },
            functions: {
              'pod-policy': { timeout: 3, memorySize: 512, reservedConcurrency: 9, environment: { EXTRA: 'yes' } },
            },
          }),
        );
      } finally {
        rmSync(join(work, 'functions', 'added-later'), { recursive: true, force: true });
      }
    })());

  it('generates every function of functions/ with runtime, arm64, routes with {secret}, concurrency, throttling and alarms, and no secret value', async () => {
    const { template, text, output } = await packagePlain();
    assert.doesNotMatch(
      output,
      /Invalid configuration|warning/i,
      'osls packages nodejs24.x without configuration warnings',
    );
    const lambdas = ofType(template, 'AWS::Lambda::Function').map(([, r]) => r.Properties);
    assert.deepEqual(
      lambdas.map((l) => l.FunctionName).sort(),
      registrations.map((r) => `klw-fixture-test-${r.name}`).sort(),
    );
    const parameter = pathSecretParameterName('klw-fixture', 'test');
    for (const reg of registrations) {
      const fn = lambdaOf(template, reg.name);
      assert.equal(fn.Runtime, 'nodejs24.x');
      assert.deepEqual(fn.Architectures, ['arm64']);
      assert.equal(fn.Handler, 'index.handler');
      assert.equal(fn.Timeout, reg.timeoutSeconds);
      assert.equal(fn.MemorySize, reg.lambda.memorySize ?? 256);
      assert.equal(fn.ReservedConcurrentExecutions, 20);
      assert.equal(fn.Environment.Variables.KLW_PATH_SECRET_SSM, parameter);
      // The zip ships a source map: stack traces in the logs name the sources.
      assert.equal(fn.Environment.Variables.NODE_OPTIONS, '--enable-source-maps');
      for (const [k, v] of Object.entries(reg.lambda.environment ?? {})) assert.equal(fn.Environment.Variables[k], v);
    }
    const routes = ofType(template, 'AWS::ApiGatewayV2::Route')
      .map(([, r]) => r.Properties.RouteKey)
      .sort();
    assert.deepEqual(routes, registrations.map((r) => `POST /${r.name}/{secret}`).sort());
    const stage = template.Resources.HttpApiStage;
    for (const route of routes)
      assert.deepEqual(stage.Properties.RouteSettings[route], { ThrottlingRateLimit: 100, ThrottlingBurstLimit: 200 });
    assert.equal(stage.Properties.DefaultRouteSettings.ThrottlingRateLimit, 100);
    assert.deepEqual(
      [...stage.DependsOn].sort(),
      ofType(template, 'AWS::ApiGatewayV2::Route')
        .map(([id]) => id)
        .sort(),
      'the stage waits for the routes its settings name',
    );
    const alarms = ofType(template, 'AWS::CloudWatch::Alarm').map(([, r]) => r.Properties);
    assert.equal(alarms.length, registrations.length * 3 + 2, 'three per function, two for the HTTP API');
    const api = alarms.filter((a) => a.Namespace === 'AWS/ApiGateway');
    assert.deepEqual(api.map((a) => a.MetricName).sort(), ['4xx', '5xx']);
    for (const a of api)
      assert.deepEqual(a.Dimensions, [
        { Name: 'ApiId', Value: { Ref: 'HttpApi' } },
        { Name: 'Stage', Value: '$default' },
      ]);
    assert.ok(template.Resources.HttpApi, 'the alarms name the HTTP API of the template');
    const policy = alarms.filter((a) => a.AlarmDescription.startsWith('pod-policy:'));
    const errors = policy.find((a) => a.Metrics)!;
    assert.deepEqual(
      errors.Metrics.filter((m: Json) => m.MetricStat)
        .map((m: Json) => `${m.MetricStat.Metric.Namespace}/${m.MetricStat.Metric.MetricName}`)
        .sort(),
      [
        'AWS/Lambda/Errors',
        'KubeLambdaWebhooks/AdapterFault',
        'KubeLambdaWebhooks/AuthMisconfigured',
        'KubeLambdaWebhooks/Errored',
        'KubeLambdaWebhooks/TimedOut',
      ],
    );
    const duration = policy.find((a) => a.MetricName === 'Duration')!;
    assert.equal(duration.ExtendedStatistic, 'p99');
    assert.equal(duration.Threshold, 4000, '80% of the 5 s webhook timeout');
    assert.ok(policy.some((a) => a.MetricName === 'Throttles'));
    const statements = template.Resources.IamRoleLambdaExecution.Properties.Policies[0].PolicyDocument.Statement;
    const ssm = statements.find((s: Json) => JSON.stringify(s.Action).includes('ssm:GetParameter'));
    assert.deepEqual(ssm.Resource, [
      { 'Fn::Sub': `arn:\${AWS::Partition}:ssm:\${AWS::Region}:\${AWS::AccountId}:parameter${parameter}` },
    ]);
    assert.ok(template.Outputs.HttpApiUrl, 'the HTTP API URL is a stack output (klw deploy reads it)');
    assert.equal(ofType(template, 'AWS::Lambda::Url').length, 0);
    assert.ok(!text.includes(SECRET), 'the secret value is nowhere in the template');
    const zip = readFileSync(join(work, 'dist', 'functions', 'pod-policy', 'index.mjs'), 'utf8');
    assert.ok(zip.length > 0, 'the plugin built the bundles before packaging');
  });

  it('takes params: function URLs, provisioned and reserved concurrency, throttling, alarm topic, bearer token', async () => {
    // functionUrls=true, provisionedConcurrency=2, reservedConcurrency=5, alarmTopicArn=...:oncall, bearerTokenParameter=/team/token
    const { template } = await packageEveryParam();
    assert.equal(ofType(template, 'AWS::Lambda::Url').length, registrations.length);
    const aliases = ofType(template, 'AWS::Lambda::Alias').map(([, r]) => r.Properties);
    assert.equal(aliases.length, registrations.length);
    assert.ok(aliases.every((a) => a.ProvisionedConcurrencyConfig?.ProvisionedConcurrentExecutions === 2));
    assert.equal(lambdaOf(template, 'pod-policy').ReservedConcurrentExecutions, 5);
    assert.equal(lambdaOf(template, 'pod-policy').Environment.Variables.KLW_BEARER_TOKEN_SSM, '/team/token');
    assert.equal(
      lambdaOf(template, 'crontab-conversion').Environment.Variables.KLW_BEARER_TOKEN_SSM,
      undefined,
      'the API server sends no token to conversion webhooks',
    );
    assert.deepEqual(template.Resources.HttpApiStage.Properties.RouteSettings['POST /pod-policy/{secret}'], {
      ThrottlingRateLimit: 25,
      ThrottlingBurstLimit: 50,
    });
    assert.ok(
      ofType(template, 'AWS::CloudWatch::Alarm').every(
        ([, a]) => a.Properties.AlarmActions[0] === 'arn:aws:sns:us-east-1:123456789012:oncall',
      ),
    );
    const ssm = template.Resources.IamRoleLambdaExecution.Properties.Policies[0].PolicyDocument.Statement.find(
      (s: Json) => JSON.stringify(s.Action).includes('ssm:GetParameter'),
    );
    assert.equal(ssm.Resource.length, 2);
  });

  it('lets a function written in serverless.yml override the generated one, and adds a new function with no YAML edit', async () => {
    const { template } = await packageOverridden();
    const fn = lambdaOf(template, 'pod-policy');
    assert.equal(fn.Timeout, 3);
    assert.equal(fn.MemorySize, 512);
    assert.equal(fn.ReservedConcurrentExecutions, 9);
    assert.equal(fn.Environment.Variables.EXTRA, 'yes');
    assert.ok(fn.Environment.Variables.KLW_PATH_SECRET_SSM, 'the generated environment stays under the override');
    assert.ok(lambdaOf(template, 'added-later'), 'a function added to functions/ is deployed');
    assert.deepEqual(
      lambdaOf(template, 'added-later').Architectures,
      ['x86_64'],
      'the architecture its registration asks for',
    );
    assert.deepEqual(fn.Architectures, ['arm64']);
    assert.deepEqual(template.Resources.HttpApiStage.Properties.RouteSettings['POST /pod-policy/{secret}'], {
      ThrottlingRateLimit: 7,
      ThrottlingBurstLimit: 14,
    });
    assert.equal(ofType(template, 'AWS::CloudWatch::Alarm').length, 0, 'alarms: false leaves them out');
  });

  it('klw lint reports a misspelt function override that serverless package refuses', async () => {
    const config = yml({ service: 'klw-fixture', functions: { 'pod-plicy': { timeout: 3 } } });
    writeFileSync(join(work, 'serverless.yml'), config);
    const lint = await runKlw('--root', work, 'lint');
    assert.equal(lint.code, 1, lint.stderr);
    assert.match(
      lint.stderr,
      /error serverless-function functions.pod-plicy: pod-plicy is not a function in functions\/ \(did you mean pod-policy\?\)/,
    );
    const refused = /Either "handler" or "image" property needs to be set/;
    // A refusal in these words is kept as a successful run is: osls said it, it was not killed.
    const packaged = await serverlessPackage(work, ['--stage', 'test'], join(out, 'misspelt'), env, {
      failure: refused,
    });
    assert.notEqual(packaged.code, 0);
    assert.match(packaged.stdout + packaged.stderr, refused);
  });

  it('says so when packaging for a runtime AWS Lambda blocks', async () => {
    const { template, output } = await packageOverridden();
    assert.match(
      output,
      /kube-lambda-webhooks: AWS Lambda blocks creating and updating nodejs20.x functions since 2026-09-30/,
    );
    assert.equal(lambdaOf(template, 'pod-policy').Runtime, 'nodejs20.x');
  });

  it('fails with a message naming the plugin when a function cannot be loaded', async () => {
    mkdirSync(join(work, 'functions', 'broken'), { recursive: true });
    writeFileSync(join(work, 'functions', 'broken', 'index.ts'), 'export default 42;\n');
    try {
      writeFileSync(join(work, 'serverless.yml'), yml({ service: 'klw-fixture' }));
      // osls loading the plugin, as klw deploy runs it (runServerless). A refusal in these words is
      // kept as a successful run is: the plain configuration's is the run real every time.
      const refused =
        /kube-lambda-webhooks: functions\/broken\/index.ts exports default a number, not a registration: export default/;
      const result = await serverlessPackage(work, ['--stage', 'test'], join(out, 'broken'), env, { failure: refused });
      assert.notEqual(result.code, 0);
      assert.match(result.stdout + result.stderr, refused);
    } finally {
      rmSync(join(work, 'functions', 'broken'), { recursive: true, force: true });
    }
  });

  it('the AWS permissions klw deploy needs (docs/deploying.md) list every resource type of the generated template, and only such types', async () => {
    const documented = documentedTypes();
    assert.ok(documented.size >= 10, `the table lists ${documented.size} types: is it there?`);
    const generated = new Set<string>();
    // The plain template and the one with every param that adds resources (function URLs,
    // provisioned concurrency, an alarm topic), both the create and the update stack.
    await packagePlain();
    await packageEveryParam();
    for (const name of ['default', 'params'])
      for (const file of ['cloudformation-template-create-stack.json', 'cloudformation-template-update-stack.json']) {
        const template = JSON.parse(readFileSync(join(out, name, file), 'utf8')) as Json;
        for (const resource of Object.values(template.Resources)) generated.add((resource as Json).Type);
      }
    assert.ok(generated.has('AWS::Lambda::Function'), [...generated].join(' '));
    const missing = [...generated].filter((t) => !documented.has(t));
    assert.deepEqual(missing, [], 'resource types the template creates that the docs do not list');
    const stray = [...documented].filter((t) => !generated.has(t));
    assert.deepEqual(stray, [], 'types the docs list that the template never creates');
  });
});
