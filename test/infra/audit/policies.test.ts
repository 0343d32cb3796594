// klw audit with admission policies, against a fake API server on loopback: validating policies
// evaluated as the API server evaluates them natively (params from the cluster, namespaceObject,
// the validationActions in effect), mutating policies reported with the patch they would make.
import assert from 'node:assert/strict';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { klwInProcess, projectInRepository } from '../../helpers.ts';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { Deployment, Pod } from '../../../lib/k8s/kinds.ts';
import type { KubeObject } from '../../../lib/review/schemas.ts';
import { on } from '../../../lib/rule-builder.ts';
import { defineMutatingPolicy } from '../../../lib/policies/mutating/define.ts';
import { defineValidatingPolicy } from '../../../lib/policies/index.ts';
import { KubeClient, renderAudit, runAudit, summaryLine, type AuditResult } from '../../../infra/audit/index.ts';

const ns = (name: string, labels: Record<string, string> = {}) => ({
  metadata: { name, labels: { 'kubernetes.io/metadata.name': name, ...labels } },
});
const meta = (namespace: string, name: string, labels: Record<string, string> = {}) => ({
  namespace,
  name,
  labels,
  uid: `${namespace}-${name}`,
});
const pod = (namespace: string, name: string, image: string, labels: Record<string, string> = {}) => ({
  metadata: meta(namespace, name, labels),
  spec: { containers: [{ name: 'app', image }] },
});
const deployment = (namespace: string, name: string, replicas: number) => ({
  metadata: meta(namespace, name),
  spec: { replicas, selector: {}, template: { spec: { containers: [] } } },
});

/** What the fake API server holds, by collection path. */
const collections: Record<string, Array<Record<string, unknown>>> = {
  '/api/v1/namespaces': [ns('shop', { env: 'prod' }), ns('dev'), ns('config'), ns('kube-system')],
  '/api/v1/pods': [
    pod('shop', 'web-0', 'nginx:latest', { team: 'a' }),
    pod('shop', 'web-1', 'nginx:1.27', { team: 'a', owner: 'x' }),
    pod('dev', 'tool', 'busybox:latest'),
    pod('kube-system', 'dns', 'coredns:latest'),
  ],
  '/api/v1/configmaps': [{ metadata: meta('config', 'replica-limit'), data: { maxReplicas: '3' } }],
  '/apis/apps/v1/deployments': [deployment('shop', 'big', 5), deployment('dev', 'small', 2)],
};
/** Collection paths the fake refuses to list (403). */
const forbidden = new Set<string>();
const listed: string[] = [];
/** The resource attributes of the SelfSubjectAccessReviews the fake was sent. */
const reviewed: Array<Record<string, string>> = [];

function discovery(path: string): unknown {
  const r = (name: string, kind: string, namespaced: boolean) => ({ name, kind, namespaced, verbs: ['get', 'list'] });
  if (path === '/api') return { kind: 'APIVersions', versions: ['v1'] };
  if (path === '/api/v1')
    return {
      kind: 'APIResourceList',
      resources: [r('namespaces', 'Namespace', false), r('pods', 'Pod', true), r('configmaps', 'ConfigMap', true)],
    };
  if (path === '/apis') return { kind: 'APIGroupList', groups: [{ name: 'apps', versions: [{ version: 'v1' }] }] };
  if (path === '/apis/apps/v1') return { kind: 'APIResourceList', resources: [r('deployments', 'Deployment', true)] };
  return undefined;
}

function handle(req: IncomingMessage, res: ServerResponse): void {
  const url = new URL(req.url ?? '/', 'http://127.0.0.1');
  const send = (status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  };
  if (req.method === 'POST' && url.pathname === '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews') {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      const review = JSON.parse(body);
      const a = review.spec.resourceAttributes;
      reviewed.push(a);
      // The auditor may delete pods in shop only.
      const allowed = a.verb === 'delete' && a.resource === 'pods' && a.namespace === 'shop';
      send(201, { ...review, status: { allowed } });
    });
    return;
  }
  const found = discovery(url.pathname);
  if (found) return send(200, found);
  if (forbidden.has(url.pathname))
    return send(403, { kind: 'Status', code: 403, message: `configmaps is forbidden: User "auditor" cannot list` });
  const items = collections[url.pathname];
  if (!items) return send(404, { kind: 'Status', code: 404, message: 'not found' });
  listed.push(url.pathname);
  send(200, { kind: 'List', apiVersion: 'v1', metadata: {}, items: structuredClone(items) });
}

let server: Server;
let client: KubeClient;
before(async () => {
  server = createServer(handle);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  client = new KubeClient({ server: `http://127.0.0.1:${port}`, source: 'test' });
});
after(() => new Promise<void>((resolve) => server.close(() => resolve())));

const auditor = { username: 'auditor@example.com', groups: ['system:authenticated'] };

/** At most `maxReplicas` (a ConfigMap's) replicas; the definition's own param allows 10. */
const replicaLimit = defineValidatingPolicy({
  name: 'replica-limit',
  matchConstraints: { resourceRules: [on(Deployment).create().update()] },
  paramKind: { apiVersion: 'v1', kind: 'ConfigMap' },
  paramRef: { name: 'replica-limit', namespace: 'config' },
  params: [
    {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'replica-limit', namespace: 'config' },
      data: { maxReplicas: '10' },
    } as KubeObject,
  ],
  validations: [
    {
      expression: 'object.spec.replicas <= int(params.data.maxReplicas)',
      messageExpression: "'at most ' + params.data.maxReplicas + ' replicas'",
    },
  ],
});

/** Pods need a team label: Warn by the binding. */
const teamLabel = defineValidatingPolicy({
  name: 'team-label',
  matchConstraints: { resourceRules: [on(Pod).create().update()] },
  validations: [{ expression: "has(object.metadata.labels) && 'team' in object.metadata.labels", message: 'no team' }],
  validationActions: ['Warn'],
});

/** No `:latest` images in namespaces labelled env=prod (read from namespaceObject). */
const prodImages = defineValidatingPolicy({
  name: 'prod-images',
  matchConstraints: { resourceRules: [on(Pod).create().update()] },
  variables: [
    {
      name: 'prod',
      expression: "'env' in namespaceObject.metadata.labels && namespaceObject.metadata.labels.env == 'prod'",
    },
  ],
  validations: [
    {
      expression: "!variables.prod || object.spec.containers.all(c, !c.image.endsWith(':latest'))",
      message: 'pin images in production',
      reason: 'Forbidden',
    },
  ],
});

/** Pods only where the requesting user (the auditor, in an audit) may delete pods. */
const deleters = defineValidatingPolicy({
  name: 'deleters',
  matchConstraints: { resourceRules: [on(Pod).create().update()] },
  validations: [
    {
      expression:
        "authorizer.group('').resource('pods').namespace(object.metadata.namespace).check('delete').allowed()",
      messageExpression: "'may not delete pods in ' + object.metadata.namespace",
    },
  ],
});

/** Labels pods without an owner. */
const addOwner = defineMutatingPolicy({
  name: 'add-owner',
  matchConstraints: { resourceRules: [on(Pod).create().update()] },
  matchConditions: [
    { name: 'no-owner', expression: "!has(object.metadata.labels) || !('owner' in object.metadata.labels)" },
  ],
  mutations: [
    {
      patchType: 'ApplyConfiguration',
      applyConfiguration: { expression: 'Object{ metadata: Object.metadata{ labels: {"owner": "platform"} } }' },
    },
  ],
});

/** A JSON patch onto a path that does not exist: fails on every object. */
const broken = defineMutatingPolicy({
  name: 'broken',
  matchConstraints: { resourceRules: [on(Deployment).create().update()] },
  mutations: [
    {
      patchType: 'JSONPatch',
      jsonPatch: { expression: '[JSONPatch{op: "replace", path: "/spec/nothing/here", value: 1}]' },
    },
  ],
});

const row = (r: AuditResult) =>
  `${r.result} ${r.function} ${r.namespace}/${r.name}${r.validationActions ? ` [${r.validationActions}]` : ''}`;

describe('klw audit with policies', () => {
  it('evaluates validating policies as the API server would natively, with params from the cluster', async () => {
    listed.length = 0;
    const report = await runAudit({ client, webhooks: [replicaLimit, teamLabel, prodImages], auditor });
    assert.deepEqual(report.results.map(row).sort(), [
      // The cluster's ConfigMap says 3 (the definition's 10 would admit it).
      'denied prod-images shop/web-0 [Deny]',
      'denied replica-limit shop/big [Deny]',
      'warned team-label dev/tool [Warn]',
    ]);
    const byName = Object.fromEntries(report.results.map((r) => [`${r.function} ${r.name}`, r]));
    assert.equal(
      byName['replica-limit big']!.message,
      "ValidatingAdmissionPolicy 'replica-limit' with binding 'replica-limit' denied request: at most 3 replicas",
    );
    assert.equal(
      byName['prod-images web-0']!.message,
      "ValidatingAdmissionPolicy 'prod-images' with binding 'prod-images' denied request: pin images in production",
    );
    assert.deepEqual(byName['team-label tool']!.warnings, [
      "Validation failed for ValidatingAdmissionPolicy 'team-label' with binding 'team-label': no team",
    ]);
    assert.equal(byName['team-label tool']!.enforcement, 'Warn');
    assert.equal(byName['team-label tool']!.rejected, false);
    // kube-system is outside the default namespaceSelector: its pod is not counted.
    assert.equal(report.summary.allowed + report.summary.denied + report.summary.warned, 2 + 3 * 2);
    assert.deepEqual(report.notes, []);
    // The ConfigMaps are listed once for the whole run.
    assert.equal(listed.filter((p) => p === '/api/v1/configmaps').length, 1);
  });

  it("falls back to the definition's params with a note when the auditor may not list them", async () => {
    forbidden.add('/api/v1/configmaps');
    try {
      const report = await runAudit({ client, webhooks: [replicaLimit], auditor });
      assert.deepEqual(report.results, []);
      assert.equal(report.summary.allowed, 2);
      assert.equal(report.notes?.length, 1);
      assert.match(
        report.notes![0]!,
        /policy replica-limit: params of ConfigMap \(v1\) could not be listed .*403.*definition's params/,
      );
      assert.deepEqual(report.problems, []);
    } finally {
      forbidden.delete('/api/v1/configmaps');
    }
  });

  it("applies the cluster's enforcement as the binding's validationActions", async () => {
    const audit = await runAudit({ client, webhooks: [teamLabel], auditor, enforcement: { 'team-label': 'Audit' } });
    assert.deepEqual(audit.results.map(row), ['audited team-label dev/tool [Audit]']);
    assert.equal(audit.results[0]!.message, 'no team');
    const failure = JSON.parse(
      audit.results[0]!.auditAnnotations!['validation.policy.admission.k8s.io/validation_failure']!,
    );
    assert.deepEqual(failure, [
      {
        message: 'no team',
        policy: 'team-label',
        binding: 'team-label',
        expressionIndex: 0,
        validationActions: ['Audit'],
      },
    ]);
    assert.match(summaryLine(audit), /0 warned, 1 audited, 0 patched/);
    const deny = await runAudit({ client, webhooks: [teamLabel], auditor, enforcement: { 'team-label': 'Deny' } });
    assert.deepEqual(deny.results.map(row), ['denied team-label dev/tool [Deny]']);
    assert.equal(deny.results[0]!.rejected, true);
  });

  it('reports what a mutating policy would change as a JSON patch, and its failures', async () => {
    const report = await runAudit({ client, webhooks: [addOwner, broken], auditor });
    assert.deepEqual(report.results.map(row).sort(), [
      'error broken dev/small',
      'error broken shop/big',
      'patched add-owner dev/tool',
      'patched add-owner shop/web-0',
    ]);
    const patched = report.results.find((r) => r.name === 'web-0')!;
    assert.deepEqual(patched.patch, [{ op: 'add', path: '/metadata/labels/owner', value: 'platform' }]);
    const failed = report.results.find((r) => r.name === 'big')!;
    assert.equal(failed.rejected, true);
    assert.match(failed.message!, /policy 'broken' with binding 'broken' denied request: .*\(failurePolicy Fail\)$/);
    assert.match(
      renderAudit(report, 'table'),
      /PATCHED {2}add-owner +Deny +pods +shop\/web-0 +patch: add \/metadata\/labels\/owner/,
    );
  });

  it("asks the cluster the policy's authorizer checks for the auditor, each once", async () => {
    reviewed.length = 0;
    const report = await runAudit({ client, webhooks: [deleters], auditor });
    assert.deepEqual(report.results.map(row), ['denied deleters dev/tool [Deny]']);
    assert.equal(
      report.results[0]!.message,
      "ValidatingAdmissionPolicy 'deleters' with binding 'deleters' denied request: may not delete pods in dev",
    );
    assert.deepEqual(reviewed.map((a) => `${a.verb} ${a.resource} ${a.namespace}`).sort(), [
      'delete pods dev',
      'delete pods shop',
    ]);
    assert.deepEqual(report.problems, []);
  });

  it('keeps allowed results when asked (reports that count passes)', async () => {
    const report = await runAudit({ client, webhooks: [replicaLimit], auditor, keepAllowed: true });
    assert.deepEqual(report.results.map(row).sort(), [
      'allowed replica-limit dev/small [Deny]',
      'denied replica-limit shop/big [Deny]',
    ]);
  });
});

describe('klw audit with a policy, from the command line', () => {
  const work = projectInRepository('.klw-test-audit-policies-', {
    'team-label': `import { on, Pod } from 'kube-lambda-webhooks';
import { defineValidatingPolicy } from 'kube-lambda-webhooks/policies';
export default defineValidatingPolicy({
  name: 'team-label',
  matchConstraints: { resourceRules: [on(Pod).create().update()] },
  validations: [{ expression: "has(object.metadata.labels) && 'team' in object.metadata.labels", message: 'no team' }],
  validationActions: ['Warn'],
});
`,
  });
  // The fleet's cluster of context "fake" audits the policy instead of warning.
  writeFileSync(
    join(work, 'clusters.yaml'),
    'clusters:\n  - name: shop-cluster\n    context: fake\n    kubeVersion: "1.31"\n    enforcement: { team-label: Audit }\n',
  );
  const kubeconfig = join(work, 'kubeconfig');
  before(() => {
    const { port } = server.address() as { port: number };
    const cluster = { server: `http://127.0.0.1:${port}` };
    writeFileSync(
      kubeconfig,
      JSON.stringify({
        'current-context': 'plain',
        clusters: [{ name: 'c', cluster }],
        users: [{ name: 'u', user: { token: 't' } }],
        contexts: [
          { name: 'fake', context: { cluster: 'c', user: 'u' } },
          { name: 'plain', context: { cluster: 'c', user: 'u' } },
        ],
      }),
    );
  });
  after(() => rmSync(work, { recursive: true, force: true }));
  // In this process, with its own stdout and stderr (audit.test.ts starts the real process).
  const klw = async (...args: string[]) => {
    const { code, stdout, stderr } = await klwInProcess('--root', work, 'audit', '--as', 'auditor', ...args);
    return { result: code, stdout, stderr };
  };

  it("-o openreports with a fleet cluster's context: its enforcement, passes counted, exit 0", async () => {
    const { result, stdout, stderr } = await klw('--kubeconfig', kubeconfig, '--context', 'fake', '-o', 'openreports');
    assert.equal(result, 0, stderr);
    assert.match(stderr, /cluster shop-cluster of clusters\.yaml: its enforcement and Kubernetes version apply/);
    const reports = parseAllDocuments(stdout).map((d) => d.toJS());
    assert.deepEqual(
      reports.map((r) => [r.kind, r.metadata.namespace, r.scope.name, r.summary.pass, r.summary.warn]).sort(),
      [
        ['Report', 'dev', 'tool', 0, 1],
        ['Report', 'shop', 'web-0', 1, 0],
        ['Report', 'shop', 'web-1', 1, 0],
      ],
    );
    const tool = reports.find((r) => r.scope.name === 'tool')!;
    assert.deepEqual(tool.results[0].properties, {
      cluster: 'shop-cluster',
      operation: 'UPDATE',
      enforcement: 'Audit',
      validationActions: 'Audit',
    });
    assert.equal(tool.results[0].message, 'no team');
  });

  it("the binding's actions on a context that is no fleet cluster", async () => {
    const { result, stdout } = await klw('--kubeconfig', kubeconfig, '-o', 'json');
    assert.equal(result, 0);
    const report = JSON.parse(stdout);
    assert.deepEqual(
      report.results.map((r: AuditResult) => `${r.result} ${r.name} ${r.validationActions}`),
      ['warned tool Warn'],
    );
  });

  it('-o openreports is for one cluster at a time', async () => {
    const { result, stderr } = await klw(
      '--kubeconfig',
      kubeconfig,
      '--context',
      'fake',
      '--context',
      'plain',
      '-o',
      'openreports',
    );
    assert.equal(result, 2);
    assert.match(
      stderr,
      /-o openreports writes the reports of one cluster, to apply to that cluster: give one --context at a time/,
    );
  });
});
