import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { GetParameterCommand, SSMClient } from '@aws-sdk/client-ssm';
import { mockClient } from 'aws-sdk-client-mock';
import { allow, defineValidatingWebhook } from '../../lib/index.ts';
import { AuthConfigError, expectedToken } from '../../lib/auth.ts';
import { createLogger } from '../../lib/log.ts';
import { admissionReview, toEvent } from '../../lib/testing/index.ts';
import { lambdaContext } from '../../lib/harness/events.ts';

const dir = mkdtempSync(join(tmpdir(), 'klw-bearer-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const webhook = defineValidatingWebhook({ name: 'guarded', rules: [], validate: () => allow() });
const review = admissionReview({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' } });

/** Calls the handler with an environment and returns the status, body and log lines. */
async function call(env: NodeJS.ProcessEnv, authorization?: string) {
  const lines: Array<Record<string, unknown>> = [];
  const handler = webhook.withOptions({
    env,
    logger: createLogger({ level: 'debug', sink: (l) => lines.push(JSON.parse(l)) }),
  });
  const event = toEvent(review, { path: '/guarded', ...(authorization ? { headers: { authorization } } : {}) });
  const result = await handler(event, lambdaContext());
  return { status: result.statusCode, body: result.body, lines };
}

describe('bearer token configuration', () => {
  for (const [name, value] of [
    ['empty', ''],
    ['white space only', ' \n\t '],
  ] as const) {
    it(`KLW_BEARER_TOKEN set but ${name} is a misconfiguration (500 and an error line), never "no auth"`, async () => {
      const out = await call({ KLW_BEARER_TOKEN: value }, 'Bearer anything');
      assert.equal(out.status, 500);
      assert.deepEqual(JSON.parse(out.body), { error: 'webhook authentication is misconfigured' });
      const error = out.lines.find((l) => l.level === 'error');
      assert.ok(error, 'an error line is logged');
      assert.match(String(error.msg), /KLW_BEARER_TOKEN is set but empty/);
      assert.equal(
        out.lines.some((l) => l.msg === 'review'),
        false,
        'the review never ran',
      );
    });
  }

  it('trims a token from the environment like one from a file', async () => {
    assert.equal(expectedToken({ KLW_BEARER_TOKEN: '  s3cret-token\n' }), 's3cret-token');
    assert.equal((await call({ KLW_BEARER_TOKEN: ' s3cret-token\n' }, 'Bearer s3cret-token')).status, 200);
    assert.equal((await call({ KLW_BEARER_TOKEN: ' s3cret-token\n' }, 'Bearer wrong')).status, 401);
  });

  it('a token file variable that is set but empty, or names a missing file, is a misconfiguration that says so', async () => {
    for (const [value, message] of [
      ['', /KLW_BEARER_TOKEN_FILE is set but empty/],
      [' ', /KLW_BEARER_TOKEN_FILE is set but empty/],
      [
        '/nonexistent/klw-token',
        /KLW_BEARER_TOKEN_FILE names \/nonexistent\/klw-token, which cannot be read \(ENOENT\)/,
      ],
    ] as const) {
      assert.throws(() => expectedToken({ KLW_BEARER_TOKEN_FILE: value }), message);
      const out = await call({ KLW_BEARER_TOKEN_FILE: value }, 'Bearer x');
      assert.equal(out.status, 500, `${JSON.stringify(value)}: ${out.body}`);
      assert.match(String(out.lines.find((l) => l.level === 'error')?.msg), message);
    }
  });

  it('a token with white space inside is a misconfiguration, wherever it comes from', async () => {
    assert.throws(
      () => expectedToken({ KLW_BEARER_TOKEN: 'two words' }),
      /KLW_BEARER_TOKEN holds white space inside the token/,
    );
    const file = join(dir, 'spaced-token');
    writeFileSync(file, 'abc def\n');
    assert.throws(
      () => expectedToken({ KLW_BEARER_TOKEN_FILE: file }),
      /the file KLW_BEARER_TOKEN_FILE names holds white space inside the token/,
    );
    const out = await call({ KLW_BEARER_TOKEN: 'a\tb' }, 'Bearer a');
    assert.equal(out.status, 500);
    assert.equal(expectedToken({ KLW_BEARER_TOKEN: '  one-word \n' }), 'one-word', 'white space around it is trimmed');
  });

  it('an empty token file is a misconfiguration', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'klw-token-')), 'token');
    writeFileSync(file, '  \n');
    assert.throws(() => expectedToken({ KLW_BEARER_TOKEN_FILE: file }), AuthConfigError);
    const out = await call({ KLW_BEARER_TOKEN_FILE: file }, 'Bearer x');
    assert.equal(out.status, 500);
    assert.match(String(out.lines.find((l) => l.level === 'error')?.msg), /KLW_BEARER_TOKEN_FILE names an empty file/);
  });

  it('an SSM parameter holding only white space is a misconfiguration; an empty parameter name means none', async () => {
    const ssm = mockClient(SSMClient);
    try {
      ssm.on(GetParameterCommand, { Name: '/klw/test/blank-token' }).resolves({ Parameter: { Value: '  ' } });
      const out = await call({ KLW_BEARER_TOKEN_SSM: '/klw/test/blank-token' }, 'Bearer x');
      assert.equal(out.status, 500);
      assert.match(String(out.lines.find((l) => l.level === 'error')?.msg), /blank-token.*is empty/);
      // serverless.yml writes an empty parameter name when no token is wanted.
      assert.equal((await call({ KLW_BEARER_TOKEN_SSM: '' })).status, 200);
    } finally {
      ssm.restore();
    }
  });
});
