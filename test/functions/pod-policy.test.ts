import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { sanitizeWarnings } from 'kube-lambda-webhooks/testing';
import { admissionReview, invoke } from 'kube-lambda-webhooks/testing';
import podPolicy, { imageTag } from '../../functions/pod-policy/index.ts';
import type { Pod } from '../../functions/pod.ts';
import { testPod } from '../helpers.ts';

const pod = testPod;

describe('pod-policy', () => {
  it('allows a pod with 150,000 untagged containers (about 5 MB of review) with the warnings the API server keeps', async () => {
    const containers = Array.from({ length: 150_000 }, (_, i) => ({ name: `c${i}`, image: 'nginx' }));
    // A clock that stands still: this is about the answer, not about speed (see bench/).
    const result = await invoke(podPolicy, admissionReview(pod({ containers })), {
      handlerOptions: { clock: () => 0 },
    });
    assert.equal(result.allowed, true);
    const every = containers.map((c) => `container "${c.name}" uses image "nginx" without a tag; pin a version`);
    assert.deepEqual(result.warnings, sanitizeWarnings(every));
  });

  it('allows a compliant pod without warnings (v1 and v1beta1)', async () => {
    for (const version of ['v1', 'v1beta1'] as const) {
      const result = await invoke(podPolicy, admissionReview(pod(), { version }));
      assert.equal(result.allowed, true);
      assert.deepEqual(result.warnings, []);
      assert.equal(result.review.apiVersion, `admission.k8s.io/${version}`);
    }
  });

  it('denies privileged containers of every kind with 403, naming each', async () => {
    const result = await invoke(
      podPolicy,
      admissionReview(
        pod({
          containers: [
            { name: 'app', image: 'nginx:1.25', securityContext: { privileged: true } },
            { name: 'ok', image: 'busybox:1.36' },
          ],
          initContainers: [{ name: 'setup', image: 'busybox:1.36', securityContext: { privileged: true } }],
          ephemeralContainers: [{ name: 'debug', image: 'busybox:1.36', securityContext: { privileged: true } }],
        }),
      ),
    );
    assert.equal(result.allowed, false);
    assert.equal(result.status?.code, 403);
    assert.equal(
      result.status?.message,
      'pod "web" is not allowed: container "app" is privileged; initContainer "setup" is privileged; ephemeralContainer "debug" is privileged',
    );
  });

  it('lists ten problems of a denial and counts the rest', async () => {
    const containers = Array.from({ length: 25 }, (_, i) => ({
      name: `p${i}`,
      image: 'nginx:1.25',
      securityContext: { privileged: true },
    }));
    const result = await invoke(podPolicy, admissionReview(pod({ containers, hostNetwork: true })));
    assert.equal(result.allowed, false);
    const listed = containers.slice(0, 10).map((c) => `container "${c.name}" is privileged`);
    assert.equal(result.status?.message, `pod "web" is not allowed: ${listed.join('; ')}; and 16 more`);
  });

  for (const field of ['hostNetwork', 'hostPID', 'hostIPC'] as const) {
    it(`denies spec.${field}`, async () => {
      const result = await invoke(podPolicy, admissionReview(pod({ [field]: true })));
      assert.equal(result.allowed, false);
      assert.match(result.status!.message!, new RegExp(`spec\\.${field} is true`));
    });
  }

  it('allows privileged: false and host fields set to false', async () => {
    const result = await invoke(
      podPolicy,
      admissionReview(
        pod({ hostNetwork: false, containers: [{ name: 'a', image: 'x:1', securityContext: { privileged: false } }] }),
      ),
    );
    assert.equal(result.allowed, true);
  });

  it('warns on images without a tag or with :latest, and allows them', async () => {
    const result = await invoke(
      podPolicy,
      admissionReview(
        pod({
          containers: [
            { name: 'a', image: 'nginx' },
            { name: 'b', image: 'registry:5000/team/app:latest' },
            { name: 'c', image: 'registry:5000/team/app' },
            { name: 'd', image: 'app@sha256:abc' },
          ],
        }),
      ),
    );
    assert.equal(result.allowed, true);
    assert.deepEqual(result.warnings, [
      'container "a" uses image "nginx" without a tag; pin a version',
      'container "b" uses image "registry:5000/team/app:latest" with the :latest tag; pin a version',
      'container "c" uses image "registry:5000/team/app" without a tag; pin a version',
    ]);
  });

  it('judges an UPDATE on the new object, whatever the old one was', async () => {
    const bad = pod({ hostPID: true });
    const denied = await invoke(podPolicy, admissionReview(bad, { oldObject: pod() }));
    assert.equal(denied.allowed, false);
    const allowed = await invoke(podPolicy, admissionReview(pod(), { oldObject: bad }));
    assert.equal(allowed.allowed, true);
  });

  it('names a controller-made pod by its generateName', async () => {
    const object = pod({ hostIPC: true });
    object.metadata = { generateName: 'web-7d4b9c-', namespace: 'shop' } as Pod['metadata'];
    const result = await invoke(podPolicy, admissionReview(object));
    assert.match(result.status!.message!, /^pod "web-7d4b9c-\*" is not allowed/);
  });

  it('is registered for pods on CREATE and UPDATE only, failing closed', () => {
    const reg = podPolicy.registration;
    assert.equal(reg.type, 'validating');
    assert.deepEqual(reg.rules[0]!.operations, ['CREATE', 'UPDATE']);
    assert.deepEqual(reg.rules[0]!.resources, ['pods']);
    assert.equal(reg.failurePolicy, 'Fail');
    assert.equal(reg.sideEffects, 'None');
  });

  it('reads image tags', () => {
    assert.equal(imageTag('nginx'), undefined);
    assert.equal(imageTag('nginx:1.25'), '1.25');
    assert.equal(imageTag('localhost:5000/nginx'), undefined);
    assert.equal(imageTag('localhost:5000/nginx:latest'), 'latest');
  });
});
