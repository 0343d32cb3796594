// Restated from k8s.io/apiserver pkg/admission/plugin/policy/mutating/plugin_test.go: a policy and
// its binding dispatched through the admission plugin, for an object created. The API server's
// tests stand in a patcher for the CEL program (it sets the annotations, or merges a fixed apply
// configuration with structured-merge-diff); here the same change is the policy's own expression.
// Each case runs natively and served from Lambda (expectMutatingPolicyParity), which must agree.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfigMap, Pod } from '../../../../lib/k8s/kinds.ts';
import { defineMutatingPolicy, type MutatingPolicyDefinition } from '../../../../lib/policies/mutating/define.ts';
import type { KubeObject } from '../../../../lib/review/schemas.ts';
import { on } from '../../../../lib/rule-builder.ts';
import { admissionReview } from '../../../../lib/harness/reviews.ts';
import { expectMutatingPolicyParity } from '../../../../lib/testing/mutating-policies.ts';

/** The policy `policy` with its binding `binding`, matching every namespace, as the plugin tests set them up. */
const policy = (
  resourceRules: MutatingPolicyDefinition['matchConstraints']['resourceRules'],
  mutation: MutatingPolicyDefinition['mutations'][number],
) =>
  defineMutatingPolicy({
    name: 'policy',
    bindingName: 'binding',
    matchConstraints: { resourceRules, namespaceSelector: {}, objectSelector: {}, matchPolicy: 'Equivalent' },
    mutations: [mutation],
  });

/** The object after the native policy, and the same through the webhook it is served as. */
async function dispatched(p: ReturnType<typeof policy>, object: KubeObject): Promise<KubeObject> {
  const options = { namespace: 'default', operation: 'CREATE' as const };
  const outcome = p.evaluate(admissionReview(object, options).request);
  assert.equal(outcome.allowed, true, JSON.stringify(outcome.status));
  await expectMutatingPolicyParity(p, object, options);
  return outcome.object!;
}

const configMap = (): KubeObject =>
  ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm', namespace: 'default' } }) as KubeObject;

describe('a mutating policy through the admission plugin (plugin_test.go)', () => {
  it('TestBasicPatch: the annotations the policy sets are on the object', async () => {
    const p = policy([on(ConfigMap).create()], {
      patchType: 'ApplyConfiguration',
      applyConfiguration: { expression: 'Object{metadata: Object.metadata{annotations: {"foo": "bar"}}}' },
    });
    const object = await dispatched(p, configMap());
    assert.deepEqual(object.metadata?.annotations, { foo: 'bar' });
  });

  it('TestJSONPatch: annotations and data added by the patch, the rest as it was', async () => {
    const p = policy([on(ConfigMap).create()], {
      patchType: 'JSONPatch',
      jsonPatch: {
        expression: `[
          JSONPatch{op: "add", path: "/metadata/annotations", value: {"foo": "bar"}},
          JSONPatch{op: "add", path: "/data", value: {"myfield": "myvalue"}}
        ]`,
      },
    });
    const object = await dispatched(p, configMap());
    assert.deepEqual(object, {
      ...configMap(),
      metadata: { ...configMap().metadata, annotations: { foo: 'bar' } },
      data: { myfield: 'myvalue' },
    });
  });

  it('TestSSAPatch: an apply configuration merges annotations and data into an empty ConfigMap', async () => {
    const p = policy([on(ConfigMap).create()], {
      patchType: 'ApplyConfiguration',
      applyConfiguration: {
        expression: 'Object{metadata: Object.metadata{annotations: {"foo": "bar"}}, data: {"myfield": "myvalue"}}',
      },
    });
    const object = await dispatched(p, configMap());
    assert.deepEqual(object, {
      ...configMap(),
      metadata: { ...configMap().metadata, annotations: { foo: 'bar' } },
      data: { myfield: 'myvalue' },
    });
  });

  it('TestSSAMapList: an init container of another name is appended to the keyed list, not replacing it', async () => {
    const p = policy([on(Pod).create()], {
      patchType: 'ApplyConfiguration',
      applyConfiguration: {
        expression: `Object{
          metadata: Object.metadata{annotations: {"foo": "bar"}},
          spec: Object.spec{initContainers: [Object.spec.initContainers{name: "injected-init-container", image: "injected-image"}]}
        }`,
      },
    });
    const pod = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'p', namespace: 'default' },
      spec: {
        initContainers: [{ name: 'init-container', image: 'image' }],
        containers: [{ name: 'app', image: 'app' }],
      },
    } as KubeObject;
    const object = (await dispatched(p, pod)) as KubeObject & {
      spec: { initContainers: Array<{ name: string; image: string }> };
    };
    assert.deepEqual(object.metadata?.annotations, { foo: 'bar' });
    // The API server's test has no defaulter for pods; here the Pod's defaults are applied too.
    assert.deepEqual(
      object.spec.initContainers.map(({ name, image }) => ({ name, image })),
      [
        { name: 'init-container', image: 'image' },
        { name: 'injected-init-container', image: 'injected-image' },
      ],
    );
  });
});
