// End-to-end: admission policies served as webhooks (a 1.20 API server has no native policies),
// registered with a real kube-apiserver (v1.20, with etcd) through the emulator's manifests. A
// validating policy denies, warns and audits as its native form would (compared with the test
// kit's native evaluation); a mutating policy's object is the one stored, reinvoked with the
// webhooks around it. Then `klw audit` of the objects that existed before, and its
// `-o openreports` output applied to the cluster with the OpenReports CRDs installed.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe } from 'node:test';
import { startApi, type RunningApi } from '../../infra/local/api.ts';
import { evaluatePolicies } from '../../lib/testing/policies.ts';
import type { ValidatingPolicyWebhook } from '../../lib/policies/validating/define.ts';
import type { KubeObject } from '../../lib/review/schemas.ts';
import { KeptLogs } from './kept-logs.ts';
import { Cluster } from './cluster.ts';

const root = process.cwd();
const work = mkdtempSync(join(root, '.klw-e2e-policies-'));
const clusterDir = mkdtempSync(join(tmpdir(), 'klw-policies-cluster-'));
const stateDir = join(work, '.state');
const auditLog = join(clusterDir, 'audit.log');
const cluster = new Cluster(clusterDir);
const SELECT = 'e2e.kube-lambda.dev/policy';
const TIER = 'e2e.kube-lambda.dev/tier';
const SEEN = 'e2e.kube-lambda.dev/owner-seen';
let api: RunningApi | undefined;
/** The API server folders, kept when a test fails. */
const logs = new KeptLogs();

/** The function files of the project: three validating policies (one per action), a mutating policy and two webhooks around it. */
function writeProject(): void {
  const write = (name: string, source: string) => {
    mkdirSync(join(work, 'functions', name), { recursive: true });
    writeFileSync(join(work, 'functions', name, 'index.ts'), source);
  };
  for (const action of ['Deny', 'Warn', 'Audit']) {
    const name = `${action.toLowerCase()}-policy`;
    write(
      name,
      `import { ConfigMap, on } from 'kube-lambda-webhooks';
import { defineValidatingPolicy } from 'kube-lambda-webhooks/policies';
export const webhook = defineValidatingPolicy({
  name: '${name}',
  matchConstraints: {
    resourceRules: [on(ConfigMap).create().update()],
    objectSelector: { matchLabels: { '${SELECT}': '${action.toLowerCase()}' } },
  },
  validations: [{ expression: "!has(object.data) || !('bad' in object.data)", message: 'has key bad' }],
  validationActions: ['${action}'],
});
export const handler = webhook.handler;
export default webhook;
`,
    );
  }
  const mutate = `objectSelector: { matchLabels: { '${SELECT}': 'mutate' } }`;
  const rules = `rules: [{ operations: ['CREATE', 'UPDATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'] }]`;
  // Called first: once the policy labelled the owner, it notes it (reinvoked because the policy changed the object).
  write(
    'a-react',
    `import { defineMutatingWebhook } from 'kube-lambda-webhooks';
export const webhook = defineMutatingWebhook({
  name: 'a-react',
  ${rules},
  ${mutate},
  reinvocationPolicy: 'IfNeeded',
  mutate: (object: any) => {
    const owner = object.metadata.labels?.owner;
    if (!owner || object.metadata.annotations?.['${SEEN}']) return undefined;
    return { ...object, metadata: { ...object.metadata, annotations: { ...object.metadata.annotations, '${SEEN}': owner } } };
  },
});
export const handler = webhook.handler;
export default webhook;
`,
  );
  // The policy: labels the owner, and the tier a later webhook annotates (so only once reinvoked).
  write(
    'b-owner',
    `import { ConfigMap, on } from 'kube-lambda-webhooks';
import { defineMutatingPolicy } from 'kube-lambda-webhooks/policies';
export const webhook = defineMutatingPolicy({
  name: 'b-owner',
  matchConstraints: { resourceRules: [on(ConfigMap).create().update()], ${mutate} },
  reinvocationPolicy: 'IfNeeded',
  mutations: [
    { patchType: 'ApplyConfiguration', applyConfiguration: { expression: 'Object{ metadata: Object.metadata{ labels: {"owner": "platform"} } }' } },
    {
      patchType: 'ApplyConfiguration',
      applyConfiguration: {
        expression: "has(object.metadata.annotations) && '${TIER}' in object.metadata.annotations ? Object{ metadata: Object.metadata{ labels: {'tier': object.metadata.annotations['${TIER}']} } } : Object{}",
      },
    },
  ],
});
export const handler = webhook.handler;
export default webhook;
`,
  );
  write(
    'c-tier',
    `import { defineMutatingWebhook } from 'kube-lambda-webhooks';
export const webhook = defineMutatingWebhook({
  name: 'c-tier',
  ${rules},
  ${mutate},
  mutate: (object: any) =>
    object.metadata.annotations?.['${TIER}']
      ? undefined
      : { ...object, metadata: { ...object.metadata, annotations: { ...object.metadata.annotations, '${TIER}': 'gold' } } },
});
export const handler = webhook.handler;
export default webhook;
`,
  );
}

function klw(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [join(root, 'infra/bin/klw.mjs'), '--root', work, ...args],
      { encoding: 'utf8', maxBuffer: 16 * 1024 * 1024 },
      (err, stdout, stderr) =>
        resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

const configMap = (name: string, select: string, data: Record<string, string> = {}) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace: 'default', labels: { [SELECT]: select } },
  data,
});
const create = (body: unknown) => cluster.api('POST', '/api/v1/namespaces/default/configmaps', body);

/** The policy a function file defines, loaded here for its native evaluation. */
async function policyOf(name: string): Promise<ValidatingPolicyWebhook> {
  return (await import(join(work, 'functions', name, 'index.ts'))).default;
}

/** What the native policy answers for a configmap created by the admin. */
async function native(name: string, object: ReturnType<typeof configMap>) {
  return evaluatePolicies([await policyOf(name)], object as KubeObject, {
    operation: 'CREATE',
    namespace: 'default',
    userInfo: { username: 'admin', groups: ['system:masters', 'system:authenticated'] },
  });
}

const AUDIT_POLICY = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
  - level: Metadata
    resources: [{ group: "", resources: [configmaps] }]
  - level: None
`;

before(async () => {
  writeProject();
  writeFileSync(join(clusterDir, 'audit-policy.yaml'), AUDIT_POLICY);
  await cluster.startEtcd();
  await cluster.startApiServer(undefined, [
    `--audit-policy-file=${join(clusterDir, 'audit-policy.yaml')}`,
    `--audit-log-path=${auditLog}`,
  ]);
  // Objects that exist before any policy: only the audit finds what is wrong with them.
  for (const body of [
    configMap('legacy-deny', 'deny', { bad: '1' }),
    configMap('legacy-warn', 'warn', { bad: '1' }),
    configMap('legacy-audit', 'audit', { bad: '1' }),
    configMap('legacy-fine', 'deny', { good: '1' }),
    configMap('legacy-mutate', 'mutate'),
  ])
    assert.equal((await create(body)).status, 201);
  api = await startApi({ root: work, port: 0, stateDir, log: () => {}, functionLog: () => {} });
  const applied = await cluster.kubectl('apply', '-f', api.manifestsPath);
  assert.equal(applied.code, 0, applied.stderr);
  // The webhook configuration takes a moment to reach the API server's admission plugin.
  for (let i = 0; i < 80; i++) {
    const probe = await create(configMap('probe', 'deny', { bad: '1' }));
    if (probe.status === 201) await cluster.api('DELETE', '/api/v1/namespaces/default/configmaps/probe');
    else break;
    await sleep(250);
  }
});

after(async () => {
  await api?.close();
  await cluster.stop();
  rmSync(work, { recursive: true, force: true });
  logs.cleanUp(clusterDir);
});

const { check } = logs;

/** The audit events of a configmap's creation (the ResponseComplete stage), once the API server wrote them. */
async function auditEvents(name: string): Promise<Array<Record<string, any>>> {
  for (let i = 0; i < 40; i++) {
    const events = existsSync(auditLog)
      ? readFileSync(auditLog, 'utf8')
          .split('\n')
          .filter(Boolean)
          .map((line) => JSON.parse(line))
          .filter((e) => e.verb === 'create' && e.objectRef?.name === name && e.stage === 'ResponseComplete')
      : [];
    if (events.length) return events;
    await sleep(250);
  }
  return [];
}

describe('policies served as webhooks by kube-apiserver 1.20', () => {
  check('Deny: the request is refused with the native status code, reason and message', async () => {
    const object = configMap('new-deny', 'deny', { bad: '1' });
    const res = await create(object);
    const verdict = await native('deny-policy', object);
    assert.equal(verdict.allowed, false);
    assert.equal(res.status, verdict.status!.code, res.text);
    assert.equal(res.body.code, 422);
    assert.equal(res.body.reason, verdict.status!.reason);
    assert.equal(
      res.body.message,
      `admission webhook "deny-policy.webhooks.kube-lambda.dev" denied the request: ${verdict.status!.detail}`,
    );
    assert.equal(
      verdict.status!.detail,
      "ValidatingAdmissionPolicy 'deny-policy' with binding 'deny-policy' denied request: has key bad",
    );
    assert.equal((await create(configMap('new-fine', 'deny', { good: '1' }))).status, 201);
  });

  check('Warn: the object is created and the response carries the native warning', async () => {
    const object = configMap('new-warn', 'warn', { bad: '1' });
    const res = await create(object);
    assert.equal(res.status, 201, res.text);
    const verdict = await native('warn-policy', object);
    assert.deepEqual(verdict.warnings, [
      "Validation failed for ValidatingAdmissionPolicy 'warn-policy' with binding 'warn-policy': has key bad",
    ]);
    assert.equal(res.headers.warning, `299 - "${verdict.warnings[0]}"`);
  });

  check('Audit: the object is created and the audit log records the native validation_failure', async () => {
    const object = configMap('new-audit', 'audit', { bad: '1' });
    const res = await create(object);
    assert.equal(res.status, 201, res.text);
    assert.equal(res.headers.warning, undefined);
    const verdict = await native('audit-policy', object);
    const expected = verdict.auditAnnotations['validation.policy.admission.k8s.io/validation_failure'];
    assert.equal(
      expected,
      '[{"message":"has key bad","policy":"audit-policy","binding":"audit-policy","expressionIndex":0,"validationActions":["Audit"]}]',
    );
    const [event] = await auditEvents('new-audit');
    assert.ok(event, 'the API server logged the creation');
    // A webhook's audit annotations carry its name as their prefix.
    assert.equal(event.annotations?.['audit-policy.webhooks.kube-lambda.dev/validation_failure'], expected);
  });

  check('a mutating policy: the stored object is the mutated one, reinvoked with the webhooks around it', async () => {
    const res = await create(configMap('new-mutate', 'mutate'));
    assert.equal(res.status, 201, res.text);
    const stored = (await cluster.api('GET', '/api/v1/namespaces/default/configmaps/new-mutate')).body;
    assert.deepEqual(stored.metadata.labels, {
      [SELECT]: 'mutate',
      owner: 'platform',
      // Set by the policy when reinvoked, from the annotation the webhook after it added.
      tier: 'gold',
    });
    assert.deepEqual(stored.metadata.annotations, {
      [TIER]: 'gold',
      // Set by the webhook before the policy, when reinvoked after the policy's change.
      [SEEN]: 'platform',
    });
  });

  check('klw audit reports what each policy would decide about the objects that existed before', async () => {
    const out = await klw('audit', '--kubeconfig', cluster.kubeconfig, '-o', 'json');
    assert.equal(out.code, 1, out.stderr);
    const report = JSON.parse(out.stdout);
    const rows = report.results
      .filter((r: any) => r.name.startsWith('legacy-'))
      .map((r: any) => `${r.result} ${r.function} ${r.name}`)
      .sort();
    // Each function sees the stored object on its own: a-react has no owner label to react to.
    assert.deepEqual(rows, [
      'audited audit-policy legacy-audit',
      'denied deny-policy legacy-deny',
      'patched b-owner legacy-mutate',
      'patched c-tier legacy-mutate',
      'warned warn-policy legacy-warn',
    ]);
    const owner = report.results.find((r: any) => r.function === 'b-owner' && r.name === 'legacy-mutate');
    assert.deepEqual(owner.patch, [{ op: 'add', path: '/metadata/labels/owner', value: 'platform' }]);
  });

  check('klw audit -o openreports: the reports are accepted by the API server with the CRDs installed', async () => {
    const crds = await cluster.kubectl('apply', '-f', join(root, 'test', 'fixtures', 'openreports', 'crds.yaml'));
    assert.equal(crds.code, 0, crds.stderr);
    for (const crd of ['reports.openreports.io', 'clusterreports.openreports.io']) {
      const established = await cluster.kubectl('wait', '--for=condition=Established', `crd/${crd}`, '--timeout=60s');
      assert.equal(established.code, 0, established.stderr);
    }
    const out = await klw('audit', '--kubeconfig', cluster.kubeconfig, '-o', 'openreports');
    assert.equal(out.code, 1, out.stderr);
    const file = join(work, 'reports.yaml');
    writeFileSync(file, out.stdout);
    const applied = await cluster.kubectl('apply', '-f', file);
    assert.equal(applied.code, 0, applied.stderr);
    const legacy = (await cluster.api('GET', '/api/v1/namespaces/default/configmaps/legacy-deny')).body;
    const stored = await cluster.api(
      'GET',
      `/apis/openreports.io/v1alpha1/namespaces/default/reports/klw-${legacy.metadata.uid}`,
    );
    assert.equal(stored.status, 200, stored.text);
    assert.deepEqual(stored.body.scope, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      namespace: 'default',
      name: 'legacy-deny',
      uid: legacy.metadata.uid,
    });
    assert.deepEqual(stored.body.summary, { pass: 0, fail: 1, warn: 0, error: 0, skip: 0 });
    assert.equal(stored.body.results[0].policy, 'deny-policy');
    assert.equal(stored.body.results[0].result, 'fail');
    const all = await cluster.api('GET', '/apis/openreports.io/v1alpha1/reports');
    assert.ok(all.body.items.length >= 5, all.text);
  });
});
