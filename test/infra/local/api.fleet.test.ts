// With a fleet file, the emulator serves every cluster: each calls with its own local secret,
// the functions apply that cluster's enforcement, and the log says which cluster called.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { Agent, request as httpsRequest } from 'node:https';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startApi, type RunningApi } from '../../../infra/local/api.ts';
import { withKeptCertificates } from '../../kept-certs.ts';
import { logSink, readableLine } from '../../../infra/local/output.ts';
import { admissionReview } from '../../../lib/testing/index.ts';
import { ManualTimer } from '../../helpers.ts';

/** The functions' timeouts never run out: a cold start on a loaded machine takes as long as it takes. */
const never = new ManualTimer().timer;

// A project inside the repository, so `kube-lambda-webhooks` resolves to this package.
const work = mkdtempSync(join(process.cwd(), '.klw-test-local-fleet-'));
mkdirSync(join(work, 'functions', 'guarded'), { recursive: true });
writeFileSync(
  join(work, 'functions', 'guarded', 'index.ts'),
  `import { deny, defineValidatingWebhook } from 'kube-lambda-webhooks';
const webhook = defineValidatingWebhook({
  name: 'guarded',
  rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'] }],
  validate: () => deny('frozen'),
});
export const handler = webhook.handler;
export default webhook;
`,
);
const FLEET = 'clusters:\n  - name: east\n  - name: west\n    enforcement: { guarded: Warn }\n';
writeFileSync(join(work, 'clusters.yaml'), FLEET);
const EAST = 'E'.repeat(43);
const WEST = 'W'.repeat(43);
const SERVICE = 'S'.repeat(43);
const stateDir = join(work, '.state');
const review = admissionReview({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'web', namespace: 'default' } });

let api: RunningApi;
const logs: string[] = [];
const shown: string[] = [];
before(async () => {
  for (const [dir, secret] of [
    ['.', SERVICE],
    ['clusters/east', EAST],
    ['clusters/west', WEST],
  ] as const) {
    mkdirSync(join(stateDir, dir), { recursive: true, mode: 0o700 });
    writeFileSync(join(stateDir, dir, 'path-secret'), `${secret}\n`, { mode: 0o600 });
  }
  // What the console shows (`--log-format text`), as klw local start-api prints it.
  const onConsole = logSink('text', undefined, (t) => shown.push(t));
  const log = (l: string) => {
    logs.push(l);
    onConsole(l);
  };
  const quiet = { functionLog: onConsole, concurrency: 1, invocationTimer: never };
  await withKeptCertificates(stateDir);
  api = await startApi({ root: work, port: 0, stateDir, log, ...quiet });
});
after(async () => {
  await api?.close();
  rmSync(work, { recursive: true, force: true });
});

function post(path: string, body: unknown): Promise<{ status: number; text: string }> {
  const agent = new Agent({ ca: readFileSync(api.caPath), keepAlive: false });
  return new Promise((resolve, reject) => {
    const options = { method: 'POST', headers: { 'content-type': 'application/json' }, agent };
    const req = httpsRequest(`${api.url}${path}`, options, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
    });
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}

const lines = () => logs.map((l) => JSON.parse(l) as Record<string, unknown>);

describe('start-api with a fleet file', () => {
  it('each cluster calls with its own secret and gets its own enforcement; the log names the cluster', async () => {
    const east = await post(`/guarded/${EAST}`, review);
    assert.equal(east.status, 200);
    assert.equal((JSON.parse(east.text) as { response: { allowed: boolean } }).response.allowed, false);
    const west = await post(`/guarded/${WEST}`, review);
    assert.equal(west.status, 200);
    const answer = (JSON.parse(west.text) as { response: { allowed: boolean; warnings: string[] } }).response;
    assert.equal(answer.allowed, true);
    assert.match(answer.warnings[0]!, /would deny the request: frozen/);
    const served = lines().filter((l) => l.msg === 'request' && l.status === 200);
    assert.deepEqual(
      served.map((l) => l.cluster),
      ['east', 'west'],
    );
    for (const l of logs) assert.ok(!l.includes(EAST) && !l.includes(WEST), `secret in ${l}`);
  });

  it('the console names the calling cluster of each review, and why a call was refused', async () => {
    const reviews = shown.filter((l) => / {2}guarded@/.test(l));
    assert.deepEqual(
      reviews.map((l) => l.split('  ').slice(1, 2).concat(l.split('  ')[5]!.split(':')[0]!)),
      [
        ['guarded@east', 'denied'],
        ['guarded@west', 'would deny'],
      ],
    );
    const from = shown.length;
    await post(`/guarded/${SERVICE}`, review);
    assert.match(shown.slice(from).join(''), / {2}guarded {2}404 refused {2}missing or wrong path secret\n$/);
    const crash = { msg: 'request', time: '2026-11-23T00:01:02.345Z', function: 'guarded', cluster: 'west' };
    assert.equal(
      readableLine(JSON.stringify({ ...crash, status: 502, outcome: 'crash', error: 'boom' })),
      '00:01:02.345  guarded@west  502 crash  boom',
    );
  });

  it('the service secret and unknown secrets are refused with 404', async () => {
    assert.equal((await post(`/guarded/${SERVICE}`, review)).status, 404);
    assert.equal((await post('/guarded/unknown-unknown-unknown-unknown', review)).status, 404);
    assert.equal((await post('/guarded', review)).status, 404);
  });

  it("the URLs carry a cluster's secret: the first one's by default, any by name", async () => {
    assert.equal(api.functionUrl('guarded'), `${api.url}/guarded/${EAST}`);
    assert.equal(api.functionUrl('guarded', 'west'), `${api.url}/guarded/${WEST}`);
    assert.throws(() => api.functionUrl('guarded', 'north'), /no cluster named "north"/);
    const manifests = readFileSync(api.manifestsPath, 'utf8');
    assert.ok(manifests.includes(EAST) && !manifests.includes(SERVICE), 'manifests carry the first cluster secret');
    assert.ok(lines().some((l) => l.msg === 'fleet' && JSON.stringify(l.clusters) === '["east","west"]'));
  });
});
