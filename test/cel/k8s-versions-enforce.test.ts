// In-function enforcement compiles matchConditions in the CEL environment of the registration's
// kubernetesVersion: a condition using a library newer than it fails by failurePolicy, with a
// message naming the function, the condition and the version.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { allow, defineValidatingWebhook, type KubeObject } from '../../lib/index.ts';
import { enforceMatchConditions } from '../../lib/matchconditions/index.ts';
import { admissionReview, invoke } from '../../lib/testing/index.ts';

const podRules = [{ operations: ['CREATE' as const], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'] }];
const pod = {
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'web', namespace: 'default', labels: { version: '1.2.3' } },
} as KubeObject;
const asOldCluster = { matchConditions: false };

/** A webhook enforcing one semver (1.33+) condition, for `kubernetesVersion`. */
const semverHook = (kubernetesVersion?: string) =>
  defineValidatingWebhook(
    enforceMatchConditions({
      name: 'semver-hook',
      rules: podRules,
      ...(kubernetesVersion ? { kubernetesVersion } : {}),
      matchConditions: [{ name: 'versioned', expression: "isSemver(object.metadata.labels['version'])" }],
      validate: () => allow('checked'),
    }),
  );

describe('kubernetesVersion of a registration (in-function enforcement)', () => {
  it('refuses a 1.33 library for 1.30, naming the function, the condition and the version', async () => {
    const result = await invoke(semverHook('1.30'), admissionReview(pod, { namespace: 'default' }), asOldCluster);
    assert.equal(result.allowed, false);
    assert.match(result.status?.message ?? '', /matchCondition "versioned"/);
    assert.match(result.status?.message ?? '', /matchCondition "versioned" is not available in Kubernetes 1\.30/);
    assert.match(result.status?.message ?? '', /undeclared reference to 'isSemver'/);
  });

  it('accepts it for 1.33 and by default (the newest version)', async () => {
    for (const version of ['1.33', undefined]) {
      const result = await invoke(semverHook(version), admissionReview(pod, { namespace: 'default' }), asOldCluster);
      assert.equal(result.allowed, true, String(version));
      assert.deepEqual(result.warnings, ['checked']);
    }
  });

  it('is kept on the registration, and refused when it is not a version', () => {
    assert.equal(semverHook('1.30').registration.kubernetesVersion, '1.30');
    assert.equal(semverHook().registration.kubernetesVersion, undefined);
    assert.throws(() => semverHook('v1.30'), /kubernetesVersion "v1.30" is not a version such as "1.30"/);
  });
});
