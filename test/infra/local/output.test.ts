// What the console says is so: the path secret file start-api names is the one in the
// manifests' URLs (a fleet's first cluster's), the local secret commands say the running
// emulator takes the change without a restart, a request naming no function is shown by its
// path, and a fleet cluster's labels are put where the docs say.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { valueAt } from '../../../infra/json.ts';
import type { KubeDocument } from '../../../infra/output.ts';
import { serveApi } from '../../../infra/commands/local.ts';
import { parseFleet } from '../../../infra/fleet/file.ts';
import { CLUSTER_LABEL, forCluster } from '../../../infra/fleet/manifests.ts';
import { readableLine } from '../../../infra/local/output.ts';
import { runSecretCommand } from '../../../infra/secret-actions.ts';
import { withKeptCertificates } from '../../kept-certs.ts';

const work = mkdtempSync(join(process.cwd(), '.klw-test-console-'));
after(() => rmSync(work, { recursive: true, force: true }));
mkdirSync(join(work, 'functions', 'guarded'), { recursive: true });
writeFileSync(
  join(work, 'functions', 'guarded', 'index.ts'),
  `import { deny, defineValidatingWebhook } from 'kube-lambda-webhooks';
export default defineValidatingWebhook({
  name: 'guarded',
  rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'] }],
  validate: () => deny('frozen'),
});
`,
);
const stateDir = join(work, '.state');

describe('what the console says', () => {
  it("start-api with a fleet names the first cluster's secret file, whose secret the manifests carry", async () => {
    writeFileSync(join(work, 'clusters.yaml'), 'clusters:\n  - name: east\n  - name: west\n');
    const said: string[] = [];
    await withKeptCertificates(stateDir);
    const api = await serveApi(
      {
        root: () => work,
        say: (l) => said.push(l),
        runServerless: async () => ({ code: 0, stdout: '', stderr: '' }),
      },
      { host: '127.0.0.1', port: 0, eventFormat: 'http', san: [], stateDir, logFormat: 'json', concurrency: 1 },
    );
    try {
      const eastFile = join(stateDir, 'clusters', 'east', 'path-secret');
      const line = said.find((l) => l.startsWith('path secret:'));
      assert.equal(line, `path secret:    ${eastFile} (cluster east's, in the manifests' URLs)`);
      const east = readFileSync(eastFile, 'utf8').trim().split(',')[0]!;
      assert.match(readFileSync(api.manifestsPath, 'utf8'), new RegExp(`/guarded/${east}`));
    } finally {
      await api.close();
      rmSync(join(work, 'clusters.yaml'));
    }
  });

  it('rotate and retire --local say the running emulator takes the change, with no restart', async () => {
    const options = { stage: 'dev', local: true, stateDir };
    const rotated = await runSecretCommand('rotate', options, () => 'svc');
    const retired = await runSecretCommand('retire', options, () => 'svc');
    for (const line of [...rotated, ...retired]) assert.doesNotMatch(line, /restart klw local/, line);
    assert.match(rotated.join('\n'), /a running klw local start-api takes the new secret at once/);
    assert.match(retired.join('\n'), /by a running klw local start-api at once: it reads the secret again, no restart/);
  });

  it('a request that names no function is shown by its method and path', () => {
    const shown = readableLine(
      JSON.stringify({
        msg: 'request',
        method: 'POST',
        path: '/',
        status: 404,
        outcome: 'refused',
        reason: 'no function at this path',
        functions: ['guarded'],
      }),
    );
    assert.match(shown!, /\s{2}POST \/ {2}404 refused {2}no function at this path$/);
    assert.doesNotMatch(shown!, /undefined/);
  });

  it("a cluster's labels of the fleet file go on its webhook configurations, beside the cluster label", () => {
    const fleet = parseFleet(
      `clusters:\n  - name: prod-eu\n    labels: { env: prod, ${CLUSTER_LABEL}: other }\n`,
      'clusters.yaml',
      [],
    );
    const config: KubeDocument = {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingWebhookConfiguration',
      metadata: { name: 'klw', labels: { app: 'klw' } },
      webhooks: [],
    };
    const crd: KubeDocument = {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: 'c' },
    };
    const { documents } = forCluster([config, crd], fleet.clusters[0]!, []);
    assert.deepEqual(valueAt(documents[0], 'metadata', 'labels'), {
      app: 'klw',
      env: 'prod',
      [CLUSTER_LABEL]: 'prod-eu',
    });
    assert.deepEqual(documents[1], crd, 'CRDs are shared by every cluster: not labelled');
  });
});
