import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { applyJsonPatch, escapeKey, type PatchOp } from '../../../../lib/policies/mutating/json-patch.ts';

const deployment = (spec: Record<string, unknown>, metadata?: Record<string, unknown>) => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  ...(metadata ? { metadata } : {}),
  spec,
});
const containers = (...names: string[]) =>
  deployment({ template: { spec: { containers: names.map((name) => ({ name })) } } });
const labels = (l: Record<string, string>) => deployment({}, { labels: l });

interface Row {
  name: string;
  object: Record<string, unknown>;
  ops: PatchOp[];
  want?: unknown;
  error?: string;
}

// Restated from k8s.io/apiserver pkg/admission/plugin/policy/mutating/patch/json_patch_test.go
// (TestJSONPatch): each row's operations are what its CEL expression evaluates to.
const JSON_PATCH_TEST_GO: Row[] = [
  {
    name: 'jsonPatch with false test operation',
    object: deployment({ replicas: 1 }),
    ops: [
      { op: 'test', path: '/spec/replicas', value: 100 },
      { op: 'replace', path: '/spec/replicas', value: 3 },
    ],
    want: deployment({ replicas: 1 }),
  },
  {
    name: 'jsonPatch with true test operation',
    object: deployment({ replicas: 1 }),
    ops: [
      { op: 'test', path: '/spec/replicas', value: 1 },
      { op: 'replace', path: '/spec/replicas', value: 3 },
    ],
    want: deployment({ replicas: 3 }),
  },
  {
    name: 'jsonPatch remove to unset field',
    object: deployment({ replicas: 1 }),
    ops: [{ op: 'remove', path: '/spec/replicas' }],
    want: deployment({}),
  },
  {
    name: 'jsonPatch remove map entry by key',
    object: labels({ x: '1', y: '1' }),
    ops: [{ op: 'remove', path: '/metadata/labels/y' }],
    want: labels({ x: '1' }),
  },
  {
    name: 'jsonPatch remove element in list',
    object: containers('a', 'b', 'c'),
    ops: [{ op: 'remove', path: '/spec/template/spec/containers/1' }],
    want: containers('a', 'c'),
  },
  {
    name: 'jsonPatch copy map entry by key',
    object: labels({ x: '1' }),
    ops: [{ op: 'copy', from: '/metadata/labels/x', path: '/metadata/labels/y' }],
    want: labels({ x: '1', y: '1' }),
  },
  {
    name: 'jsonPatch copy first element to end of list',
    object: containers('a', 'b', 'c'),
    ops: [{ op: 'copy', from: '/spec/template/spec/containers/0', path: '/spec/template/spec/containers/-' }],
    want: containers('a', 'b', 'c', 'a'),
  },
  {
    name: 'jsonPatch move map entry by key',
    object: labels({ x: '1' }),
    ops: [{ op: 'move', from: '/metadata/labels/x', path: '/metadata/labels/y' }],
    want: labels({ y: '1' }),
  },
  {
    name: 'jsonPatch move first element to end of list',
    object: containers('a', 'b', 'c'),
    ops: [{ op: 'move', from: '/spec/template/spec/containers/0', path: '/spec/template/spec/containers/-' }],
    want: containers('b', 'c', 'a'),
  },
  {
    name: 'jsonPatch add map entry by key and value',
    object: labels({ y: '1' }),
    ops: [{ op: 'add', path: '/metadata/labels/x', value: '2' }],
    want: labels({ y: '1', x: '2' }),
  },
  {
    name: 'jsonPatch add map value to field',
    object: deployment({}, {}),
    ops: [{ op: 'add', path: '/metadata/labels', value: { y: '2' } }],
    want: labels({ y: '2' }),
  },
  {
    name: 'jsonPatch add map to existing map',
    object: labels({ x: '1' }),
    ops: [{ op: 'add', path: '/metadata/labels', value: { y: '2' } }],
    want: labels({ y: '2' }),
  },
  {
    name: 'jsonPatch add to start of list',
    object: containers('a'),
    ops: [{ op: 'add', path: '/spec/template/spec/containers/0', value: { name: 'x' } }],
    want: containers('x', 'a'),
  },
  {
    name: 'jsonPatch add to end of list',
    object: containers('a'),
    ops: [{ op: 'add', path: '/spec/template/spec/containers/-', value: { name: 'x' } }],
    want: containers('a', 'x'),
  },
  {
    name: 'jsonPatch replace key in map',
    object: labels({ y: '1' }),
    ops: [{ op: 'replace', path: '/metadata/labels/x', value: '2' }],
    want: labels({ y: '1', x: '2' }),
  },
  {
    name: 'jsonPatch replace map value of unset field',
    object: deployment({}, {}),
    ops: [{ op: 'replace', path: '/metadata/labels', value: { y: '2' } }],
    want: labels({ y: '2' }),
  },
  {
    name: 'jsonPatch replace map value of set field',
    object: labels({ x: '1' }),
    ops: [{ op: 'replace', path: '/metadata/labels', value: { y: '2' } }],
    want: labels({ y: '2' }),
  },
  {
    name: 'jsonPatch replace first element in list',
    object: containers('a'),
    ops: [{ op: 'replace', path: '/spec/template/spec/containers/0', value: { name: 'x' } }],
    want: containers('x'),
  },
  {
    name: 'JSONPatch key escaping',
    object: deployment({}, {}),
    ops: [
      { op: 'add', path: '/metadata/labels', value: {} },
      { op: 'add', path: `/metadata/labels/${escapeKey('k8s.io/x~y')}`, value: 'true' },
    ],
    want: labels({ 'k8s.io/x~y': 'true' }),
  },
  {
    name: 'jsonPatch replace end of list with - not allowed',
    object: containers('a'),
    ops: [{ op: 'replace', path: '/spec/template/spec/containers/-', value: { name: 'x' } }],
    error:
      'JSON Patch: replace operation does not apply: doc is missing key: /spec/template/spec/containers/-: missing value',
  },
];

// Further rows: evanphx/json-patch v4's rules and texts, as the API server answers them.
const LIBRARY: Row[] = [
  {
    name: 'add under a missing parent',
    object: deployment({}),
    ops: [{ op: 'add', path: '/spec/template/spec', value: {} }],
    error: 'JSON Patch: add operation does not apply: doc is missing path: "/spec/template/spec": missing value',
  },
  {
    name: 'add past the end of a list',
    object: containers('a'),
    ops: [{ op: 'add', path: '/spec/template/spec/containers/2', value: {} }],
    error:
      "JSON Patch: error in add for path: '/spec/template/spec/containers/2': Unable to access invalid index: 2: invalid index referenced",
  },
  {
    name: 'a negative index counts from the end',
    object: containers('a', 'b'),
    ops: [{ op: 'remove', path: '/spec/template/spec/containers/-1' }],
    want: containers('a'),
  },
  {
    name: 'remove of a missing member',
    object: labels({}),
    ops: [{ op: 'remove', path: '/metadata/labels/x' }],
    error:
      "JSON Patch: error in remove for path: '/metadata/labels/x': Unable to remove nonexistent key: x: missing value",
  },
  {
    name: 'remove with - as index',
    object: containers('a'),
    ops: [{ op: 'remove', path: '/spec/template/spec/containers/-' }],
    error: `JSON Patch: error in remove for path: '/spec/template/spec/containers/-': strconv.Atoi: parsing "-": invalid syntax`,
  },
  {
    name: 'an unknown operation',
    object: labels({}),
    ops: [{ op: 'merge', path: '/metadata' }],
    error: 'JSON Patch: Unexpected kind: merge',
  },
  {
    name: 'move without from',
    object: labels({}),
    ops: [{ op: 'move', path: '/metadata/x' }],
    error: 'JSON Patch: move operation failed to decode from: operation, missing from field: missing value',
  },
  {
    name: 'a failed test after changes undoes them all',
    object: labels({ a: '1' }),
    ops: [
      { op: 'add', path: '/metadata/labels/b', value: '2' },
      { op: 'test', path: '/metadata/labels/a', value: '2' },
    ],
    want: labels({ a: '1' }),
  },
  {
    name: 'test of a missing member without a value passes',
    object: labels({}),
    ops: [
      { op: 'test', path: '/metadata/labels/a' },
      { op: 'add', path: '/metadata/labels/b', value: '2' },
    ],
    want: labels({ b: '2' }),
  },
  {
    name: 'test compares objects deeply, ignoring key order',
    object: labels({ a: '1', b: '2' }),
    ops: [
      { op: 'test', path: '/metadata/labels', value: { b: '2', a: '1' } },
      { op: 'add', path: '/metadata/labels/c', value: '3' },
    ],
    want: labels({ a: '1', b: '2', c: '3' }),
  },
];

function check(row: Row) {
  const before = structuredClone(row.object);
  const result = applyJsonPatch(row.object, row.ops);
  assert.deepEqual(row.object, before, 'the object given is not changed');
  if (row.error !== undefined) assert.deepEqual(result, { error: row.error });
  else {
    assert.ok('document' in result, 'error' in result ? result.error : '');
    assert.deepEqual(result.document, row.want);
  }
}

describe('JSON patches applied as the API server applies them (json_patch_test.go)', () => {
  for (const row of JSON_PATCH_TEST_GO) it(row.name, () => check(row));
});

describe('JSON patch: the library rules', () => {
  for (const row of LIBRARY) it(row.name, () => check(row));

  it('escapeKey escapes ~ before /', () => {
    assert.equal(escapeKey('a~1/b'), 'a~01~1b');
    assert.equal(escapeKey('plain'), 'plain');
  });
});
