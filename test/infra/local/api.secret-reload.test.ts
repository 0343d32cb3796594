// Without a fleet, a running emulator takes the service's rotated or retired local secret
// without a restart, and keeps the secrets in force while the file is broken.
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { Agent, request as httpsRequest } from 'node:https';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startApi, type RunningApi } from '../../../infra/local/api.ts';
import { withKeptCertificates } from '../../kept-certs.ts';
import { runSecretCommand } from '../../../infra/secret-actions.ts';
import { ensureLocalPathSecret } from '../../../infra/secrets/index.ts';
import { admissionReview } from '../../../lib/testing/index.ts';
import { ManualTimer, projectInRepository } from '../../helpers.ts';

/** The functions' timeouts never run out: a cold start on a loaded machine takes as long as it takes. */
const never = new ManualTimer().timer;

const work = projectInRepository('.klw-test-local-secret-reload-', {
  guarded: `import { allow, defineValidatingWebhook } from 'kube-lambda-webhooks';
export default defineValidatingWebhook({
  name: 'guarded',
  rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'] }],
  validate: () => allow(),
});
`,
});
const FIRST = 'F'.repeat(43);
const stateDir = join(work, '.state');
const review = admissionReview({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'web', namespace: 'default' } });

let api: RunningApi;
const logs: string[] = [];
let watched: string[] = [];
/** The emulator's watcher, fired by the test after each change: no waiting on file events. */
let changed: () => void = () => assert.fail('not watching');
before(async () => {
  mkdirSync(stateDir, { recursive: true, mode: 0o700 });
  writeFileSync(join(stateDir, 'path-secret'), `${FIRST}\n`, { mode: 0o600 });
  await withKeptCertificates(stateDir);
  api = await startApi({
    root: work,
    port: 0,
    stateDir,
    log: (l) => logs.push(l),
    functionLog: () => {},
    concurrency: 1,
    invocationTimer: never,
    watchSecrets: (dirs, onChange) => {
      watched = dirs;
      changed = onChange;
      return { close: () => {} };
    },
  });
});
after(async () => {
  await api?.close();
  rmSync(work, { recursive: true, force: true });
});

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

const local = (action: 'rotate' | 'retire') =>
  runSecretCommand(action, { stage: 'dev', local: true, stateDir }, () => 'svc');

describe('klw local start-api and its local secret changed while it runs', () => {
  it('watches the state directory', () => {
    assert.deepEqual(watched, [stateDir]);
  });

  it('a rotated secret is accepted at once, by the emulator and the function, and goes into the manifests', async () => {
    assert.equal(await post(FIRST), 200);
    await local('rotate');
    changed();
    const { current } = ensureLocalPathSecret(stateDir);
    assert.equal(await post(current), 200);
    assert.equal(await post(FIRST), 200, 'the previous secret, until retired');
    assert.equal(api.pathSecret, current);
    assert.ok(readFileSync(api.manifestsPath, 'utf8').includes(`/guarded/${current}`));
  });

  it('a retired secret gets 404', async () => {
    await local('retire');
    changed();
    assert.equal(await post(FIRST), 404);
    assert.equal(await post(ensureLocalPathSecret(stateDir).current), 200);
  });

  it('a broken file keeps the secret in force, with a warning', async () => {
    const { current } = ensureLocalPathSecret(stateDir);
    writeFileSync(join(stateDir, 'path-secret'), 'short\n', { mode: 0o600 });
    changed();
    const warning = JSON.parse(logs.at(-1)!);
    assert.equal(warning.level, 'warn');
    assert.match(warning.msg, /path secret not reloaded; still accepting the previous one/);
    assert.equal(await post(current), 200);
    assert.ok(!logs.some((l) => l.includes(current) || l.includes(FIRST)), 'no secret logged');
  });
});
