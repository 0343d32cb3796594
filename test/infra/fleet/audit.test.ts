// `klw audit` over several clusters: fake API servers on loopback, one report, one exit code.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import {
  fleetAuditAction,
  fleetAuditTargets,
  fleetExitCode,
  runFleetAudit,
  type FleetAuditOptions,
  type FleetAuditReport,
} from '../../../infra/fleet/audit.ts';
import type { KlwError } from '../../../infra/errors.ts';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { klwInProcess } from '../../helpers.ts';

const KLW = fileURLToPath(new URL('../../../infra/bin/klw.mjs', import.meta.url));

/** Runs klw as a child process: its stdout is its own. */
function klwProcess(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) =>
    execFile(process.execPath, [KLW, ...args], { encoding: 'utf8' }, (err, stdout, stderr) =>
      resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    ),
  );
}
import { parseFleet } from '../../../infra/fleet/file.ts';
import type { AuditReport } from '../../../infra/audit/index.ts';

// A project inside the repository, so `kube-lambda-webhooks` resolves to this package.
const work = mkdtempSync(join(process.cwd(), '.klw-test-fleet-audit-'));
mkdirSync(join(work, 'functions', 'pod-policy'), { recursive: true });
writeFileSync(
  join(work, 'functions', 'pod-policy', 'index.ts'),
  `import { allow, defineValidatingWebhook, deny } from 'kube-lambda-webhooks';
const webhook = defineValidatingWebhook({
  name: 'pod-policy',
  rules: [{ operations: ['CREATE', 'UPDATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'], scope: 'Namespaced' }],
  failurePolicy: 'Fail',
  validate: ({ object }) => (object?.metadata?.labels?.tier === 'forbidden' ? deny(\`\${object.metadata.name} is forbidden\`) : allow()),
});
export const handler = webhook.handler;
export default webhook;
`,
);
const FLEET =
  'clusters:\n  - name: east\n    context: ctx-east\n  - name: west\n    context: ctx-west\n' +
  '    enforcement: { pod-policy: Warn }\n  - name: clean\n    context: ctx-clean\n';
writeFileSync(join(work, 'clusters.yaml'), FLEET);

const pod = (name: string, tier: string) => ({ metadata: { namespace: 'default', name, uid: name, labels: { tier } } });

/** A fake API server holding `pods`: discovery of the core group and the pod list. */
function fakeApiServer(pods: unknown[]): Promise<{ url: string; server: Server }> {
  const server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    const bodies: Record<string, unknown> = {
      '/api': { versions: ['v1'] },
      '/apis': { groups: [] },
      '/api/v1': { resources: [{ name: 'pods', kind: 'Pod', namespaced: true, verbs: ['list'] }] },
      '/api/v1/pods': { items: pods, metadata: {} },
      '/api/v1/namespaces': { items: [{ metadata: { name: 'default' } }], metadata: {} },
    };
    const body = bodies[path];
    res.writeHead(body ? 200 : 404, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body ?? { kind: 'Status', code: 404, message: 'not found' }));
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server }),
    ),
  );
}

const servers: Server[] = [];
let kubeconfig = '';
before(async () => {
  const east = await fakeApiServer([pod('bad-east', 'forbidden'), pod('ok-east', 'fine')]);
  const west = await fakeApiServer([pod('bad-west', 'forbidden')]);
  const clean = await fakeApiServer([pod('ok-clean', 'fine')]);
  // A port that was listening and is closed again: nothing answers there.
  const gone = await fakeApiServer([]);
  await new Promise((r) => gone.server.close(r));
  servers.push(east.server, west.server, clean.server);
  // Accepts connections and never answers.
  const silent = createServer(() => {});
  await new Promise<void>((r) => silent.listen(0, '127.0.0.1', () => r()));
  servers.push(silent);
  const silentUrl = `http://127.0.0.1:${(silent.address() as AddressInfo).port}`;
  const contexts = {
    'ctx-silent': silentUrl,
    'ctx-east': east.url,
    'ctx-west': west.url,
    'ctx-clean': clean.url,
    'ctx-gone': gone.url,
  };
  kubeconfig = join(work, 'kubeconfig');
  writeFileSync(
    kubeconfig,
    JSON.stringify({
      'current-context': 'ctx-east',
      clusters: Object.entries(contexts).map(([name, server]) => ({ name, cluster: { server } })),
      users: [{ name: 'u', user: { token: 't' } }],
      contexts: Object.keys(contexts).map((name) => ({ name, context: { cluster: name, user: 'u' } })),
    }),
  );
});
after(async () => {
  for (const server of servers) {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  }
  rmSync(work, { recursive: true, force: true });
});

/**
 * The --request-timeout of the runs: far beyond what a fake server on loopback needs on a loaded
 * machine, as only the silent server's test waits for it (SILENT_TIMEOUT).
 */
const REQUEST_TIMEOUT = '60s';
/** The --request-timeout of the silent server's run: the silent server is waited for this long. */
const SILENT_TIMEOUT = '3s';

/** Runs `klw audit --as tester` over several clusters in-process, through fleetAuditAction (stdout is the test runner's). */
async function klw(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const options: FleetAuditOptions = { context: [], output: 'table', pageSize: 500, as: 'tester', progress: false };
  const names: string[] = [];
  let requestTimeout = REQUEST_TIMEOUT;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === '--context') options.context.push(args[++i]!);
    else if (arg === '--all-clusters') options.allClusters = true;
    else if (arg === '--allow-partial') options.allowPartial = true;
    else if (arg === '-o') options.output = args[++i] as 'json';
    else if (arg === '--request-timeout') requestTimeout = args[++i]!;
    else names.push(arg);
  }
  let code = 0;
  try {
    await fleetAuditAction(
      work,
      names,
      { ...options, kubeconfig, requestTimeout },
      { say: (l) => err.push(`${l}\n`), writeOutput: (t) => out.push(t) },
    );
  } catch (e) {
    err.push(`klw: ${(e as Error).message}\n`);
    code = (e as KlwError).exitCode;
  }
  return { code, stdout: out.join(''), stderr: err.join('') };
}

describe('klw audit over several clusters', () => {
  it("one report of each cluster's violations with its enforcement; exit 1", async () => {
    const run = await klw('--context', 'ctx-east', '--context', 'ctx-west');
    assert.equal(run.code, 1, run.stderr);
    const rows = run.stdout.trim().split('\n');
    assert.match(rows[0]!, /^CLUSTER\s+RESULT\s+FUNCTION\s+ENFORCEMENT/);
    assert.match(rows[1]!, /^east\s+DENIED\s+pod-policy\s+Deny\s+pods\s+default\/bad-east\s+bad-east is forbidden$/);
    assert.match(rows[2]!, /^west\s+DENIED\s+pod-policy\s+Warn\s+pods\s+default\/bad-west\s+bad-west is forbidden$/);
    assert.equal(rows.length, 3);
    assert.match(run.stderr, /cluster east: audit: 2 objects: 1 denied, 0 warned, 0 patched, 1 allowed/);
    assert.match(run.stderr, /cluster west: audit: 1 object: 1 denied.*1 by functions in Warn or Audit/);
    assert.match(run.stderr, /audit of 2 clusters: 3 objects: 2 denied/);
    assert.match(run.stderr, /klw: objects would be denied in east, west\n$/);
  });

  it('JSON carries per-cluster reports and the sum', async () => {
    const run = await klw('--context', 'ctx-east', '--context', 'ctx-clean', '-o', 'json');
    assert.equal(run.code, 1, run.stderr);
    const report = JSON.parse(run.stdout) as FleetAuditReport;
    assert.deepEqual(
      report.clusters.map((c) => [c.cluster, c.context, c.report!.summary.denied, c.report!.summary.allowed]),
      [
        ['east', 'ctx-east', 1, 1],
        ['clean', 'ctx-clean', 0, 1],
      ],
    );
    assert.equal(report.summary.allowed, 2);
  });

  it('a context the kubeconfig lacks is a cluster not audited; --all-clusters goes without --context', async () => {
    const run = await klw('--context', 'ctx-clean', '--context', 'ctx-clean-too', '--allow-partial');
    // ctx-clean-too is not in the kubeconfig: that cluster is not audited, so the audit is incomplete.
    assert.equal(run.code, 2, run.stderr);
    assert.match(
      run.stderr,
      /cluster ctx-clean-too \(context ctx-clean-too\): not audited: .*no context "ctx-clean-too"/,
    );
    const clean = await klw('--all-clusters', 'pod-policy', '--context', 'ctx-clean');
    assert.equal(clean.code, 2);
    assert.match(clean.stderr, /give --context or --all-clusters, not both/);
  });

  it('a silent API server is bounded by --request-timeout, reported, and the others still audited', async () => {
    const run = await klw('--context', 'ctx-silent', '--context', 'ctx-east', '--request-timeout', SILENT_TIMEOUT);
    assert.equal(run.code, 2, run.stderr);
    assert.match(
      run.stderr,
      /cluster ctx-silent \(context ctx-silent\): not audited: .*within 3 s \(--request-timeout\)/,
    );
    assert.match(run.stderr, /cluster east: audit: 2 objects: 1 denied/);
    assert.match(run.stderr, /klw: audit incomplete: ctx-silent not fully audited/);
  });

  it('an unreachable cluster is reported, the others audited, and the audit exits 2', async () => {
    writeFileSync(
      join(work, 'clusters.yaml'),
      'clusters:\n  - name: east\n    context: ctx-east\n  - name: gone\n    context: ctx-gone\n  - name: clean\n    context: ctx-clean\n',
    );
    const run = await klw('--all-clusters');
    assert.equal(run.code, 2, run.stderr);
    assert.match(run.stderr, /cluster gone \(context ctx-gone\): not audited: .*127\.0\.0\.1/);
    assert.match(run.stderr, /cluster east: audit: 2 objects: 1 denied/);
    assert.match(run.stderr, /cluster clean: audit: 1 object: 0 denied/);
    assert.match(run.stderr, /1 cluster not audited/);
    assert.match(run.stderr, /klw: audit incomplete: gone not fully audited/);
    assert.match(run.stdout, /^east\s+DENIED/m);
    writeFileSync(
      join(work, 'clusters.yaml'),
      'clusters:\n  - name: clean\n    context: ctx-clean\n  - name: c2\n    context: ctx-clean\n',
    );
    const ok = await klw('--all-clusters');
    assert.equal(ok.code, 0, ok.stderr);
    assert.equal(ok.stdout, '');
    assert.match(ok.stderr, /audit of 2 clusters: 2 objects: 0 denied/);
  });
});

describe('klw audit command over several clusters', () => {
  it('repeats --context into one report and exits 1; one --context audits as before', async () => {
    writeFileSync(join(work, 'clusters.yaml'), FLEET);
    const base = ['--root', work, 'audit', '--kubeconfig', kubeconfig, '--as', 'tester'];
    const [fleet, one] = await Promise.all([
      klwProcess(...base, '--context', 'ctx-east', '--context', 'ctx-west'),
      // In this process: the repeated --context above is the real process path.
      klwInProcess(...base, '--context', 'ctx-west'),
    ]);
    assert.equal(fleet.code, 1, fleet.stderr);
    assert.match(fleet.stdout, /^CLUSTER .*\neast .*bad-east.*\nwest .*Warn .*bad-west is forbidden\n$/);
    assert.match(fleet.stderr, /audit of 2 clusters: 3 objects: 2 denied/);
    assert.equal(one.code, 1, one.stderr);
    assert.match(one.stdout, /^RESULT .*\nDENIED .*bad-west is forbidden\n$/);
  });
});

describe('fleet audit pieces', () => {
  const fleet = parseFleet(
    'clusters:\n  - name: a\n    context: kind-a\n  - name: b\n    kubeVersion: "1.31"\n    enforcement: { p: Warn }\n',
    'clusters.yaml',
    [{ name: 'p', type: 'validating' }],
  );

  it('names clusters after the fleet file, else after the context', () => {
    assert.deepEqual(fleetAuditTargets(['kind-a', 'b', 'other'], false, fleet), [
      { cluster: 'a', context: 'kind-a', enforcement: {} },
      // Policies and matchConditions are evaluated as the cluster's version does.
      { cluster: 'b', context: 'b', enforcement: { p: 'Warn' }, kubeVersion: '1.31' },
      { cluster: 'other', context: 'other', enforcement: {} },
    ]);
    assert.deepEqual(
      fleetAuditTargets([], true, fleet).map((t) => [t.cluster, t.context]),
      [
        ['a', 'kind-a'],
        ['b', 'b'],
      ],
    );
    assert.deepEqual(
      fleetAuditTargets(['x', 'y'], false, undefined).map((t) => t.cluster),
      ['x', 'y'],
    );
  });

  it('refuses a context twice, a cluster twice, --all-clusters without a fleet file', () => {
    assert.throws(() => fleetAuditTargets(['x', 'x'], false, fleet), /--context x is given twice/);
    assert.throws(() => fleetAuditTargets([], true, undefined), /--all-clusters needs the fleet file clusters\.yaml/);
    const twice = parseFleet('clusters:\n  - name: a\n    context: a\n', 'clusters.yaml', []);
    assert.deepEqual(
      fleetAuditTargets(['a'], false, twice).map((t) => t.cluster),
      ['a'],
    );
  });

  it('a cluster whose audit throws is recorded; the exit code is 2 over all, else 1 on a denial, else 0', async () => {
    const empty = (rejected: boolean, problems: string[] = []): AuditReport => ({
      auditor: { username: 'u' },
      summary: { denied: rejected ? 1 : 0, warned: 0, audited: 0, patched: 0, allowed: 0, skipped: 0, error: 0 },
      results: rejected
        ? [
            {
              function: 'p',
              webhook: 'p.example.com',
              operation: 'UPDATE',
              apiVersion: 'v1',
              kind: 'Pod',
              resource: 'pods',
              name: 'x',
              result: 'denied',
              enforcement: 'Deny',
              rejected: true,
            },
          ]
        : [],
      problems,
    });
    const targets = fleetAuditTargets(['kind-a', 'b'], false, fleet);
    const report = await runFleetAudit(targets, async (t) => {
      if (t.cluster === 'a') throw new Error('connect ECONNREFUSED');
      return empty(true);
    });
    assert.equal(report.clusters[0]!.error, 'connect ECONNREFUSED');
    assert.equal(report.clusters[1]!.report!.results[0]!.enforcement, 'Warn');
    assert.equal(fleetExitCode(report, true), 2);
    const denied = await runFleetAudit(targets, async (t) => empty(t.cluster === 'b'));
    assert.equal(fleetExitCode(denied, false), 1);
    const partial = await runFleetAudit(targets, async (t) => empty(false, t.cluster === 'a' ? ['cannot list'] : []));
    assert.equal(fleetExitCode(partial, false), 2);
    assert.equal(fleetExitCode(partial, true), 0);
  });
});
