// End-to-end: one emulator serving a fleet of two kube-apiservers (v1.20, each with its own
// etcd). Both call the same function, each with its own path secret (`klw manifests
// --all-clusters --path-secret local`); the fleet file makes the policy Deny in cluster a and
// Warn in cluster b, so the same violating pod is refused in a and admitted with a warning in
// b, and the review lines name the calling cluster. `klw audit --context a --context b`
// reports each cluster's violations in one report and exits 1. Once a's secret is rotated and
// the old one retired, a's registered URL no longer works: its calls fail closed (failurePolicy
// Fail) while b's keep working.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { Agent, request as httpsRequest } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe } from 'node:test';
import { startApi, type RunningApi } from '../../infra/local/api.ts';
import { runKlw, until } from '../helpers.ts';
import { KeptLogs } from './kept-logs.ts';
import { Cluster, freePort } from './cluster.ts';

const root = process.cwd();
const KLW = join(root, 'infra/bin/klw.mjs');
const work = mkdtempSync(join(root, '.klw-e2e-fleet-'));
const clusterDirs = { a: mkdtempSync(join(tmpdir(), 'klw-fleet-a-')), b: mkdtempSync(join(tmpdir(), 'klw-fleet-b-')) };
const clusters = { a: new Cluster(clusterDirs.a), b: new Cluster(clusterDirs.b) };
const stateDir = join(work, '.state');
const manifestsDir = join(work, 'manifests');
const functionLines: Array<Record<string, any>> = [];
const emulatorLines: Array<Record<string, any>> = [];
let api: RunningApi | undefined;
let port = 0;
/** The API server folders, kept when a test fails. */
const logs = new KeptLogs();

mkdirSync(join(work, 'functions', 'pod-policy'), { recursive: true });
writeFileSync(
  join(work, 'functions', 'pod-policy', 'index.ts'),
  `import { allow, defineValidatingWebhook, deny } from 'kube-lambda-webhooks';
export const webhook = defineValidatingWebhook({
  name: 'pod-policy',
  rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'], scope: 'Namespaced' }],
  failurePolicy: 'Fail',
  validate: (r) => (r.object?.metadata?.labels?.tier === 'forbidden' ? deny(\`pod "\${r.object.metadata.name}" has tier=forbidden\`) : allow()),
});
export const handler = webhook.handler;
export default webhook;
`,
);
// The same function, Deny in a (the registration's default), Warn in b.
writeFileSync(
  join(work, 'clusters.yaml'),
  'clusters:\n  - name: a\n    context: a\n  - name: b\n    context: b\n    enforcement: { pod-policy: Warn }\n',
);

const pod = (name: string, tier = 'forbidden') => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, labels: { tier } },
  spec: { containers: [{ name: 'app', image: 'nginx:1.25' }] },
});
const createPod = (cluster: Cluster, body: unknown) => cluster.api('POST', '/api/v1/namespaces/default/pods', body);
const deletePod = (cluster: Cluster, name: string) => cluster.api('DELETE', `/api/v1/namespaces/default/pods/${name}`);

/**
 * Starts the emulator on a free port (the registered URLs name it); on another when the port was
 * taken between freePort and the emulator's bind.
 */
async function startEmulatorOnFreePort(): Promise<RunningApi> {
  for (let attempt = 1; ; attempt++) {
    port = await freePort();
    try {
      return await startEmulator();
    } catch (err) {
      if ((err as { code?: string }).code !== 'EADDRINUSE' || attempt >= 4) throw err;
    }
  }
}

/** Starts the emulator on `port`. */
async function startEmulator(): Promise<RunningApi> {
  const parse = (into: Array<Record<string, any>>) => (line: string) => {
    try {
      into.push(JSON.parse(line));
    } catch {
      // a text line: neither a review nor a request line
    }
  };
  return startApi({ root: work, port, stateDir, log: parse(emulatorLines), functionLog: parse(functionLines) });
}

/** Creates pod `name` until `ready` says the webhook configuration reached the API server's admission plugin. */
async function untilServed(cluster: Cluster, name: string, ready: (res: { status: number; headers: any }) => boolean) {
  for (let i = 0; i < 60; i++) {
    const res = await createPod(cluster, pod(name));
    if (res.status === 201) await deletePod(cluster, name);
    if (ready(res)) return;
    await sleep(250);
  }
  throw new Error(`the webhook never served ${name}`);
}

/** The status the emulator answers an empty review posted with `secret` (no cluster involved). */
function probe(secret: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const agent = new Agent({ ca: readFileSync(api!.caPath), keepAlive: false });
    const req = httpsRequest(`${api!.url}/pod-policy/${secret}`, { method: 'POST', agent }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end('{}');
  });
}

function klwProcess(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) =>
    execFile(process.execPath, [KLW, '--root', work, ...args], { encoding: 'utf8' }, (err, stdout, stderr) =>
      resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    ),
  );
}

before(async () => {
  await Promise.all(
    Object.values(clusters).map(async (c) => {
      await c.startEtcd();
      await c.startApiServer();
    }),
  );
  // Created before any webhook is registered: an existing violation only the audit finds.
  assert.equal((await createPod(clusters.a, pod('legacy'))).status, 201);
  api = await startEmulatorOnFreePort();
  const written = await runKlw(
    '--root',
    work,
    'manifests',
    '--all-clusters',
    '--out-dir',
    manifestsDir,
    '--path-secret',
    'local',
    '--state-dir',
    stateDir,
    '--base-url',
    api.url,
    '--ca-bundle',
    api.caPath,
  );
  assert.equal(written.code, 0, written.stderr);
  for (const name of ['a', 'b'] as const) {
    const applied = await clusters[name].kubectl('apply', '-f', join(manifestsDir, `${name}.yaml`));
    assert.equal(applied.code, 0, applied.stderr);
  }
  await untilServed(clusters.a, 'probe', (res) => res.status === 403);
  await untilServed(clusters.b, 'probe', (res) => res.headers.warning !== undefined);
});

after(async () => {
  await api?.close();
  await Promise.all(Object.values(clusters).map((c) => c.stop()));
  rmSync(work, { recursive: true, force: true });
  logs.cleanUp(...Object.values(clusterDirs));
});

const { check } = logs;

/** The review line the function wrote for a pod. */
const reviewLine = (podName: string) => functionLines.find((l) => l.msg === 'review' && l.name === podName);

describe('one emulator serving two kube-apiservers', () => {
  check('each cluster registered the function with its own secret', async () => {
    const urls: Record<string, string> = {};
    for (const name of ['a', 'b'] as const) {
      const hooks = await clusters[name].api(
        'GET',
        '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/kube-lambda-webhooks',
      );
      assert.equal(hooks.status, 200, hooks.text);
      urls[name] = hooks.body.webhooks[0].clientConfig.url;
      assert.equal(urls[name], api!.functionUrl('pod-policy', name));
      assert.equal(hooks.body.metadata.labels['kube-lambda-webhooks/cluster'], name);
    }
    assert.notEqual(urls.a, urls.b);
    const secretOf = (name: string) => readFileSync(join(stateDir, 'clusters', name, 'path-secret'), 'utf8').trim();
    assert.ok(urls.a!.endsWith(`/${secretOf('a')}`) && urls.b!.endsWith(`/${secretOf('b')}`));
  });

  check('the same violating pod is denied in a (Deny) and admitted with a warning in b (Warn)', async () => {
    const denied = await createPod(clusters.a, pod('bad-a'));
    assert.equal(denied.status, 403, denied.text);
    assert.equal(
      denied.body.message,
      'admission webhook "pod-policy.webhooks.kube-lambda.dev" denied the request: pod "bad-a" has tier=forbidden',
    );
    const warned = await createPod(clusters.b, pod('bad-b'));
    assert.equal(warned.status, 201, warned.text);
    assert.equal(
      warned.headers.warning,
      '299 - "admission webhook \\"pod-policy.webhooks.kube-lambda.dev\\" would deny the request: pod \\"bad-b\\" has tier=forbidden"',
    );
    const compliant = await createPod(clusters.a, pod('fine-a', 'normal'));
    assert.equal(compliant.status, 201, compliant.text);
  });

  check('the review lines and the request lines name the calling cluster', async () => {
    const a = reviewLine('bad-a');
    const b = reviewLine('bad-b');
    assert.ok(a && b, 'the function logged both reviews');
    // A review line names the enforcement when it is not Deny.
    assert.deepEqual([a.cluster, a.decision, a.enforcement], ['a', 'denied', undefined]);
    assert.deepEqual([b.cluster, b.decision, b.enforcement, b.wouldDeny], ['b', 'allowed', 'Warn', true]);
    const served = emulatorLines.filter((l) => l.msg === 'request' && l.function === 'pod-policy' && l.status === 200);
    assert.deepEqual([...new Set(served.map((l) => l.cluster))].sort(), ['a', 'b']);
  });

  check("klw audit over both contexts reports each cluster's violations and exits 1", async () => {
    const kubeconfig = join(work, 'fleet.kubeconfig');
    const configs = Object.entries(clusters).map(([name, c]) => ({
      name,
      c: JSON.parse(readFileSync(c.kubeconfig, 'utf8')),
    }));
    writeFileSync(
      kubeconfig,
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'Config',
        clusters: configs.map(({ name, c }) => ({ name, cluster: c.clusters[0].cluster })),
        users: configs.map(({ name, c }) => ({ name, user: c.users[0].user })),
        contexts: configs.map(({ name }) => ({ name, context: { cluster: name, user: name, namespace: 'default' } })),
        'current-context': 'a',
      }),
    );
    const run = await klwProcess('audit', '--kubeconfig', kubeconfig, '--context', 'a', '--context', 'b');
    assert.equal(run.code, 1, run.stderr);
    const rows = run.stdout
      .trim()
      .split('\n')
      .slice(1)
      .map((row) => row.split(/\s{2,}/).slice(0, 6));
    assert.deepEqual(rows, [
      ['a', 'DENIED', 'pod-policy', 'Deny', 'pods', 'default/legacy'],
      ['b', 'DENIED', 'pod-policy', 'Warn', 'pods', 'default/bad-b'],
    ]);
    assert.match(run.stderr, /cluster a: audit: 2 objects: 1 denied, 0 warned, 0 patched, 1 allowed/);
    assert.match(run.stderr, /cluster b: audit: 1 object: 1 denied.*1 by functions in Warn or Audit enforcement/);
    assert.match(run.stderr, /klw: objects would be denied in a, b\n$/);
  });

  check("after a's secret is retired, a's calls fail closed and b's keep working", async () => {
    const registered = readFileSync(join(stateDir, 'clusters', 'a', 'path-secret'), 'utf8')
      .trim()
      .split(',')[0]!;
    for (const action of ['rotate', 'retire']) {
      const done = await runKlw('--root', work, 'secret', action, '--local', '--cluster', 'a', '--state-dir', stateDir);
      assert.equal(done.code, 0, done.stderr);
    }
    // The running emulator takes the new secrets from the files it watches, without a restart.
    await until(async () => (await probe(registered)) === 404, "the emulator to take a's retired secret");
    assert.ok(emulatorLines.some((l) => l.msg === 'cluster path secrets reloaded' && l.clusters?.includes('a')));
    const fromProbe = emulatorLines.length;
    const refused = await createPod(clusters.a, pod('fine-a2', 'normal'));
    assert.equal(refused.status, 500, refused.text);
    assert.match(refused.body.message, /failed calling webhook "pod-policy\.webhooks\.kube-lambda\.dev"/);
    assert.equal((await clusters.a.api('GET', '/api/v1/namespaces/default/pods/fine-a2')).status, 404);
    assert.ok(
      emulatorLines
        .slice(fromProbe)
        .some((l) => l.function === 'pod-policy' && l.status === 404 && l.reason === 'missing or wrong path secret'),
      'the emulator refused the retired secret',
    );
    const warned = await createPod(clusters.b, pod('bad-b2'));
    assert.equal(warned.status, 201, warned.text);
    assert.match(String(warned.headers.warning), /would deny the request: pod \\"bad-b2\\" has tier=forbidden/);
    assert.equal(reviewLine('bad-b2')?.cluster, 'b');
  });
});
