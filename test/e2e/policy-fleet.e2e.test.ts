// End-to-end, as a user runs it: a project with a validating and a mutating policy and a fleet of
// three clusters, Kubernetes 1.20 (a real kube-apiserver v1.20 with its etcd), 1.31 and 1.36 (not
// running: their files are checked against the admissionregistration schemas). ONE `klw manifests
// --all-clusters` through the CLI gives 1.20 webhook configurations, which the real API server
// takes and which, served by the emulator, deny, warn and mutate as the native policies would
// (the stored object is the mutated one); 1.31 a v1 ValidatingAdmissionPolicy with its binding
// and the mutating policy still as a webhook; 1.36 a v1 MutatingAdmissionPolicy with its binding
// too. Every object written is valid against its schema, unknown fields refused.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe } from 'node:test';
import { parseAllDocuments } from 'yaml';
import { startApi, type RunningApi } from '../../infra/local/api.ts';
import { admissionTypeName, schemaProblems } from '../../infra/policies/schema.ts';
import type { MutatingPolicyWebhook } from '../../lib/policies/mutating/define.ts';
import type { ValidatingPolicyWebhook } from '../../lib/policies/validating/define.ts';
import type { KubeObject } from '../../lib/review/schemas.ts';
import { runAdmissionChain } from '../../lib/testing/chain.ts';
import { evaluatePolicies } from '../../lib/testing/policies.ts';
import { KeptLogs } from './kept-logs.ts';
import { Cluster, freePort } from './cluster.ts';

const root = process.cwd();
const work = mkdtempSync(join(root, '.klw-e2e-policy-fleet-'));
const clusterDir = mkdtempSync(join(tmpdir(), 'klw-policy-fleet-'));
const cluster = new Cluster(clusterDir);
const stateDir = join(work, '.state');
const manifestsDir = join(work, 'manifests');
const TEAM = 'example.com/team';
const DEFAULTED = 'example.com/defaulted';
let api: RunningApi | undefined;
/** The API server folders, kept when a test fails. */
const logs = new KeptLogs();
let manifestsRun: { code: number; stdout: string; stderr: string } = { code: -1, stdout: '', stderr: '' };

/** The project: a validating policy (Deny), one that only warns, and a mutating policy; the fleet file. */
function writeProject(): void {
  const write = (name: string, source: string) => {
    mkdirSync(join(work, 'functions', name), { recursive: true });
    writeFileSync(join(work, 'functions', name, 'index.ts'), source);
  };
  write(
    'replica-cap',
    `import { Deployment, on } from 'kube-lambda-webhooks';
import { defineValidatingPolicy } from 'kube-lambda-webhooks/policies';
export default defineValidatingPolicy({
  name: 'replica-cap',
  matchConstraints: { resourceRules: [on(Deployment).create().update()] },
  validations: [
    {
      expression: 'object.spec.replicas <= 5',
      messageExpression: "'at most 5 replicas, got ' + string(object.spec.replicas)",
      reason: 'Forbidden',
    },
  ],
});
`,
  );
  write(
    'team-label',
    `import { Deployment, on } from 'kube-lambda-webhooks';
import { defineValidatingPolicy } from 'kube-lambda-webhooks/policies';
export default defineValidatingPolicy({
  name: 'team-label',
  matchConstraints: { resourceRules: [on(Deployment).create()] },
  // Written with the CEL of every cluster's version (1.20 has no optional fields), as klw lint checks.
  validations: [
    { expression: "has(object.metadata.labels) && '${TEAM}' in object.metadata.labels", message: 'a team label is expected' },
  ],
  validationActions: ['Warn'],
});
`,
  );
  write(
    'default-team',
    `import { ConfigMap, on } from 'kube-lambda-webhooks';
import { defineMutatingPolicy } from 'kube-lambda-webhooks/policies';
export default defineMutatingPolicy({
  name: 'default-team',
  matchConstraints: { resourceRules: [on(ConfigMap).create()] },
  matchConditions: [
    { name: 'no-team', expression: "!has(object.metadata.labels) || !('${TEAM}' in object.metadata.labels)" },
  ],
  mutations: [
    {
      patchType: 'ApplyConfiguration',
      applyConfiguration: { expression: 'Object{metadata: Object.metadata{labels: {"${TEAM}": "platform"}}}' },
    },
    {
      patchType: 'JSONPatch',
      jsonPatch: {
        expression: \`has(object.metadata.annotations)
          ? [JSONPatch{op: "add", path: "/metadata/annotations/" + jsonpatch.escapeKey("${DEFAULTED}"), value: "true"}]
          : [JSONPatch{op: "add", path: "/metadata/annotations", value: {"${DEFAULTED}": "true"}}]\`,
      },
    },
  ],
});
`,
  );
  writeFileSync(
    join(work, 'clusters.yaml'),
    [
      'clusters:',
      '  - name: old',
      '    kubeVersion: "1.20"',
      '  - name: mid',
      '    kubeVersion: "1.31"',
      '  - name: new',
      '    kubeVersion: "1.36"',
      '',
    ].join('\n'),
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

/** Starts the emulator on a free port (the registered URLs name it), on another when the port was taken meanwhile. */
async function startEmulatorOnFreePort(): Promise<RunningApi> {
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    try {
      return await startApi({ root: work, port, stateDir, log: () => {}, functionLog: () => {} });
    } catch (err) {
      if ((err as { code?: string }).code !== 'EADDRINUSE' || attempt >= 4) throw err;
    }
  }
}

const deployment = (name: string, replicas: number, labels: Record<string, string> = { [TEAM]: 'a' }) => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name, namespace: 'default', labels },
  spec: {
    replicas,
    selector: { matchLabels: { app: name } },
    template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'app', image: 'nginx:1.25' }] } },
  },
});
const configMap = (name: string, labels: Record<string, string> = {}) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace: 'default', labels },
  data: { key: 'value' },
});
const createDeployment = (body: unknown) => cluster.api('POST', '/apis/apps/v1/namespaces/default/deployments', body);
const createConfigMap = (body: unknown) => cluster.api('POST', '/api/v1/namespaces/default/configmaps', body);

/** The documents of a cluster's manifests file. */
function documentsOf(name: string): Array<Record<string, any>> {
  return parseAllDocuments(readFileSync(join(manifestsDir, `${name}.yaml`), 'utf8'))
    .map((d) => d.toJS())
    .filter(Boolean);
}

/** The policy a function file defines, loaded here for its native evaluation. */
async function definedIn<T>(name: string): Promise<T> {
  return (await import(join(work, 'functions', name, 'index.ts'))).default as T;
}

const admin = { username: 'admin', groups: ['system:masters', 'system:authenticated'] };

before(async () => {
  writeProject();
  await cluster.startEtcd();
  await cluster.startApiServer();
  api = await startEmulatorOnFreePort();
  manifestsRun = await klw(
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
  assert.equal(manifestsRun.code, 0, manifestsRun.stderr);
  const applied = await cluster.kubectl('apply', '-f', join(manifestsDir, 'old.yaml'));
  assert.equal(applied.code, 0, applied.stderr);
  // The webhook configurations take a moment to reach the API server's admission plugin.
  for (let i = 0; i < 80; i++) {
    const probe = await createDeployment(deployment('probe', 9));
    if (probe.status !== 201) break;
    await cluster.api('DELETE', '/apis/apps/v1/namespaces/default/deployments/probe');
    await sleep(250);
  }
  for (let i = 0; i < 80; i++) {
    const probe = await createConfigMap(configMap('probe'));
    await cluster.api('DELETE', '/api/v1/namespaces/default/configmaps/probe');
    if (probe.body?.metadata?.labels?.[TEAM]) break;
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

/** Kind and name of each document. */
const shapes = (docs: Array<Record<string, any>>) => docs.map((d) => `${d.apiVersion} ${d.kind} ${d.metadata.name}`);

describe('one klw manifests --all-clusters for a fleet of 1.20, 1.31 and 1.36', () => {
  check('the command says what each cluster gets of each policy, with no lint error', () => {
    const said = manifestsRun.stdout + manifestsRun.stderr;
    assert.doesNotMatch(said, /^error /m);
    for (const line of [
      'cluster old (Kubernetes 1.20): replica-cap is served from Lambda as a validating webhook',
      'cluster old (Kubernetes 1.20): default-team is served from Lambda as a mutating webhook',
      'cluster mid (Kubernetes 1.31): replica-cap is a native ValidatingAdmissionPolicy (v1)',
      'cluster mid (Kubernetes 1.31): default-team is served from Lambda as a mutating webhook',
      'cluster new (Kubernetes 1.36): default-team is a native MutatingAdmissionPolicy (v1)',
    ])
      assert.ok(said.includes(line), `${line}\nin:\n${said}`);
  });

  check('1.20: webhook configurations only, which the real API server accepted', async () => {
    assert.deepEqual(shapes(documentsOf('old')), [
      'admissionregistration.k8s.io/v1 MutatingWebhookConfiguration kube-lambda-webhooks',
      'admissionregistration.k8s.io/v1 ValidatingWebhookConfiguration kube-lambda-webhooks',
    ]);
    const stored = await cluster.api(
      'GET',
      '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/kube-lambda-webhooks',
    );
    assert.equal(stored.status, 200, stored.text);
    assert.deepEqual(stored.body.webhooks.map((w: { name: string }) => w.name).sort(), [
      'replica-cap.webhooks.kube-lambda.dev',
      'team-label.webhooks.kube-lambda.dev',
    ]);
  });

  check('1.31: a v1 ValidatingAdmissionPolicy and binding per validating policy; the mutating one a webhook', () => {
    assert.deepEqual(shapes(documentsOf('mid')), [
      'admissionregistration.k8s.io/v1 MutatingWebhookConfiguration kube-lambda-webhooks',
      'admissionregistration.k8s.io/v1 ValidatingAdmissionPolicy replica-cap',
      'admissionregistration.k8s.io/v1 ValidatingAdmissionPolicyBinding replica-cap',
      'admissionregistration.k8s.io/v1 ValidatingAdmissionPolicy team-label',
      'admissionregistration.k8s.io/v1 ValidatingAdmissionPolicyBinding team-label',
    ]);
    const binding = documentsOf('mid').find((d) => d.kind === 'ValidatingAdmissionPolicyBinding');
    assert.deepEqual(binding?.spec.validationActions, ['Deny']);
    assert.equal(binding?.spec.policyName, 'replica-cap');
  });

  check('1.36: a v1 MutatingAdmissionPolicy and binding too, no webhook configuration', () => {
    assert.deepEqual(shapes(documentsOf('new')), [
      'admissionregistration.k8s.io/v1 MutatingAdmissionPolicy default-team',
      'admissionregistration.k8s.io/v1 MutatingAdmissionPolicyBinding default-team',
      'admissionregistration.k8s.io/v1 ValidatingAdmissionPolicy replica-cap',
      'admissionregistration.k8s.io/v1 ValidatingAdmissionPolicyBinding replica-cap',
      'admissionregistration.k8s.io/v1 ValidatingAdmissionPolicy team-label',
      'admissionregistration.k8s.io/v1 ValidatingAdmissionPolicyBinding team-label',
    ]);
    const map = documentsOf('new').find((d) => d.kind === 'MutatingAdmissionPolicy');
    assert.deepEqual(
      map?.spec.mutations.map((m: { patchType: string }) => m.patchType),
      ['ApplyConfiguration', 'JSONPatch'],
    );
  });

  check('every object written is valid against its schema, unknown fields refused', () => {
    for (const name of ['old', 'mid', 'new']) {
      for (const doc of documentsOf(name)) {
        const [, version] = String(doc.apiVersion).split('/');
        const type = admissionTypeName(version!, doc.kind);
        assert.ok(type, `${name}: ${doc.kind} has a schema`);
        assert.deepEqual(schemaProblems(doc, type), [], `${name}: ${doc.kind} ${doc.metadata.name}`);
        // The same object with a field its type does not declare is refused.
        const planted = structuredClone(doc);
        if (planted.spec) planted.spec.unknownField = true;
        else planted.webhooks[0].unknownField = true;
        assert.notDeepEqual(schemaProblems(planted, type), [], `${name}: ${doc.kind} with an unknown field`);
      }
    }
  });

  check('1.20, validating: a Deployment over the cap is denied as the native policy denies it', async () => {
    const object = deployment('too-many', 7);
    const res = await createDeployment(object);
    const verdict = evaluatePolicies(
      [await definedIn<ValidatingPolicyWebhook>('replica-cap')],
      object as unknown as KubeObject,
      { operation: 'CREATE', namespace: 'default', userInfo: admin },
    );
    assert.equal(verdict.allowed, false);
    assert.equal(res.status, verdict.status!.code, res.text);
    assert.equal(res.status, 403);
    assert.equal(res.body.reason, verdict.status!.reason);
    assert.equal(
      res.body.message,
      `admission webhook "replica-cap.webhooks.kube-lambda.dev" denied the request: ${verdict.status!.detail}`,
    );
    assert.equal(
      verdict.status!.detail,
      "ValidatingAdmissionPolicy 'replica-cap' with binding 'replica-cap' denied request: at most 5 replicas, got 7",
    );
    assert.equal((await createDeployment(deployment('three', 3))).status, 201);
  });

  check('1.20, validating: a Deployment without a team label is created with the native warning', async () => {
    const object = deployment('no-team', 2, {});
    const res = await createDeployment(object);
    assert.equal(res.status, 201, res.text);
    const verdict = evaluatePolicies(
      [await definedIn<ValidatingPolicyWebhook>('team-label')],
      object as unknown as KubeObject,
      { operation: 'CREATE', namespace: 'default', userInfo: admin },
    );
    assert.deepEqual(verdict.warnings, [
      "Validation failed for ValidatingAdmissionPolicy 'team-label' with binding 'team-label': a team label is expected",
    ]);
    assert.equal(res.headers.warning, `299 - "${verdict.warnings[0]}"`);
  });

  check('1.20, mutating: the object stored is the one the native mutation gives', async () => {
    const object = configMap('fresh', { app: 'web' });
    const res = await createConfigMap(object);
    assert.equal(res.status, 201, res.text);
    const stored = (await cluster.api('GET', '/api/v1/namespaces/default/configmaps/fresh')).body;
    const native = await runAdmissionChain(
      object as unknown as KubeObject,
      [await definedIn<MutatingPolicyWebhook>('default-team')],
      { operation: 'CREATE', namespace: 'default', userInfo: admin },
    );
    assert.deepEqual(native.object?.metadata?.labels, { app: 'web', [TEAM]: 'platform' });
    assert.deepEqual(native.object?.metadata?.annotations, { [DEFAULTED]: 'true' });
    assert.deepEqual(
      { labels: stored.metadata.labels, annotations: stored.metadata.annotations, data: stored.data },
      {
        labels: native.object?.metadata?.labels,
        annotations: native.object?.metadata?.annotations,
        data: (native.object as { data?: unknown }).data,
      },
    );
    // Its matchCondition: a ConfigMap that names its team is left as it is.
    const own = await createConfigMap(configMap('own-team', { [TEAM]: 'b' }));
    assert.equal(own.status, 201, own.text);
    assert.deepEqual(own.body.metadata.labels, { [TEAM]: 'b' });
    assert.equal(own.body.metadata.annotations, undefined);
  });
});
