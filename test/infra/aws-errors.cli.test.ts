// The AWS commands without credentials, as a new user first runs them: each says what it was
// reading, where, and what to check, and none prints the AWS SDK's Node version warning.
// The real SDK and its default credential chain, with every source of credentials emptied
// (no network is reached: the chain fails before any request).
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { FIXTURE_FUNCTIONS } from '../helpers.ts';
import { keptProject } from '../kept-projects.ts';

const run = promisify(execFile);
const KLW = join(process.cwd(), 'infra', 'bin', 'klw.mjs');

// The project is kept by content across runs (test/kept-projects.ts), so its functions' load
// build is too; the empty home is a scratch folder of this run.
const work = await keptProject('aws-cli', (dir) => {
  cpSync(FIXTURE_FUNCTIONS, join(dir, 'functions'), { recursive: true });
  writeFileSync(
    join(dir, 'serverless.yml'),
    'service: svc\nplugins:\n  - kube-lambda-webhooks/serverless\nprovider:\n  name: aws\n  runtime: nodejs24.x\n  region: eu-west-1\n',
  );
});
const home = mkdtempSync(join(process.cwd(), '.klw-test-aws-cli-home-'));
after(() => rmSync(home, { recursive: true, force: true }));

/** The environment without credentials: no AWS variables, no ~/.aws, no instance metadata. */
function credentialless(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) if (!key.startsWith('AWS_')) env[key] = value;
  return {
    ...env,
    HOME: home,
    AWS_CONFIG_FILE: join(home, 'no-config'),
    AWS_SHARED_CREDENTIALS_FILE: join(home, 'no-credentials'),
    AWS_EC2_METADATA_DISABLED: 'true',
  };
}

/** Runs klw in the project; its exit code and stderr. */
async function klw(...args: string[]): Promise<{ code: number; stderr: string }> {
  try {
    const out = await run(process.execPath, [KLW, '--root', work, ...args], { env: credentialless() });
    return { code: 0, stderr: out.stderr };
  } catch (err) {
    const failed = err as { code: number; stderr: string };
    return { code: failed.code, stderr: failed.stderr };
  }
}

const CHECK = /check the AWS credentials: the default profile \(AWS_PROFILE unset\); run aws configure/;

describe('AWS commands without credentials', () => {
  it('klw secret rotate --stage names the parameter, the region and what to check', async () => {
    const out = await klw('secret', 'rotate', '--stage', 'dev');
    assert.equal(out.code, 1, out.stderr);
    assert.match(
      out.stderr,
      /^klw: reading SSM parameter \/kube-lambda-webhooks\/svc\/dev\/path-secret in eu-west-1 failed: CredentialsProviderError: Could not load credentials from any providers; /m,
    );
    assert.match(out.stderr, CHECK);
    assert.doesNotMatch(out.stderr, /NodeVersionSupportWarning/);
  });

  it('klw manifests --path-secret ssm likewise', async () => {
    const out = await klw('manifests', '--path-secret', 'ssm', '--stage', 'dev', '--base-url', 'https://h.example.com');
    assert.equal(out.code, 1, out.stderr);
    assert.match(
      out.stderr,
      /reading SSM parameter \/kube-lambda-webhooks\/svc\/dev\/path-secret in eu-west-1 failed: CredentialsProviderError/,
    );
    assert.match(out.stderr, CHECK);
    assert.doesNotMatch(out.stderr, /NodeVersionSupportWarning/);
  });

  it('klw deploy likewise, before the Serverless Framework runs', async () => {
    const out = await klw('deploy', '--stage', 'dev', '--region', 'us-east-2');
    assert.equal(out.code, 1, out.stderr);
    assert.match(
      out.stderr,
      /reading SSM parameter \/kube-lambda-webhooks\/svc\/dev\/path-secret in us-east-2 failed: CredentialsProviderError/,
    );
    assert.match(out.stderr, CHECK);
    assert.doesNotMatch(out.stderr, /serverless deploy --stage/);
    assert.doesNotMatch(out.stderr, /NodeVersionSupportWarning/);
  });
});
