// End-to-end: `klw audit` against a real kube-apiserver (v1.20, with etcd). Objects are created
// before the webhooks are registered, so some of them break the policy; the audit must report
// exactly those and exit 1, while the registered webhooks deny new ones of the same kind.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe } from 'node:test';
import { startApi, type RunningApi } from '../../infra/local/api.ts';
import { KeptLogs } from './kept-logs.ts';
import { Cluster, freePort } from './cluster.ts';

const root = process.cwd();
const work = mkdtempSync(join(root, '.klw-e2e-audit-'));
const clusterDir = mkdtempSync(join(tmpdir(), 'klw-audit-cluster-'));
const stateDir = join(work, '.state');
const cluster = new Cluster(clusterDir);
const token = `audit-webhook-${Date.now()}`;
let api: RunningApi | undefined;
/** The API server folders, kept when a test fails. */
const logs = new KeptLogs();

cpSync(join(root, 'test', 'fixtures', 'audit', 'functions'), join(work, 'functions'), { recursive: true });

function klw(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [join(root, 'infra/bin/klw.mjs'), '--root', work, ...args],
      { encoding: 'utf8' },
      (err, stdout, stderr) =>
        resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

const ENFORCE = 'audit.example.com/enforce';
const object = (kind: 'ConfigMap' | 'Pod', namespace: string, name: string, labels: Record<string, string>) => ({
  apiVersion: 'v1',
  kind,
  metadata: { name, namespace, labels },
  ...(kind === 'Pod' ? { spec: { containers: [{ name: 'app', image: 'nginx:1.25' }] } } : { data: { k: 'v' } }),
});
async function create(body: ReturnType<typeof object> | Record<string, any>): Promise<{ status: number; body: any }> {
  const path =
    body.kind === 'Namespace'
      ? '/api/v1/namespaces'
      : `/api/v1/namespaces/${body.metadata.namespace}/${body.kind === 'Pod' ? 'pods' : 'configmaps'}`;
  return cluster.api('POST', path, body);
}

before(async () => {
  const port = await freePort();
  const auth = await klw(
    'auth-config',
    '--url',
    `https://127.0.0.1:${port}`,
    '--token',
    token,
    '--out-dir',
    join(clusterDir, 'auth'),
  );
  assert.equal(auth.code, 0, auth.stderr);
  await cluster.startEtcd();
  await cluster.startApiServer(join(clusterDir, 'auth', 'admission-config.yaml'));

  // The objects exist before any webhook does.
  for (const [name, labels] of [
    ['audit-on', { [ENFORCE]: 'on' }],
    ['audit-off', { [ENFORCE]: 'off' }],
  ] as const) {
    const res = await create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels } });
    assert.equal(res.status, 201, JSON.stringify(res.body));
  }
  const existing = [
    object('ConfigMap', 'audit-on', 'cm-bad', { tier: 'forbidden', owner: 'a' }),
    object('ConfigMap', 'audit-on', 'cm-ok', { owner: 'a' }),
    object('ConfigMap', 'audit-on', 'cm-noowner', {}),
    object('ConfigMap', 'audit-on', 'cm-exempt', { tier: 'forbidden', 'audit.example.com/exempt': 'yes' }),
    object('ConfigMap', 'audit-off', 'cm-off-bad', { tier: 'forbidden' }),
    object('ConfigMap', 'default', 'cm-default-bad', { tier: 'forbidden' }),
    object('Pod', 'audit-on', 'pod-bad', { tier: 'forbidden', owner: 'a', team: 't' }),
    object('Pod', 'audit-on', 'pod-unteamed', { owner: 'a' }),
    object('Pod', 'audit-on', 'pod-ok', { owner: 'a', team: 't' }),
  ];
  for (const body of existing) {
    const res = await create(body);
    assert.equal(res.status, 201, JSON.stringify(res.body));
  }
  // Extra configmaps, so the audit pages through more than one list page.
  for (let i = 0; i < 7; i++)
    assert.equal((await create(object('ConfigMap', 'audit-on', `cm-filler-${i}`, { owner: 'a' }))).status, 201);

  // Then the webhooks are registered.
  process.env.KLW_BEARER_TOKEN = token;
  api = await startApi({ root: work, port, stateDir, log: () => {}, functionLog: () => {} });
  const applied = await cluster.kubectl('apply', '-f', api.manifestsPath);
  assert.equal(applied.code, 0, applied.stderr);
});

after(async () => {
  await api?.close();
  await cluster.stop();
  delete process.env.KLW_BEARER_TOKEN;
  rmSync(work, { recursive: true, force: true });
  logs.cleanUp(clusterDir);
});

const { check } = logs;

describe('klw audit against kube-apiserver', () => {
  check('the registered webhook denies a new violating object', async () => {
    let res = await create(object('ConfigMap', 'audit-on', 'cm-new-bad', { tier: 'forbidden' }));
    // The webhook configuration takes a moment to reach the API server's admission plugin.
    for (let i = 0; i < 40 && res.status === 201; i++) {
      await cluster.api('DELETE', '/api/v1/namespaces/audit-on/configmaps/cm-new-bad');
      await new Promise((r) => setTimeout(r, 250));
      res = await create(object('ConfigMap', 'audit-on', 'cm-new-bad', { tier: 'forbidden' }));
    }
    assert.equal(res.status, 403, JSON.stringify(res.body));
    assert.match(res.body.message, /denied the request: ConfigMap "cm-new-bad" has tier=forbidden/);
  });

  check('klw audit reports exactly the existing violations and exits 1', async () => {
    const out = await klw('audit', '--kubeconfig', cluster.kubeconfig, '-o', 'json', '--page-size', '3');
    assert.equal(out.code, 1, out.stderr);
    const report = JSON.parse(out.stdout);
    const list = (result: string) =>
      report.results
        .filter((r: any) => r.result === result)
        .map((r: any) => `${r.function} ${r.resource} ${r.namespace}/${r.name}`)
        .sort();
    assert.deepEqual(list('denied'), ['audit-policy configmaps audit-on/cm-bad', 'audit-policy pods audit-on/pod-bad']);
    assert.deepEqual(list('warned'), ['audit-policy configmaps audit-on/cm-noowner']);
    // audit-defaults registers CREATE only: it sees each pod as if created now.
    assert.deepEqual(list('patched'), ['audit-defaults pods audit-on/pod-unteamed']);
    assert.deepEqual(report.results.filter((r: any) => r.rejected).length, 2);
    assert.equal(report.summary.error, 0);
    // The auditor is who the API server says the token belongs to (a TokenReview on 1.20).
    assert.equal(report.auditor.username, 'admin');
    assert.ok(report.auditor.groups.includes('system:masters'));
    assert.match(out.stderr, /klw: 2 objects would be denied/);
  });

  check('the table, and exit 0 for a function that only patches', async () => {
    const table = await klw('audit', '--kubeconfig', cluster.kubeconfig, '--context', 'e2e');
    assert.equal(table.code, 1);
    assert.match(
      table.stdout,
      /^DENIED\s+audit-policy\s+Deny\s+configmaps\s+audit-on\/cm-bad\s+ConfigMap "cm-bad" has tier=forbidden$/m,
    );
    const defaults = await klw('audit', 'audit-defaults', '--kubeconfig', cluster.kubeconfig);
    assert.equal(defaults.code, 0, defaults.stderr);
    assert.match(defaults.stderr, /0 denied, 0 warned, 1 patched/);
  });
});
