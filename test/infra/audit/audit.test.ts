import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import { createServer as createHttpServer } from 'node:http';
import type { IncomingMessage, Server as HttpServer, ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { parse } from 'yaml';
import { allow, defineMutatingWebhook, defineValidatingWebhook, deny } from '../../../lib/index.ts';
import type { AdmissionRequest } from '../../../lib/review/schemas.ts';
import {
  deniedLine,
  ProgressBar,
  renderAudit,
  runAudit,
  selectorQuery,
  summaryLine,
  type AuditReport,
} from '../../../infra/audit/index.ts';
import { loadWebhooks } from '../../../infra/functions.ts';
import {
  DEFAULT_KUBE_LIMITS,
  identityFromCredentials,
  inClusterConnection,
  KubeClient,
} from '../../../infra/audit/index.ts';
import { kubeLimitsFrom, loadConnection, whoAmI } from '../../../infra/audit/index.ts';
import { ensureLocalCertificates } from '../../../infra/local/certs.ts';
import { withKubeVersion } from '../../../infra/kube-versions.ts';
import { klwInProcess } from '../../helpers.ts';
import { withKeptCertificates } from '../../kept-certs.ts';

const FIXTURE = fileURLToPath(new URL('../../fixtures/audit', import.meta.url));
const KLW = fileURLToPath(new URL('../../../infra/bin/klw.mjs', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'klw-audit-'));
const TOKEN = 'audit-token';
const ns = (name: string, labels: Record<string, string> = {}) => ({ metadata: { name, labels } });
const obj = (namespace: string, name: string, labels: Record<string, string> = {}) => ({
  metadata: { namespace, name, labels, uid: `${namespace}-${name}` },
});

/** What the fake API server holds, by collection path. */
const collections: Record<string, Array<Record<string, any>>> = {
  '/api/v1/namespaces': [
    ns('on', { 'audit.example.com/enforce': 'on' }),
    ns('off', { 'audit.example.com/enforce': 'off' }),
    ns('plain'),
  ],
  '/api/v1/pods': [
    obj('on', 'p-bad', { tier: 'forbidden', owner: 'a', team: 't' }),
    obj('on', 'p-ok', { owner: 'a', team: 't' }),
    obj('on', 'p-noowner', { team: 't' }),
    obj('on', 'p-exempt', { tier: 'forbidden', 'audit.example.com/exempt': 'yes' }),
    obj('off', 'p-off-bad', { tier: 'forbidden' }),
    obj('plain', 'p-plain-bad', { tier: 'forbidden' }),
  ],
  '/api/v1/configmaps': [obj('on', 'cm-bad', { tier: 'forbidden', owner: 'a' }), obj('on', 'cm-ok', { owner: 'a' })],
  '/api/v1/nodes': [{ metadata: { name: 'node-1', labels: {} } }],
  '/apis/apps/v1/deployments': [obj('on', 'd-bad', { tier: 'forbidden' })],
};
const requests: string[] = [];
/** A test's fault: answers a GET instead of the fake (a status and a Status message), or lets it through (undefined). */
let fault: ((url: URL) => { status: number; message: string } | undefined) | undefined;
const reviewsSeen: AdmissionRequest[] = [];
/** Access reviews the fake was sent: kind and spec. */
const accessReviews: Array<{ kind: string; spec: Record<string, any> }> = [];

/**
 * The fake's authorizer: `use` and `waive` of exemptions.example.com in namespace off are allowed,
 * `use` in namespace plain too, `waive` there is denied; the service account on/scanner may list
 * pods; user ci-bot's SubjectAccessReviews are refused (the auditor may not create them).
 */
function authorizeReview(kind: string, spec: Record<string, any>): { status: number; body: unknown } {
  accessReviews.push({ kind, spec });
  const user = kind === 'SelfSubjectAccessReview' ? 'auditor@example.com' : spec.user;
  if (user === 'ci-bot')
    return {
      status: 403,
      body: {
        kind: 'Status',
        code: 403,
        message:
          'subjectaccessreviews.authorization.k8s.io is forbidden: User "auditor@example.com" cannot create resource "subjectaccessreviews"',
      },
    };
  const a = spec.resourceAttributes ?? {};
  const exemption = a.group === 'example.com' && a.resource === 'exemptions';
  let status: Record<string, unknown> = { allowed: false };
  if (
    user === 'auditor@example.com' &&
    exemption &&
    (a.namespace === 'off' || (a.namespace === 'plain' && a.verb === 'use'))
  )
    status = { allowed: true, reason: 'exempt here' };
  else if (user === 'auditor@example.com' && exemption && a.namespace === 'plain')
    status = { allowed: false, denied: true, reason: 'no waivers here' };
  else if (user === 'system:serviceaccount:on:scanner' && !a.group && a.resource === 'pods' && a.verb === 'list')
    status = { allowed: true };
  return { status: 201, body: { apiVersion: 'authorization.k8s.io/v1', kind, spec, status } };
}

function discovery(path: string): unknown {
  const r = (name: string, kind: string, namespaced: boolean, verbs = ['get', 'list', 'update']) => ({
    name,
    kind,
    namespaced,
    verbs,
  });
  if (path === '/api') return { kind: 'APIVersions', versions: ['v1'] };
  if (path === '/api/v1') {
    return {
      kind: 'APIResourceList',
      groupVersion: 'v1',
      resources: [
        r('namespaces', 'Namespace', false),
        r('pods', 'Pod', true),
        r('pods/status', 'Pod', true),
        r('configmaps', 'ConfigMap', true),
        r('nodes', 'Node', false),
        r('bindings', 'Binding', true, ['create']),
      ],
    };
  }
  if (path === '/apis') {
    return {
      kind: 'APIGroupList',
      groups: [
        {
          name: 'apps',
          versions: [{ groupVersion: 'apps/v1', version: 'v1' }],
          preferredVersion: { groupVersion: 'apps/v1', version: 'v1' },
        },
        { name: 'metrics.example.com', versions: [{ groupVersion: 'metrics.example.com/v1', version: 'v1' }] },
      ],
    };
  }
  if (path === '/apis/apps/v1')
    return { kind: 'APIResourceList', groupVersion: 'apps/v1', resources: [r('deployments', 'Deployment', true)] };
  return undefined;
}

function handle(req: IncomingMessage, res: ServerResponse): void {
  const url = new URL(req.url ?? '/', 'https://127.0.0.1');
  requests.push(`${req.method} ${url.pathname}${url.search}`);
  const send = (status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  };
  if (req.headers.authorization !== `Bearer ${TOKEN}`)
    return send(401, { kind: 'Status', message: 'Unauthorized', code: 401 });
  if (req.method === 'POST') {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      const review = url.pathname.startsWith('/apis/authorization.k8s.io/v1/') ? JSON.parse(body) : undefined;
      if (review && url.pathname.endsWith(`/${String(review.kind).toLowerCase()}s`)) {
        const answer = authorizeReview(review.kind, review.spec);
        return send(answer.status, answer.body);
      }
      if (url.pathname === '/apis/authentication.k8s.io/v1/tokenreviews' && JSON.parse(body).spec.token === TOKEN) {
        return send(201, {
          kind: 'TokenReview',
          status: {
            authenticated: true,
            user: { username: 'auditor@example.com', groups: ['auditors', 'system:authenticated'] },
          },
        });
      }
      send(404, { kind: 'Status', message: 'the server could not find the requested resource', code: 404 });
    });
    return;
  }
  const failure = fault?.(url);
  if (failure) return send(failure.status, { kind: 'Status', message: failure.message, code: failure.status });
  if (url.pathname === '/apis/metrics.example.com/v1')
    return send(503, { kind: 'Status', message: 'service unavailable', code: 503 });
  const found = discovery(url.pathname);
  if (found) return send(200, found);
  const items = collections[url.pathname];
  if (!items) return send(404, { kind: 'Status', message: 'not found', code: 404 });
  const limit = Number(url.searchParams.get('limit') ?? items.length);
  const start = Number(url.searchParams.get('continue') ?? 0);
  const page = items.slice(start, start + limit);
  const more = start + limit < items.length;
  send(200, {
    kind: 'List',
    apiVersion: 'v1',
    metadata: more ? { continue: String(start + limit), remainingItemCount: items.length - start - limit } : {},
    items: structuredClone(page),
  });
}

let server: Server;
let client: KubeClient;
let kubeconfig = '';
let caFile = '';

before(async () => {
  const certs = await ensureLocalCertificates(await withKeptCertificates(join(dir, 'certs')), () => {});
  caFile = certs.caPath;
  server = createServer({ cert: certs.certPem, key: certs.keyPem }, handle);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  kubeconfig = join(dir, 'kubeconfig');
  writeFileSync(
    kubeconfig,
    [
      'apiVersion: v1',
      'kind: Config',
      'current-context: fake',
      'clusters:',
      `- name: fake`,
      `  cluster: {server: "https://127.0.0.1:${port}/", certificate-authority: certs/ca.crt}`,
      'users:',
      `- name: auditor`,
      `  user: {token: ${TOKEN}}`,
      `- name: stranger`,
      `  user: {token: wrong}`,
      'contexts:',
      '- {name: fake, context: {cluster: fake, user: auditor, namespace: on}}',
      '- {name: wrong-user, context: {cluster: fake, user: stranger}}',
      '',
    ].join('\n'),
  );
  client = new KubeClient(await loadConnection({ kubeconfig }));
});
after(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
  rmSync(dir, { recursive: true, force: true });
});

const auditor = { username: 'auditor@example.com', groups: ['auditors'] };
const key = (r: { result: string; function: string; namespace?: string; name: string }) =>
  `${r.result} ${r.function} ${r.namespace ? `${r.namespace}/` : ''}${r.name}`;

describe('klw audit against a fake API server', () => {
  it('reports exactly what the fixture functions would deny, warn about and patch, paging through lists', async () => {
    requests.length = 0;
    const webhooks = (await loadWebhooks(FIXTURE)) as never[];
    const report = await runAudit({ client, webhooks, auditor, pageSize: 2 });
    assert.deepEqual(report.results.map(key).sort(), [
      // audit-defaults sees pods on CREATE only; every pod in namespace "on" lacks a team label but two.
      'denied audit-policy on/cm-bad',
      'denied audit-policy on/p-bad',
      'patched audit-defaults on/p-exempt',
      'warned audit-policy on/p-noowner',
    ]);
    assert.deepEqual(report.summary, {
      denied: 2,
      warned: 1,
      audited: 0,
      patched: 1,
      allowed: 5,
      skipped: 0,
      error: 0,
    });
    const denied = report.results.find((r) => r.name === 'p-bad')!;
    assert.equal(denied.message, 'Pod "p-bad" has tier=forbidden');
    assert.equal(denied.rejected, true);
    assert.equal(denied.operation, 'UPDATE');
    assert.deepEqual(report.results.find((r) => r.function === 'audit-defaults')!.patch, [
      { op: 'add', path: '/metadata/labels/team', value: 'unassigned' },
    ]);
    assert.equal(report.results.find((r) => r.function === 'audit-defaults')!.operation, 'CREATE');
    // Six pods, two per page: three requests for each of the two functions, each asking for the next page.
    const podLists = requests.filter((r) => r.startsWith('GET /api/v1/pods?'));
    assert.equal(podLists.length, 6);
    assert.equal(podLists.filter((r) => /[?&]continue=2(&|$)/.test(r)).length, 2);
    assert.ok(podLists.every((r) => r.includes('limit=2')));
    // The objectSelector goes to the API server as a labelSelector.
    assert.ok(
      podLists.some(
        (r) => new URL(r.split(' ')[1]!, 'https://x').searchParams.get('labelSelector') === '!audit.example.com/exempt',
      ),
    );
    // Deployments are not in the rules; the namespace list is read once.
    assert.ok(!requests.some((r) => r.includes('/deployments')));
    assert.equal(requests.filter((r) => r.startsWith('GET /api/v1/namespaces?')).length, 2);
    assert.deepEqual(report.problems, []);
  });

  it('sends each object as an UPDATE onto itself, the auditor as the user', async () => {
    reviewsSeen.length = 0;
    const spy = defineValidatingWebhook({
      name: 'spy',
      rules: [{ operations: ['UPDATE'], apiGroups: ['*'], apiVersions: ['*'], resources: ['deployments'], scope: '*' }],
      namespaceSelector: {},
      validate: (request) => {
        reviewsSeen.push(request as AdmissionRequest);
        return allow();
      },
    });
    const report = await runAudit({ client, webhooks: [spy], auditor });
    assert.equal(reviewsSeen.length, 1);
    const request = reviewsSeen[0]!;
    assert.equal(request.operation, 'UPDATE');
    assert.deepEqual(request.kind, { group: 'apps', version: 'v1', kind: 'Deployment' });
    assert.deepEqual(request.resource, { group: 'apps', version: 'v1', resource: 'deployments' });
    assert.equal(request.namespace, 'on');
    assert.equal(request.name, 'd-bad');
    assert.deepEqual(request.userInfo, auditor);
    assert.deepEqual(request.oldObject, request.object);
    assert.equal((request.object as any).apiVersion, 'apps/v1');
    assert.equal((request.object as any).kind, 'Deployment');
    assert.deepEqual(request.options, { apiVersion: 'meta.k8s.io/v1', kind: 'UpdateOptions' });
    assert.equal(request.dryRun, false);
    assert.deepEqual(report.summary.allowed, 1);
    // A group version that cannot be discovered (an aggregated API that is down) is reported, not fatal.
    assert.match(report.problems.join('\n'), /discovery of metrics\.example\.com\/v1: .*HTTP 503/);
  });

  it('namespaceSelector: a Namespace by its own labels, other cluster-scoped objects never exempted; DELETE-only rules list nothing', async () => {
    const names: string[] = [];
    const spy = defineValidatingWebhook({
      name: 'cluster-spy',
      rules: [
        {
          operations: ['*'],
          apiGroups: [''],
          apiVersions: ['v1'],
          resources: ['namespaces', 'nodes'],
          scope: 'Cluster',
        },
        { operations: ['DELETE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'] },
      ],
      namespaceSelector: { matchLabels: { 'audit.example.com/enforce': 'off' } },
      validate: ({ object }) => {
        names.push(String((object as any).metadata.name));
        return deny('no');
      },
    });
    requests.length = 0;
    const report = await runAudit({ client, webhooks: [spy], auditor });
    assert.deepEqual(names.sort(), ['node-1', 'off']);
    assert.equal(report.summary.denied, 2);
    assert.ok(!requests.some((r) => r.includes('/configmaps')));
    assert.ok(!requests.some((r) => r.includes('/pods')), 'scope Cluster leaves namespaced resources out');
  });

  it('--kube-version: conditions are evaluated in that version, a newer library failing by failurePolicy', async () => {
    const semver = defineValidatingWebhook({
      name: 'semver-audit',
      rules: [{ operations: ['UPDATE'], apiGroups: ['apps'], apiVersions: ['v1'], resources: ['deployments'] }],
      namespaceSelector: {},
      matchConditions: [{ name: 'versioned', expression: "isSemver('1.2.3')" }],
      validate: () => allow(),
    });
    const [asOld] = withKubeVersion([semver], '1.30');
    const old = await runAudit({ client, webhooks: [asOld!], auditor });
    assert.equal(old.results[0]?.result, 'error');
    assert.equal(old.results[0]?.rejected, true);
    assert.match(
      old.results[0]?.message ?? '',
      /matchCondition "versioned".*not available in Kubernetes 1\.30.*isSemver/,
    );
    const newest = await runAudit({ client, webhooks: withKubeVersion([semver], undefined), auditor });
    assert.deepEqual([newest.summary.allowed, newest.summary.error], [1, 0]);
  });

  it('a function that fails counts as rejected only under failurePolicy Fail', async () => {
    const failing = (failurePolicy: 'Fail' | 'Ignore') =>
      defineMutatingWebhook({
        name: `fails-${failurePolicy.toLowerCase()}`,
        rules: [{ operations: ['UPDATE'], apiGroups: ['apps'], apiVersions: ['v1'], resources: ['deployments'] }],
        namespaceSelector: {},
        failurePolicy,
        mutate: () => {
          throw new Error('boom');
        },
      });
    const report = await runAudit({ client, webhooks: [failing('Fail'), failing('Ignore')], auditor });
    const byFunction = Object.fromEntries(report.results.map((r) => [r.function, r]));
    // An error, named with the review and what the function threw; failurePolicy decides whether it rejects.
    assert.equal(byFunction['fails-fail']!.result, 'error');
    assert.equal(byFunction['fails-fail']!.rejected, true);
    assert.match(
      byFunction['fails-fail']!.message!,
      /^fails-fail: the function threw on the AdmissionReview .* Error: boom \(failurePolicy Fail\)$/,
    );
    assert.equal(byFunction['fails-ignore']!.rejected, false);
    assert.equal(byFunction['fails-ignore']!.result, 'error');
  });

  it('matchConditions: objects a condition excludes are skipped, as the API server skips the call', async () => {
    let called = 0;
    const conditional = defineValidatingWebhook({
      name: 'conditional',
      rules: [{ operations: ['UPDATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'] }],
      namespaceSelector: {},
      matchConditions: [{ name: 'not-ok', expression: "!object.metadata.name.endsWith('-ok')" }],
      validate: () => {
        called++;
        return deny('no');
      },
    });
    const report = await runAudit({ client, webhooks: [conditional], auditor });
    assert.equal(called, 1);
    assert.deepEqual(report.results.map(key), ['denied conditional on/cm-bad']);
    assert.equal(report.summary.skipped, 1);
  });

  it('authorizer checks in matchConditions are asked of the cluster for the auditor, each once per run', async () => {
    const exemptable = (name: string, expression: string) =>
      defineValidatingWebhook({
        name,
        rules: [{ operations: ['UPDATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'] }],
        namespaceSelector: {},
        matchConditions: [{ name: 'not-exempt', expression }],
        validate: () => deny('no'),
      });
    const check = (verb: string) =>
      `authorizer.group('example.com').resource('exemptions').namespace(object.metadata.namespace).check('${verb}')`;
    // Exempt where the auditor may both use and waive exemptions: only namespace off. waive is asked once use is known to be allowed.
    const exemptions = exemptable('exemptions', `!(${check('use')}.allowed() && ${check('waive')}.allowed())`);
    const denials = (report: AuditReport) =>
      report.results
        .filter((r) => r.result === 'denied')
        .map((r) => r.name)
        .sort();
    const asked = () =>
      accessReviews
        .map(
          (r) =>
            `${r.kind} ${r.spec.user ?? '-'} ${r.spec.resourceAttributes.verb} ${r.spec.resourceAttributes.namespace}`,
        )
        .sort();

    accessReviews.length = 0;
    const self = await runAudit({ client, webhooks: [exemptions], auditor });
    assert.deepEqual(denials(self), ['p-bad', 'p-exempt', 'p-noowner', 'p-ok', 'p-plain-bad']);
    assert.equal(self.summary.skipped, 1);
    assert.deepEqual(self.problems, []);
    // Six pods in three namespaces: one SelfSubjectAccessReview per check, no more.
    assert.deepEqual(asked(), [
      'SelfSubjectAccessReview - use off',
      'SelfSubjectAccessReview - use on',
      'SelfSubjectAccessReview - use plain',
      'SelfSubjectAccessReview - waive off',
      'SelfSubjectAccessReview - waive plain',
    ]);
    assert.deepEqual(accessReviews[0]!.spec, {
      resourceAttributes: { verb: 'use', group: 'example.com', resource: 'exemptions', namespace: 'on' },
    });

    // An auditor given (--as): SubjectAccessReviews naming it; a service account's checks always name the account.
    accessReviews.length = 0;
    const scanner = exemptable(
      'scanner',
      "authorizer.serviceAccount('on', 'scanner').group('').resource('pods').check('list').allowed() && !authorizer.group('example.com').resource('exemptions').namespace(object.metadata.namespace).check('use').allowed()",
    );
    const subject = await runAudit({ client, webhooks: [exemptions, scanner], auditor, accessReviews: 'subject' });
    assert.deepEqual(denials(subject), [
      'p-bad',
      'p-bad',
      'p-exempt',
      'p-exempt',
      'p-noowner',
      'p-noowner',
      'p-ok',
      'p-ok',
      'p-plain-bad',
    ]);
    assert.ok(accessReviews.every((r) => r.kind === 'SubjectAccessReview'));
    assert.deepEqual(accessReviews.find((r) => r.spec.user === 'auditor@example.com')!.spec.groups, ['auditors']);
    assert.equal(accessReviews.filter((r) => r.spec.user === 'system:serviceaccount:on:scanner').length, 1);
    assert.equal(accessReviews.length, 6);

    // A check the cluster will not answer errors (allowed() is false), and the audit says it is incomplete.
    const refused = await runAudit({
      client,
      webhooks: [exemptions],
      auditor: { username: 'ci-bot', groups: ['ci'] },
      accessReviews: 'subject',
    });
    assert.equal(denials(refused).length, 6);
    assert.deepEqual(refused.problems, [
      'authorizer check use exemptions.example.com in namespace on for ci-bot: /apis/authorization.k8s.io/v1/subjectaccessreviews: HTTP 403: subjectaccessreviews.authorization.k8s.io is forbidden: User "auditor@example.com" cannot create resource "subjectaccessreviews"',
    ]);
  });

  it('authorizer checks with selectors ask with their requirements, each selector its own check', async () => {
    const webhook = (name: string, selectors: string) =>
      defineValidatingWebhook({
        name,
        rules: [{ operations: ['UPDATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'] }],
        namespaceSelector: {},
        matchConditions: [
          {
            name: 'may-list',
            expression: `authorizer.group('').resource('pods')${selectors}.check('list').allowed()`,
          },
        ],
        validate: () => deny('no'),
      });
    accessReviews.length = 0;
    await runAudit({
      client,
      webhooks: [
        webhook('both', ".fieldSelector('spec.nodeName=n1,x!=y').labelSelector('app in (b,a),!legacy,tier,n>1')"),
        webhook('other', ".labelSelector('app=c')"),
        webhook('unparsed', ".labelSelector('app in (')"),
      ],
      auditor,
    });
    const specs = new Set(accessReviews.map((r) => JSON.stringify(r.spec.resourceAttributes)));
    assert.deepEqual(
      [...specs].map((s) => JSON.parse(s)),
      [
        {
          verb: 'list',
          resource: 'pods',
          fieldSelector: {
            requirements: [
              { key: 'spec.nodeName', operator: 'In', values: ['n1'] },
              { key: 'x', operator: 'NotIn', values: ['y'] },
            ],
          },
          // `n>1` is left out, as the API server's webhook authorizer leaves out what it cannot send.
          labelSelector: {
            requirements: [
              { key: 'app', operator: 'In', values: ['a', 'b'] },
              { key: 'legacy', operator: 'DoesNotExist' },
              { key: 'tier', operator: 'Exists' },
            ],
          },
        },
        {
          verb: 'list',
          resource: 'pods',
          labelSelector: { requirements: [{ key: 'app', operator: 'In', values: ['c'] }] },
        },
        // A selector that does not parse asks about the resource unnarrowed.
        { verb: 'list', resource: 'pods' },
      ],
    );
    // One review per distinct check, however many pods ask it.
    assert.equal(accessReviews.length, 3);
  });

  it("calls functions whatever their caller authentication and the shell's token", async () => {
    const modes = ['auto', 'bearer', 'path-secret', 'none'] as const;
    const webhooks = modes.map((auth) =>
      defineValidatingWebhook({
        name: `auth-${auth}`,
        auth,
        rules: [{ operations: ['UPDATE'], apiGroups: ['apps'], apiVersions: ['v1'], resources: ['deployments'] }],
        namespaceSelector: {},
        validate: () => deny('seen'),
      }),
    );
    process.env.KLW_BEARER_TOKEN = 'a-token-the-audit-does-not-know';
    try {
      const report = await runAudit({ client, webhooks, auditor });
      assert.deepEqual(
        report.results.map((r) => `${r.function} ${r.result} ${r.message}`),
        modes.map((m) => `auth-${m} denied seen`),
      );
    } finally {
      delete process.env.KLW_BEARER_TOKEN;
    }
  });

  it("reports what a policy would deny whatever its enforcement mode, and the mode, ignoring the auditor's KLW_ENFORCEMENT", async () => {
    // Four of the six pods carry tier=forbidden.
    const policy = (enforcement: 'Deny' | 'Warn' | 'Audit') =>
      defineValidatingWebhook({
        name: `tier-${enforcement.toLowerCase()}`,
        enforcement,
        rules: [{ operations: ['UPDATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'] }],
        namespaceSelector: {},
        validate: ({ object }) =>
          (object as any).metadata.labels.tier === 'forbidden' ? deny('tier=forbidden') : allow(),
      });
    process.env.KLW_ENFORCEMENT = 'Audit';
    process.env.KLW_ENFORCEMENT_TIER_DENY = 'Warn';
    try {
      for (const mode of ['Deny', 'Warn', 'Audit'] as const) {
        const report = await runAudit({ client, webhooks: [policy(mode)], auditor });
        assert.deepEqual(
          report.summary,
          { denied: 4, warned: 0, audited: 0, patched: 0, allowed: 2, skipped: 0, error: 0 },
          mode,
        );
        assert.deepEqual(
          report.results.map((r) => `${r.result} ${r.rejected} ${r.enforcement} ${r.name} ${r.message}`).sort(),
          [
            `denied true ${mode} p-bad tier=forbidden`,
            `denied true ${mode} p-exempt tier=forbidden`,
            `denied true ${mode} p-off-bad tier=forbidden`,
            `denied true ${mode} p-plain-bad tier=forbidden`,
          ],
        );
        assert.equal(
          deniedLine(report),
          `4 objects would be denied${mode === 'Deny' ? '' : ' (4 by functions in Warn or Audit enforcement, admitted until it is Deny)'}`,
        );
        const table = renderAudit(report, 'table').trim().split('\n');
        assert.match(table[0]!, /^RESULT\s+FUNCTION\s+ENFORCEMENT\s+RESOURCE\s+OBJECT\s+MESSAGE$/);
        assert.match(table[1]!, new RegExp(`^DENIED\\s+tier-${mode.toLowerCase()}\\s+${mode}\\s+pods\\s+`));
      }
    } finally {
      delete process.env.KLW_ENFORCEMENT;
      delete process.env.KLW_ENFORCEMENT_TIER_DENY;
    }
  });

  it('a continue token that expired (410) restarts the list once from the beginning, each object audited once', async () => {
    const names: string[] = [];
    const everything = defineValidatingWebhook({
      name: 'every-configmap',
      rules: [{ operations: ['UPDATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'] }],
      namespaceSelector: {},
      validate: ({ object }) => {
        names.push(String((object as any).metadata.name));
        return deny('no');
      },
    });
    const expired = {
      status: 410,
      message: 'The provided continue parameter is too old to display a consistent list result.',
    };
    let expiries = 0;
    fault = (url) =>
      url.pathname === '/api/v1/configmaps' && url.searchParams.has('continue') && expiries++ === 0
        ? expired
        : undefined;
    requests.length = 0;
    try {
      const report = await runAudit({ client, webhooks: [everything], auditor, pageSize: 1 });
      assert.deepEqual(report.problems, []);
      // The first page, the expired second page, then the whole list again (as client-go's pager does, without limit).
      assert.deepEqual(
        requests.filter((r) => r.includes('/configmaps')),
        ['GET /api/v1/configmaps?limit=1', 'GET /api/v1/configmaps?limit=1&continue=1', 'GET /api/v1/configmaps'],
      );
      assert.deepEqual(names, ['cm-bad', 'cm-ok']);
      assert.deepEqual(report.results.map(key), [
        'denied every-configmap on/cm-bad',
        'denied every-configmap on/cm-ok',
      ]);
      assert.equal(report.summary.denied, 2);

      // Only once: a relist that expires too leaves the resource unchecked, and says so.
      fault = (url) => (url.pathname === '/api/v1/configmaps' && url.search !== '?limit=1' ? expired : undefined);
      names.length = 0;
      const failed = await runAudit({ client, webhooks: [everything], auditor, pageSize: 1 });
      assert.deepEqual(names, ['cm-bad']);
      assert.deepEqual(failed.problems, [
        'every-configmap: cannot list configmaps: /api/v1/configmaps: HTTP 410: The provided continue parameter is too old to display a consistent list result.',
      ]);
    } finally {
      fault = undefined;
    }
  });

  it('reports progress with the total the API server gives', async () => {
    const seen: string[] = [];
    const webhooks = (await loadWebhooks(FIXTURE, ['audit-policy'])) as never[];
    await runAudit({
      client,
      webhooks,
      auditor,
      pageSize: 4,
      onProgress: (p) => seen.push(`${p.resource} ${p.done}/${p.total ?? '?'}`),
    });
    assert.deepEqual(
      seen.filter((s) => s.startsWith('pods')),
      ['pods 1/6', 'pods 2/6', 'pods 3/6', 'pods 4/6', 'pods 5/6', 'pods 6/6'],
    );
    assert.deepEqual(
      seen.filter((s) => s.startsWith('configmaps')),
      ['configmaps 1/?', 'configmaps 2/?'],
    );
  });
});

/** Runs klw audit in this process against the fake API server; returns exit code, stdout and stderr. */
function klw(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return klwInProcess('--root', FIXTURE, 'audit', '--kubeconfig', kubeconfig, ...args);
}
/** klw audit in a child process of its own, with extra environment variables. */
function klwWith(
  env: Record<string, string>,
  ...args: string[]
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [KLW, '--root', FIXTURE, 'audit', '--kubeconfig', kubeconfig, ...args],
      { encoding: 'utf8', env: { ...process.env, ...env } },
      (err, stdout, stderr) =>
        resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

// Against the same fake API server, which none of them changes: side by side.
describe('klw audit command', { concurrency: true }, () => {
  it('-o json: the report, the auditor from a TokenReview, exit 1 when anything would be denied', async () => {
    // The real process: its exit code, and stderr as a pipe (no terminal).
    const { code, stdout, stderr } = await klwWith({}, '-o', 'json', '--page-size', '2');
    assert.equal(code, 1, stderr);
    const report = JSON.parse(stdout) as AuditReport;
    assert.deepEqual(report.auditor, { username: 'auditor@example.com', groups: ['auditors', 'system:authenticated'] });
    assert.deepEqual(
      report.results
        .filter((r) => r.rejected)
        .map(key)
        .sort(),
      ['denied audit-policy on/cm-bad', 'denied audit-policy on/p-bad'],
    );
    assert.match(stderr, /audit: 9 objects: 2 denied, 1 warned, 1 patched, 5 allowed, 0 skipped, 0 errors/);
    assert.match(stderr, /klw: 2 objects would be denied/);
    assert.match(stderr, /^auditing 2 functions against https:\/\/127\.0\.0\.1:\d+ as auditor@example\.com$/m);
    assert.doesNotMatch(stderr, /\x1b\[2K/, 'no progress bar when stderr is not a terminal');
  });

  it('-o yaml and the table', async () => {
    const yaml = await klw('-o', 'yaml');
    assert.equal(parse(yaml.stdout).summary.denied, 2);
    const table = await klw('--as', 'ci-bot', '--as-group', 'ci');
    assert.equal(table.code, 1);
    const lines = table.stdout.trim().split('\n');
    assert.match(lines[0]!, /^RESULT\s+FUNCTION\s+ENFORCEMENT\s+RESOURCE\s+OBJECT\s+MESSAGE$/);
    assert.ok(
      lines.some((l) => /^DENIED\s+audit-policy\s+Deny\s+pods\s+on\/p-bad\s+Pod "p-bad" has tier=forbidden$/.test(l)),
      table.stdout,
    );
    assert.ok(
      lines.some((l) =>
        /^PATCHED\s+audit-defaults\s+Deny\s+pods\s+on\/p-exempt\s+patch: add \/metadata\/labels\/team$/.test(l),
      ),
      table.stdout,
    );
    assert.match(table.stderr, /as ci-bot/);
  });

  it('exit 0 when nothing would be denied (patches and warnings only)', async () => {
    const { code, stderr } = await klw('audit-defaults');
    assert.equal(code, 0, stderr);
    assert.match(stderr, /1 patched/);
  });

  it('exit 2 with one line when the audit cannot run: bad credentials, an unknown context, a bad page size or option', async () => {
    const wrong = await klw('--context', 'wrong-user');
    assert.equal(wrong.code, 2);
    assert.match(wrong.stderr, /^klw: \/.*: HTTP 401: Unauthorized$/m);
    const unknown = await klw('--context', 'nope');
    assert.equal(unknown.code, 2);
    assert.match(unknown.stderr, /klw: kubeconfig .* has no context "nope"/);
    const size = await klw('--page-size', '0');
    assert.equal(size.code, 2);
    assert.match(size.stderr, /klw: --page-size must be a whole number/);
    const format = await klw('-o', 'csv');
    assert.equal(format.code, 2);
    assert.match(format.stderr, /error: option '-o, --output <format>' argument 'csv' is invalid/);
  });
});

// Sets process.env for the run: alone.
describe('klw audit command, enforcement variables in the shell', () => {
  it("KLW_ENFORCEMENT in the auditor's shell does not turn denials into warnings", async () => {
    // In this process, with the variables set as a shell would set them: klw reads them from
    // process.env when it runs (the -o json test above is the real process).
    const shell = { KLW_ENFORCEMENT: 'Warn', KLW_ENFORCEMENT_AUDIT_POLICY: 'Audit' };
    const before = Object.fromEntries(Object.keys(shell).map((name) => [name, process.env[name]]));
    Object.assign(process.env, shell);
    let run: { code: number; stdout: string; stderr: string };
    try {
      run = await klw('-o', 'json');
    } finally {
      for (const [name, value] of Object.entries(before)) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
    }
    const { code, stdout, stderr } = run;
    assert.equal(code, 1, stderr);
    const report = JSON.parse(stdout) as AuditReport;
    assert.deepEqual(
      report.results
        .filter((r) => r.rejected)
        .map((r) => `${key(r)} ${r.enforcement}`)
        .sort(),
      ['denied audit-policy on/cm-bad Deny', 'denied audit-policy on/p-bad Deny'],
    );
    assert.match(stderr, /audit: 9 objects: 2 denied, 1 warned, 1 patched/);
  });
});

// The fake API server fails a list here: alone.
describe('klw audit command, a list failing', () => {
  it('exit 2 when a list failed, naming it, even with denials; --allow-partial passes what was checked', async () => {
    fault = (url) =>
      url.pathname === '/api/v1/configmaps'
        ? {
            status: 403,
            message: 'configmaps is forbidden: User "auditor@example.com" cannot list resource "configmaps"',
          }
        : undefined;
    try {
      const strict = await klw('audit-policy', '-o', 'json');
      assert.equal(strict.code, 2, strict.stderr);
      assert.match(
        strict.stderr,
        /^incomplete: audit-policy: cannot list configmaps: \/api\/v1\/configmaps: HTTP 403: configmaps is forbidden/m,
      );
      assert.match(strict.stderr, /^klw: 1 object would be denied$/m);
      assert.match(
        strict.stderr,
        /^klw: audit incomplete: 1 problem above left objects unchecked; --allow-partial accepts a partial audit$/m,
      );
      assert.equal((JSON.parse(strict.stdout) as AuditReport).problems.length, 1);
      const partial = await klw('audit-policy', '--allow-partial');
      assert.equal(partial.code, 1, partial.stderr);
      assert.match(partial.stderr, /^warning: audit-policy: cannot list configmaps: .*HTTP 403/m);
      assert.match(partial.stderr, /^klw: 1 object would be denied$/m);
    } finally {
      fault = undefined;
    }
  });
});

describe('audit pieces', () => {
  it('selectors become labelSelector queries', () => {
    assert.equal(
      selectorQuery({
        matchLabels: { a: 'b' },
        matchExpressions: [
          { key: 'c', operator: 'In', values: ['d', 'e'] },
          { key: 'f', operator: 'NotIn', values: ['g'] },
          { key: 'h', operator: 'Exists' },
          { key: 'i', operator: 'DoesNotExist' },
        ],
      }),
      'a=b,c in (d,e),f notin (g),h,!i',
    );
    assert.equal(selectorQuery(undefined), '');
  });

  it('the progress bar draws only on a terminal, and clears itself', () => {
    const writes: string[] = [];
    const tty = new ProgressBar({ isTTY: true, write: (t: string) => writes.push(t) });
    tty.update({ function: 'f', resource: 'pods', done: 1, total: 4 });
    tty.update({ function: 'f', resource: 'pods', done: 4, total: 4 });
    tty.done();
    assert.deepEqual(writes, [
      `\r\x1b[2K[${'#'.repeat(6)}${'.'.repeat(18)}] 1/4 pods (f)`,
      `\r\x1b[2K[${'#'.repeat(24)}] 4/4 pods (f)`,
      '\r\x1b[2K',
    ]);
    const quiet: string[] = [];
    const pipe = new ProgressBar({ isTTY: false, write: (t: string) => quiet.push(t) });
    pipe.update({ function: 'f', resource: 'pods', done: 1 });
    pipe.done();
    assert.deepEqual(quiet, []);
  });

  it('renders an empty table as nothing and counts in the summary line', () => {
    const report: AuditReport = {
      auditor,
      summary: { denied: 0, warned: 0, audited: 0, patched: 0, allowed: 1, skipped: 2, error: 0 },
      results: [],
      problems: [],
    };
    assert.equal(renderAudit(report, 'table'), '');
    assert.equal(
      summaryLine(report),
      'audit: 3 objects: 0 denied, 0 warned, 0 patched, 1 allowed, 2 skipped, 0 errors',
    );
  });
});

describe('kubeconfig and identity', () => {
  it('reads the current context, files relative to the kubeconfig, inline data, KUBECONFIG lists', async () => {
    const c = await loadConnection({ kubeconfig });
    assert.match(c.server, /^https:\/\/127\.0\.0\.1:\d+$/);
    assert.match(c.ca!, /BEGIN CERTIFICATE/);
    assert.equal(c.token, TOKEN);
    assert.equal(c.namespace, 'on');
    const other = join(dir, 'other.yaml');
    writeFileSync(
      other,
      JSON.stringify({
        'current-context': 'data',
        clusters: [
          {
            name: 'd',
            cluster: {
              server: 'https://10.0.0.1',
              'certificate-authority-data': Buffer.from('CA').toString('base64'),
              'insecure-skip-tls-verify': true,
            },
          },
        ],
        users: [
          {
            name: 'u',
            user: {
              'client-certificate-data': Buffer.from('CERT').toString('base64'),
              'client-key-data': Buffer.from('KEY').toString('base64'),
            },
          },
        ],
        contexts: [{ name: 'data', context: { cluster: 'd', user: 'u' } }],
      }),
    );
    // The first file in KUBECONFIG to set current-context wins.
    const merged = await loadConnection({ env: { KUBECONFIG: `${join(dir, 'missing')}:${other}:${kubeconfig}` } });
    assert.deepEqual(
      [merged.server, merged.ca, merged.cert, merged.key, merged.insecure],
      ['https://10.0.0.1', 'CA', 'CERT', 'KEY', true],
    );
    assert.equal(
      (await loadConnection({ env: { KUBECONFIG: `${other}:${kubeconfig}` }, context: 'fake' })).token,
      TOKEN,
    );
    await assert.rejects(loadConnection({ kubeconfig: join(dir, 'missing') }), /kubeconfig .*missing not found/);
  });

  it('runs exec credential plugins', async () => {
    const plugin = join(dir, 'plugin.sh');
    writeFileSync(
      plugin,
      `#!/bin/sh\necho '{"apiVersion":"client.authentication.k8s.io/v1beta1","kind":"ExecCredential","status":{"token":"'"$AUDIT_TOKEN"'"}}'\n`,
    );
    chmodSync(plugin, 0o755);
    const failing = join(dir, 'failing.sh');
    writeFileSync(failing, '#!/bin/sh\necho "no session" >&2\nexit 3\n');
    chmodSync(failing, 0o755);
    const file = join(dir, 'exec.yaml');
    const config = (command: string) =>
      JSON.stringify({
        'current-context': 'x',
        clusters: [{ name: 'c', cluster: { server: 'https://10.0.0.2' } }],
        users: [
          {
            name: 'u',
            user: {
              exec: {
                apiVersion: 'client.authentication.k8s.io/v1beta1',
                command,
                env: [{ name: 'AUDIT_TOKEN', value: 'from-plugin' }],
              },
            },
          },
        ],
        contexts: [{ name: 'x', context: { cluster: 'c', user: 'u' } }],
      });
    writeFileSync(file, config('./plugin.sh'));
    assert.equal((await loadConnection({ kubeconfig: file })).token, 'from-plugin');
    writeFileSync(file, config(failing));
    await assert.rejects(
      loadConnection({ kubeconfig: file }),
      /exec credential plugin .*failing\.sh failed: no session/,
    );
  });

  it('exec credential plugins: re-run within a minute of status.expirationTimestamp, and once on a 401', async () => {
    // The plugin counts its runs in a file and answers the Nth run with the Nth token of TOKENS (the
    // last one after that), expiring at EXPIRES_AT. A shell script: a plugin runs at every refresh.
    const plugin = join(dir, 'expiring-plugin.sh');
    writeFileSync(
      plugin,
      [
        '#!/bin/sh',
        'printf x >> "$COUNT_FILE"',
        'run=$(wc -c < "$COUNT_FILE")',
        'token=$(echo "$TOKENS" | awk -F, -v run="$run" \'{ print $(run + 0 < NF ? run + 0 : NF) }\')',
        'echo \'{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"\'"$token"\'","expirationTimestamp":"\'"$EXPIRES_AT"\'"}}\'',
        '',
      ].join('\n'),
    );
    chmodSync(plugin, 0o755);
    const port = (server.address() as { port: number }).port;
    let n = 0;
    const connect = async (tokens: string, expiresIn: number) => {
      const count = join(dir, `exec-count-${++n}`);
      writeFileSync(count, '');
      const file = join(dir, `exec-${n}.yaml`);
      const env = [
        { name: 'COUNT_FILE', value: count },
        { name: 'TOKENS', value: tokens },
        { name: 'EXPIRES_AT', value: new Date(Date.now() + expiresIn * 1000).toISOString() },
      ];
      writeFileSync(
        file,
        JSON.stringify({
          'current-context': 'x',
          clusters: [{ name: 'c', cluster: { server: `https://127.0.0.1:${port}`, 'certificate-authority': caFile } }],
          users: [
            {
              name: 'u',
              user: {
                exec: { apiVersion: 'client.authentication.k8s.io/v1', command: plugin, env },
              },
            },
          ],
          contexts: [{ name: 'x', context: { cluster: 'c', user: 'u' } }],
        }),
      );
      return {
        client: new KubeClient(await loadConnection({ kubeconfig: file })),
        runs: () => readFileSync(count, 'utf8').length,
      };
    };

    // An hour left: the credential is reused.
    const lasting = await connect(TOKEN, 3600);
    for (let i = 0; i < 3; i++) await lasting.client.request('GET', '/api');
    assert.equal(lasting.runs(), 1);
    // Half a minute left: the plugin runs again before each request.
    const expiring = await connect(TOKEN, 30);
    assert.equal(expiring.runs(), 1);
    await expiring.client.request('GET', '/api');
    await expiring.client.request('GET', '/api');
    assert.equal(expiring.runs(), 3);
    // Rejected (401): one more run and the request again, with the new token.
    const revoked = await connect(`stale,${TOKEN}`, 3600);
    assert.equal(((await revoked.client.request('GET', '/api')) as { kind?: string }).kind, 'APIVersions');
    await revoked.client.request('GET', '/api');
    assert.equal(revoked.runs(), 2);
    // Still rejected: the 401 stands after that one retry.
    const refused = await connect('stale', 3600);
    await assert.rejects(refused.client.request('GET', '/api'), /HTTP 401/);
    assert.equal(refused.runs(), 2);
  });

  it('in-cluster: the service account token, CA and namespace', async () => {
    const sa = join(dir, 'sa');
    mkdirSync(sa, { recursive: true });
    writeFileSync(join(sa, 'token'), 'sa-token\n');
    writeFileSync(join(sa, 'ca.crt'), 'CA');
    writeFileSync(join(sa, 'namespace'), 'audit\n');
    const c = inClusterConnection({ KUBERNETES_SERVICE_HOST: 'fd00::1', KUBERNETES_SERVICE_PORT: '443' }, sa);
    assert.deepEqual(
      [c.server, c.tokenFile, c.ca, c.namespace],
      ['https://[fd00::1]:443', join(sa, 'token'), 'CA', 'audit'],
    );
    assert.throws(() => inClusterConnection({}, sa), /not running in a cluster/);
    // Without any kubeconfig, loadConnection falls back to the in-cluster configuration.
    await assert.rejects(
      loadConnection({ env: { HOME: join(dir, 'nohome') } }),
      /no kubeconfig .* not running in a cluster/,
    );
  });

  it('who the auditor is: TokenReview when SelfSubjectReview is missing, else the credentials', async () => {
    assert.deepEqual(await whoAmI(client), {
      username: 'auditor@example.com',
      groups: ['auditors', 'system:authenticated'],
    });
    const jwt = [
      'e30',
      Buffer.from(JSON.stringify({ sub: 'system:serviceaccount:audit:scanner' })).toString('base64url'),
      'sig',
    ].join('.');
    assert.deepEqual(identityFromCredentials({ server: 'https://x', source: 't', token: jwt }), {
      username: 'system:serviceaccount:audit:scanner',
      groups: ['system:serviceaccounts', 'system:serviceaccounts:audit', 'system:authenticated'],
    });
    assert.deepEqual(identityFromCredentials({ server: 'https://x', source: 't', username: 'bob', password: 'p' }), {
      username: 'bob',
      groups: ['system:authenticated'],
    });
    assert.equal(identityFromCredentials({ server: 'https://x', source: 't', token: 'opaque' }), undefined);
  });
});

/** How a hostile fake API server answers lists (discovery it answers properly: one resource, pods). */
type Hostility =
  | 'endless' // a new continue token with every page, forever
  | 'cycle' // tokens a, b, a, b, ...: a page repeats a token an earlier page gave
  | 'same' // the same continue token with every page
  | 'trickle' // the answer's headers, then one byte of its body every 20 ms, never the end
  | 'null-item'; // a page whose second item is null

interface HostileServer {
  url: string;
  /** List requests answered so far. */
  lists: () => number;
  close: () => Promise<void>;
}

/** A fake API server over plain HTTP on loopback that misbehaves on lists. */
async function hostileServer(hostility: Hostility): Promise<HostileServer> {
  let lists = 0;
  const trickles = new Set<NodeJS.Timeout>();
  const server: HttpServer = createHttpServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const json = (body: unknown) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    if (url.pathname === '/api') return json({ kind: 'APIVersions', versions: ['v1'] });
    if (url.pathname === '/apis') return json({ kind: 'APIGroupList', groups: [] });
    const pods = { name: 'pods', kind: 'Pod', namespaced: true, verbs: ['list'] };
    if (url.pathname === '/api/v1') return json({ kind: 'APIResourceList', resources: [pods] });
    lists++;
    const page = Number(url.searchParams.get('continue')?.replace(/\D/g, '') || 0);
    const list = (items: unknown[], token?: string) => {
      json({ kind: 'List', metadata: token ? { continue: token } : {}, items });
    };
    if (hostility === 'endless') return list([], `page-${page + 1}`);
    if (hostility === 'cycle') return list([], page % 2 ? 'a-0' : 'b-1');
    if (hostility === 'same') return list([], 'again');
    if (hostility === 'null-item') return list([obj('on', 'fine'), null]);
    res.writeHead(200, { 'content-type': 'application/json' });
    const body = JSON.stringify({ kind: 'List', metadata: {}, items: [] });
    let sent = 0;
    const timer = setInterval(() => {
      // Never the last byte: the answer never ends, however long the client waits.
      if (sent < body.length - 1) res.write(body[sent++]);
      else res.write(' ');
    }, 20);
    trickles.add(timer);
    res.on('close', () => {
      clearInterval(timer);
      trickles.delete(timer);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
    lists: () => lists,
    close: async () => {
      for (const timer of trickles) clearInterval(timer);
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A kubeconfig for `server`, with a token or an exec plugin. */
function kubeconfigFor(name: string, server: string, user: Record<string, unknown> = { token: TOKEN }): string {
  const file = join(dir, `${name}.kubeconfig`);
  writeFileSync(
    file,
    JSON.stringify({
      'current-context': 'h',
      clusters: [{ name: 'h', cluster: { server } }],
      users: [{ name: 'u', user }],
      contexts: [{ name: 'h', context: { cluster: 'h', user: 'u' } }],
    }),
  );
  return file;
}

/** An exec plugin that starts a grandchild and waits for it, writing the grandchild's pid first; it never answers. */
function hangingPlugin(): { file: string; pidFile: string } {
  const file = join(dir, 'hanging-plugin.sh');
  const pidFile = join(dir, 'hanging-plugin.pid');
  rmSync(pidFile, { force: true });
  writeFileSync(file, `#!/bin/sh\nsleep 3600 &\necho $! > "${pidFile}"\nwait\n`);
  chmodSync(file, 0o755);
  return { file, pidFile };
}

/** True once `pid` is gone (or a zombie waiting to be reaped: it runs no more). */
function dead(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return true;
  }
  try {
    return /^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return true;
  }
}

/** Waits until the hanging plugin's grandchild is gone; the test's own timeout fails it if it never goes. */
async function grandchildKilled(pidFile: string): Promise<void> {
  while (!existsSync(pidFile) || !readFileSync(pidFile, 'utf8').trim()) await new Promise((r) => setTimeout(r, 20));
  const pid = Number(readFileSync(pidFile, 'utf8'));
  while (!dead(pid)) await new Promise((r) => setTimeout(r, 20));
}

/** Collects a list's items; rejects as the list does. */
async function listAll(client: KubeClient): Promise<unknown[]> {
  const items: unknown[] = [];
  await client.list('/api/v1/pods', {}, 10, (page) => void items.push(...page));
  return items;
}

/** The start of every message about the pods list of a server. */
const listing = (server: { url: string }) => `listing /api/v1/pods at ${server.url}`;
const NEVER_ENDS = "repeats an earlier page's continue token; its pages would never end";

/** The end of the message about a plugin killed after `ms`. */
const hung = (ms: number) => ` did not finish within ${ms} ms; killed it (--exec-timeout)`;

// A hang guard only: a bound that fails to hold makes the test fail here instead of hanging the run.
// Five minutes: the audits below run at once on a loaded 2-core machine, in this process but one,
// and that one klw process takes tens of seconds to load before the bounds under test even start.
const HANG_GUARD = { timeout: 300_000 };
/** Each run's own hang guard, inside HANG_GUARD: a run past it fails, and the hostile servers still close. */
const RUN_DEADLINE_MS = 240_000;

/** `run`, or a failure naming `what` once RUN_DEADLINE_MS has passed without it settling. */
async function withinDeadline<T>(what: string, run: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: not done within ${RUN_DEADLINE_MS} ms`)), RUN_DEADLINE_MS);
  });
  try {
    return await Promise.race([run, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

describe('klw audit against stalling API servers and plugins', () => {
  it('a repeated continue token ends the list at once, naming the collection and the server', HANG_GUARD, async () => {
    for (const hostility of ['same', 'cycle'] as const) {
      const server = await hostileServer(hostility);
      try {
        const stalled = new KubeClient(await loadConnection({ kubeconfig: kubeconfigFor(hostility, server.url) }));
        const page = hostility === 'same' ? 2 : 3;
        await assert.rejects(listAll(stalled), {
          message: `${listing(server)}: page ${page} ${NEVER_ENDS}`,
        });
        assert.equal(server.lists(), hostility === 'same' ? 2 : 3);
      } finally {
        await server.close();
      }
    }
  });

  it('endless continue tokens: stopped at the page cap, or at the list deadline', HANG_GUARD, async () => {
    const server = await hostileServer('endless');
    try {
      const connection = await loadConnection({ kubeconfig: kubeconfigFor('endless', server.url) });
      await assert.rejects(listAll(new KubeClient(connection, { maxPages: 7 })), {
        message: `${listing(server)}: more than 7 pages (--max-pages)`,
      });
      assert.equal(server.lists(), 7);
      await assert.rejects(listAll(new KubeClient(connection, { listMs: 50, maxPages: Number.MAX_SAFE_INTEGER })), {
        message: `${listing(server)}: not done within 50 ms of the API server's time (--list-timeout)`,
      });
    } finally {
      await server.close();
    }
  });

  it('a trickled body is cut off by the request deadline, or by the list deadline', HANG_GUARD, async () => {
    const server = await hostileServer('trickle');
    try {
      const connection = await loadConnection({ kubeconfig: kubeconfigFor('trickle', server.url) });
      // Bytes arrive every 20 ms, far inside the old per-gap idle limit: only a limit on the whole answer ends it.
      await assert.rejects(listAll(new KubeClient(connection, { requestMs: 200 })), {
        message: `GET /api/v1/pods at ${server.url}: no complete answer within 200 ms (--request-timeout)`,
      });
      await assert.rejects(listAll(new KubeClient(connection, { requestMs: 60_000, listMs: 200 })), {
        message: `${listing(server)}: not done within 200 ms of the API server's time (--list-timeout)`,
      });
    } finally {
      await server.close();
    }
  });

  it('a list item that is not an object is named by its page and index', HANG_GUARD, async () => {
    const server = await hostileServer('null-item');
    try {
      const connection = await loadConnection({ kubeconfig: kubeconfigFor('null-item', server.url) });
      await assert.rejects(listAll(new KubeClient(connection)), {
        message: `${listing(server)}: items[1] of page 1 is null, not an object`,
      });
    } finally {
      await server.close();
    }
  });

  it('an exec plugin that hangs is killed with its process group after the exec timeout', HANG_GUARD, async () => {
    const plugin = hangingPlugin();
    const exec = { apiVersion: 'client.authentication.k8s.io/v1', command: './hanging-plugin.sh' };
    const kubeconfig = kubeconfigFor('hanging-exec', 'http://127.0.0.1:9', { exec });
    await assert.rejects(loadConnection({ kubeconfig, execTimeoutMs: 200 }), {
      message: `kubeconfig: exec credential plugin ${exec.command}${hung(200)}`,
    });
    await grandchildKilled(plugin.pidFile);
  });

  it('an exec plugin that prints without end is killed', HANG_GUARD, async () => {
    const kubeconfig = kubeconfigFor('chatty-exec', 'http://127.0.0.1:9', { exec: { command: 'yes' } });
    await assert.rejects(loadConnection({ kubeconfig }), {
      message: `kubeconfig: exec credential plugin yes printed more than ${1024 * 1024} bytes; killed it`,
    });
  });

  it('limits from the options: durations, a page cap, defaults; nonsense refused', () => {
    assert.deepEqual(kubeLimitsFrom({}), DEFAULT_KUBE_LIMITS);
    const given = kubeLimitsFrom({ requestTimeout: '1m30s', listTimeout: '2h', maxPages: '3', execTimeout: '250ms' });
    assert.deepEqual(given, { requestMs: 90_000, listMs: 7_200_000, maxPages: 3, execMs: 250 });
    // Past what a timer can wait, a duration is the longest a timer waits (not a timer firing at once).
    assert.equal(kubeLimitsFrom({ requestTimeout: '1000h' }).requestMs, 2 ** 31 - 1);
    for (const [options, message] of [
      [{ requestTimeout: '10' }, /--request-timeout must be a duration/],
      [{ listTimeout: '0s' }, /--list-timeout must be a duration/],
      [{ execTimeout: 'soon' }, /--exec-timeout must be a duration/],
      [{ maxPages: '0' }, /--max-pages must be a whole number/],
      [{ maxPages: '1.5' }, /--max-pages must be a whole number/],
    ] as const) {
      assert.throws(() => kubeLimitsFrom(options), message);
    }
  });

  /** Runs `klw audit audit-policy --as tester` against a kubeconfig, in this process, within RUN_DEADLINE_MS. */
  function audit(kubeconfig: string, ...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
    const argv = ['--root', FIXTURE, 'audit', 'audit-policy', '--as', 'tester', '--kubeconfig', kubeconfig, ...args];
    return withinDeadline(`klw ${args.join(' ')}`, klwInProcess(...argv));
  }

  /**
   * The same audit as a klw process of its own: it must exit on its own once a bound has fired (no
   * socket or timer left open keeps it alive); past RUN_DEADLINE_MS it is killed and the run fails.
   */
  function auditProcess(
    kubeconfig: string,
    ...args: string[]
  ): Promise<{ code: number; stdout: string; stderr: string }> {
    const argv = ['--root', FIXTURE, 'audit', 'audit-policy', '--as', 'tester', '--kubeconfig', kubeconfig, ...args];
    return new Promise((resolve) => {
      execFile(
        process.execPath,
        [KLW, ...argv],
        { encoding: 'utf8', timeout: RUN_DEADLINE_MS, killSignal: 'SIGKILL' },
        (err, stdout, stderr) =>
          resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
      );
    });
  }

  it('klw audit exits 2 naming what stalled: tokens, a trickled body, a null item, a plugin', HANG_GUARD, async () => {
    const servers = await Promise.all((['endless', 'same', 'trickle', 'null-item'] as const).map(hostileServer));
    const [endless, same, trickle, nullItem] = servers;
    const plugin = hangingPlugin();
    const hanging = kubeconfigFor('hanging-cli', endless!.url, { exec: { command: plugin.file } });
    try {
      // Run together: each is bounded on its own. The trickle runs as a real process, which must exit by itself.
      const runs = await Promise.all([
        audit(kubeconfigFor('endless-cli', endless!.url), '--max-pages', '5'),
        audit(kubeconfigFor('endless-time-cli', endless!.url), '--list-timeout', '100ms', '--max-pages', '1000000000'),
        audit(kubeconfigFor('same-cli', same!.url)),
        // Long enough for the quick answers (discovery) of a loaded machine; the trickle never completes.
        auditProcess(kubeconfigFor('trickle-cli', trickle!.url), '--request-timeout', '3s'),
        audit(kubeconfigFor('null-cli', nullItem!.url)),
        audit(hanging, '--exec-timeout', '300ms'),
        audit(kubeconfigFor('bad-option-cli', endless!.url), '--request-timeout', '5'),
      ]);
      const expected = [
        `${listing(endless!)}: more than 5 pages (--max-pages)`,
        `${listing(endless!)}: not done within 100 ms of the API server's time (--list-timeout)`,
        `${listing(same!)}: page 2 ${NEVER_ENDS}`,
        `GET /api/v1/pods at ${trickle!.url}: no complete answer within 3 s (--request-timeout)`,
        `${listing(nullItem!)}: items[1] of page 1 is null, not an object`,
        `kubeconfig: exec credential plugin ${plugin.file}${hung(300)}`,
        '--request-timeout must be a duration of at least 1ms, such as 30s, 2m or 1m30s',
      ];
      for (const [i, run] of runs.entries()) {
        assert.equal(run.code, 2, `${expected[i]}\n${run.stderr}`);
        assert.equal(run.stderr.trim().split('\n').at(-1), `klw: ${expected[i]}`);
      }
      await grandchildKilled(plugin.pidFile);
    } finally {
      await Promise.all(servers.map((s) => s.close()));
    }
  });
});
