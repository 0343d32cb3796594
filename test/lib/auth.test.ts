import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it, mock } from 'node:test';
import { allow, defineConversionWebhook, defineValidatingWebhook } from '../../lib/index.ts';
import { GetParameterCommand, SSMClient } from '@aws-sdk/client-ssm';
import { mockClient } from 'aws-sdk-client-mock';
import { checkBearer, expectedToken, PARAMETER_FAILURE_RETRY_MS } from '../../lib/auth.ts';
import { admissionReview, conversionReview } from '../../lib/testing/index.ts';
import { invokeRaw } from '../../lib/harness/invoke.ts';

const secured = defineValidatingWebhook({ name: 'secured', auth: 'bearer', rules: [], validate: () => allow() });
const review = admissionReview({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' } });
const env = { KLW_BEARER_TOKEN: 'correct-horse' };

describe('bearer token', () => {
  it('accepts the configured token', async () => {
    const raw = await invokeRaw(secured, review, { headers: { authorization: 'Bearer correct-horse' }, handlerOptions: { env } });
    assert.equal(raw.statusCode, 200);
  });

  for (const [name, header] of [
    ['a wrong token', 'Bearer wrong'],
    ['a prefix of the token', 'Bearer correct'],
    ['another scheme', 'Basic Y29ycmVjdC1ob3JzZQ=='],
    ['an empty bearer', 'Bearer '],
  ] as const) {
    it(`answers 401 for ${name}`, async () => {
      const raw = await invokeRaw(secured, review, { headers: { authorization: header }, handlerOptions: { env } });
      assert.equal(raw.statusCode, 401);
      assert.equal(raw.headers['www-authenticate'], 'Bearer');
      assert.deepEqual(JSON.parse(raw.body), { error: 'missing or wrong bearer token' });
    });
  }

  it('answers 401 without an Authorization header', async () => {
    assert.equal((await invokeRaw(secured, review, { handlerOptions: { env } })).statusCode, 401);
  });

  it('reads the token from a file', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'klw-token-'));
    const file = join(dir, 'token');
    writeFileSync(file, 'from-file\n');
    const fileEnv = { KLW_BEARER_TOKEN_FILE: file };
    assert.equal(expectedToken(fileEnv), 'from-file');
    const raw = await invokeRaw(secured, review, { headers: { authorization: 'Bearer from-file' }, handlerOptions: { env: fileEnv } });
    assert.equal(raw.statusCode, 200);
  });

  it('answers 500 without saying why when auth is on but no token is configured', async () => {
    const raw = await invokeRaw(secured, review, { headers: { authorization: 'Bearer x' }, handlerOptions: { env: {} } });
    assert.equal(raw.statusCode, 500);
    assert.doesNotMatch(raw.body, /KLW_/);
  });

  it('by default checks whenever a token is configured, and not otherwise', async () => {
    const auto = defineValidatingWebhook({ name: 'auto', rules: [], validate: () => allow() });
    assert.equal(auto.registration.auth, 'auto');
    assert.equal((await invokeRaw(auto, review, { handlerOptions: { env } })).statusCode, 401);
    assert.equal((await invokeRaw(auto, review, { headers: { authorization: 'Bearer correct-horse' }, handlerOptions: { env } })).statusCode, 200);
    assert.equal((await invokeRaw(auto, review, { handlerOptions: { env: {} } })).statusCode, 200);
  });

  it('never checks with auth none, nor for conversion (the API server sends no credentials)', async () => {
    const open = defineValidatingWebhook({ name: 'open', auth: 'none', rules: [], validate: () => allow() });
    assert.equal((await invokeRaw(open, review, { handlerOptions: { env } })).statusCode, 200);
    const conv = defineConversionWebhook({ name: 'conv', crd: 'x.example.com', convert: (o, d) => ({ ...o, apiVersion: d }) });
    assert.equal((await invokeRaw(conv, conversionReview([], 'example.com/v1'), { handlerOptions: { env } })).statusCode, 200);
  });

  it('reads the token from SSM once per environment, and tries again once a failure is older than the retry interval', async () => {
    const ssm = mockClient(SSMClient);
    mock.timers.enable({ apis: ['Date'], now: 1_000_000 });
    try {
      ssm.on(GetParameterCommand, { Name: '/klw/test/token', WithDecryption: true }).resolvesOnce({ Parameter: { Value: 'from-ssm' } });
      const ssmEnv = { KLW_BEARER_TOKEN_SSM: '/klw/test/token' };
      for (const [header, status] of [['Bearer from-ssm', 200], ['Bearer nope', 401], ['Bearer from-ssm', 200]] as const) {
        assert.equal((await invokeRaw(secured, review, { headers: { authorization: header }, handlerOptions: { env: ssmEnv } })).statusCode, status);
      }
      assert.equal(ssm.commandCalls(GetParameterCommand).length, 1, 'fetched once');

      ssm.on(GetParameterCommand, { Name: '/klw/test/flaky' }).rejectsOnce(new Error('throttled')).resolves({ Parameter: { Value: 'second-try' } });
      const flaky = { KLW_BEARER_TOKEN_SSM: '/klw/test/flaky' };
      const first = await invokeRaw(secured, review, { headers: { authorization: 'Bearer second-try' }, handlerOptions: { env: flaky } });
      assert.equal(first.statusCode, 500);
      assert.doesNotMatch(first.body, /throttled/);
      const again = await invokeRaw(secured, review, { headers: { authorization: 'Bearer second-try' }, handlerOptions: { env: flaky } });
      assert.equal(again.statusCode, 500, 'the failure stands within the retry interval');
      assert.equal(ssm.commandCalls(GetParameterCommand, { Name: '/klw/test/flaky' }).length, 1);
      mock.timers.tick(PARAMETER_FAILURE_RETRY_MS + 1);
      const second = await invokeRaw(secured, review, { headers: { authorization: 'Bearer second-try' }, handlerOptions: { env: flaky } });
      assert.equal(second.statusCode, 200);
    } finally {
      mock.timers.reset();
      ssm.restore();
    }
  });

  it('compares case-insensitively on the scheme only', async () => {
    assert.equal(await checkBearer('bearer tok', 'tok'), true);
    assert.equal(await checkBearer('Bearer TOK', 'tok'), false);
    assert.equal(await checkBearer(undefined, 'tok'), false);
  });
});
