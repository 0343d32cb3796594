import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { applyConfiguration } from '../../../../../lib/policies/mutating/smd/apply.ts';
import { crdSchema } from '../../../../../lib/policies/mutating/smd/crd.ts';
import { builtinSchema, builtinTypeName } from '../../../../../lib/policies/mutating/smd/schema.ts';

const DEPLOYMENT = 'io.k8s.api.apps.v1.Deployment';
const deployment = (spec: Record<string, unknown>, metadata?: Record<string, unknown>) => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  ...(metadata ? { metadata } : {}),
  spec,
});
const podSpec = (spec: Record<string, unknown>) => deployment({ template: { spec } });

interface Row {
  name: string;
  object: Record<string, unknown>;
  patch: Record<string, unknown>;
  want?: Record<string, unknown>;
  error?: string;
  /** The object's type, a Deployment unless said. */
  type?: string;
}

function check(row: Row) {
  const result = applyConfiguration(builtinSchema(), row.type ?? DEPLOYMENT, row.object, row.patch);
  if (row.error !== undefined) {
    assert.ok('error' in result, `${row.name}: merged, expected an error`);
    assert.equal(result.error, row.error);
  } else {
    assert.ok('object' in result, `${row.name}: ${'error' in result ? result.error : ''}`);
    assert.deepEqual(result.object, row.want);
  }
}

// Restated from k8s.io/apiserver pkg/admission/plugin/policy/mutating/patch/smd_test.go
// (TestApplyConfiguration): each row's apply configuration is the object its CEL expression builds.
const SMD_TEST_GO: Row[] = [
  {
    name: 'apply configuration add to listType=map',
    object: podSpec({ volumes: [{ name: 'x' }] }),
    patch: { spec: { template: { spec: { volumes: [{ name: 'y' }] } } } },
    want: podSpec({ volumes: [{ name: 'x' }, { name: 'y' }] }),
  },
  {
    name: 'apply configuration update listType=map entry',
    object: podSpec({ volumes: [{ name: 'x' }, { name: 'y' }] }),
    patch: { spec: { template: { spec: { volumes: [{ name: 'y', hostPath: { path: 'a' } }] } } } },
    want: podSpec({ volumes: [{ name: 'x' }, { name: 'y', hostPath: { path: 'a' } }] }),
  },
  {
    name: 'apply configuration with conditionals',
    object: deployment({ replicas: 2 }),
    patch: { spec: { replicas: 3 } },
    want: deployment({ replicas: 3 }),
  },
  {
    name: 'complex apply configuration initialization',
    object: deployment({}),
    patch: {
      spec: {
        replicas: 1,
        template: {
          metadata: { labels: { app: 'nginx' } },
          spec: {
            containers: [
              {
                name: 'nginx',
                image: 'nginx:1.14.2',
                ports: [{ containerPort: 80 }],
                resources: { limits: { cpu: '128M' } },
              },
            ],
          },
        },
      },
    },
    want: deployment({
      replicas: 1,
      template: {
        metadata: { labels: { app: 'nginx' } },
        spec: {
          containers: [
            {
              name: 'nginx',
              image: 'nginx:1.14.2',
              ports: [{ containerPort: 80 }],
              resources: { limits: { cpu: '128M' } },
            },
          ],
        },
      },
    }),
  },
  {
    name: 'apply configuration with change to atomic',
    object: deployment({ replicas: 1 }),
    patch: { spec: { selector: { matchLabels: { l: 'v' } } } },
    error:
      'error applying patch: invalid ApplyConfiguration: may not mutate atomic arrays, maps or structs: .spec.selector',
  },
  {
    name: 'apply configuration with invalid field name',
    object: deployment({ replicas: 1 }),
    patch: { spec: { replicasx: 1 } },
    error:
      'error applying patch: failed to convert patch object to typed object: .spec.replicasx: field not declared in schema',
  },
  {
    name: 'apply configuration with duplicate env vars in original object',
    object: deployment({
      replicas: 1,
      template: {
        spec: {
          containers: [
            {
              name: 'nginx',
              env: [
                { name: 'test', value: 'a' },
                { name: 'test', value: 'b' },
              ],
            },
          ],
        },
      },
    }),
    patch: { spec: { replicas: 3 } },
    want: deployment({
      replicas: 3,
      template: {
        spec: {
          containers: [
            {
              name: 'nginx',
              env: [
                { name: 'test', value: 'a' },
                { name: 'test', value: 'b' },
              ],
            },
          ],
        },
      },
    }),
  },
  {
    name: 'apply configuration modify existing env variable',
    object: deployment({
      replicas: 1,
      template: {
        spec: {
          containers: [
            {
              name: 'nginx',
              env: [
                { name: 'test', value: 'a' },
                { name: 'test', value: 'b' },
                { name: 'foo', value: 'bar' },
              ],
            },
          ],
        },
      },
    }),
    patch: { spec: { template: { spec: { containers: [{ name: 'nginx', env: [{ name: 'test', value: 'c' }] }] } } } },
    want: deployment({
      replicas: 1,
      template: {
        spec: {
          containers: [
            {
              name: 'nginx',
              env: [
                { name: 'test', value: 'c' },
                { name: 'foo', value: 'bar' },
              ],
            },
          ],
        },
      },
    }),
  },
];

describe('apply configurations merged as structured-merge-diff merges them (smd_test.go)', () => {
  for (const row of SMD_TEST_GO) it(row.name, () => check(row));
});

// Further rows, each pinning one rule of structured-merge-diff's merge as it reads the built-in schema.
const RULES: Row[] = [
  {
    name: 'a keyed list keeps the object order, new items after the object items that follow the last shared one',
    object: podSpec({ containers: [{ name: 'a' }, { name: 'b' }, { name: 'c' }] }),
    patch: { spec: { template: { spec: { containers: [{ name: 'b', image: 'x' }, { name: 'd' }] } } } },
    want: podSpec({ containers: [{ name: 'a' }, { name: 'b', image: 'x' }, { name: 'c' }, { name: 'd' }] }),
  },
  {
    name: 'new items before a shared one go before it',
    object: podSpec({ containers: [{ name: 'a' }, { name: 'b' }] }),
    patch: { spec: { template: { spec: { containers: [{ name: 'z' }, { name: 'b' }] } } } },
    want: podSpec({ containers: [{ name: 'a' }, { name: 'z' }, { name: 'b' }] }),
  },
  {
    name: 'a set (finalizers) merges by value',
    object: deployment({}, { name: 'd', finalizers: ['a', 'b'] }),
    patch: { metadata: { finalizers: ['c', 'a'] } },
    want: deployment({}, { name: 'd', finalizers: ['c', 'a', 'b'] }),
  },
  {
    name: 'an atomic list (args) in the configuration is refused',
    object: podSpec({ containers: [{ name: 'a', args: ['x'] }] }),
    patch: { spec: { template: { spec: { containers: [{ name: 'a', args: ['y'] }] } } } },
    error:
      'error applying patch: invalid ApplyConfiguration: may not mutate atomic arrays, maps or structs: .spec.template.spec.containers[0].args',
  },
  {
    name: 'a granular map (labels) merges key by key',
    object: deployment({}, { labels: { a: '1', b: '2' } }),
    patch: { metadata: { labels: { b: '3', c: '4' } } },
    want: deployment({}, { labels: { a: '1', b: '3', c: '4' } }),
  },
  {
    name: 'a keyed list with two keys (ports: containerPort and protocol, protocol defaulted)',
    object: podSpec({ containers: [{ name: 'a', ports: [{ containerPort: 80, protocol: 'TCP' }] }] }),
    patch: {
      spec: { template: { spec: { containers: [{ name: 'a', ports: [{ containerPort: 80, name: 'http' }] }] } } },
    },
    want: podSpec({ containers: [{ name: 'a', ports: [{ containerPort: 80, protocol: 'TCP', name: 'http' }] }] }),
  },
  {
    name: 'duplicate keys in the configuration are refused',
    object: podSpec({ containers: [] }),
    patch: { spec: { template: { spec: { containers: [{ name: 'a' }, { name: 'a' }] } } } },
    error:
      'error applying patch: failed to convert patch object to typed object: .spec.template.spec.containers: duplicate entries for key [name="a"]',
  },
  {
    name: 'an item without its key takes the key default (a container name defaults to "")',
    object: podSpec({ containers: [{ name: '', image: 'a' }] }),
    patch: { spec: { template: { spec: { containers: [{ image: 'b' }] } } } },
    want: podSpec({ containers: [{ name: '', image: 'b' }] }),
  },
  {
    name: 'an item without its key, which has no default, is refused',
    type: 'io.k8s.api.core.v1.ServiceAccount',
    object: { apiVersion: 'v1', kind: 'ServiceAccount', secrets: [] },
    patch: { secrets: [{ namespace: 'a' }] },
    error:
      'error applying patch: failed to convert patch object to typed object: .secrets: element 0: associative list with keys has an element that omits all key fields ["name"] (and doesn\'t have default values for any key fields)',
  },
  {
    name: 'a scalar of the wrong type is refused',
    object: deployment({}),
    patch: { spec: { replicas: 'three' } },
    error:
      'error applying patch: failed to convert patch object to typed object: .spec.replicas: expected numeric (int or float), got string',
  },
  {
    name: 'an empty list in the configuration replaces an empty one and is kept',
    object: podSpec({ containers: [] }),
    patch: { spec: { template: { spec: { volumes: [] } } } },
    want: podSpec({ containers: [], volumes: [] }),
  },
  {
    name: 'int-or-string and quantities take any scalar',
    object: deployment({ strategy: { rollingUpdate: { maxSurge: 1 } } }),
    patch: { spec: { strategy: { rollingUpdate: { maxSurge: '25%' } } } },
    want: deployment({ strategy: { rollingUpdate: { maxSurge: '25%' } } }),
  },
];

describe('structured-merge-diff rules on the built-in schema', () => {
  for (const row of RULES) it(row.name, () => check(row));

  it('finds the type of built-in kinds, and none for a custom resource', () => {
    assert.equal(builtinTypeName('apps', 'v1', 'Deployment'), DEPLOYMENT);
    assert.equal(builtinTypeName('', 'v1', 'Pod'), 'io.k8s.api.core.v1.Pod');
    assert.equal(builtinTypeName('networking.k8s.io', 'v1', 'Ingress'), 'io.k8s.api.networking.v1.Ingress');
    assert.equal(builtinTypeName('example.com', 'v1', 'Widget'), undefined);
    assert.equal(builtinTypeName('apps', 'v1', 'DeploymentSpec'), undefined);
  });

  it('leaves the object it was given unchanged', () => {
    const object = podSpec({ containers: [{ name: 'a' }] });
    const before = structuredClone(object);
    applyConfiguration(builtinSchema(), DEPLOYMENT, object, {
      spec: { template: { spec: { containers: [{ name: 'b' }] } } },
    });
    assert.deepEqual(object, before);
  });
});

describe("a custom resource's schema from its CRD", () => {
  const { schema, typeName } = crdSchema('example.com', 'v1', 'Widget', {
    type: 'object',
    properties: {
      spec: {
        type: 'object',
        properties: {
          size: { type: 'integer' },
          port: { 'x-kubernetes-int-or-string': true },
          tags: { type: 'array', items: { type: 'string' } },
          zones: { type: 'array', items: { type: 'string' }, 'x-kubernetes-list-type': 'set' },
          routes: {
            type: 'array',
            'x-kubernetes-list-type': 'map',
            'x-kubernetes-list-map-keys': ['host', 'path'],
            items: {
              type: 'object',
              properties: {
                host: { type: 'string' },
                path: { type: 'string', default: '/' },
                weight: { type: 'integer' },
              },
            },
          },
          selector: { type: 'object', 'x-kubernetes-map-type': 'atomic', additionalProperties: { type: 'string' } },
          extra: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
        },
      },
    },
  });
  const widget = (spec: Record<string, unknown>) => ({
    apiVersion: 'example.com/v1',
    kind: 'Widget',
    metadata: { name: 'w' },
    spec,
  });
  const apply = (object: Record<string, unknown>, patch: Record<string, unknown>) =>
    applyConfiguration(schema, typeName, object, patch);

  it('merges keyed lists by all their keys, a missing key taking its default', () => {
    const object = widget({
      routes: [
        { host: 'a', path: '/', weight: 1 },
        { host: 'a', path: '/x' },
      ],
    });
    const result = apply(object, {
      spec: {
        routes: [
          { host: 'a', weight: 5 },
          { host: 'b', path: '/' },
        ],
      },
    });
    assert.deepEqual(result, {
      object: widget({
        routes: [
          { host: 'a', path: '/', weight: 5 },
          { host: 'a', path: '/x' },
          { host: 'b', path: '/' },
        ],
      }),
    });
  });

  it('merges sets by value, refuses atomic lists and maps', () => {
    assert.deepEqual(apply(widget({ zones: ['a'] }), { spec: { zones: ['b'] } }), {
      object: widget({ zones: ['a', 'b'] }),
    });
    assert.deepEqual(apply(widget({}), { spec: { tags: ['b'], selector: { a: 'b' } } }), {
      error:
        'error applying patch: invalid ApplyConfiguration: may not mutate atomic arrays, maps or structs: .spec.tags, .spec.selector',
    });
  });

  it('takes any field under preserve-unknown-fields, any scalar for int-or-string, ObjectMeta for metadata', () => {
    const result = apply(widget({ port: 80, extra: { a: { b: 1 } } }), {
      metadata: { labels: { x: 'y' } },
      spec: { port: 'http', extra: { a: { c: 2 } } },
    });
    assert.deepEqual(result, {
      object: {
        ...widget({ port: 'http', extra: { a: { b: 1, c: 2 } } }),
        metadata: { name: 'w', labels: { x: 'y' } },
      },
    });
    assert.deepEqual(apply(widget({}), { spec: { unknown: 1 } }), {
      error:
        'error applying patch: failed to convert patch object to typed object: .spec.unknown: field not declared in schema',
    });
  });
});
