// Expressions on which a CEL engine easily answers otherwise than the API server (cel-go with
// Kubernetes' libraries), each with the API server's answer: a value, an evaluation error (which
// follows failurePolicy), or a refusal when the configuration is created. The answers follow cel-go's
// and apimachinery's behaviour: the planner's constant folding, the JSON conversion of the request,
// code points, int64 overflow, Go's number printing.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseJson } from '../../lib/json.ts';
import { compileExpression, isCompileError } from '../../packages/kube-cel/src/compile.ts';
import { variablesFor } from '../../lib/matchconditions/variables.ts';
import type { AdmissionRequest } from '../../lib/review/schemas.ts';
import { admissionReview } from '../../lib/testing/index.ts';

/** What the API server answers: a value, an evaluation error, or a refusal when created. */
type Expected = { value: unknown } | { error: RegExp } | { refused: RegExp };
/** What the environment answered. */
type Got = { value: unknown } | { error: string } | { refused: string };

const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'web' }, spec: { nums: [1, 2] } };
/** A pod create in a namespace: the usual request. */
const namespaced = admissionReview(pod, { namespace: 'team-a', name: 'web' }).request as AdmissionRequest;
/** A namespace create: cluster-scoped, so the request has no `namespace`. */
const clusterScoped = admissionReview({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'n' } }, { name: 'n' })
  .request as AdmissionRequest;
/** A pod created with generateName: the request has no `name`, and a user with no groups. */
const generated = {
  ...admissionReview({ apiVersion: 'v1', kind: 'Pod', metadata: { generateName: 'web-' } }, { namespace: 'team-a' })
    .request,
  name: undefined,
  userInfo: { username: 'alice' },
} as unknown as AdmissionRequest;

/** The answer of `expression` on `request`, compiled as a stored expression or as one being created. */
function answer(expression: string, request: AdmissionRequest, mode: 'create' | 'stored'): Got {
  const compiled = compileExpression(expression, { mode });
  if (isCompileError(compiled)) return { refused: compiled.message };
  try {
    return { value: compiled.run(variablesFor(request)) };
  } catch (err) {
    return { error: (err as Error).message };
  }
}

const big = (_: string, v: unknown) => (typeof v === 'bigint' ? `${v}n` : v);

function check(expression: string, expected: Expected, request = namespaced, mode: 'create' | 'stored' = 'stored') {
  const got = answer(expression, request, mode);
  const said = JSON.stringify(got, big);
  if ('value' in expected) {
    assert.ok('value' in got, `${expression}: expected ${JSON.stringify(expected.value, big)}, got ${said}`);
    assert.deepEqual(got.value, expected.value, expression);
  } else if ('error' in expected) {
    assert.ok('error' in got, `${expression}: expected an evaluation error, got ${said}`);
    assert.match(got.error, expected.error, expression);
  } else {
    assert.ok('refused' in got, `${expression}: expected a refusal, got ${said}`);
    assert.match(got.refused, expected.refused, expression);
  }
}

describe('the request variable as the API server builds it (JSON, empty fields left out)', () => {
  it('a cluster-scoped object has no namespace: reading it is an error, has() is false', () => {
    check("request.namespace != 'kube-system'", { error: /no such key: namespace/ }, clusterScoped);
    check('has(request.namespace)', { value: false }, clusterScoped);
    check("!has(request.namespace) || request.namespace != 'kube-system'", { value: true }, clusterScoped);
    check("request.namespace == 'team-a'", { value: true });
  });

  it('a generateName create has no name; a user without groups has no groups', () => {
    check("request.name == ''", { error: /no such key: name/ }, generated);
    check('has(request.name)', { value: false }, generated);
    check('has(request.userInfo.groups)', { value: false }, generated);
    check('has(request.subResource) || has(request.requestSubResource)', { value: false }, generated);
  });
});

describe('the runtime type of the request and its fields', () => {
  it('is map: the API server gives them as schemaless Go values', () => {
    // apiserver pkg/cel/common/valuesschemalesstyped_test.go: a struct's value has type
    // types.MapType, as a map's has ("Unstructured behaves exactly as a Map").
    check('type(request.kind) == map && type(request) == map && type(request.userInfo) == map', { value: true });
    check('type(request.kind) == type(request.resource)', { value: true });
    check('type(request.name) == string && type(object) == map', { value: true });
    check('type(namespaceObject) == null_type', { value: true });
  });
});

describe('what the checker accepts and refuses', () => {
  it('accepts', () => {
    check('object.spec.nums.max() > 1', { value: true });
    check('[].exists(x, x > 1)', { value: false });
    check('[].map(n, -n)', { value: [] });
    check('int(0u)', { value: 0n });
    check('.5', { value: 0.5 });
    check("!!'a' in ['a']", { value: true });
    check('namespaceObject == null', { value: true });
    check("sign(quantity('-1'))", { value: -1n });
  });

  it('refuses when the configuration is created', () => {
    check('[1, 2, 3].slice(1, 2)', { refused: /undeclared reference to 'slice'/ }, namespaced, 'create');
    check('[1, 2, 3].slice(1, 2)', { value: [2n] });
    check("quantity('-1').sign() < 0", { refused: /found no matching overload/ });
    for (const expression of [
      'int(9223372036854775807.0)',
      'uint(-1)',
      "timestamp('invalid')",
      "duration('1d')",
      "int('')",
    ])
      check(`${expression} != null`, { refused: /./ });
  });
});

describe('values', () => {
  it('int64 overflow is an error', () => {
    check('-9223372036854775808 % -1', { error: /overflow/ });
    check('[9223372036854775807, 1].sum()', { error: /overflow/ });
  });

  it('strings by code point, as Go', () => {
    check("'a😀b'.indexOf('b')", { value: 2n });
    check("''.indexOf('a')", { error: /index out of range: 0/ });
    check("'abc'.replace('', '-')", { value: '-a-b-c-' });
    check("'ÄB'.lowerAscii()", { value: 'Äb' });
    check('string(123456789.0)', { value: '1.23456789e+08' });
  });

  it('strings ordered by their UTF-8 bytes, as Go compares them', () => {
    // cel-go common/types/string.go Compare is strings.Compare (bytes); string_test.go
    // TestStringCompare's cases, then code points past U+FFFF, which UTF-16 units order otherwise.
    check("'a' < 'bbbb' && 'a' <= 'a' && 'c' > 'bbbb'", { value: true });
    check("'😀' > '\\uffff'", { value: true });
    check("'\\uffff' >= '😀'", { value: false });
    check("'a😀' < 'a\\ue000'", { value: false });
    check("'\\ud7ff' < '😀'", { value: true });
    // Kubernetes' lists library orders with the same Compare (lists.go isSorted, max; sort in 1.32+).
    check("['\\uffff', '😀'].isSorted() && ['😀', '\\uffff'].max() == '😀'", { value: true });
    check("['😀', '\\uffff', 'a'].sort()", { value: ['a', '\uffff', '😀'] });
  });

  it('membership in an empty list literal is false without evaluating the element', () => {
    check('1 / 0 in []', { value: false });
    check('object.missing.field in []', { value: false });
    check('1 / 0 in [1]', { error: /division by zero/ });
  });

  it('numbers of the object keep every digit, and a double written 1.0 stays a double', () => {
    const text = JSON.stringify(admissionReview(pod, { namespace: 'team-a' })).replace(
      '"nums":[1,2]',
      '"nums":[9007199254740993,1.0]',
    );
    const request = (parseJson(text) as { request: AdmissionRequest }).request;
    check('object.spec.nums[0] == 9007199254740993', { value: true }, request);
    check('type(object.spec.nums[1]) == double', { value: true }, request);
  });
});

describe('Kubernetes libraries', () => {
  it('quantity as apimachinery parses it', () => {
    check("isQuantity('+')", { value: true });
    check("quantity('1.5Gi').asInteger()", { error: /./ });
    check("quantity('1000m').asInteger()", { error: /./ });
    check("quantity('0.1n') == quantity('1n')", { value: true });
    check("quantity('1e40').isGreaterThan(quantity('1e39'))", { value: true });
  });
});
