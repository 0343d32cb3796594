import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { allow, defineValidatingWebhook, on, type KubeObject } from '../../../lib/index.ts';
import { Endpoints, Ingress, NetworkPolicy, Pod, StorageClass } from '../../../lib/k8s/kinds.ts';
import type { ResourceDescriptor } from '../../../lib/rule-builder.ts';
import { admissionReview, invoke } from '../../../lib/testing/index.ts';

const objectOf = (d: ResourceDescriptor<KubeObject>, namespace?: string): KubeObject => ({
  apiVersion: d.group ? `${d.group}/${d.version}` : d.version,
  kind: d.kind,
  metadata: { name: 'a', ...(namespace ? { namespace } : {}) },
});

describe('admissionReview names the resource the API server would', () => {
  it('takes the plural of a built-in kind from Kubernetes\' resources, not by adding "s"', () => {
    for (const d of [NetworkPolicy, Ingress, Endpoints, Pod, StorageClass] as ResourceDescriptor<KubeObject>[]) {
      const { request } = admissionReview(objectOf(d, d.namespaced ? 'default' : undefined));
      assert.deepEqual(request.resource, { group: d.group, version: d.version, resource: d.resource }, d.kind);
    }
  });

  it('makes English plurals for kinds it does not know (CRDs), and keeps an explicit resource', () => {
    const crd = (kind: string) => admissionReview({ apiVersion: 'example.com/v1', kind, metadata: { name: 'a' } });
    assert.equal(crd('Widget').request.resource.resource, 'widgets');
    assert.equal(crd('Policy').request.resource.resource, 'policies');
    assert.equal(crd('Gateway').request.resource.resource, 'gateways');
    assert.equal(crd('Class').request.resource.resource, 'classes');
    assert.equal(crd('Box').request.resource.resource, 'boxes');
    const given = admissionReview({ apiVersion: 'example.com/v1', kind: 'Widget' }, { resource: 'widgetz' });
    assert.equal(given.request.resource.resource, 'widgetz');
  });

  it('so invoke() accepts the review a typed rule on such a kind is sent', async () => {
    for (const d of [NetworkPolicy, Ingress, Endpoints] as ResourceDescriptor<KubeObject>[]) {
      const webhook = defineValidatingWebhook({ name: 'typed', rules: [on(d).create()], validate: () => allow() });
      assert.equal((await invoke(webhook, admissionReview(objectOf(d, 'default')))).allowed, true, d.kind);
    }
  });
});
