// A running emulator takes a fleet cluster's rotated or retired local secret without a restart,
// and keeps the last good set while a secret file is broken; it evaluates matchConditions as the
// calling cluster's Kubernetes version.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { Agent, request as httpsRequest } from 'node:https';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { RunningApi } from '../../../../infra/local/api.ts';
import { watchSecretDirs, type WatchFs } from '../../../../infra/local/front/fleet-secrets.ts';
import { runSecretCommand } from '../../../../infra/secret-actions.ts';
import { clusterStateDir, ensureLocalPathSecret } from '../../../../infra/secrets/index.ts';
import { admissionReview } from '../../../../lib/testing/index.ts';
import { projectInRepository, until } from '../../../helpers.ts';
import { startEmulator, writePathSecret } from './emulator.ts';

const work = projectInRepository('.klw-test-local-fleet-secrets-', {
  guarded: `import { allow, defineValidatingWebhook } from 'kube-lambda-webhooks';
export default defineValidatingWebhook({
  name: 'guarded',
  rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'] }],
  validate: () => allow(),
});
`,
  // isIP: the ip library, from Kubernetes 1.30; cluster a runs 1.29.
  addressed: `import { allow, defineValidatingWebhook } from 'kube-lambda-webhooks';
export default defineValidatingWebhook({
  name: 'addressed',
  rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'] }],
  matchConditions: [{ name: 'by-address', expression: "isIP('10.0.0.1')" }],
  validate: () => allow(),
});
`,
});
writeFileSync(
  join(work, 'clusters.yaml'),
  'clusters:\n  - name: a\n    kubeVersion: "1.29"\n  - name: b\n  - name: gamma\n',
);
const A_NEW = 'N'.repeat(43);
const A_OLD = 'O'.repeat(43);
const B = 'B'.repeat(43);
const G = 'G'.repeat(43);
const stateDir = join(work, '.state');
const review = admissionReview({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'web', namespace: 'default' } });

let api: RunningApi;
const logs: string[] = [];
/** The emulator's watcher, fired by the test after each change: no waiting on file events. */
let watched: string[] = [];
let changed: () => void = () => assert.fail('not watching');
let closed = false;
/** The manifests files handed to onManifests, as `klw local start-api --apply` gets them. */
const handed: string[] = [];
before(async () => {
  for (const [dir, secret] of [
    ['clusters/a', `${A_NEW},${A_OLD}`],
    ['clusters/b', B],
    ['clusters/gamma', G],
  ] as const) {
    writePathSecret(join(stateDir, dir), secret);
  }
  api = await startEmulator(work, stateDir, logs, {
    onManifests: (path) => {
      handed.push(path);
    },
    watchSecrets: (dirs, onChange) => {
      watched = dirs;
      changed = onChange;
      return { close: () => (closed = true) };
    },
  });
});
after(async () => {
  await api?.close();
  rmSync(work, { recursive: true, force: true });
});

/** Posts the review to a function; its status and body. */
function call(secret: string, fn = 'guarded'): Promise<{ status: number; text: string }> {
  const agent = new Agent({ ca: readFileSync(api.caPath), keepAlive: false });
  return new Promise((resolve, reject) => {
    const options = { method: 'POST', headers: { 'content-type': 'application/json' }, agent };
    const req = httpsRequest(`${api.url}/${fn}/${secret}`, options, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
    });
    req.on('error', reject);
    req.end(JSON.stringify(review));
  });
}
const post = async (secret: string) => (await call(secret)).status;

const secretOf = (cluster: string) => ensureLocalPathSecret(clusterStateDir(stateDir, cluster));
const retire = (cluster: string) =>
  runSecretCommand('retire', { stage: 'dev', local: true, stateDir, cluster }, () => 'svc');
const rotate = (cluster: string) =>
  runSecretCommand('rotate', { stage: 'dev', local: true, stateDir, cluster }, () => 'svc');

describe("the emulator evaluates a call's matchConditions as its cluster's Kubernetes version", () => {
  it('a condition newer than the cluster is answered by failurePolicy there; the other cluster runs the function', async () => {
    type Answer = { response: { allowed: boolean; status?: { message?: string } } };
    const a = JSON.parse((await call(A_NEW, 'addressed')).text) as Answer;
    assert.equal(a.response.allowed, false);
    assert.match(a.response.status?.message ?? '', /matchCondition "by-address" is not available in Kubernetes 1\.29/);
    const b = JSON.parse((await call(B, 'addressed')).text) as Answer;
    assert.equal(b.response.allowed, true);
  });
});

describe('klw local start-api and a fleet cluster secret changed while it runs', () => {
  it("watches each cluster's secret directory", () => {
    assert.deepEqual(watched, [
      clusterStateDir(stateDir, 'a'),
      clusterStateDir(stateDir, 'b'),
      clusterStateDir(stateDir, 'gamma'),
    ]);
  });

  it("after retiring a's previous secret, a's calls with it get 404; a's current and b's keep working", async () => {
    assert.deepEqual([await post(A_OLD), await post(A_NEW), await post(B)], [200, 200, 200]);
    await retire('a');
    changed();
    assert.equal(await post(A_OLD), 404);
    assert.equal(await post(A_NEW), 200);
    assert.equal(await post(B), 200);
    const reloaded = logs.map((l) => JSON.parse(l)).find((l) => l.msg === 'cluster path secrets reloaded');
    assert.deepEqual(reloaded?.clusters, ['a']);
    assert.ok(!logs.some((l) => l.includes(A_NEW) || l.includes(A_OLD) || l.includes(B)), 'no secret logged');
  });

  it("a rotated secret is accepted at once, by the emulator and by the function's workers", async () => {
    await rotate('a');
    changed();
    const rotated = secretOf('a');
    assert.equal(rotated.previous, A_NEW);
    assert.equal(await post(rotated.current), 200);
    assert.equal(await post(A_NEW), 200);
    assert.equal(api.functionUrl('guarded', 'a'), `${api.url}/guarded/${rotated.current}`);
    // The manifests carry the first cluster's secret: rewritten with the new one, and handed on.
    assert.equal(api.pathSecret, rotated.current);
    assert.ok(readFileSync(api.manifestsPath, 'utf8').includes(`/guarded/${rotated.current}`));
    assert.deepEqual(handed, [api.manifestsPath, api.manifestsPath]);
    await rotate('b');
    changed();
    assert.equal(handed.length, 2, "b's secret is not in the manifests: they stay as they are");
  });

  it('a broken secret file keeps the last good set, with a warning', async () => {
    const current = secretOf('a').current;
    const file = join(clusterStateDir(stateDir, 'a'), 'path-secret');
    const good = readFileSync(file, 'utf8');
    writeFileSync(file, 'not a secret\n', { mode: 0o600 });
    const before = logs.length;
    changed();
    const warnings = logs.slice(before).map((l) => JSON.parse(l));
    assert.equal(warnings.length, 1);
    assert.equal(warnings[0].level, 'warn');
    assert.match(warnings[0].msg, /not reloaded; still accepting the previous ones/);
    assert.match(warnings[0].error, /path-secret/);
    assert.equal(await post(current), 200);
    assert.equal(await post(B), 200);
    writeFileSync(file, good, { mode: 0o600 });
    changed();
  });

  it("a cluster's secret folder deleted: its secret is refused at once, with a warning, until a new one is written", async () => {
    assert.equal(await post(G), 200);
    const before = logs.length;
    rmSync(clusterStateDir(stateDir, 'gamma'), { recursive: true, force: true });
    changed();
    assert.equal(await post(G), 404, 'the deleted secret is no longer accepted');
    assert.equal(await post(B), 200, 'the other clusters are untouched');
    const lines = logs.slice(before).map((l) => JSON.parse(l));
    const warning = lines.find((l) => l.level === 'warn');
    assert.equal(
      warning?.msg,
      "cluster gamma's path secret was deleted; its calls are refused until a new one is written",
    );
    assert.equal(warning?.file, join(clusterStateDir(stateDir, 'gamma'), 'path-secret'));
    assert.equal(warning?.fix, 'klw secret rotate --local --cluster gamma');
    assert.deepEqual(lines.find((l) => l.msg === 'cluster path secrets reloaded')?.clusters, ['gamma']);
    // A second event while it is still gone says nothing more.
    const quiet = logs.length;
    changed();
    assert.equal(logs.length, quiet);
    // The folder comes back with a new secret: that one is accepted, the deleted one still not.
    await rotate('gamma');
    changed();
    const fresh = secretOf('gamma');
    assert.equal(fresh.previous, undefined);
    assert.equal(await post(fresh.current), 200);
    assert.equal(await post(G), 404);
    assert.ok(!logs.some((l) => l.includes(G) || l.includes(fresh.current)), 'no secret logged');
  });

  it('a deleted first cluster keeps the manifests as they are, and its return is written into them', async () => {
    const manifests = readFileSync(api.manifestsPath, 'utf8');
    const kept = api.pathSecret;
    rmSync(clusterStateDir(stateDir, 'a'), { recursive: true, force: true });
    changed();
    assert.equal(api.pathSecret, kept);
    assert.equal(readFileSync(api.manifestsPath, 'utf8'), manifests);
    await rotate('a');
    changed();
    const fresh = secretOf('a');
    await until(
      () => readFileSync(api.manifestsPath, 'utf8').includes(`/guarded/${fresh.current}`),
      'manifests rewritten',
    );
    assert.equal(api.pathSecret, fresh.current);
    assert.equal(await post(fresh.current), 200);
  });

  it('stops watching when closed', async () => {
    assert.equal(closed, false);
    await api.close();
    assert.equal(closed, true);
  });
});

describe('watchSecretDirs', () => {
  it('sees a secret file replaced by a rename, as klw writes it', async () => {
    const dir = mkdtempSync(join(work, 'watch-'));
    let events = 0;
    const watcher = watchSecretDirs(() => {})([dir], () => events++);
    try {
      writeFileSync(join(dir, '.tmp'), 'x');
      renameSync(join(dir, '.tmp'), join(dir, 'path-secret'));
      await until(() => events > 0, 'a change event');
    } finally {
      watcher.close();
    }
  });

  it("a watched folder deleted and made again: its parent's events say so, and the new folder is watched", () => {
    // A file system of the test's own: which folders exist (by generation), who watches which.
    const exists = new Map<string, number>([
      ['/', 1],
      ['/s', 1],
      ['/s/clusters', 1],
      ['/s/clusters/gamma', 1],
    ]);
    let generation = 1;
    const watches: Array<{ dir: string; fire: (name: string) => void; closed: boolean }> = [];
    const fs: WatchFs = {
      identity: (dir) => (exists.has(dir) ? `${dir}#${exists.get(dir)}` : undefined),
      watch: (dir, listener) => {
        const w = { dir, fire: (name: string) => listener(name), closed: false };
        watches.push(w);
        return { close: () => void (w.closed = true), on: () => undefined };
      },
    };
    const open = () => watches.filter((w) => !w.closed).map((w) => w.dir);
    let changes = 0;
    const watcher = watchSecretDirs(() => {}, fs)(['/s/clusters/gamma'], () => changes++);
    assert.deepEqual(open(), ['/s/clusters/gamma', '/s/clusters']);
    // rm -rf: the folder's own watch reports its removal, the parent's the entry gone.
    exists.delete('/s/clusters/gamma');
    watches[0]!.fire('gamma');
    watches[1]!.fire('gamma');
    assert.equal(changes, 2);
    assert.deepEqual(open(), ['/s/clusters'], "the dead folder's watch is closed; the parent's stays");
    // klw secret rotate makes it again: seen through the parent, and watched anew.
    exists.set('/s/clusters/gamma', ++generation);
    watches[1]!.fire('gamma');
    assert.equal(changes, 3);
    assert.deepEqual(open(), ['/s/clusters', '/s/clusters/gamma']);
    watches.at(-1)!.fire('path-secret');
    assert.equal(changes, 4);
    // Made anew under the same name between two events: another folder, watched anew.
    exists.set('/s/clusters/gamma', ++generation);
    watches[1]!.fire('gamma');
    assert.deepEqual(open(), ['/s/clusters', '/s/clusters/gamma']);
    assert.equal(watches.filter((w) => w.dir === '/s/clusters/gamma').length, 3);
    // The parent gone too: the nearest folder that exists is watched.
    exists.delete('/s/clusters/gamma');
    exists.delete('/s/clusters');
    watches[1]!.fire('gamma');
    assert.deepEqual(open(), ['/s']);
    watcher.close();
    assert.deepEqual(open(), []);
    const before = changes;
    watches[1]!.fire('gamma');
    assert.equal(changes, before, 'no change reported once closed');
  });
});
