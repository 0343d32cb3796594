import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { buildAll } from '../../infra/build.ts';
import { loadFunctions } from '../../infra/functions.ts';
import { checkServerless, readServerless, runServerless } from '../../infra/serverless.ts';

const root = process.cwd();
const functions = await loadFunctions(root);
const registrations = functions.map((f) => f.registration);
const out = mkdtempSync(join(tmpdir(), 'klw-sls-'));
after(() => rmSync(out, { recursive: true, force: true }));

describe('serverless.yml', () => {
  it('agrees with functions/: names, zips, routes, timeouts, memory, environment', () => {
    assert.deepEqual(checkServerless(readServerless(root), registrations), []);
  });

  const broken: Array<[string, (c: any) => void, RegExp]> = [
    ['a function missing', (c) => delete c.functions['pod-policy'], /pod-policy: functions\/ has it but serverless.yml does not deploy it/],
    ['an extra function', (c) => { c.functions.ghost = { handler: 'index.handler' }; }, /ghost: serverless.yml deploys it/],
    ['a timeout longer than the webhook\'s', (c) => { c.functions['pod-policy'].timeout = 30; }, /pod-policy: timeout 30 differs/],
    ['a wrong route', (c) => { c.functions['pod-defaults'].events[0].httpApi.path = '/other'; }, /pod-defaults: needs an httpApi event POST \/pod-defaults/],
    ['a missing environment value', (c) => { delete c.functions['pod-defaults'].environment; }, /DEFAULT_CPU_LIMIT/],
    ['another artifact', (c) => { c.functions['crontab-conversion'].package.artifact = 'x.zip'; }, /package.artifact/],
  ];
  for (const [name, change, message] of broken) {
    it(`fails when they disagree: ${name}`, () => {
      const config = readServerless(root);
      change(config);
      const messages = checkServerless(config, registrations).map((f) => `${f.subject}: ${f.message}`);
      assert.ok(messages.some((m) => message.test(m)), messages.join('\n') || 'no findings');
    });
  }

  it('packages with serverless package (offline) into CloudFormation holding every function', async () => {
    await buildAll(root, functions);
    const pkg = join(out, 'default');
    const result = await runServerless(root, ['package', '--stage', 'test', '--package', pkg], { ...process.env, AWS_ACCESS_KEY_ID: '', AWS_SECRET_ACCESS_KEY: '' });
    assert.equal(result.code, 0, result.stdout + result.stderr);
    const template = JSON.parse(readFileSync(join(pkg, 'cloudformation-template-update-stack.json'), 'utf8'));
    const resources = Object.values(template.Resources) as Array<{ Type: string; Properties: any }>;
    const lambdas = resources.filter((r) => r.Type === 'AWS::Lambda::Function');
    assert.deepEqual(lambdas.map((l) => l.Properties.FunctionName).sort(), registrations.map((r) => `kube-lambda-webhooks-test-${r.name}`).sort());
    for (const reg of registrations) {
      const fn = lambdas.find((l) => l.Properties.FunctionName.endsWith(`-${reg.name}`))!.Properties;
      assert.equal(fn.Runtime, 'nodejs20.x');
      assert.deepEqual(fn.Architectures, ['arm64']);
      assert.equal(fn.Handler, 'index.handler');
      assert.equal(fn.Timeout, reg.timeoutSeconds);
      for (const [k, v] of Object.entries(reg.lambda.environment ?? {})) assert.equal(fn.Environment.Variables[k], v);
    }
    const routes = resources.filter((r) => r.Type === 'AWS::ApiGatewayV2::Route').map((r) => r.Properties.RouteKey).sort();
    assert.deepEqual(routes, registrations.map((r) => `POST /${r.name}`).sort());
    assert.ok(template.Outputs.HttpApiUrl, 'the HTTP API URL is a stack output (klw deploy reads it)');
    assert.equal(resources.filter((r) => r.Type === 'AWS::Lambda::Url').length, 0);
  });

  it('adds function URLs and provisioned concurrency when asked', async () => {
    const pkg = join(out, 'urls');
    const result = await runServerless(root, ['package', '--stage', 'test', '--package', pkg, '--param', 'functionUrls=true', '--param', 'provisionedConcurrency=2'], { ...process.env, AWS_ACCESS_KEY_ID: '', AWS_SECRET_ACCESS_KEY: '' });
    assert.equal(result.code, 0, result.stdout + result.stderr);
    const template = JSON.parse(readFileSync(join(pkg, 'cloudformation-template-update-stack.json'), 'utf8'));
    const resources = Object.values(template.Resources) as Array<{ Type: string; Properties: any }>;
    assert.equal(resources.filter((r) => r.Type === 'AWS::Lambda::Url').length, registrations.length);
    const aliases = resources.filter((r) => r.Type === 'AWS::Lambda::Alias');
    assert.equal(aliases.length, registrations.length);
    assert.ok(aliases.every((a) => a.Properties.ProvisionedConcurrencyConfig?.ProvisionedConcurrentExecutions === 2));
  });
});
