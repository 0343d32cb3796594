// The API server's filter of admission expressions (apiserver admission/plugin/cel filter_test.go,
// TestCompile and TestFilter), restated for webhook matchConditions: each condition of a case
// is evaluated on the case's request, to true, false or an error worded as the API server words it.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KubeObject } from '../../../lib/index.ts';
import { checkMatchConditions, compileExpression, isCompileError } from '../../../lib/matchconditions/index.ts';
import { createMatcher } from '../../../lib/matchconditions/matcher.ts';
import type { AdmissionRequest } from '../../../lib/review/schemas.ts';
import { admissionReview } from '../../../lib/testing/index.ts';

/** filter_test.go's endpoints: one subset with one address. */
const endpoints = (name?: string): KubeObject =>
  ({
    apiVersion: 'v1',
    kind: 'Endpoints',
    metadata: name ? { name } : {},
    subsets: [{ addresses: [{ ip: '127.0.0.0' }] }],
  }) as KubeObject;

/** newValidAttribute: a CREATE of `object` (default the endpoints), or a DELETE of the endpoints. */
function validAttribute(object: KubeObject | null, isDelete: boolean): AdmissionRequest {
  if (isDelete) return admissionReview(null, { oldObject: endpoints(), namespace: 'default', name: 'foo' }).request;
  return admissionReview(object ?? endpoints('endpoints1'), { namespace: 'default', name: 'foo' }).request;
}

const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'foo' }, spec: { nodeName: 'testnode' } } as KubeObject;

/** What one condition evaluates to: its value, or its error's words. */
type Result = boolean | { error: string };

/** The result of each condition, as the matcher words a failure. */
function evaluate(expressions: string[], request: AdmissionRequest): Result[] {
  return expressions.map((expression) => {
    const outcome = createMatcher([{ name: 'c', expression }], 'Fail').evaluate(request);
    if ('error' in outcome) return { error: outcome.error };
    return outcome.matched;
  });
}

describe('filter_test.go TestFilter, for webhook matchConditions', () => {
  const cases: Array<{ name: string; expressions: string[]; request: AdmissionRequest; results: Result[] }> = [
    {
      name: 'valid syntax for object',
      expressions: ['has(object.subsets) && object.subsets.size() < 2'],
      request: validAttribute(null, false),
      results: [true],
    },
    {
      name: 'valid syntax for metadata',
      expressions: ["object.metadata.name == 'endpoints1'"],
      request: validAttribute(null, false),
      results: [true],
    },
    {
      name: 'valid syntax for oldObject',
      expressions: ['oldObject == null', 'object != null'],
      request: validAttribute(null, false),
      results: [true, true],
    },
    {
      name: 'valid syntax for request',
      expressions: ["request.operation == 'CREATE'"],
      request: validAttribute(null, false),
      results: [true],
    },
    {
      name: 'test failure',
      expressions: ['object.subsets.size() > 2'],
      request: validAttribute(null, false),
      results: [false],
    },
    {
      name: 'test failure with multiple validations',
      expressions: ['has(object.subsets)', 'object.subsets.size() > 2'],
      request: validAttribute(null, false),
      results: [true, false],
    },
    {
      name: 'test failure policy with multiple failed validations',
      expressions: ['oldObject != null', 'object.subsets.size() > 2'],
      request: validAttribute(null, false),
      results: [false, false],
    },
    {
      name: 'test Object null in delete',
      expressions: ['oldObject != null', 'object == null'],
      request: validAttribute(null, true),
      results: [true, true],
    },
    {
      name: 'test runtime error',
      expressions: ['oldObject.x == 100'],
      request: validAttribute(null, true),
      results: [{ error: "expression 'oldObject.x == 100' resulted in error: no such key: x" }],
    },
    {
      name: 'test compile failure',
      expressions: ['fail to compile test', 'object.subsets.size() > 2'],
      request: validAttribute(null, false),
      results: [{ error: 'compilation error: compilation failed: ERROR: <input>:1:6: ' }, false],
    },
    {
      name: 'test pod',
      expressions: ["object.spec.nodeName == 'testnode'"],
      request: validAttribute(pod, false),
      results: [true],
    },
  ];
  for (const tc of cases) {
    it(tc.name, () => {
      const got = evaluate(tc.expressions, tc.request);
      assert.equal(got.length, tc.results.length);
      for (const [i, expected] of tc.results.entries()) {
        const result = got[i]!;
        if (typeof expected === 'boolean') assert.equal(result, expected, tc.expressions[i]);
        else {
          assert.equal(typeof result, 'object', `${tc.expressions[i]}: ${JSON.stringify(result)}`);
          assert.ok(
            (result as { error: string }).error.startsWith(expected.error),
            `${tc.expressions[i]}: ${JSON.stringify(result)}`,
          );
        }
      }
    });
  }
});

describe('filter_test.go TestCompile', () => {
  it('valid syntax compiles to bool', () => {
    for (const expression of [
      '1 < 2',
      "object.spec.string.matches('[0-9]+')",
      "request.kind.group == 'example.com' && request.kind.version == 'v1' && request.kind.kind == 'Fake'",
    ]) {
      const compiled = compileExpression(expression);
      assert.ok(!isCompileError(compiled), expression);
      assert.equal(compiled.type, 'bool', expression);
    }
  });

  it("a condition must be a bool, in the API server's words (compile.go)", () => {
    const problems = checkMatchConditions([{ name: 'enabled', expression: 'object.spec.enabled' }]);
    assert.deepEqual(
      problems.map((p) => p.message),
      ['matchCondition "enabled": "object.spec.enabled": must evaluate to bool but got dyn'],
    );
  });

  it("an int compared with a string is refused, in cel-go's words at the operator", () => {
    const compiled = compileExpression("1 < 'asdf'");
    assert.ok(isCompileError(compiled));
    assert.match(
      compiled.message,
      /^compilation failed: ERROR: <input>:1:3: found no matching overload for '_<_' applied to '\(int, string\)'/,
    );
  });
});
