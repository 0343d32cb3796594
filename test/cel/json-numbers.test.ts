// Numbers of the object as the API server's JSON decoding gives them to CEL: written with a fraction
// or an exponent, a double (`1.0` too); otherwise an int64, exactly (9007199254740993).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { cloneJson, parseJson, wholeDoubleKeys } from '../../lib/json.ts';
import { compileExpression, isCompileError } from '../../packages/kube-cel/src/compile.ts';
import { toCel, variablesFor } from '../../lib/matchconditions/variables.ts';
import { readAdmissionReviewFast } from '../../lib/review/fast.ts';
import type { AdmissionRequest } from '../../lib/review/schemas.ts';
import { admissionReview } from '../../lib/testing/index.ts';

/** The review of a ConfigMap whose `spec` is the JSON text `spec`, parsed as the gateway parses it. */
function request(spec: string): AdmissionRequest {
  const review = admissionReview({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' } }, { namespace: 'd' });
  const text = JSON.stringify(review).replace('"metadata":{', `"spec":${spec},"metadata":{`);
  const body = parseJson(text) as Parameters<typeof readAdmissionReviewFast>[0];
  const fast = readAdmissionReviewFast(body);
  assert.ok(fast, 'the fast reader reads the review');
  return fast.request as AdmissionRequest;
}

function evaluate(expression: string, r: AdmissionRequest): unknown {
  const compiled = compileExpression(expression);
  if (isCompileError(compiled)) throw new Error(compiled.message);
  return compiled.run(variablesFor(r));
}

describe('numbers of the object as CEL reads them', () => {
  it('a whole number written with a fraction or an exponent is a double; without, an int', () => {
    const r = request('{"a":1.0,"b":1,"c":[2.0,3,1e3,2.50E1],"neg":-4.00,"half":1.5}');
    assert.equal(evaluate('type(object.spec.a) == double', r), true);
    assert.equal(evaluate('type(object.spec.b) == int', r), true);
    assert.equal(evaluate('type(object.spec.c[0]) == double && type(object.spec.c[1]) == int', r), true);
    assert.equal(evaluate('type(object.spec.c[2]) == double && object.spec.c[2] == 1000.0', r), true);
    assert.equal(evaluate('type(object.spec.c[3]) == double && type(object.spec.neg) == double', r), true);
    assert.equal(evaluate('type(object.spec.half) == double', r), true);
  });

  it('compares a double with an int by value, and refuses int arithmetic on it, as the API server', () => {
    const r = request('{"replicas":3.0}');
    assert.equal(evaluate('object.spec.replicas == 3', r), true);
    assert.equal(evaluate('object.spec.replicas > 2', r), true);
    const compiled = compileExpression('object.spec.replicas + 1 == 4');
    assert.ok(!isCompileError(compiled));
    assert.throws(() => compiled.run(variablesFor(r)), /no such overload/);
  });

  it('keeps an integer beyond 2^53 exact, beside doubles', () => {
    const r = request('{"big":9007199254740993,"d":1.0}');
    assert.equal(evaluate('object.spec.big == 9007199254740993 && type(object.spec.big) == int', r), true);
    assert.equal(evaluate('type(object.spec.d) == double', r), true);
  });

  it('leaves the values plain numbers for the function, and strings alone', () => {
    const r = request('{"a":1.0,"s":"x:1.0","t":"1e3"}');
    const spec = (r.object as { spec: Record<string, unknown> }).spec;
    assert.deepEqual(spec, { a: 1, s: 'x:1.0', t: '1e3' });
    assert.equal(evaluate("object.spec.s == 'x:1.0' && object.spec.t == '1e3'", r), true);
  });

  it('a copy of the object (the mutating path) keeps the doubles', () => {
    const parsed = parseJson('{"spec":{"a":1.0,"l":[1.0,{"b":2e0}]}}') as object;
    const copy = cloneJson(parsed);
    assert.deepEqual(toCel(copy), { spec: { a: 1, l: [1, { b: 2 }] } });
    assert.deepEqual(toCel(parseJson('{"a":1}')), { a: 1n });
  });

  it('reads doubles at any depth (an object nested 10,000 levels)', () => {
    const depth = 10_000;
    const text = `${'{"a":'.repeat(depth)}1.0${'}'.repeat(depth)}`;
    let cel = toCel(parseJson(text)) as Record<string, unknown>;
    for (let i = 0; i < depth - 1; i++) cel = cel.a as Record<string, unknown>;
    assert.equal(cel.a, 1);
  });

  it('notes nothing for text without whole doubles', () => {
    const parsed = parseJson('{"a":1,"b":1.5,"c":"2.0"}') as object;
    assert.equal(wholeDoubleKeys(parsed), undefined);
  });
});
