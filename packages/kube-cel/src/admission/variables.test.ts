// The variables of an admission request as the API server builds them. The namespaceObject cases
// restate "test namespaceObject" of apiserver's pkg/admission/plugin/cel/condition_test.go (the
// Namespace there, given here with the managedFields and ownerReferences CreateNamespaceObject drops).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type AdmissionRequest, admissionVariables, compile, namespaceForCel, toCel } from '../index.ts';

const request: AdmissionRequest = {
  kind: { group: '', version: 'v1', kind: 'Pod' },
  resource: { group: '', version: 'v1', resource: 'pods' },
  operation: 'CREATE',
  namespace: 'test',
  object: { metadata: { generateName: 'web-' } },
};

const namespace = {
  apiVersion: 'v1',
  kind: 'Namespace',
  metadata: {
    name: 'test',
    labels: { env: 'test', foo: 'demo' },
    annotations: { annotation1: 'testAnnotation1' },
    finalizers: ['f1'],
    managedFields: [{ manager: 'kubectl', operation: 'Update' }],
    ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'owner', uid: 'u' }],
  },
  spec: { finalizers: ['kubernetes'] },
  status: { phase: 'Active' },
};

/** The expression's value against the variables, or its error's message (first line). */
function answer(expression: string, variables: Record<string, unknown>): unknown {
  try {
    return compile(expression).evaluate(variables).value;
  } catch (err) {
    return `error: ${(err as Error).message.split('\n')[0]}`;
  }
}

describe('admissionVariables', () => {
  it('gives namespaceObject as CreateNamespaceObject keeps it (condition_test.go, test namespaceObject)', () => {
    const variables = admissionVariables(request, { namespaceObject: namespace });
    const cases: Array<[string, unknown]> = [
      ["namespaceObject.metadata.name == 'test'", true],
      ["'env' in namespaceObject.metadata.labels && namespaceObject.metadata.labels.env == 'test'", true],
      ["('fake' in namespaceObject.metadata.labels) && namespaceObject.metadata.labels.fake == 'test'", false],
      ["namespaceObject.spec.finalizers[0] == 'kubernetes'", true],
      ["namespaceObject.status.phase == 'Active'", true],
      ['size(namespaceObject.metadata.managedFields) == 1', /undefined field 'managedFields'/],
      ['size(namespaceObject.metadata.ownerReferences) == 1', /undefined field 'ownerReferences'/],
      ["'env' in namespaceObject.metadata.annotations", false],
    ];
    for (const [expression, expected] of cases) {
      const got = answer(expression, variables);
      if (expected instanceof RegExp) assert.match(String(got), expected, expression);
      else assert.equal(got, expected, expression);
    }
  });

  it('keeps of the Namespace only the metadata fields the API server copies', () => {
    const kept = namespaceForCel(namespace);
    assert.deepEqual(Object.keys((kept as { metadata: object }).metadata).sort(), [
      'annotations',
      'finalizers',
      'labels',
      'name',
    ]);
    assert.deepEqual((kept as { spec: unknown }).spec, namespace.spec);
    assert.equal(namespaceForCel(null), null);
    assert.equal(answer('namespaceObject == null', admissionVariables(request)), true);
  });

  it('leaves empty request fields absent, as the JSON of CreateAdmissionRequest does', () => {
    const variables = admissionVariables(request);
    assert.equal(answer('has(request.name)', variables), false);
    assert.equal(answer('has(request.namespace)', variables), true);
    assert.equal(answer('has(request.subResource)', variables), false);
    assert.equal(answer('has(request.userInfo.username)', variables), false);
    assert.equal(answer('request.dryRun', variables), false);
    assert.match(String(answer("request.name == ''", variables)), /no such key: name/);
  });

  it('passes params, null without', () => {
    assert.deepEqual(admissionVariables(request).params, null);
    assert.deepEqual(admissionVariables(request, { params: { replicas: 3, ratio: 0.5 } }).params, {
      replicas: 3n,
      ratio: 0.5,
    });
  });

  it('reads whole numbers written as doubles as the JSON reader marks them', () => {
    const object = { a: 1, b: 1 };
    const marked = (parent: object) => (parent === object ? new Set(['b']) : undefined);
    assert.deepEqual(toCel(object), { a: 1n, b: 1n });
    assert.deepEqual(toCel(object, marked), { a: 1n, b: 1 });
  });
});
