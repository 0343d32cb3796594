// A fleet cluster's secret folder deleted under the running emulator (`rm -rf
// .klw/local/clusters/gamma`), with the emulator's own file watcher: the deleted secret stops
// being accepted, and the secret `klw secret rotate --local --cluster gamma` writes into the
// folder made anew is accepted. File events take the time they take: the test polls for the
// answer it expects, within the tests' patience.
import assert from 'node:assert/strict';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { Agent, request as httpsRequest } from 'node:https';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { RunningApi } from '../../../../infra/local/api.ts';
import { runSecretCommand } from '../../../../infra/secret-actions.ts';
import { clusterStateDir, ensureLocalPathSecret } from '../../../../infra/secrets/index.ts';
import { admissionReview } from '../../../../lib/testing/index.ts';
import { projectInRepository, until } from '../../../helpers.ts';
import { startEmulator, writePathSecret } from './emulator.ts';

const work = projectInRepository('.klw-test-local-fleet-deleted-', {
  guarded: `import { allow, defineValidatingWebhook } from 'kube-lambda-webhooks';
export default defineValidatingWebhook({
  name: 'guarded',
  rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'] }],
  validate: () => allow(),
});
`,
});
writeFileSync(join(work, 'clusters.yaml'), 'clusters:\n  - name: alpha\n  - name: gamma\n');
const stateDir = join(work, '.klw', 'local');
const ALPHA = 'A'.repeat(43);
const GAMMA = 'G'.repeat(43);
const review = admissionReview({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'web', namespace: 'default' } });
const logs: string[] = [];
let api: RunningApi;

before(async () => {
  for (const [cluster, secret] of [
    ['alpha', ALPHA],
    ['gamma', GAMMA],
  ] as const) {
    writePathSecret(clusterStateDir(stateDir, cluster), secret);
  }
  api = await startEmulator(work, stateDir, logs);
});
after(async () => {
  await api?.close();
  rmSync(work, { recursive: true, force: true });
});

/** The status of the review posted with a secret. */
function post(secret: string): Promise<number> {
  const agent = new Agent({ ca: readFileSync(api.caPath), keepAlive: false });
  return new Promise((resolve, reject) => {
    const options = { method: 'POST', headers: { 'content-type': 'application/json' }, agent };
    const req = httpsRequest(`${api.url}/guarded/${secret}`, options, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end(JSON.stringify(review));
  });
}

describe('a cluster secret folder deleted under the running emulator', () => {
  it('rm -rf of the folder: the deleted secret gets 404 and a warning is logged; the other cluster is untouched', async () => {
    assert.deepEqual([await post(ALPHA), await post(GAMMA)], [200, 200]);
    rmSync(clusterStateDir(stateDir, 'gamma'), { recursive: true, force: true });
    await until(async () => (await post(GAMMA)) === 404, 'the deleted secret refused');
    assert.equal(await post(ALPHA), 200);
    const warning = logs.map((l) => JSON.parse(l)).find((l) => l.level === 'warn' && /gamma/.test(l.msg));
    assert.match(warning?.msg ?? '', /path secret was deleted; its calls are refused/);
  });

  it('klw secret rotate --local --cluster gamma: the folder is made again and its new secret accepted', async () => {
    await runSecretCommand('rotate', { stage: 'dev', local: true, stateDir, cluster: 'gamma' }, () => 'svc');
    const fresh = ensureLocalPathSecret(clusterStateDir(stateDir, 'gamma')).current;
    await until(async () => (await post(fresh)) === 200, 'the new secret accepted');
    assert.equal(await post(GAMMA), 404);
    // The folder made again is watched again: a second rotation is seen too.
    await runSecretCommand('rotate', { stage: 'dev', local: true, stateDir, cluster: 'gamma' }, () => 'svc');
    const again = ensureLocalPathSecret(clusterStateDir(stateDir, 'gamma')).current;
    await until(async () => (await post(again)) === 200, 'the second new secret accepted');
  });
});
