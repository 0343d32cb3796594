import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { admissionReview, expectIdempotent, invoke } from 'kube-lambda-webhooks/testing';
import podDefaults, { DEFAULTED_LABEL, applyDefaults } from '../../functions/pod-defaults/index.ts';
import { parseQuantity } from '../../functions/pod-defaults/quantity.ts';
import type { Pod } from '../../functions/pod.ts';
import { fixture } from '../helpers.ts';

const pod = (): Pod => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'web', namespace: 'shop' },
  spec: { containers: [{ name: 'app', image: 'nginx:1.25' }] },
});

describe('pod-defaults', () => {
  it('adds runAsNonRoot, limits and the label with add operations only', async () => {
    const result = await invoke(podDefaults, admissionReview(pod()));
    assert.equal(result.allowed, true);
    assert.deepEqual(
      [...result.patch].sort((a, b) => a.path.localeCompare(b.path)),
      [
        { op: 'add', path: '/metadata/labels', value: { [DEFAULTED_LABEL]: 'true' } },
        { op: 'add', path: '/spec/containers/0/resources', value: { limits: { cpu: '500m', memory: '256Mi' } } },
        { op: 'add', path: '/spec/securityContext', value: { runAsNonRoot: true } },
      ],
    );
  });

  it('never overwrites what the user set', async () => {
    const object = pod();
    object.metadata!.labels = { [DEFAULTED_LABEL]: 'no', app: 'web' };
    object.spec!.securityContext = { runAsNonRoot: false };
    object.spec!.containers = [{ name: 'app', image: 'nginx:1.25', resources: { limits: { cpu: '2' } } }];
    const result = await invoke(podDefaults, admissionReview(object));
    assert.deepEqual(result.patch, [{ op: 'add', path: '/spec/containers/0/resources/limits/memory', value: '256Mi' }]);
    assert.equal(result.object?.metadata?.labels?.[DEFAULTED_LABEL], 'no');
  });

  it('never replaces or removes: every operation is an add', async () => {
    const result = await invoke(podDefaults, admissionReview(fixture('reviews/pod-create-v1').request.object));
    assert.ok(result.patch.length > 0);
    assert.ok(
      result.patch.every((op) => op.op === 'add'),
      JSON.stringify(result.patch),
    );
  });

  it('raises a default limit to the container request so the pod stays valid', async () => {
    const object = pod();
    object.spec!.containers![0]!.resources = { requests: { cpu: '2', memory: '1Gi' } };
    object.spec!.initContainers = [
      { name: 'init', image: 'busybox:1.36', resources: { requests: { memory: '64Mi' } } },
    ];
    const result = await invoke(podDefaults, admissionReview(object));
    assert.deepEqual((result.object as Pod).spec!.containers![0]!.resources!.limits, { cpu: '2', memory: '1Gi' });
    assert.deepEqual((result.object as Pod).spec!.initContainers![0]!.resources!.limits, {
      cpu: '500m',
      memory: '256Mi',
    });
  });

  it('takes default limits from the environment', () => {
    const object = pod();
    applyDefaults(object, { DEFAULT_CPU_LIMIT: '1', DEFAULT_MEMORY_LIMIT: '1Gi' });
    assert.deepEqual(object.spec!.containers![0]!.resources!.limits, { cpu: '1', memory: '1Gi' });
  });

  it('is idempotent: its own output gets no patch (v1 and v1beta1)', async () => {
    await expectIdempotent(podDefaults, pod());
    await expectIdempotent(podDefaults, fixture('reviews/pod-create-v1').request.object, { version: 'v1beta1' });
  });

  it('answers v1beta1 reviews in v1beta1', async () => {
    const result = await invoke(podDefaults, admissionReview(pod(), { version: 'v1beta1' }));
    assert.equal(result.review.apiVersion, 'admission.k8s.io/v1beta1');
    assert.equal(result.review.response.patchType, 'JSONPatch');
  });

  it('fails open and asks to be reinvoked', () => {
    const reg = podDefaults.registration;
    assert.equal(reg.failurePolicy, 'Ignore');
    assert.equal(reg.reinvocationPolicy, 'IfNeeded');
    assert.deepEqual(reg.rules[0]!.operations, ['CREATE']);
  });

  it('compares quantities', () => {
    assert.equal(parseQuantity('500m'), 0.5);
    assert.equal(parseQuantity('1Gi'), 2 ** 30);
    assert.equal(parseQuantity('1e3'), 1000);
    assert.equal(parseQuantity('2'), 2);
    assert.ok(Number.isNaN(parseQuantity('lots')));
  });
});
