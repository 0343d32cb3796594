// A registration's own kubernetesVersion compiles its matchConditions in lint and manifests, as
// the test kit compiles them; manifests --all-clusters reports every cluster's errors at once.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { REGISTRATION_VERSION_RULE } from '../../infra/kube-versions.ts';
import { runKlw } from '../helpers.ts';
import { keptProject } from '../kept-projects.ts';

/** A validating function whose condition uses the semver library (Kubernetes 1.33). */
const semverFunction = (version: string) => `import { defineValidatingWebhook, deny } from 'kube-lambda-webhooks';
export default defineValidatingWebhook({
  name: 'versioned',
  kubernetesVersion: '${version}',
  rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'] }],
  matchConditions: [{ name: 'semver-label', expression: "isSemver('1.2.3')" }],
  validate: () => deny('no'),
});
`;

/** Where the tests write manifests: never into a kept project. */
const work = mkdtempSync(join(process.cwd(), '.klw-test-reg-version-'));
after(() => rmSync(work, { recursive: true, force: true }));

/**
 * The project of one function defined for `version` (with `clusters.yaml` when given), kept by
 * content across runs (test/kept-projects.ts) so that its functions' load build is too.
 */
function project(version: string, clusters?: string): Promise<string> {
  return keptProject(`reg-version-${version.replace('.', '-')}${clusters ? '-fleet' : ''}`, (dir) => {
    mkdirSync(join(dir, 'functions', 'versioned'), { recursive: true });
    writeFileSync(join(dir, 'functions', 'versioned', 'index.ts'), semverFunction(version));
    if (clusters) writeFileSync(join(dir, 'clusters.yaml'), clusters);
  });
}
const manifests = (root: string, ...more: string[]) =>
  runKlw('--root', root, 'manifests', '--base-url', 'https://hooks.example.com', ...more);

describe("a registration's kubernetesVersion in lint and manifests", () => {
  it('a condition newer than the version is a lint error and manifests are not written', async () => {
    const root = await project('1.30');
    const lint = await runKlw('--root', root, 'lint');
    assert.equal(lint.code, 1, lint.stderr);
    assert.match(
      lint.stderr,
      new RegExp(
        `error ${REGISTRATION_VERSION_RULE} versioned: kubernetesVersion 1\\.30 \\(raise it, or use only what 1\\.30 has\\): matchCondition "semver-label" is not available in Kubernetes 1\\.30[\\s\\S]*functions/versioned/index\\.ts`,
      ),
    );
    const out = join(work, 'm-1-30.yaml');
    const written = await manifests(root, '--out', out);
    assert.equal(written.code, 1, written.stderr);
    assert.match(
      written.stderr,
      /kubernetesVersion 1\.30 \(raise it, or use only what 1\.30 has\): matchCondition "semver-label" is not available/,
    );
    assert.equal(existsSync(out), false, 'nothing written');
  });

  it('the version that has the library refuses it in a new configuration: the compatibility version rule', async () => {
    const root = await project('1.33');
    const lint = await runKlw('--root', root, 'lint');
    assert.equal(lint.code, 1, lint.stderr);
    assert.match(
      lint.stderr,
      /kubernetesVersion 1\.33 \(raise it, or use only what 1\.33 has\): matchCondition "semver-label" is refused by Kubernetes 1\.33 in a new configuration: it compiles new expressions in its compatibility version's environment \(1\.32, one minor version back/,
    );
    assert.match(lint.stderr, /Kubernetes 1\.34 takes it/);
  });

  it('a version that takes it passes; --kube-version stands for the registration version', async () => {
    const root = await project('1.34');
    const lint = await runKlw('--root', root, 'lint');
    assert.doesNotMatch(lint.stderr, new RegExp(REGISTRATION_VERSION_RULE));
    assert.equal((await manifests(root, '--out', join(work, 'm-1-34.yaml'))).code, 0);
    const old = await project('1.31');
    const overridden = await runKlw('--root', old, 'lint', '--kube-version', '1.34');
    assert.doesNotMatch(overridden.stderr, new RegExp(REGISTRATION_VERSION_RULE), overridden.stderr);
  });

  it('manifests --all-clusters reports the errors of every cluster, not only the first', async () => {
    const root = await project(
      '1.34',
      'clusters:\n  - name: east\n    kubeVersion: "1.31"\n  - name: west\n    kubeVersion: "1.32"\n  - name: north\n    kubeVersion: "1.34"\n',
    );
    const lint = await runKlw('--root', root, 'lint');
    assert.match(lint.stderr, /cluster east runs Kubernetes 1\.31/);
    assert.match(lint.stderr, /cluster west runs Kubernetes 1\.32/);
    const outDir = join(work, 'out');
    const all = await manifests(root, '--all-clusters', '--out-dir', outDir);
    assert.equal(all.code, 1, all.stderr);
    assert.match(all.stderr, /cluster east runs Kubernetes 1\.31: matchCondition "semver-label"/);
    assert.match(all.stderr, /cluster west runs Kubernetes 1\.32: matchCondition "semver-label"/);
    assert.match(all.stderr, /2 lint errors/);
    assert.equal(existsSync(outDir), false, 'no partial set written');
  });
});
