import assert from 'node:assert/strict';
import {
  chmodSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { GetParameterCommand, ParameterNotFound, PutParameterCommand, SSMClient } from '@aws-sdk/client-ssm';
import { mockClient } from 'aws-sdk-client-mock';
import { parseAllDocuments } from 'yaml';
import { PATH_SECRET_PATTERN } from '../../../lib/auth.ts';
import { loadFunctions } from '../../../infra/functions.ts';
import { generateManifests } from '../../../infra/manifests.ts';
import { defaultRegion } from '../../../infra/region.ts';
import {
  ensureTargetPathSecret,
  runSecretCommand,
  smokePathSecret,
  withPathSecret,
  writePrivateOutput,
} from '../../../infra/secret-actions.ts';
import { smoke } from '../../../infra/deploy/smoke.ts';
import { InvokeCommand, LambdaClient } from '@aws-sdk/client-lambda';
import {
  ensureDeployedPathSecret,
  ensureLocalPathSecret,
  localPathSecretFile,
  newPathSecret,
  pathSecretParameterName,
  PATH_SECRET_PLACEHOLDER,
  retireDeployedPathSecret,
  retireLocalPathSecret,
  rotateDeployedPathSecret,
  rotateLocalPathSecret,
} from '../../../infra/secrets/secrets.ts';
import { FIXTURE_FUNCTIONS, runKlw } from '../../helpers.ts';

const work = mkdtempSync(join(process.cwd(), '.klw-test-secrets-'));
cpSync(FIXTURE_FUNCTIONS, join(work, 'functions'), { recursive: true });
writeFileSync(join(work, 'serverless.yml'), 'service: svc\n');
const registrations = (await loadFunctions(work)).map((f) => f.registration);
after(() => rmSync(work, { recursive: true, force: true }));

const tempDir = () => mkdtempSync(join(tmpdir(), 'klw-secret-'));
const A = 'A'.repeat(43);
const B = 'B'.repeat(43);
const notFound = () => new ParameterNotFound({ message: 'not found', $metadata: {} });

describe('local path secret', () => {
  it('is created once, 0600, with 256 random URL-safe bits, and reused', () => {
    const dir = join(tempDir(), 'state');
    const first = ensureLocalPathSecret(dir);
    const file = localPathSecretFile(dir);
    assert.equal(statSync(file).mode & 0o777, 0o600);
    assert.match(first.current, /^[A-Za-z0-9_-]{43}$/);
    assert.equal(Buffer.from(first.current, 'base64url').length, 32);
    assert.equal(first.value, first.current);
    assert.deepEqual(ensureLocalPathSecret(dir), first);
    assert.notEqual(newPathSecret(), newPathSecret());
  });

  it('narrows a file readable by others and says so; refuses a symbolic link and a malformed secret', () => {
    const dir = tempDir();
    const { current } = ensureLocalPathSecret(dir);
    chmodSync(localPathSecretFile(dir), 0o644);
    const warnings: string[] = [];
    assert.equal(ensureLocalPathSecret(dir, (m) => warnings.push(m)).current, current);
    assert.equal(statSync(localPathSecretFile(dir)).mode & 0o777, 0o600);
    assert.match(warnings.join(), /readable by others/);
    assert.ok(!warnings.join().includes(current));

    const linked = tempDir();
    const target = join(linked, 'elsewhere');
    writeFileSync(target, 'precious');
    symlinkSync(target, localPathSecretFile(linked));
    assert.throws(() => ensureLocalPathSecret(linked), /symbolic link/);
    assert.equal(readFileSync(target, 'utf8'), 'precious');

    const bad = tempDir();
    writeFileSync(localPathSecretFile(bad), 'short\n', { mode: 0o600 });
    assert.throws(() => ensureLocalPathSecret(bad), /URL-safe/);
  });

  it('rotates to current,previous and retires the previous; refuses a second rotation and a retirement with nothing to retire', () => {
    const dir = tempDir();
    const old = ensureLocalPathSecret(dir).current;
    assert.throws(() => retireLocalPathSecret(dir), /no previous secret/);
    const { after: rotated } = rotateLocalPathSecret(dir);
    assert.equal(rotated.previous, old);
    assert.notEqual(rotated.current, old);
    assert.equal(readFileSync(localPathSecretFile(dir), 'utf8').trim(), `${rotated.current},${old}`);
    assert.equal(statSync(localPathSecretFile(dir)).mode & 0o777, 0o600);
    assert.throws(() => rotateLocalPathSecret(dir), /klw secret retire/);
    const { after: retired } = retireLocalPathSecret(dir);
    assert.deepEqual(retired, { value: rotated.current, current: rotated.current });
    assert.throws(() => retireLocalPathSecret(tempDir()), /holds no path secret/);
  });
});

describe('deployed path secret (SSM)', () => {
  const name = pathSecretParameterName('svc', 'prod');

  it('is named per service and stage', () => {
    assert.equal(name, '/kube-lambda-webhooks/svc/prod/path-secret');
  });

  it('is created as a SecureString by the first deploy, never overwriting one made meanwhile, and read afterwards', async () => {
    const ssm = mockClient(SSMClient);
    try {
      ssm
        .on(GetParameterCommand, { Name: name, WithDecryption: true })
        .rejectsOnce(notFound())
        .resolves({ Parameter: { Value: A } });
      ssm.on(PutParameterCommand).resolves({});
      const created = await ensureTargetPathSecret(
        { service: 'svc', stage: 'prod', region: 'eu-west-1' },
        registrations,
      );
      const put = ssm.commandCalls(PutParameterCommand)[0]!.args[0].input;
      assert.equal(put.Name, name);
      assert.equal(put.Type, 'SecureString');
      assert.equal(put.Overwrite, false);
      assert.equal(put.Value, created!.current);
      assert.match(created!.current, PATH_SECRET_PATTERN);
      assert.equal((await ensureDeployedPathSecret(new SSMClient({}), name)).current, A);
      assert.equal(ssm.commandCalls(PutParameterCommand).length, 1);
    } finally {
      ssm.restore();
    }
  });

  it('needs none when every function is registered with auth none', async () => {
    const open = registrations.map((r) => ({ ...r, auth: 'none' as const }));
    assert.equal(
      await ensureTargetPathSecret({ service: 'svc', stage: 'prod', region: 'eu-west-1' }, open, {} as SSMClient),
      undefined,
    );
  });

  it('rotates (new current, old previous) and retires; refuses what would lose a secret in use', async () => {
    const ssm = mockClient(SSMClient);
    try {
      ssm.on(PutParameterCommand).resolves({});
      ssm.on(GetParameterCommand, { Name: name }).resolves({ Parameter: { Value: A } });
      const rotated = await rotateDeployedPathSecret(new SSMClient({}), name);
      assert.equal(rotated.after.previous, A);
      const put = ssm.commandCalls(PutParameterCommand)[0]!.args[0].input;
      assert.deepEqual([put.Value, put.Overwrite, put.Type], [`${rotated.after.current},${A}`, true, 'SecureString']);

      ssm.on(GetParameterCommand, { Name: name }).resolves({ Parameter: { Value: `${B},${A}` } });
      await assert.rejects(
        rotateDeployedPathSecret(new SSMClient({}), name),
        /still holds a previous secret.*klw secret retire/,
      );
      const retired = await retireDeployedPathSecret(new SSMClient({}), name);
      assert.deepEqual(retired.after, { value: B, current: B });
      assert.equal(ssm.commandCalls(PutParameterCommand).at(-1)!.args[0].input.Value, B);

      ssm.on(GetParameterCommand, { Name: name }).resolves({ Parameter: { Value: B } });
      await assert.rejects(retireDeployedPathSecret(new SSMClient({}), name), /nothing to retire/);
      ssm.on(GetParameterCommand, { Name: name }).rejects(notFound());
      await assert.rejects(retireDeployedPathSecret(new SSMClient({}), name), /does not exist.*klw deploy creates it/);
      // A missing parameter is never created by a rotation (a wrong --region or --stage would make a stray one).
      await assert.rejects(
        rotateDeployedPathSecret(new SSMClient({}), name, 'ap-south-2'),
        new RegExp(
          `SSM parameter ${name} in ap-south-2 does not exist: nothing to rotate.*klw deploy creates it.*--region and --stage`,
        ),
      );
      ssm.on(GetParameterCommand, { Name: name }).rejects(new Error('AccessDenied'));
      await assert.rejects(rotateDeployedPathSecret(new SSMClient({}), name), /AccessDenied/);
      assert.equal(ssm.commandCalls(PutParameterCommand).length, 2, 'nothing written after a refusal');
    } finally {
      ssm.restore();
    }
  });

  it('klw secret rotate and retire print the documented sequence', async () => {
    const ssm = mockClient(SSMClient);
    const klw = (...args: string[]) => runKlw('--root', work, 'secret', ...args);
    let text = '';
    try {
      ssm.on(PutParameterCommand).resolves({});
      ssm.on(GetParameterCommand, { Name: name }).resolves({ Parameter: { Value: A } });
      const rotated = await klw('rotate', '--stage', 'prod', '--region', 'eu-west-1');
      assert.equal(rotated.code, 0);
      ssm.on(GetParameterCommand, { Name: name }).resolves({ Parameter: { Value: `${B},${A}` } });
      const retired = await klw('retire', '--stage', 'prod', '--region', 'eu-west-1');
      assert.equal(retired.code, 0);
      ssm.on(GetParameterCommand, { Name: name }).resolves({ Parameter: { Value: B } });
      const again = await klw('retire', '--stage', 'prod');
      assert.equal(again.code, 1);
      text = rotated.stderr + retired.stderr + again.stderr;
    } finally {
      ssm.restore();
    }
    assert.match(text, /new current secret; the previous one stays valid/);
    assert.match(text, /next: klw deploy --stage prod/);
    assert.match(text, /then: klw secret retire --stage prod/);
    assert.match(text, /previous secret retired/);
    assert.match(text, /klw: .*nothing to retire/);
    for (const secret of [A, B]) assert.ok(!text.includes(secret), 'a secret was printed');
  });

  it('klw secret rotate and retire take the region from serverless.yml, else AWS_REGION or AWS_DEFAULT_REGION, else us-east-1', async () => {
    assert.equal(defaultRegion({ provider: { region: 'eu-west-1' } }, { AWS_REGION: 'us-west-2' }), 'eu-west-1');
    assert.equal(
      defaultRegion({ provider: { region: "${opt:region, 'eu-central-1'}" } }, { AWS_REGION: 'us-west-2' }),
      'eu-central-1',
      'what serverless itself resolves without --region',
    );
    assert.equal(
      defaultRegion(
        { provider: { region: '${opt:region, ${env:MY_REGION, "sa-east-1"}}' } },
        { MY_REGION: 'ca-central-1' },
      ),
      'ca-central-1',
    );
    assert.equal(
      defaultRegion({ provider: { region: '${opt:region, ${env:MY_REGION, "sa-east-1"}}' } }, {}),
      'sa-east-1',
    );
    assert.equal(
      defaultRegion({ provider: { region: '${param:region}' } }, { AWS_REGION: 'us-west-2' }),
      'us-west-2',
      'a variable klw cannot resolve',
    );
    assert.equal(defaultRegion({ provider: {} }, { AWS_DEFAULT_REGION: 'eu-north-1' }), 'eu-north-1');
    assert.equal(defaultRegion(undefined, {}), 'us-east-1');

    const ssm = mockClient(SSMClient);
    let stderr = '';
    const project = mkdtempSync(join(tmpdir(), 'klw-region-'));
    writeFileSync(
      join(project, 'serverless.yml'),
      "service: svc\nprovider:\n  name: aws\n  region: ${opt:region, 'eu-west-1'}\n",
    );
    try {
      ssm.on(GetParameterCommand, { Name: name }).rejects(notFound());
      const rotated = await runKlw('--root', project, 'secret', 'rotate', '--stage', 'prod');
      assert.equal(rotated.code, 1);
      stderr = rotated.stderr;
      assert.equal(
        await ssm.commandCalls(GetParameterCommand)[0]!.thisValue.config.region(),
        'eu-west-1',
        "read in serverless.yml's region",
      );
      assert.equal(ssm.commandCalls(PutParameterCommand).length, 0);
    } finally {
      ssm.restore();
      rmSync(project, { recursive: true, force: true });
    }
    assert.match(
      stderr,
      /klw: SSM parameter \/kube-lambda-webhooks\/svc\/prod\/path-secret in eu-west-1 does not exist: nothing to rotate/,
    );
  });

  it('runSecretCommand --local rotates the state directory', async () => {
    const dir = tempDir();
    const lines = await runSecretCommand(
      'rotate',
      { stage: 'dev', region: 'x', local: true, stateDir: dir },
      () => 'unused',
    );
    assert.match(lines.join('\n'), /created a path secret[\s\S]*--path-secret local/);
    assert.ok(existsSync(localPathSecretFile(dir)));
  });
});

describe('path secret in clientConfig.url', () => {
  const urls = (documents: Array<Record<string, any>>) =>
    Object.fromEntries(
      documents.flatMap((d) =>
        d.kind === 'CustomResourceDefinition'
          ? [[d.metadata.name, d.spec.conversion.webhook.clientConfig.url]]
          : (d.webhooks ?? []).map((w: any) => [w.name, w.clientConfig.url]),
      ),
    );

  it('is appended for every function but those with auth none, on a base URL and on function URLs', () => {
    const secret = newPathSecret();
    const withSecret = generateManifests(work, registrations, {
      baseUrl: 'https://h.example.com/prod/',
      pathSecret: secret,
    });
    for (const url of Object.values(urls(withSecret.documents)))
      assert.match(url as string, new RegExp(`^https://h\\.example\\.com/prod/[a-z-]+/${secret}$`));
    for (const patch of withSecret.crdPatches)
      assert.match((patch.patch.spec.conversion as any).webhook.clientConfig.url, new RegExp(`/${secret}$`));

    const open = registrations.map((r) => ({ ...r, auth: 'none' as const }));
    for (const url of Object.values(
      urls(generateManifests(work, open, { baseUrl: 'https://h.example.com', pathSecret: secret }).documents),
    ))
      assert.ok(!(url as string).includes(secret));

    const functionUrls = Object.fromEntries(
      registrations.map((r) => [r.name, `https://${r.name}.lambda-url.eu-west-1.on.aws/`]),
    );
    const viaUrls = generateManifests(work, registrations, { functionUrls, pathSecret: secret });
    for (const url of Object.values(urls(viaUrls.documents)))
      assert.match(url as string, new RegExp(`^https://[a-z-]+\\.lambda-url\\.eu-west-1\\.on\\.aws/${secret}$`));
  });

  it('comes from the local state dir, SSM, a placeholder or nowhere', async () => {
    const dir = tempDir();
    const base = { baseUrl: 'https://h.example.com' };
    const opts = { stateDir: dir, stage: 'prod', region: 'eu-west-1', service: 'svc' };
    assert.equal(
      (await withPathSecret(base, registrations, { ...opts, pathSecret: 'local' })).pathSecret,
      ensureLocalPathSecret(dir).current,
    );
    assert.equal(
      (await withPathSecret(base, registrations, { ...opts, pathSecret: 'placeholder' })).pathSecret,
      PATH_SECRET_PLACEHOLDER,
    );
    assert.equal((await withPathSecret(base, registrations, { ...opts, pathSecret: 'none' })).pathSecret, undefined);
    const ssm = mockClient(SSMClient);
    try {
      ssm
        .on(GetParameterCommand, { Name: '/kube-lambda-webhooks/svc/prod/path-secret' })
        .resolves({ Parameter: { Value: `${B},${A}` } });
      assert.equal(
        (await withPathSecret(base, registrations, { ...opts, pathSecret: 'ssm' })).pathSecret,
        B,
        'the current one',
      );
      ssm.on(GetParameterCommand).rejects(notFound());
      await assert.rejects(
        withPathSecret(base, registrations, { ...opts, pathSecret: 'ssm' }),
        /does not exist in eu-west-1; klw deploy --stage prod creates it/,
      );
    } finally {
      ssm.restore();
    }
  });

  it('klw manifests writes the local secret, or by default a placeholder', async () => {
    const dir = join(tempDir(), 'state');
    const out = join(tempDir(), 'm.yaml');
    const manifests = (...args: string[]) =>
      runKlw('--root', work, 'manifests', '--base-url', 'https://h.example.com', '--out', out, ...args);
    assert.equal((await manifests('--path-secret', 'local', '--state-dir', dir)).code, 0);
    const secret = ensureLocalPathSecret(dir).current;
    const docs = parseAllDocuments(readFileSync(out, 'utf8')).map((d) => d.toJS());
    assert.equal(urls(docs)['pod-policy.webhooks.kube-lambda.dev'], `https://h.example.com/pod-policy/${secret}`);
    const placeholder = await manifests();
    assert.equal(placeholder.code, 0);
    assert.match(readFileSync(out, 'utf8'), /https:\/\/h\.example\.com\/pod-policy\/__KLW_PATH_SECRET__\?/);
    assert.match(placeholder.stderr, /placeholder __KLW_PATH_SECRET__/);
  });

  it('manifests holding a secret are written 0600', () => {
    const file = join(tempDir(), 'nested', 'manifests.yaml');
    mkdirSync(join(file, '..', '..'), { recursive: true });
    writePrivateOutput(file, 'x: 1\n');
    assert.equal(statSync(file).mode & 0o777, 0o600);
  });

  it('klw smoke carries the current secret in the event path: local with --endpoint, else from SSM', async () => {
    const lambda = mockClient(LambdaClient);
    const ssm = mockClient(SSMClient);
    try {
      lambda.on(InvokeCommand).resolves({
        StatusCode: 200,
        Payload: Buffer.from(JSON.stringify({ statusCode: 404, body: '{"message":"Not Found"}' })) as any,
      });
      await smoke(
        new LambdaClient({ region: 'eu-west-1' }),
        registrations,
        (n) => n,
        () => {},
        A,
      );
      const paths = lambda
        .commandCalls(InvokeCommand)
        .map((c) => JSON.parse(Buffer.from(c.args[0].input.Payload as Uint8Array).toString('utf8')).rawPath);
      assert.deepEqual(
        paths,
        registrations.map((r) => `/${r.name}/${A}`),
      );

      const dir = tempDir();
      const local = { endpoint: 'http://127.0.0.1:3001', stateDir: dir, stage: 'dev', region: 'eu-west-1' };
      assert.equal(await smokePathSecret(local, 'svc'), undefined, 'no local secret yet');
      assert.equal(await smokePathSecret(local, 'svc'), undefined);
      assert.equal(existsSync(localPathSecretFile(dir)), false, 'smoke never creates one');
      const { current } = ensureLocalPathSecret(dir);
      assert.equal(await smokePathSecret(local, 'svc'), current);
      ssm
        .on(GetParameterCommand, { Name: '/kube-lambda-webhooks/svc/prod/path-secret' })
        .resolves({ Parameter: { Value: `${B},${A}` } });
      assert.equal(await smokePathSecret({ stateDir: dir, stage: 'prod', region: 'eu-west-1' }, 'svc'), B);
    } finally {
      lambda.restore();
      ssm.restore();
    }
  });
});

describe('the region of the AWS commands without --region', () => {
  const project = mkdtempSync(join(process.cwd(), '.klw-test-region-'));
  cpSync(FIXTURE_FUNCTIONS, join(project, 'functions'), { recursive: true });
  // What `klw deploy` without --region deploys to; AWS_REGION names another region.
  writeFileSync(
    join(project, 'serverless.yml'),
    "service: svc\nprovider:\n  name: aws\n  region: ${opt:region, 'eu-west-1'}\n",
  );
  after(() => rmSync(project, { recursive: true, force: true }));

  /** Runs klw in the project with AWS_REGION=us-west-2 and stderr captured; returns the exit code and stderr. */
  async function klw(...args: string[]): Promise<{ code: number; stderr: string }> {
    const region = process.env.AWS_REGION;
    process.env.AWS_REGION = 'us-west-2';
    try {
      return await runKlw('--root', project, ...args);
    } finally {
      if (region === undefined) delete process.env.AWS_REGION;
      else process.env.AWS_REGION = region;
    }
  }

  it("klw manifests --path-secret ssm reads the secret in serverless.yml's provider.region, or in --region", async () => {
    const ssm = mockClient(SSMClient);
    try {
      ssm
        .on(GetParameterCommand, { Name: '/kube-lambda-webhooks/svc/prod/path-secret' })
        .resolves({ Parameter: { Value: `${B},${A}` } });
      const out = join(project, 'manifests.yaml');
      const run = await klw(
        'manifests',
        '--base-url',
        'https://h.example.com',
        '--path-secret',
        'ssm',
        '--stage',
        'prod',
        '--out',
        out,
      );
      assert.equal(run.code, 0, run.stderr);
      assert.equal(await ssm.commandCalls(GetParameterCommand)[0]!.thisValue.config.region(), 'eu-west-1');
      assert.match(readFileSync(out, 'utf8'), new RegExp(`https://h\\.example\\.com/pod-policy/${B}`));
      assert.equal(
        (
          await klw(
            'manifests',
            '--base-url',
            'https://h.example.com',
            '--path-secret',
            'ssm',
            '--stage',
            'prod',
            '--region',
            'ap-south-1',
            '--out',
            out,
          )
        ).code,
        0,
      );
      assert.equal(
        await ssm.commandCalls(GetParameterCommand)[1]!.thisValue.config.region(),
        'ap-south-1',
        '--region wins',
      );
    } finally {
      ssm.restore();
    }
  });

  it("klw smoke invokes the functions and reads the secret in serverless.yml's provider.region", async () => {
    const lambda = mockClient(LambdaClient);
    const ssm = mockClient(SSMClient);
    try {
      lambda.on(InvokeCommand).resolves({
        StatusCode: 200,
        Payload: Buffer.from(JSON.stringify({ statusCode: 404, body: '{"message":"Not Found"}' })) as any,
      });
      ssm
        .on(GetParameterCommand, { Name: '/kube-lambda-webhooks/svc/prod/path-secret' })
        .resolves({ Parameter: { Value: `${B},${A}` } });
      await klw('smoke', '--stage', 'prod');
      const invokes = lambda.commandCalls(InvokeCommand);
      assert.deepEqual(
        invokes.map((c) => c.args[0].input.FunctionName),
        registrations.map((r) => `svc-prod-${r.name}`),
      );
      assert.equal(await invokes[0]!.thisValue.config.region(), 'eu-west-1');
      assert.equal(await ssm.commandCalls(GetParameterCommand)[0]!.thisValue.config.region(), 'eu-west-1');
    } finally {
      lambda.restore();
      ssm.restore();
    }
  });
});
