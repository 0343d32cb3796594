// `--kube-version` where conditions are compiled or evaluated outside the API server: the emulator's
// condition threads (start-api) evaluate them in that version's CEL environment, so a condition
// using a newer library is answered by failurePolicy; manifests refuses to write such a condition.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { kubeVersionText } from '../../infra/kube-versions.ts';
import { ConditionPool } from '../../infra/local/back/condition-pool.ts';
import type { KubeObject } from '../../lib/index.ts';
import type { AdmissionRegistration } from '../../lib/registration.ts';
import { admissionReview } from '../../lib/testing/index.ts';
import { builtConditionsWorker, runKlw } from '../helpers.ts';

const registration = {
  type: 'validating',
  name: 'semver-hook',
  webhookName: 'semver-hook.example.com',
  failurePolicy: 'Fail',
  matchConditions: [{ name: 'versioned', expression: "isSemver(object.metadata.labels['version'])" }],
} as unknown as AdmissionRegistration;
const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', labels: { version: '1.2.3' } } } as KubeObject;
const body = Buffer.from(JSON.stringify(admissionReview(pod)));

describe('start-api --kube-version', async () => {
  // The threads load the evaluator built into JavaScript, as installed (no tsx in each thread).
  const built = mkdtempSync(join(process.cwd(), '.klw-test-conditions-'));
  const worker = await builtConditionsWorker(built);
  const pools: ConditionPool[] = [];
  after(async () => {
    for (const pool of pools) await pool.close();
    rmSync(built, { recursive: true, force: true });
  });

  it('refuses a 1.33 library as 1.30, naming the condition, the version and the function', async () => {
    const pool = new ConditionPool('semver-hook', { size: 1, log: () => {}, kubeVersion: '1.30', worker });
    pools.push(pool);
    const answer = await pool.evaluate(registration, body, 60_000);
    assert.ok(answer, 'the function is not invoked');
    const message = JSON.parse(Buffer.from(answer.body).toString()).response.status.message as string;
    assert.match(message, /matchCondition "versioned"/);
    assert.match(message, /not available in Kubernetes 1\.30/);
    assert.match(message, /isSemver/);
  });

  it("follows the registration's kubernetesVersion without the option, and the newest without either", async () => {
    const pool = new ConditionPool('semver-hook', { size: 1, log: () => {}, worker });
    pools.push(pool);
    const old = { ...registration, kubernetesVersion: '1.30' } as AdmissionRegistration;
    assert.ok(await pool.evaluate(old, body, 60_000), 'refused as 1.30');
    assert.equal(await pool.evaluate(registration, body, 60_000), undefined, 'the conditions hold: invoked');
  });

  it('takes the version as kube-apiserver prints it', () => {
    assert.equal(kubeVersionText('v1.30.2'), '1.30');
    assert.throws(() => kubeVersionText('thirty'), /give a Kubernetes version such as 1.28/);
  });
});

describe('klw manifests --kube-version', () => {
  // A project inside the repository, so `kube-lambda-webhooks` resolves to this package.
  const work = mkdtempSync(join(process.cwd(), '.klw-test-kube-cel-'));
  after(() => rmSync(work, { recursive: true, force: true }));
  mkdirSync(join(work, 'functions', 'semver-pods'), { recursive: true });
  writeFileSync(
    join(work, 'functions', 'semver-pods', 'index.ts'),
    `import { allow, defineValidatingWebhook } from 'kube-lambda-webhooks';
export default defineValidatingWebhook({
  name: 'semver-pods',
  rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'] }],
  matchConditions: [{ name: 'versioned', expression: "isSemver(object.metadata.labels['version'])" }],
  validate: () => allow(),
});
`,
  );
  const manifests = (version: string) =>
    runKlw(
      '--root',
      work,
      'manifests',
      '--kube-version',
      version,
      '--base-url',
      'https://hooks.example.com',
      '--out',
      join(work, 'm.yaml'),
    );

  it('refuses a condition using a 1.33 library for 1.30, naming the condition, the version and the function', async () => {
    const old = await manifests('1.30');
    assert.equal(old.code, 1);
    assert.match(
      old.stderr,
      /error match-conditions-compile semver-pods\.webhooks\.kube-lambda\.dev: matchCondition "versioned" is not available in Kubernetes 1\.30: .*undeclared reference to 'isSemver'/,
    );
  });

  it('writes it for 1.34, whose new configurations compile as 1.33', async () => {
    const current = await manifests('1.34');
    assert.equal(current.code, 0, current.stderr);
  });
});
