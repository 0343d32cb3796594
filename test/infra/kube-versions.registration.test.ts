// A registration's own kubernetesVersion compiles its matchConditions in lint and manifests, as
// the test kit compiles them; manifests --all-clusters reports every cluster's errors at once.
import assert from 'node:assert/strict';
import { existsSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { REGISTRATION_VERSION_RULE } from '../../infra/kube-versions.ts';
import { projectInRepository, runKlw } from '../helpers.ts';

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

const projects: string[] = [];
after(() => {
  for (const dir of projects) rmSync(dir, { recursive: true, force: true });
});
function project(version: string): string {
  const dir = projectInRepository(`.klw-test-reg-version-${version.replace('.', '-')}-`, {
    versioned: semverFunction(version),
  });
  projects.push(dir);
  return dir;
}
const manifests = (root: string, ...more: string[]) =>
  runKlw('--root', root, 'manifests', '--base-url', 'https://hooks.example.com', ...more);

describe("a registration's kubernetesVersion in lint and manifests", () => {
  it('a condition newer than the version is a lint error and manifests are not written', async () => {
    const root = project('1.30');
    const lint = await runKlw('--root', root, 'lint');
    assert.equal(lint.code, 1, lint.stderr);
    assert.match(
      lint.stderr,
      new RegExp(
        `error ${REGISTRATION_VERSION_RULE} versioned: kubernetesVersion 1\\.30 \\(raise it, or use only what 1\\.30 has\\): matchCondition "semver-label" is not available in Kubernetes 1\\.30[\\s\\S]*functions/versioned/index\\.ts`,
      ),
    );
    const out = join(root, 'm.yaml');
    const written = await manifests(root, '--out', out);
    assert.equal(written.code, 1, written.stderr);
    assert.match(
      written.stderr,
      /kubernetesVersion 1\.30 \(raise it, or use only what 1\.30 has\): matchCondition "semver-label" is not available/,
    );
    assert.equal(existsSync(out), false, 'nothing written');
  });

  it('the version that has the library refuses it in a new configuration: the compatibility version rule', async () => {
    const root = project('1.33');
    const lint = await runKlw('--root', root, 'lint');
    assert.equal(lint.code, 1, lint.stderr);
    assert.match(
      lint.stderr,
      /kubernetesVersion 1\.33 \(raise it, or use only what 1\.33 has\): matchCondition "semver-label" is refused by Kubernetes 1\.33 in a new configuration: it compiles new expressions in its compatibility version's environment \(1\.32, one minor version back/,
    );
    assert.match(lint.stderr, /Kubernetes 1\.34 takes it/);
  });

  it('a version that takes it passes; --kube-version stands for the registration version', async () => {
    const root = project('1.34');
    const lint = await runKlw('--root', root, 'lint');
    assert.doesNotMatch(lint.stderr, new RegExp(REGISTRATION_VERSION_RULE));
    assert.equal((await manifests(root, '--out', join(root, 'm.yaml'))).code, 0);
    const old = project('1.31');
    const overridden = await runKlw('--root', old, 'lint', '--kube-version', '1.34');
    assert.doesNotMatch(overridden.stderr, new RegExp(REGISTRATION_VERSION_RULE), overridden.stderr);
  });

  it('manifests --all-clusters reports the errors of every cluster, not only the first', async () => {
    const root = project('1.34');
    writeFileSync(
      join(root, 'clusters.yaml'),
      'clusters:\n  - name: east\n    kubeVersion: "1.31"\n  - name: west\n    kubeVersion: "1.32"\n  - name: north\n    kubeVersion: "1.34"\n',
    );
    const lint = await runKlw('--root', root, 'lint');
    assert.match(lint.stderr, /cluster east runs Kubernetes 1\.31/);
    assert.match(lint.stderr, /cluster west runs Kubernetes 1\.32/);
    const outDir = join(root, 'out');
    const all = await manifests(root, '--all-clusters', '--out-dir', outDir);
    assert.equal(all.code, 1, all.stderr);
    assert.match(all.stderr, /cluster east runs Kubernetes 1\.31: matchCondition "semver-label"/);
    assert.match(all.stderr, /cluster west runs Kubernetes 1\.32: matchCondition "semver-label"/);
    assert.match(all.stderr, /2 lint errors/);
    assert.equal(existsSync(outDir), false, 'no partial set written');
  });
});
