// End-to-end from another host: etcd and kube-apiserver run inside a network namespace of
// their own, joined to this host by a veth pair, so the API server reaches the emulator only
// through its --public-url (the host side of the pair), with path-secret URLs.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startApi, type RunningApi } from '../../infra/local/api.ts';
import { Cluster, freePort } from './cluster.ts';

const root = process.cwd();
const optOut = process.env.KLW_E2E_NO_NETNS === '1';
const netns = `klw-e2e-${process.pid}`;
// veth names are at most 15 characters.
const [hostLink, nsLink] = [`klw${process.pid}h`, `klw${process.pid}n`];
// A /30 of its own per run: .1 on this host, .2 inside the namespace.
const subnet = `10.213.${process.pid % 250}`;
const hostAddress = `${subnet}.1`;
const nsAddress = `${subnet}.2`;
let EMULATOR_PORT = 0;

let work = '';
let clusterDir = '';
let cluster: Cluster;
const logs: Array<Record<string, any>> = [];
let api: RunningApi | undefined;
let failed = false;

const ip = (...args: string[]) => execFileSync('ip', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });

/** Creates the namespace and the veth pair; a clear error when this host cannot. */
function createNetwork(): void {
  try {
    ip('-V');
  } catch {
    throw new Error(
      '`ip` (iproute2) is not installed: run infra/e2e/build-apiserver.sh (npm run e2e:setup), or set KLW_E2E_NO_NETNS=1 to leave this test out',
    );
  }
  try {
    ip('netns', 'add', netns);
  } catch (err) {
    const uid = process.getuid?.();
    throw new Error(
      `cannot create network namespace ${netns} (uid ${uid}; root and network namespace support are needed; KLW_E2E_NO_NETNS=1 leaves this test out): ${(err as { stderr?: string }).stderr ?? err}`,
    );
  }
  ip('link', 'add', hostLink, 'type', 'veth', 'peer', 'name', nsLink);
  ip('link', 'set', nsLink, 'netns', netns);
  ip('addr', 'add', `${hostAddress}/30`, 'dev', hostLink);
  ip('link', 'set', hostLink, 'up');
  ip('-n', netns, 'addr', 'add', `${nsAddress}/30`, 'dev', nsLink);
  ip('-n', netns, 'link', 'set', nsLink, 'up');
  ip('-n', netns, 'link', 'set', 'lo', 'up');
}

/** Removes the namespace (which takes its end of the pair, and so the pair, with it). */
function removeNetwork(): void {
  try {
    ip('netns', 'del', netns);
  } catch {
    // not created
  }
  try {
    ip('link', 'del', hostLink);
  } catch {
    // already gone with the namespace
  }
}

const pod = (name: string, spec: Record<string, unknown> = {}) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name },
  spec: { containers: [{ name: 'app', image: 'nginx:1.25' }], ...spec },
});

describe('end to end with kube-apiserver in its own network namespace', {
  skip: optOut ? 'KLW_E2E_NO_NETNS=1' : false,
}, () => {
  let pids: number[] = [];

  before(async () => {
    work = mkdtempSync(join(root, '.klw-e2e-netns-'));
    clusterDir = mkdtempSync(join(tmpdir(), 'klw-netns-cluster-'));
    cluster = new Cluster(clusterDir, { netns, address: nsAddress });
    // Logs are kept when the setup fails, too.
    failed = true;
    cpSync(join(root, 'functions'), join(work, 'functions'), { recursive: true });
    delete process.env.KLW_BEARER_TOKEN;
    createNetwork();
    await cluster.startEtcd();
    await cluster.startApiServer();
    pids = cluster.pids;
    EMULATOR_PORT = await freePort(hostAddress);
    api = await startApi({
      root: work,
      host: hostAddress,
      port: EMULATOR_PORT,
      publicUrl: `https://${hostAddress}:${EMULATOR_PORT}`,
      san: ['klw-e2e.invalid'],
      stateDir: join(work, '.state'),
      log: (line) => logs.push(JSON.parse(line)),
      functionLog: () => {},
    });
    failed = false;
  });

  after(async () => {
    await api?.close();
    await cluster?.stop();
    removeNetwork();
    if (work) rmSync(work, { recursive: true, force: true });
    if (!failed && clusterDir) rmSync(clusterDir, { recursive: true, force: true });
    else process.stdout.write(`API server logs kept in ${clusterDir}\n`);
    // Nothing is left behind: no namespace, no link, no etcd or kube-apiserver.
    assert.doesNotMatch(ip('netns', 'list'), new RegExp(`^${netns}\\b`, 'm'), 'the network namespace is removed');
    assert.doesNotMatch(ip('-o', 'link', 'show'), new RegExp(`\\b${hostLink}\\b`), 'the veth pair is removed');
    for (const pid of pids) assert.throws(() => process.kill(pid, 0), { code: 'ESRCH' }, `process ${pid} is gone`);
  });

  const check = (name: string, fn: () => Promise<void>) =>
    it(name, async () => {
      try {
        await fn();
      } catch (err) {
        failed = true;
        throw err;
      }
    });

  check("the API server cannot reach the emulator on this host's loopback, only through the public URL", async () => {
    assert.equal(api!.url, `https://${hostAddress}:${EMULATOR_PORT}`);
    assert.match(
      api!.functionUrl('pod-policy'),
      new RegExp(`^https://${hostAddress.replace(/\./g, '\\.')}:${EMULATOR_PORT}/pod-policy/.{22,}$`),
    );
    // Inside the namespace, 127.0.0.1 is the namespace's own loopback: nothing listens there.
    const probe = `require('net').connect(${EMULATOR_PORT}, '127.0.0.1').on('connect', () => process.exit(0)).on('error', () => process.exit(3))`;
    let code = 0;
    try {
      execFileSync('ip', ['netns', 'exec', netns, process.execPath, '-e', probe], { stdio: 'ignore' });
    } catch (err) {
      code = (err as { status?: number }).status ?? 1;
    }
    assert.equal(code, 3, 'loopback inside the namespace does not reach the emulator');
  });

  check('the manifests with path-secret URLs are accepted and the webhooks are called through them', async () => {
    const applied = await cluster.kubectl('apply', '-f', api!.manifestsPath);
    assert.equal(applied.code, 0, applied.stderr);
    const hooks = await cluster.api(
      'GET',
      '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/kube-lambda-webhooks',
    );
    assert.equal(hooks.body.webhooks[0].clientConfig.url, api!.functionUrl('pod-policy'));
    // The API server picks up new configurations asynchronously: wait until it calls the webhook.
    let denied = await cluster.api(
      'POST',
      '/api/v1/namespaces/default/pods',
      pod('privileged', { containers: [{ name: 'app', image: 'nginx:1.25', securityContext: { privileged: true } }] }),
    );
    for (let i = 0; i < 20 && denied.status === 201; i++) {
      await cluster.api('DELETE', '/api/v1/namespaces/default/pods/privileged');
      await new Promise((r) => setTimeout(r, 250));
      denied = await cluster.api(
        'POST',
        '/api/v1/namespaces/default/pods',
        pod('privileged', {
          containers: [{ name: 'app', image: 'nginx:1.25', securityContext: { privileged: true } }],
        }),
      );
    }
    assert.equal(denied.status, 403, denied.text);
    assert.equal(
      denied.body.message,
      'admission webhook "pod-policy.webhooks.kube-lambda.dev" denied the request: pod "privileged" is not allowed: container "app" is privileged',
    );
  });

  check("an allowed pod is created with the mutating webhook's defaults", async () => {
    const created = await cluster.api('POST', '/api/v1/namespaces/default/pods', pod('compliant'));
    assert.equal(created.status, 201, created.text);
    assert.equal(created.body.metadata.labels['webhooks.kube-lambda.dev/defaulted'], 'true');
    assert.equal(created.body.spec.securityContext.runAsNonRoot, true);
  });

  check('every call the API server made through the public URL carried the secret and succeeded', async () => {
    const calls = logs.filter(
      (l) => l.msg === 'request' && (l.function === 'pod-policy' || l.function === 'pod-defaults'),
    );
    assert.ok(calls.length >= 2, `calls seen: ${calls.length}`);
    assert.deepEqual([...new Set(calls.map((l) => l.status))], [200]);
    assert.ok(!JSON.stringify(logs).includes(api!.pathSecret!), 'the secret never appears in the logs');
  });
});
