// End-to-end: enforcement modes against a real kube-apiserver (v1.20, with etcd). The same
// policy runs as three webhooks: `Deny` rejects a violating pod; `Warn` (set in the
// registration) and a `Deny` registration turned to `Warn` by KLW_ENFORCEMENT_<NAME> in the
// function's environment admit it with the denial in the `Warning` header, which kubectl
// prints; `Audit` admits it silently and logs that it would have denied.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe } from 'node:test';
import { startApi, type RunningApi } from '../../infra/local/api.ts';
import { KeptLogs } from './kept-logs.ts';
import { Cluster, freePort } from './cluster.ts';

const root = process.cwd();
const work = mkdtempSync(join(root, '.klw-e2e-enforcement-'));
const clusterDir = mkdtempSync(join(tmpdir(), 'klw-enforcement-cluster-'));
const stateDir = join(work, '.state');
const cluster = new Cluster(clusterDir);
const token = `enforcement-webhook-${Date.now()}`;
const functionLines: Array<Record<string, any>> = [];
let api: RunningApi | undefined;
/** The API server folders, kept when a test fails. */
const logs = new KeptLogs();

/** Label that routes a pod to one of the webhooks. */
const MODE_LABEL = 'e2e.kube-lambda.dev/mode';

/** Writes a validating function denying pods labelled tier=forbidden, selected by MODE_LABEL=<label>. */
function policy(name: string, label: string, extra: string): void {
  mkdirSync(join(work, 'functions', name), { recursive: true });
  writeFileSync(
    join(work, 'functions', name, 'index.ts'),
    `import { allow, defineValidatingWebhook, deny } from 'kube-lambda-webhooks';
export const webhook = defineValidatingWebhook({
  name: '${name}',
  objectSelector: { matchLabels: { '${MODE_LABEL}': '${label}' } },
  rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'], scope: 'Namespaced' }],
  ${extra}
  validate: (r) => (r.object?.metadata?.labels?.tier === 'forbidden' ? deny(\`pod "\${r.object.metadata.name}" has tier=forbidden\`) : allow()),
});
export const handler = webhook.handler;
export default webhook;
`,
  );
}
policy('deny-policy', 'deny', '');
policy('warn-policy', 'warn', "enforcement: 'Warn',");
policy('audit-policy', 'audit', "enforcement: 'Audit',");
// Deny in the code, Warn in this environment: the rollout switch without a code change.
policy('env-policy', 'env', "lambda: { environment: { KLW_ENFORCEMENT_ENV_POLICY: 'Warn' } },");

const pod = (name: string, mode: string, tier = 'forbidden') => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, labels: { [MODE_LABEL]: mode, tier } },
  spec: { containers: [{ name: 'app', image: 'nginx:1.25' }] },
});
const createPod = (body: unknown) => cluster.api('POST', '/api/v1/namespaces/default/pods', body);

function kubectlCreate(body: unknown): Promise<{ code: number; stdout: string; stderr: string }> {
  const file = join(work, `pod-${Date.now()}.json`);
  writeFileSync(file, JSON.stringify(body));
  return cluster.kubectl('create', '-f', file);
}

before(async () => {
  const port = await freePort();
  const auth = await new Promise<{ code: number; stderr: string }>((resolve) =>
    execFile(
      process.execPath,
      [
        join(root, 'infra/bin/klw.mjs'),
        '--root',
        work,
        'auth-config',
        '--url',
        `https://127.0.0.1:${port}`,
        '--token',
        token,
        '--out-dir',
        join(clusterDir, 'auth'),
      ],
      { encoding: 'utf8' },
      (err, _stdout, stderr) => resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stderr }),
    ),
  );
  assert.equal(auth.code, 0, auth.stderr);
  await cluster.startEtcd();
  await cluster.startApiServer(join(clusterDir, 'auth', 'admission-config.yaml'));
  process.env.KLW_BEARER_TOKEN = token;
  api = await startApi({
    root: work,
    port,
    stateDir,
    log: () => {},
    functionLog: (line) => {
      try {
        functionLines.push(JSON.parse(line));
      } catch {
        // a text line: not a review line
      }
    },
  });
  const applied = await cluster.kubectl('apply', '-f', api.manifestsPath);
  assert.equal(applied.code, 0, applied.stderr);
  // The webhook configuration takes a moment to reach the API server's admission plugin.
  let res = await createPod(pod('probe', 'deny'));
  for (let i = 0; i < 40 && res.status === 201; i++) {
    await cluster.api('DELETE', '/api/v1/namespaces/default/pods/probe');
    await sleep(250);
    res = await createPod(pod('probe', 'deny'));
  }
});

after(async () => {
  await api?.close();
  await cluster.stop();
  delete process.env.KLW_BEARER_TOKEN;
  rmSync(work, { recursive: true, force: true });
  logs.cleanUp(clusterDir);
});

const { check } = logs;

/** The review line a function wrote for a pod. */
const reviewLine = (webhook: string, podName: string) =>
  functionLines.find((l) => l.msg === 'review' && l.webhook === webhook && l.name === podName);

describe('enforcement modes against kube-apiserver', () => {
  check('the manifests carry URLs with the path secret', async () => {
    const hooks = await cluster.api(
      'GET',
      '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/kube-lambda-webhooks',
    );
    const urls = Object.fromEntries(hooks.body.webhooks.map((w: any) => [w.name, w.clientConfig.url]));
    assert.equal(urls['warn-policy.webhooks.kube-lambda.dev'], api!.functionUrl('warn-policy'));
  });

  check('Deny rejects a violating pod', async () => {
    const res = await createPod(pod('denied', 'deny'));
    assert.equal(res.status, 403, res.text);
    assert.equal(
      res.body.message,
      'admission webhook "deny-policy.webhooks.kube-lambda.dev" denied the request: pod "denied" has tier=forbidden',
    );
  });

  check('Warn admits a violating pod with the denial in the Warning header, and kubectl prints it', async () => {
    const res = await createPod(pod('warned', 'warn'));
    assert.equal(res.status, 201, res.text);
    assert.equal(
      res.headers.warning,
      '299 - "admission webhook \\"warn-policy.webhooks.kube-lambda.dev\\" would deny the request: pod \\"warned\\" has tier=forbidden"',
    );
    const stored = await cluster.api('GET', '/api/v1/namespaces/default/pods/warned');
    assert.equal(stored.status, 200);
    const out = await kubectlCreate(pod('warned-kubectl', 'warn'));
    assert.equal(out.code, 0, out.stderr);
    assert.match(
      out.stderr,
      /Warning: admission webhook "warn-policy\.webhooks\.kube-lambda\.dev" would deny the request: pod "warned-kubectl" has tier=forbidden/,
    );
    const line = reviewLine('warn-policy', 'warned');
    assert.ok(line, 'the function logged the review');
    assert.equal(line.wouldDeny, true);
    assert.equal(line.WouldDeny, 1);
    assert.equal(line.decision, 'allowed');
  });

  check('a compliant pod under Warn gets no warning', async () => {
    const res = await createPod(pod('fine', 'warn', 'normal'));
    assert.equal(res.status, 201, res.text);
    assert.equal(res.headers.warning, undefined);
  });

  check("KLW_ENFORCEMENT_<NAME> in the function's environment turns a Deny registration into Warn", async () => {
    const res = await createPod(pod('env-warned', 'env'));
    assert.equal(res.status, 201, res.text);
    assert.match(String(res.headers.warning), /env-policy\.webhooks\.kube-lambda\.dev\\" would deny the request/);
  });

  check('Audit admits a violating pod silently and logs that it would have denied', async () => {
    const res = await createPod(pod('audited', 'audit'));
    assert.equal(res.status, 201, res.text);
    assert.equal(res.headers.warning, undefined);
    const line = reviewLine('audit-policy', 'audited');
    assert.ok(line, 'the function logged the review');
    assert.equal(line.enforcement, 'Audit');
    assert.equal(line.WouldDeny, 1);
  });
});
