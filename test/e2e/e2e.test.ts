// End-to-end: the functions behind the local emulator, registered with a real kube-apiserver
// (v1.20, with etcd) through the generated manifests. Every assertion is on what the API
// server returns.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import { parse } from 'yaml';
import { startApi, type RunningApi } from '../../infra/local/api.ts';
import { Cluster, freePort } from './cluster.ts';

const root = process.cwd();
const work = mkdtempSync(join(root, '.klw-e2e-'));
const clusterDir = mkdtempSync(join(tmpdir(), 'klw-cluster-'));
const stateDir = join(work, '.state');
const cluster = new Cluster(clusterDir);
const token = `webhook-${Date.now()}`;
const logs: Array<Record<string, any>> = [];
let emulatorPort = 0;
let api: RunningApi | undefined;
let passed = 0;
let failed = 0;

// Functions only this run deploys: handlers that never answer. Their Lambda context says 300 ms
// remain (the injected delay), so the adapter's budget ends after 200 ms and it answers on its
// own, seconds before the API server's timeoutSeconds (5): no race with the machine's load.
cpSync(join(root, 'functions'), join(work, 'functions'), { recursive: true });
/** The Lambda time left that the stalling functions' context reports, in ms. */
const STALL_REMAINING_MS = 300;
const slowFunction = (name: string, kind: 'Validating' | 'Mutating', failurePolicy: string, label: string) => {
  mkdirSync(join(work, 'functions', name), { recursive: true });
  writeFileSync(
    join(work, 'functions', name, 'index.ts'),
    `import { define${kind}Webhook } from 'kube-lambda-webhooks';
export const webhook = define${kind}Webhook({
  name: '${name}',
  timeoutSeconds: 5,
  failurePolicy: '${failurePolicy}',
  objectSelector: { matchLabels: { 'e2e.kube-lambda.dev/slow': '${label}' } },
  rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'], scope: 'Namespaced' }],
  ${kind === 'Validating' ? 'validate' : 'mutate'}: () => new Promise<never>(() => {}),
});
export const handler = (event: unknown, context: Record<string, unknown>) =>
  webhook.handler(event as never, { ...context, getRemainingTimeInMillis: () => ${STALL_REMAINING_MS} } as never);
export default webhook;
`,
  );
};
slowFunction('slow-policy', 'Validating', 'Fail', 'fail');
slowFunction('slow-defaults', 'Mutating', 'Ignore', 'ignore');

function klw(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [join(root, 'infra/bin/klw.mjs'), '--root', work, ...args],
      { encoding: 'utf8' },
      (err, stdout, stderr) => resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

async function startEmulator(expectedToken: string): Promise<void> {
  process.env.KLW_BEARER_TOKEN = expectedToken;
  process.env.KLW_LOG_LEVEL = 'info';
  api = await startApi({
    root: work,
    port: emulatorPort,
    stateDir,
    build: api === undefined,
    log: (line) => logs.push(JSON.parse(line)),
    functionLog: (line) => {
      try {
        logs.push(JSON.parse(line));
      } catch {
        logs.push({ msg: 'text', line });
      }
    },
  });
}

async function stopEmulator(): Promise<void> {
  await api?.close();
}

/** A scenario: a test whose outcome also counts toward the summary line. */
function scenario(name: string, fn: () => Promise<void>): void {
  it(name, async () => {
    try {
      await fn();
      passed++;
    } catch (err) {
      failed++;
      throw err;
    }
  });
}

const pod = (name: string, spec: Record<string, unknown> = {}, labels: Record<string, string> = {}) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, labels },
  spec: { containers: [{ name: 'app', image: 'nginx:1.25' }], ...spec },
});
const createPod = (body: unknown, query = '') => cluster.api('POST', `/api/v1/namespaces/default/pods${query}`, body);
/** A POST straight to the emulator, as someone other than the API server would send it. */
const post = (url: string, body: string, ca: string) =>
  new Promise<{ status: number; text: string }>((resolve, reject) => {
    const req = httpsRequest(url, { method: 'POST', ca, headers: { 'content-type': 'application/json' } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
    });
    req.on('error', reject);
    req.end(body);
  });
const crontabs = (version: string, name = '') =>
  `/apis/example.com/${version}/namespaces/default/crontabs${name ? `/${name}` : ''}`;

async function applyManifests(): Promise<void> {
  const out = await cluster.kubectl('apply', '-f', join(stateDir, 'manifests.yaml'));
  assert.equal(out.code, 0, out.stderr);
}

before(async () => {
  emulatorPort = await freePort();
  const auth = await klw(
    'auth-config',
    '--url',
    `https://127.0.0.1:${emulatorPort}`,
    '--token',
    token,
    '--out-dir',
    join(clusterDir, 'auth'),
  );
  assert.equal(auth.code, 0, auth.stderr);
  await cluster.startEtcd();
  await cluster.startApiServer(join(clusterDir, 'auth', 'admission-config.yaml'));
  await startEmulator(token);
});

after(async () => {
  const pids = cluster.pids;
  await stopEmulator();
  await cluster.stop();
  // No etcd or kube-apiserver is left running.
  for (const pid of pids) assert.throws(() => process.kill(pid, 0), { code: 'ESRCH' }, `process ${pid} is gone`);
  delete process.env.KLW_BEARER_TOKEN;
  rmSync(work, { recursive: true, force: true });
  if (!failed) rmSync(clusterDir, { recursive: true, force: true });
  else process.stdout.write(`API server logs kept in ${clusterDir}\n`);
  process.stdout.write(`e2e: ${passed} passed, ${failed} failed\n`);
});

describe('end to end against kube-apiserver', () => {
  scenario('the start-api manifests are accepted as they are, the CRD with its conversion config too', async () => {
    await applyManifests();
    const crd = await cluster.kubectl(
      'wait',
      '--for',
      'condition=established',
      '--timeout=30s',
      'crd/crontabs.example.com',
    );
    assert.equal(crd.code, 0, crd.stderr);
    const stored = await cluster.api(
      'GET',
      '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/crontabs.example.com',
    );
    assert.equal(stored.body.spec.conversion.strategy, 'Webhook');
    assert.ok(api!.pathSecret && api!.pathSecret.length >= 22, 'the emulator has a path secret of at least 128 bits');
    assert.equal(
      stored.body.spec.conversion.webhook.clientConfig.url,
      `https://127.0.0.1:${emulatorPort}/crontab-conversion/${api!.pathSecret}`,
    );
    assert.equal(stored.body.spec.conversion.webhook.clientConfig.url, api!.functionUrl('crontab-conversion'));
    const hooks = await cluster.api(
      'GET',
      '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/kube-lambda-webhooks',
    );
    assert.deepEqual(hooks.body.webhooks.map((w: any) => w.name).sort(), [
      'pod-policy.webhooks.kube-lambda.dev',
      // A policy is a webhook served from Lambda where the cluster's version is not known.
      'replica-cap.webhooks.kube-lambda.dev',
      'slow-policy.webhooks.kube-lambda.dev',
    ]);
  });

  scenario('klw manifests output is accepted by the API server (server-side dry run)', async () => {
    const out = await klw(
      'manifests',
      '--kube-version',
      '1.20',
      '--base-url',
      `https://127.0.0.1:${emulatorPort}`,
      '--ca-bundle',
      join(stateDir, 'ca.crt'),
      '--path-secret',
      'local',
      '--state-dir',
      stateDir,
      '--out',
      join(clusterDir, 'manifests.yaml'),
    );
    assert.equal(out.code, 0, out.stderr);
    const applied = await cluster.kubectl('apply', '--dry-run=server', '-f', join(clusterDir, 'manifests.yaml'));
    assert.equal(applied.code, 0, applied.stderr);
  });

  scenario(
    'klw manifests without --path-secret writes manifests the API server refuses, naming --path-secret',
    async () => {
      const file = join(clusterDir, 'placeholder.yaml');
      const out = await klw(
        'manifests',
        '--kube-version',
        '1.20',
        '--base-url',
        `https://127.0.0.1:${emulatorPort}`,
        '--ca-bundle',
        join(stateDir, 'ca.crt'),
        '--out',
        file,
      );
      assert.equal(out.code, 0, out.stderr);
      const applied = await cluster.kubectl('apply', '--dry-run=server', '-f', file);
      assert.notEqual(applied.code, 0, 'manifests with the placeholder applied: every call would get a 404');
      assert.match(applied.stderr, /query parameters are not permitted/);
      assert.match(applied.stderr, /klw-manifests--path-secret/);
    },
  );

  scenario("pod-policy: a privileged pod is rejected with the function's message", async () => {
    const res = await createPod(
      pod('privileged', { containers: [{ name: 'app', image: 'nginx:1.25', securityContext: { privileged: true } }] }),
    );
    assert.equal(res.status, 403);
    assert.equal(
      res.body.message,
      'admission webhook "pod-policy.webhooks.kube-lambda.dev" denied the request: pod "privileged" is not allowed: container "app" is privileged',
    );
    const host = await createPod(pod('host-network', { hostNetwork: true }));
    assert.equal(host.status, 403);
    assert.match(host.body.message, /spec\.hostNetwork is true/);
  });

  scenario('pod-policy: a compliant pod is created; an untagged image comes back as a Warning header', async () => {
    const ok = await createPod(pod('compliant'));
    assert.equal(ok.status, 201, ok.text);
    const untagged = await createPod(pod('untagged', { containers: [{ name: 'app', image: 'nginx' }] }));
    assert.equal(untagged.status, 201, untagged.text);
    assert.match(
      String(untagged.headers.warning),
      /^299 - "container \\"app\\" uses image \\"nginx\\" without a tag; pin a version"$/,
    );
  });

  scenario('pod-defaults: a created pod is stored with the defaults, keeping what the user set', async () => {
    const created = await createPod(
      pod('defaults', {
        securityContext: { runAsNonRoot: false },
        containers: [{ name: 'app', image: 'nginx:1.25', resources: { limits: { cpu: '2' } } }],
      }),
    );
    assert.equal(created.status, 201, created.text);
    const stored = (await cluster.api('GET', '/api/v1/namespaces/default/pods/defaults')).body;
    assert.equal(stored.metadata.labels['webhooks.kube-lambda.dev/defaulted'], 'true');
    assert.equal(stored.spec.securityContext.runAsNonRoot, false, "the user's value is kept");
    assert.deepEqual(stored.spec.containers[0].resources.limits, { cpu: '2', memory: '256Mi' });
    const plain = (await cluster.api('GET', '/api/v1/namespaces/default/pods/compliant')).body;
    assert.equal(plain.spec.securityContext.runAsNonRoot, true);
  });

  scenario('pod-defaults: an UPDATE that changes nothing keeps the pod unchanged', async () => {
    const before = (await cluster.api('GET', '/api/v1/namespaces/default/pods/compliant')).body;
    const updated = await cluster.api('PUT', '/api/v1/namespaces/default/pods/compliant', before);
    assert.equal(updated.status, 200, updated.text);
    assert.deepEqual(updated.body.spec, before.spec);
    assert.deepEqual(updated.body.metadata.labels, before.metadata.labels);
    const after = (await cluster.api('GET', '/api/v1/namespaces/default/pods/compliant')).body;
    assert.deepEqual(after.spec, before.spec, 'the stored pod is unchanged');
  });

  scenario('crontab-conversion: created as v1beta1, read as v1; created as v1, read as v1beta1', async () => {
    const beta = await cluster.api('POST', crontabs('v1beta1'), {
      apiVersion: 'example.com/v1beta1',
      kind: 'CronTab',
      metadata: { name: 'local-crontab' },
      hostPort: 'localhost:1234',
    });
    assert.equal(beta.status, 201, beta.text);
    const asV1 = (await cluster.api('GET', crontabs('v1', 'local-crontab'))).body;
    assert.deepEqual(
      [asV1.apiVersion, asV1.host, asV1.port, asV1.hostPort],
      ['example.com/v1', 'localhost', '1234', undefined],
    );
    const v1 = await cluster.api('POST', crontabs('v1'), {
      apiVersion: 'example.com/v1',
      kind: 'CronTab',
      metadata: { name: 'remote-crontab' },
      host: 'example.com',
      port: '2345',
    });
    assert.equal(v1.status, 201, v1.text);
    assert.equal(v1.body.host, 'example.com');
    const asBeta = (await cluster.api('GET', crontabs('v1beta1', 'remote-crontab'))).body;
    assert.deepEqual(
      [asBeta.apiVersion, asBeta.hostPort, asBeta.host],
      ['example.com/v1beta1', 'example.com:2345', undefined],
    );
  });

  scenario('crontab-conversion: a list holding both objects reads correctly at each version', async () => {
    const atV1 = (await cluster.api('GET', crontabs('v1'))).body;
    assert.deepEqual(
      atV1.items.map((o: any) => [o.metadata.name, o.apiVersion, o.host, o.port]),
      [
        ['local-crontab', 'example.com/v1', 'localhost', '1234'],
        ['remote-crontab', 'example.com/v1', 'example.com', '2345'],
      ],
    );
    const atBeta = (await cluster.api('GET', crontabs('v1beta1'))).body;
    assert.deepEqual(
      atBeta.items.map((o: any) => [o.metadata.name, o.hostPort]),
      [
        ['local-crontab', 'localhost:1234'],
        ['remote-crontab', 'example.com:2345'],
      ],
    );
  });

  scenario('crontab-conversion: a bad hostPort gives the conversion error', async () => {
    const bad = await cluster.api('POST', crontabs('v1beta1'), {
      apiVersion: 'example.com/v1beta1',
      kind: 'CronTab',
      metadata: { name: 'bad-crontab' },
      hostPort: 'no-port-here',
    });
    assert.equal(bad.status, 201, bad.text);
    const read = await cluster.api('GET', crontabs('v1', 'bad-crontab'));
    assert.equal(read.status, 500);
    assert.match(
      read.body.message,
      /conversion webhook for example\.com\/v1beta1, Kind=CronTab failed: hostPort could not be parsed into a separate host and port/,
    );
    assert.equal((await cluster.api('DELETE', crontabs('v1beta1', 'bad-crontab'))).status, 200);
  });

  scenario('admissionReviewVersions [v1beta1] and conversionReviewVersions [v1beta1] work as well as v1', async () => {
    const config = parse(
      readFileSync(join(stateDir, 'manifests.yaml'), 'utf8')
        .split(/^---$/m)
        .find((d) => d.includes('kind: ValidatingWebhookConfiguration'))!,
    );
    const hook = config.webhooks.find((w: any) => w.name === 'pod-policy.webhooks.kube-lambda.dev');
    const betaConfig = {
      ...config,
      metadata: { name: 'kube-lambda-webhooks-v1beta1' },
      webhooks: [
        {
          ...hook,
          name: 'pod-policy-v1beta1.webhooks.kube-lambda.dev',
          admissionReviewVersions: ['v1beta1'],
          objectSelector: { matchLabels: { 'e2e.kube-lambda.dev/review': 'v1beta1' } },
        },
      ],
    };
    const created = await cluster.api(
      'POST',
      '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations',
      betaConfig,
    );
    assert.equal(created.status, 201, created.text);
    await sleep(1500); // the API server picks up new configurations asynchronously
    logs.length = 0;
    const allowed = await createPod(pod('review-v1beta1', {}, { 'e2e.kube-lambda.dev/review': 'v1beta1' }));
    assert.equal(allowed.status, 201, allowed.text);
    const denied = await createPod(
      pod('review-v1beta1-bad', { hostPID: true }, { 'e2e.kube-lambda.dev/review': 'v1beta1' }),
    );
    assert.equal(denied.status, 403);
    const versions = logs.filter((l) => l.msg === 'review' && l.webhook === 'pod-policy').map((l) => l.reviewVersion);
    assert.ok(versions.includes('admission.k8s.io/v1beta1'), `review versions seen: ${versions.join(', ')}`);
    await cluster.api(
      'DELETE',
      '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/kube-lambda-webhooks-v1beta1',
    );

    const crdPath = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/crontabs.example.com';
    const patch = { spec: { conversion: { webhook: { conversionReviewVersions: ['v1beta1'] } } } };
    assert.equal((await cluster.api('PATCH', crdPath, patch, 'application/merge-patch+json')).status, 200);
    await sleep(1500);
    logs.length = 0;
    const read = (await cluster.api('GET', crontabs('v1', 'local-crontab'))).body;
    assert.equal(read.host, 'localhost');
    assert.ok(
      logs.some(
        (l) =>
          l.msg === 'review' &&
          l.webhook === 'crontab-conversion' &&
          l.reviewVersion === 'apiextensions.k8s.io/v1beta1',
      ),
    );
    await cluster.api(
      'PATCH',
      crdPath,
      { spec: { conversion: { webhook: { conversionReviewVersions: ['v1', 'v1beta1'] } } } },
      'application/merge-patch+json',
    );
  });

  scenario(
    "path secret: the API server's calls carry it; a direct call without it or with a wrong one gets 404",
    async () => {
      const converted = logs.filter((l) => l.msg === 'request' && l.function === 'crontab-conversion');
      assert.ok(
        converted.length > 0 && converted.every((l) => l.status === 200),
        'every conversion call through the registered URL succeeded',
      );
      assert.ok(!JSON.stringify(logs).includes(api!.pathSecret!), 'the secret never appears in the logs');
      const review = JSON.stringify({
        apiVersion: 'apiextensions.k8s.io/v1',
        kind: 'ConversionReview',
        request: { uid: 'direct', desiredAPIVersion: 'example.com/v1', objects: [] },
      });
      const ca = readFileSync(api!.caPath, 'utf8');
      const direct = (url: string) => post(url, review, ca);
      assert.equal((await direct(api!.functionUrl('crontab-conversion'))).status, 200, 'the registered URL answers');
      assert.equal((await direct(`${api!.url}/crontab-conversion`)).status, 404, 'no secret');
      const wrong = `${api!.pathSecret!.slice(0, -1)}${api!.pathSecret!.endsWith('A') ? 'B' : 'A'}`;
      assert.equal((await direct(`${api!.url}/crontab-conversion/${wrong}`)).status, 404, 'a wrong secret');
    },
  );

  scenario('a dryRun=All create goes through the webhooks (sideEffects None) and stores nothing', async () => {
    const dry = await createPod(pod('dry-run'), '?dryRun=All');
    assert.equal(dry.status, 201, dry.text);
    assert.equal(dry.body.metadata.labels['webhooks.kube-lambda.dev/defaulted'], 'true', 'the mutating webhook ran');
    assert.equal((await cluster.api('GET', '/api/v1/namespaces/default/pods/dry-run')).status, 404);
    const denied = await createPod(pod('dry-run-bad', { hostIPC: true }), '?dryRun=All');
    assert.equal(denied.status, 403);
    assert.match(denied.body.message, /spec\.hostIPC is true/);
  });

  // Each answer is the adapter's own (504 with its message, or the Ignore warning): the API
  // server's timeout would have given a 500 "context deadline exceeded" instead.
  scenario('a handler slower than timeoutSeconds is answered as the registration says', async () => {
    const failClosed = await createPod(pod('slow-fail', {}, { 'e2e.kube-lambda.dev/slow': 'fail' }));
    assert.equal(failClosed.status, 504, failClosed.text);
    assert.match(
      failClosed.body.message,
      /admission webhook "slow-policy\.webhooks\.kube-lambda\.dev" denied the request: webhook slow-policy\.webhooks\.kube-lambda\.dev did not answer within 200 ms/,
    );
    const failOpen = await createPod(pod('slow-ignore', {}, { 'e2e.kube-lambda.dev/slow': 'ignore' }));
    assert.equal(failOpen.status, 201, failOpen.text);
    assert.match(
      String(failOpen.headers.warning),
      /did not answer within 200 ms.*admitted because failurePolicy is Ignore/,
    );
  });

  scenario(
    'the bearer token from klw auth-config reaches the webhooks; a wrong one fails and failurePolicy decides',
    async () => {
      const calls = logs.filter((l) => l.msg === 'request' && l.function === 'pod-policy');
      assert.ok(calls.length > 0 && calls.every((l) => l.status !== 401), 'every call so far carried the right token');
      await stopEmulator();
      await startEmulator('another-token');
      const rejected = await createPod(pod('wrong-token'));
      assert.equal(rejected.status, 500, rejected.text);
      assert.match(rejected.body.message, /failed calling webhook "pod-policy\.webhooks\.kube-lambda\.dev"/);
      assert.ok(logs.some((l) => l.msg === 'request' && l.function === 'pod-policy' && l.status === 401));
      assert.ok(
        logs.some((l) => l.msg === 'request' && l.function === 'pod-defaults' && l.status === 401),
        'the mutating webhook was refused too, and ignored',
      );
      // Conversion calls carry no credentials and are never checked.
      assert.equal((await cluster.api('GET', crontabs('v1', 'local-crontab'))).body.host, 'localhost');
      await stopEmulator();
      await startEmulator(token);
      assert.equal((await createPod(pod('right-token-again'))).status, 201);
    },
  );

  scenario('with the emulator stopped, failurePolicy Fail rejects and Ignore admits', async () => {
    await stopEmulator();
    const rejected = await createPod(pod('emulator-down'));
    assert.equal(rejected.status, 500, rejected.text);
    assert.match(rejected.body.message, /failed calling webhook "pod-policy\.webhooks\.kube-lambda\.dev"/);
    // Without the fail-closed validating configuration, only the fail-open mutating webhook is left.
    assert.equal(
      (
        await cluster.api(
          'DELETE',
          '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/kube-lambda-webhooks',
        )
      ).status,
      200,
    );
    await sleep(1500);
    const admitted = await createPod(pod('emulator-down-ignored'));
    assert.equal(admitted.status, 201, admitted.text);
    assert.equal(
      admitted.body.metadata.labels?.['webhooks.kube-lambda.dev/defaulted'],
      undefined,
      'admitted without the unreachable mutation',
    );
    await startEmulator(token);
    await applyManifests();
  });
});
