// Hostile sizes and nesting in matchConditions: refused at compile time or read, never a crash.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { compileExpression, isCompileError } from '../../../lib/matchconditions/index.ts';
import { createMatcher } from '../../../lib/matchconditions/matcher.ts';
import { toCel, variablesFor } from '../../../lib/matchconditions/variables.ts';
import { admissionReview } from '../../../lib/testing/index.ts';

describe('nesting limits', () => {
  it('a 10,000-term 1+1+… is a compile error, as cel-go refuses it, not a RangeError', () => {
    const result = compileExpression(`${'1+'.repeat(10_000)}1 == 10001`);
    assert.ok(isCompileError(result));
    assert.equal(result.message, 'compilation failed: ERROR: <input>:-1:0: max recursion depth exceeded');
  });

  it("parentheses nested past the parser's limit are the same compile error", () => {
    const result = compileExpression(`${'('.repeat(300)}true${')'.repeat(300)}`);
    assert.ok(isCompileError(result));
    assert.match(result.message, /expression recursion limit exceeded: 250/);
    assert.ok(!isCompileError(compileExpression(`${'('.repeat(100)}true${')'.repeat(100)}`)));
  });

  it('a matcher with such a condition fails by failurePolicy instead of throwing', () => {
    const request = admissionReview(
      { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' } },
      { namespace: 'd' },
    ).request;
    const outcome = createMatcher([{ name: 'deep', expression: `${'1+'.repeat(10_000)}1 > 0` }], 'Ignore').evaluate(
      request,
    );
    assert.ok('matched' in outcome && !outcome.matched && 'error' in outcome);
    assert.match(outcome.error, /max recursion depth exceeded/);
  });
});

describe('deep objects', () => {
  /** An object with `levels` nested `a` maps under spec. */
  function deepPod(levels: number): Record<string, unknown> {
    let inner: Record<string, unknown> = { leaf: 1 };
    for (let i = 0; i < levels; i++) inner = { a: inner };
    return { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'web', labels: { team: 'x' } }, spec: inner };
  }
  /** A CREATE of `object`, built around it (the object is not copied). */
  function requestFor(object: Record<string, unknown>) {
    const request = admissionReview(
      { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'web' } },
      { namespace: 'd' },
    ).request;
    return { ...request, object };
  }

  it('an object nested 10,000 levels is read: conditions on it answer', () => {
    const request = requestFor(deepPod(10_000));
    const conditions = [
      { name: 'team', expression: "has(object.metadata.labels) && object.metadata.labels.team == 'x'" },
      { name: 'spec', expression: 'has(object.spec.a.a)' },
    ];
    assert.deepEqual(createMatcher(conditions).evaluate(request), { matched: true });
    const skipped = createMatcher([{ name: 'other', expression: "object.metadata.name == 'db'" }]).evaluate(request);
    assert.deepEqual(skipped, { matched: false, name: 'other' });
  });

  it('toCel converts every level: numbers deep down are ints', () => {
    let value = toCel(deepPod(5_000).spec) as Record<string, unknown>;
    for (let i = 0; i < 5_000; i++) value = value.a as Record<string, unknown>;
    assert.equal(value.leaf, 1n);
    const vars = variablesFor(requestFor(deepPod(3_000)));
    assert.equal((vars.object as { metadata: { name: string } }).metadata.name, 'web');
  });

  it('keeps an own __proto__ key as data at any depth', () => {
    const shallow = toCel(JSON.parse('{"__proto__":{"x":1}}')) as Record<string, unknown>;
    assert.ok(Object.hasOwn(shallow, '__proto__'));
    let text = '{"__proto__":{"x":1}}';
    for (let i = 0; i < 1_500; i++) text = `{"a":${text}}`;
    let deep = toCel(JSON.parse(text)) as Record<string, unknown>;
    for (let i = 0; i < 1_500; i++) deep = deep.a as Record<string, unknown>;
    assert.ok(Object.hasOwn(deep, '__proto__'));
    assert.equal(Object.getPrototypeOf(deep), Object.prototype);
    assert.deepEqual(deep.__proto__, { x: 1n });
  });
});
