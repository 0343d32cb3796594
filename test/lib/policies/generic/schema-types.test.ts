// CEL types of schemas, as the API server's SchemaDeclType makes them for type checking
// (apiserver cel/common schemas.go): each OpenAPI type and string format, int-or-string, maps,
// lists, properties without a type left out, a resource root completed with kind, apiVersion and
// metadata; and the built-in kinds' structured-merge-diff types (times as timestamps, quantities
// as strings, a type containing itself dyn inside).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CelTypes, escapeField } from '../../../../lib/policies/generic/schema-types.ts';
import { builtinSchema } from '../../../../lib/policies/mutating/smd/schema.ts';

describe('CelTypes.openApi (SchemaDeclType)', () => {
  it('types each scalar and string format', () => {
    const types = new CelTypes();
    const root = types.openApi(
      {
        type: 'object',
        properties: {
          s: { type: 'string' },
          b: { type: 'string', format: 'byte' },
          d: { type: 'string', format: 'duration' },
          day: { type: 'string', format: 'date' },
          t: { type: 'string', format: 'date-time' },
          n: { type: 'number' },
          i: { type: 'integer' },
          ok: { type: 'boolean' },
          ios: { 'x-kubernetes-int-or-string': true },
          untyped: {},
          list: { type: 'array', items: { type: 'integer' } },
          listOfNothing: { type: 'array' },
          map: { type: 'object', additionalProperties: { type: 'string' } },
          open: { type: 'object', additionalProperties: true },
        },
      },
      'Widget',
    );
    assert.equal(root, 'Widget');
    assert.deepEqual(types.types.Widget, {
      s: 'string',
      b: 'bytes',
      d: 'google.protobuf.Duration',
      day: 'google.protobuf.Timestamp',
      t: 'google.protobuf.Timestamp',
      n: 'double',
      i: 'int',
      ok: 'bool',
      ios: 'dyn',
      list: 'list<int>',
      map: 'map<string, string>',
      open: 'Widget.open',
    });
    assert.deepEqual(types.types['Widget.open'], {});
  });
  it('completes a resource root with kind, apiVersion and metadata (name, generateName)', () => {
    const types = new CelTypes();
    types.openApi({ type: 'object', properties: { spec: { type: 'object', properties: {} } } }, 'W', true);
    assert.deepEqual(types.types.W, { spec: 'W.spec', kind: 'string', apiVersion: 'string', metadata: 'W.metadata' });
    assert.deepEqual(types.types['W.metadata'], { name: 'string', generateName: 'string' });
  });
  it('a schema without a type has none', () => {
    assert.equal(new CelTypes().openApi({}, 'X', true), undefined);
  });
  it('escapes property names as cel.Escape does, and leaves out those it cannot name', () => {
    assert.equal(escapeField('if'), '__if__');
    assert.equal(escapeField('a-b.c/d'), 'a__dash__b__dot__c__slash__d');
    assert.equal(escapeField('x__y'), 'x__underscores__y');
    assert.equal(escapeField('9lives'), undefined);
    assert.equal(escapeField('a b'), undefined);
  });
});

describe('CelTypes.builtin (the structured-merge-diff table)', () => {
  const schema = builtinSchema();
  it('a Deployment: integers, times as timestamps, quantities as strings, int-or-string dyn', () => {
    const types = new CelTypes();
    const root = types.builtin(schema, 'io.k8s.api.apps.v1.Deployment', 'Deployment');
    const deployment = types.types[root!]!;
    const spec = types.types[deployment.spec!]!;
    assert.equal(spec.replicas, 'int');
    const meta = types.types[deployment.metadata!]!;
    assert.equal(meta.creationTimestamp, 'google.protobuf.Timestamp');
    assert.equal(meta.labels, 'map<string, string>');
    const strategy = types.types[spec.strategy!]!;
    const rolling = types.types[strategy.rollingUpdate!]!;
    assert.equal(rolling.maxSurge, 'dyn');
    const pod = types.types[types.types[spec.template!]!.spec!]!;
    const container = /^list<(.+)>$/.exec(pod.containers!)![1]!;
    const resources = types.types[types.types[container]!.resources!]!;
    assert.equal(resources.limits, 'map<string, string>');
  });
  it('a type that contains itself is dyn inside itself', () => {
    const types = new CelTypes();
    const tree = { 'x.Node': { m: { f: { name: { s: 'string' }, child: 'x.Node', kids: { l: { e: 'x.Node' } } } } } };
    const root = types.builtin(tree, 'x.Node', 'Node');
    assert.deepEqual(types.types[root!], { name: 'string', child: 'dyn', kids: 'list<dyn>' });
  });
});
