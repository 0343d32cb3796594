import assert from 'node:assert/strict';
import {
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
import { main } from '../../../infra/cli.ts';
import { loadFunctions } from '../../../infra/functions.ts';
import { generateManifests } from '../../../infra/manifests.ts';
import { runSecretCommand, withPathSecret } from '../../../infra/secret-actions.ts';
import {
  clusterPathSecretParameterName,
  clusterStateDir,
  ensureLocalPathSecret,
  localPathSecretFile,
  pathSecretParameterName,
} from '../../../infra/secrets/secrets.ts';
import { CLUSTER_LABEL, ENFORCEMENT_ANNOTATION, forCluster } from '../../../infra/fleet/manifests.ts';
import { parseFleet } from '../../../infra/fleet/file.ts';
import { FIXTURE_FUNCTIONS, runKlw } from '../../helpers.ts';

const work = mkdtempSync(join(process.cwd(), '.klw-test-fleet-'));
cpSync(FIXTURE_FUNCTIONS, join(work, 'functions'), { recursive: true });
writeFileSync(join(work, 'serverless.yml'), 'service: svc\n');
const FLEET =
  'clusters:\n  - name: east\n    kubeVersion: "1.20"\n    enforcement: { pod-policy: Warn }\n  - name: west\n';
writeFileSync(join(work, 'clusters.yaml'), FLEET);
const registrations = (await loadFunctions(work)).map((f) => f.registration);
after(() => rmSync(work, { recursive: true, force: true }));

const A = 'A'.repeat(43);
const B = 'B'.repeat(43);
const notFound = () => new ParameterNotFound({ message: 'not found', $metadata: {} });
const tempDirs: string[] = [];
const tempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), 'klw-fleet-cmd-'));
  tempDirs.push(dir);
  return dir;
};
after(() => {
  for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
});

/** Runs klw in the fleet project, returning its exit code and what it wrote to stderr. */
async function klw(...args: string[]): Promise<{ code: number; err: string }> {
  const { code, stderr } = await runKlw('--root', work, ...args);
  return { code, err: stderr };
}

describe('klw secret --cluster', () => {
  const east = clusterPathSecretParameterName('svc', 'prod', 'east');
  const west = clusterPathSecretParameterName('svc', 'prod', 'west');

  it('names one parameter per cluster and stage, beside the service secret', () => {
    assert.equal(east, '/kube-lambda-webhooks/svc/prod/clusters/east/path-secret');
    assert.notEqual(east, west);
    assert.ok(!east.startsWith(`${pathSecretParameterName('svc', 'prod')}/`), 'a parameter cannot also be a path');
  });

  it("rotates and retires only that cluster's SSM parameter, creating it on the first rotation", async () => {
    const ssm = mockClient(SSMClient);
    try {
      ssm.on(PutParameterCommand).resolves({});
      ssm.on(GetParameterCommand).rejects(notFound());
      const created = await runSecretCommand(
        'rotate',
        { stage: 'prod', region: 'eu-west-1', stateDir: 'unused', cluster: 'east' },
        () => 'svc',
        new SSMClient({ region: 'eu-west-1' }),
      );
      assert.match(
        created.join('\n'),
        /clusters\/east\/path-secret \(eu-west-1, cluster east\): created a path secret/,
      );
      let puts = ssm.commandCalls(PutParameterCommand).map((c) => c.args[0].input);
      assert.deepEqual(
        puts.map((p) => [p.Name, p.Type, p.Overwrite]),
        [[east, 'SecureString', false]],
      );

      ssm.reset();
      ssm.on(PutParameterCommand).resolves({});
      ssm.on(GetParameterCommand, { Name: east, WithDecryption: true }).resolves({ Parameter: { Value: A } });
      const rotated = await runSecretCommand(
        'rotate',
        { stage: 'prod', region: 'eu-west-1', stateDir: 'unused', cluster: 'east' },
        () => 'svc',
        new SSMClient({ region: 'eu-west-1' }),
      );
      assert.match(
        rotated.join('\n'),
        /the previous one stays valid[\s\S]*klw manifests --path-secret ssm --cluster east --stage prod --region eu-west-1[\s\S]*klw secret retire --cluster east --stage prod/,
      );
      puts = ssm.commandCalls(PutParameterCommand).map((c) => c.args[0].input);
      assert.equal(puts.length, 1);
      assert.equal(puts[0]!.Name, east);
      assert.equal(puts[0]!.Overwrite, true);
      assert.match(puts[0]!.Value!, new RegExp(`^[A-Za-z0-9_-]{43},${A}$`));
      assert.deepEqual(
        ssm.commandCalls(GetParameterCommand).map((c) => c.args[0].input.Name),
        [east],
        'no other parameter is read',
      );

      ssm.reset();
      ssm.on(PutParameterCommand).resolves({});
      ssm.on(GetParameterCommand, { Name: east, WithDecryption: true }).resolves({ Parameter: { Value: `${B},${A}` } });
      await runSecretCommand(
        'retire',
        { stage: 'prod', region: 'eu-west-1', stateDir: 'unused', cluster: 'east' },
        () => 'svc',
        new SSMClient({ region: 'eu-west-1' }),
      );
      assert.deepEqual(
        ssm.commandCalls(PutParameterCommand).map((c) => [c.args[0].input.Name, c.args[0].input.Value]),
        [[east, B]],
      );
    } finally {
      ssm.restore();
    }
  });

  it('without --cluster, a missing service parameter is still refused, never created', async () => {
    const ssm = mockClient(SSMClient);
    try {
      ssm.on(GetParameterCommand).rejects(notFound());
      await assert.rejects(
        runSecretCommand(
          'rotate',
          { stage: 'prod', region: 'eu-west-1', stateDir: 'unused' },
          () => 'svc',
          new SSMClient({}),
        ),
        /does not exist: nothing to rotate/,
      );
      assert.equal(ssm.commandCalls(PutParameterCommand).length, 0);
    } finally {
      ssm.restore();
    }
  });

  it("--local --cluster rotates that cluster's local secret only", async () => {
    const dir = tempDir();
    const shared = ensureLocalPathSecret(dir).current;
    const westSecret = ensureLocalPathSecret(clusterStateDir(dir, 'west')).current;
    const lines = await runSecretCommand(
      'rotate',
      { stage: 'dev', local: true, stateDir: dir, cluster: 'east' },
      () => 'unused',
    );
    assert.match(lines.join('\n'), /cluster east\): created a path secret[\s\S]*--path-secret local --cluster east/);
    const eastFile = localPathSecretFile(clusterStateDir(dir, 'east'));
    assert.equal(statSync(eastFile).mode & 0o777, 0o600);
    assert.equal(ensureLocalPathSecret(dir).current, shared);
    assert.equal(ensureLocalPathSecret(clusterStateDir(dir, 'west')).current, westSecret);
    assert.notEqual(ensureLocalPathSecret(clusterStateDir(dir, 'east')).current, westSecret);
  });

  it('klw secret rotate --cluster refuses a cluster the fleet file does not name, and a project without one', async () => {
    const ssm = mockClient(SSMClient);
    try {
      const { code, err } = await klw(
        'secret',
        'rotate',
        '--cluster',
        'north',
        '--stage',
        'prod',
        '--region',
        'eu-west-1',
      );
      assert.equal(code, 1);
      assert.match(err, /no cluster named "north" in clusters\.yaml; the clusters are east, west/);
      assert.equal(
        ssm.commandCalls(PutParameterCommand).length + ssm.commandCalls(GetParameterCommand).length,
        0,
        'SSM untouched',
      );
      const bare = mkdtempSync(join(process.cwd(), '.klw-test-fleet-bare-'));
      try {
        cpSync(FIXTURE_FUNCTIONS, join(bare, 'functions'), { recursive: true });
        const code2 = await main([
          'node',
          'klw',
          '--root',
          bare,
          'secret',
          'rotate',
          '--cluster',
          'east',
          '--local',
          '--state-dir',
          join(bare, 's'),
        ]);
        assert.equal(code2, 1);
        assert.ok(!existsSync(join(bare, 's')), 'nothing written');
      } finally {
        rmSync(bare, { recursive: true, force: true });
      }
    } finally {
      ssm.restore();
    }
  });
});

const urlsOf = (documents: Array<Record<string, any>>) =>
  documents.flatMap((d) =>
    d.kind === 'CustomResourceDefinition'
      ? [d.spec.conversion.webhook.clientConfig.url]
      : (d.webhooks ?? []).map((w: any) => w.clientConfig.url),
  ) as string[];

describe('klw manifests --cluster / --all-clusters', () => {
  it("reads each cluster's own secret from SSM", async () => {
    const ssm = mockClient(SSMClient);
    try {
      ssm
        .on(GetParameterCommand, { Name: clusterPathSecretParameterName('svc', 'prod', 'west'), WithDecryption: true })
        .resolves({ Parameter: { Value: `${B},${A}` } });
      ssm.on(GetParameterCommand, { Name: clusterPathSecretParameterName('svc', 'prod', 'east') }).rejects(notFound());
      const options = {
        pathSecret: 'ssm' as const,
        stateDir: 'unused',
        stage: 'prod',
        region: 'eu-west-1',
        service: 'svc',
      };
      assert.equal(
        (
          await withPathSecret(
            { baseUrl: 'https://h' },
            registrations,
            { ...options, cluster: 'west' },
            new SSMClient({}),
          )
        ).pathSecret,
        B,
      );
      await assert.rejects(
        withPathSecret({ baseUrl: 'https://h' }, registrations, { ...options, cluster: 'east' }, new SSMClient({})),
        /clusters\/east\/path-secret does not exist in eu-west-1; klw secret rotate --cluster east --stage prod creates it/,
      );
    } finally {
      ssm.restore();
    }
  });

  it('writes one 0600 file per cluster with its secret, version fields and enforcement', async () => {
    const dir = tempDir();
    const out = join(dir, 'out');
    const state = join(dir, 'state');
    const { code, err } = await klw(
      'manifests',
      '--base-url',
      'https://h.example.com',
      '--path-secret',
      'local',
      '--state-dir',
      state,
      '--all-clusters',
      '--out-dir',
      out,
    );
    assert.equal(code, 0, err);
    const docs = Object.fromEntries(
      ['east', 'west'].map((c) => [
        c,
        parseAllDocuments(readFileSync(join(out, `${c}.yaml`), 'utf8')).map((d) => d.toJS()),
      ]),
    );
    for (const c of ['east', 'west']) {
      assert.equal(statSync(join(out, `${c}.yaml`)).mode & 0o777, 0o600);
      const secret = ensureLocalPathSecret(clusterStateDir(state, c)).current;
      const urls = urlsOf(docs[c]!);
      assert.ok(urls.length > 0);
      for (const url of urls) assert.ok(url.endsWith(`/${secret}`), `${c}: ${url}`);
      const configs = docs[c]!.filter((d: any) => d.kind?.endsWith('WebhookConfiguration'));
      for (const config of configs) assert.equal(config.metadata.labels[CLUSTER_LABEL], c);
    }
    assert.ok(!existsSync(localPathSecretFile(state)), 'the shared local secret is not made');
    const validating = (c: string) => docs[c]!.find((d: any) => d.kind === 'ValidatingWebhookConfiguration');
    assert.match(validating('east').metadata.annotations[ENFORCEMENT_ANNOTATION], /pod-policy=Warn/);
    assert.match(validating('west').metadata.annotations[ENFORCEMENT_ANNOTATION], /pod-policy=Deny/);
    assert.match(err, /east: .*kubernetes\.io\/metadata\.name.*1\.21/, 'the 1.20 cluster is told what it lacks');
    assert.match(err, /wrote .*east\.yaml \(cluster east/);
  });

  it('--cluster writes that cluster only; refuses option mixes, unknown clusters and planted links', async () => {
    const dir = tempDir();
    const state = join(dir, 'state');
    const out = join(dir, 'west.yaml');
    const base = ['manifests', '--base-url', 'https://h.example.com', '--path-secret', 'local', '--state-dir', state];
    assert.equal((await klw(...base, '--cluster', 'west', '--out', out)).code, 0);
    assert.equal(statSync(out).mode & 0o777, 0o600);
    const secret = ensureLocalPathSecret(clusterStateDir(state, 'west')).current;
    for (const url of urlsOf(parseAllDocuments(readFileSync(out, 'utf8')).map((d) => d.toJS())))
      assert.ok(url.endsWith(`/${secret}`));
    assert.ok(!existsSync(clusterStateDir(state, 'east')), 'the other cluster is untouched');

    const refusals: Array<[string[], RegExp]> = [
      [['--cluster', 'west', '--all-clusters', '--out-dir', dir], /not both/],
      [['--all-clusters'], /give --out-dir/],
      [['--all-clusters', '--out-dir', dir, '--out', out], /leave out --out/],
      [['--out-dir', dir], /--out-dir goes with --all-clusters/],
      [['--cluster', 'north'], /no cluster named "north"/],
      [['--cluster', 'east', '--kube-version', '1.29'], /has kubeVersion 1\.20 in the fleet file/],
      [['--cluster', 'west', '--crd-patches', dir], /--crd-patches is not written per cluster/],
    ];
    for (const [args, message] of refusals) {
      const { code, err } = await klw(...base, ...args);
      assert.equal(code, 1, args.join(' '));
      assert.match(err, message, args.join(' '));
    }
    const planted = join(dir, 'planted');
    mkdirSync(planted);
    writeFileSync(join(dir, 'victim'), 'keep');
    symlinkSync(join(dir, 'victim'), join(planted, 'east.yaml'));
    assert.equal((await klw(...base, '--all-clusters', '--out-dir', planted)).code, 1);
    assert.equal(readFileSync(join(dir, 'victim'), 'utf8'), 'keep');
  });

  it("leaves out the fields a cluster's version does not know, unless its feature gates bring them", () => {
    const withConditions = registrations.map((r) =>
      r.name === 'pod-policy' ? { ...r, matchConditions: [{ name: 'not-system', expression: 'true' }] } : r,
    );
    const { documents } = generateManifests(work, withConditions, { baseUrl: 'https://h.example.com' });
    const fleet = parseFleet(
      'clusters:\n  - name: old\n    kubeVersion: "1.27"\n  - name: gated\n    kubeVersion: "1.27"\n    featureGates: { AdmissionWebhookMatchConditions: true }\n  - name: new\n',
      'clusters.yaml',
      registrations,
    );
    const conditions = (name: string) => {
      const out = forCluster(documents, fleet.clusters.find((c) => c.name === name)!, withConditions);
      const webhooks = out.documents.find((d) => d.kind === 'ValidatingWebhookConfiguration')!.webhooks as Array<{
        name: string;
        matchConditions?: unknown;
      }>;
      const hook = webhooks.find((w) => w.name.startsWith('pod-policy'))!;
      return { kept: hook.matchConditions !== undefined, findings: out.findings.map((f) => f.rule) };
    };
    assert.deepEqual(conditions('old'), { kept: false, findings: ['kube-version-field'] });
    assert.deepEqual(conditions('gated'), { kept: true, findings: [] });
    assert.deepEqual(conditions('new'), { kept: true, findings: [] });
  });
});
