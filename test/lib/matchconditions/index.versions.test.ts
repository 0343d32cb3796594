// The CEL environment per Kubernetes version: what the API server of a version refuses when a
// configuration is created (its compatibility version's environment) and accepts once stored.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { lintDocuments } from '../../../infra/lint.ts';
import { checkMatchConditions, compileExpression, isCompileError } from '../../../lib/matchconditions/index.ts';
import { environmentMinor, NEWEST_KUBE_VERSION } from '../../../packages/kube-cel/src/versions/versions.ts';

const v = (minor: number) => ({ major: 1, minor });
/** The compile error of `expression` as a configuration created on 1.`minor`, or undefined. */
function onCreate(expression: string, minor?: number): string | undefined {
  const problems = checkMatchConditions(
    [{ name: 'c', expression }],
    minor === undefined ? {} : { kubeVersion: v(minor) },
  );
  return problems.map((p) => p.message).join('; ') || undefined;
}

describe('the environment per Kubernetes version', () => {
  it('creating compiles in the compatibility version (one back), stored expressions in the version itself', () => {
    assert.equal(environmentMinor(v(34), 'create'), 33);
    assert.equal(environmentMinor(v(34), 'stored'), 34);
    assert.equal(environmentMinor(undefined, 'create'), NEWEST_KUBE_VERSION.minor - 1);
    assert.equal(environmentMinor({ major: 2, minor: 0 }, 'create'), Number.POSITIVE_INFINITY);
  });

  it('lists version 3 (slice) arrives in 1.34: refused when created there, accepted from 1.35 and when stored', () => {
    const expression = '[1, 2, 3].slice(1, 2) == [2]';
    assert.match(onCreate(expression) ?? '', /undeclared reference to 'slice'/);
    assert.match(onCreate(expression, 34) ?? '', /undeclared reference to 'slice'/);
    assert.equal(onCreate(expression, 35), undefined);
    const stored = compileExpression(expression);
    assert.ok(!isCompileError(stored));
    assert.equal(stored.run({}), true);
    assert.ok(isCompileError(compileExpression(expression, { kubeVersion: v(33) })));
  });

  it('quantity arrives in 1.28', () => {
    const expression = "quantity('1Gi').isGreaterThan(quantity('1Mi'))";
    assert.match(onCreate(expression, 28) ?? '', /undeclared reference to 'quantity'/);
    assert.equal(onCreate(expression, 29), undefined);
    assert.match(onCreate("isQuantity('1')", 28) ?? '', /undeclared reference to 'isQuantity'/);
    assert.ok(!isCompileError(compileExpression(expression, { kubeVersion: v(28) })));
  });

  it('optional types arrive in 1.28: the syntax and the functions', () => {
    assert.match(onCreate('object.?spec.orValue(null) != null', 28) ?? '', /unsupported syntax '\.\?'/);
    assert.match(onCreate("object.metadata[?'labels'].hasValue()", 28) ?? '', /unsupported syntax '\[\?'/);
    assert.match(onCreate('optional.of(1).hasValue()', 28) ?? '', /undeclared reference to 'optional'/);
    assert.equal(onCreate('object.?spec.orValue(null) != null', 29), undefined);
    assert.equal(onCreate('optional.of(1).hasValue()', 29), undefined);
  });

  it('comparisons across int, uint and double arrive in 1.28; a dyn operand compares before', () => {
    assert.match(
      onCreate('object.spec.replicas < 2 && 1 < 1.5', 28) ?? '',
      /no matching overload for '_<_' applied to '\(int, double\)'/,
    );
    assert.match(onCreate('[1u].all(x, x >= 0)', 28) ?? '', /'_>=_' applied to '\(uint, int\)'/);
    assert.equal(onCreate('object.spec.replicas < 1.5 && 1.0 < 2.0 && 1 < 2', 28), undefined);
    assert.equal(onCreate('1 < 1.5 && [1u].all(x, x >= 0)', 29), undefined);
  });

  it('join arrives with strings version 2, in 1.29', () => {
    assert.match(onCreate("['a'].join(',') == 'a'", 29) ?? '', /undeclared reference to 'join'/);
    assert.equal(onCreate("['a'].join(',') == 'a' && ['a'].join() == 'a'", 30), undefined);
  });

  it('what every version has is accepted on all of them', () => {
    for (const minor of [28, 30, 34, 35])
      assert.equal(onCreate("request.operation == 'CREATE' && [1, 2].sum() == 3", minor), undefined);
  });

  it('lint checks the conditions of manifests as the chosen version creates them', () => {
    const doc = {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingWebhookConfiguration',
      metadata: { name: 'x' },
      webhooks: [
        {
          name: 'x.example.com',
          clientConfig: { url: 'https://example.com/x' },
          rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'] }],
          sideEffects: 'None',
          admissionReviewVersions: ['v1'],
          matchConditions: [{ name: 'slice', expression: "object.metadata.name.split('-').slice(0, 1) == ['web']" }],
        },
      ],
    };
    const compile = (findings: Array<{ rule: string }>) =>
      findings.filter((f) => f.rule === 'match-conditions-compile');
    assert.equal(compile(lintDocuments([doc])).length, 1);
    assert.equal(compile(lintDocuments([doc], v(34))).length, 1);
    assert.equal(compile(lintDocuments([doc], v(35))).length, 0);
  });
});

describe('type checking as cel-go', () => {
  const value = (expression: string) => {
    const compiled = compileExpression(expression);
    if (isCompileError(compiled)) return `compile: ${compiled.message.split('\n')[0]}`;
    try {
      return compiled.run({ object: null, oldObject: null, request: {}, namespaceObject: null, authorizer: null });
    } catch (err) {
      return `error: ${(err as Error).message.split('\n')[0]}`;
    }
  };

  it('int() of a uint: the value, or an overflow past int64 (refused when it is a constant)', () => {
    assert.equal(value('int(0u) == 0'), true);
    assert.equal(value('int(9223372036854775807u) == 9223372036854775807'), true);
    assert.match(String(value('int(9223372036854775808u) > 0')), /^compile: .*integer overflow/);
    assert.match(String(value('int([9223372036854775808u][0]) > 0')), /^error: integer overflow$/);
  });

  it('int() of a timestamp is its Unix seconds; timestamp() and duration() of their own types', () => {
    assert.equal(value("int(timestamp('2009-02-13T23:31:30Z')) == 1234567890"), true);
    assert.equal(value("timestamp(timestamp('2009-02-13T23:31:30Z')) == timestamp('2009-02-13T23:31:30Z')"), true);
    assert.equal(value("duration(duration('1s')) == duration('1s')"), true);
  });

  it('an even run of ! or - cancels out, as cel-go parses it', () => {
    assert.equal(value("!!'a' in ['a']"), true);
    assert.equal(value("!!!('a' in ['b'])"), true);
    assert.equal(value('[1, 2].exists(x, !!(x > 1))'), true);
  });

  it('parentheses end a run: -(-x) negates twice, and -(-2^63) overflows wherever it is', () => {
    // cel-go parser.go VisitNegate: only a run of operators before one operand cancels (`--a` is
    // `a`); `(-x)` is an operand of its own, so `-(-x)` is `-_(-_(x))` (parser_test.go: `-a` is
    // `-_(a)`), and Negate of math.MinInt64 is an overflow (common/types/int_test.go TestIntNegate).
    for (const expr of [
      '-(-9223372036854775808) > 0',
      '[-(-9223372036854775808)].size() == 1',
      '0 < -(-(-(-9223372036854775808)))',
    ])
      assert.equal(value(expr), 'error: integer overflow', expr);
    assert.equal(value('-(-9223372036854775807) == 9223372036854775807'), true);
    assert.equal(value('- -1 == 1 && --(-1) == -1 && -(--1) == -1'), true);
    assert.match(String(value('!(!1) == 1')), /^compile: .*no matching overload for '!_' applied to '\(int\)'/);
    assert.equal(value('!!1 == 1'), true);
  });

  it('namespaceObject compares with null', () => {
    assert.ok(!isCompileError(compileExpression('namespaceObject == null')));
    assert.ok(isCompileError(compileExpression('namespaceObject == 1')));
  });
});

describe('literals the API server refuses when a configuration is created', () => {
  it('any conversion of a constant that fails, however deep (cel-go folds them when it plans)', () => {
    for (const expr of [
      "int('') == 0",
      "uint('-1') == 0u",
      "double('x') > 1.0",
      "bool('maybe')",
      "string(b'\\xff') == ''",
      'int(string(1.5)) == 1',
      'timestamp(253402300800) > timestamp(0)',
      "true || int('a') == 1",
      "[1].all(x, x == int('a'))",
    ]) {
      assert.ok(onCreate(expr, 28), expr);
      assert.ok(onCreate(expr), expr);
    }
    for (const expr of ["int('12') == 12", 'int(uint(5)) == 5', "bool('t')", 'dyn(1) == 1', "string(b'a') == 'a'"])
      assert.equal(onCreate(expr), undefined, expr);
  });

  it('int() and uint() of literals out of their range', () => {
    assert.match(onCreate('int(9223372036854775807.0) > 0') ?? '', /: integer overflow\n/);
    assert.match(onCreate('int(-9223372036854775808.0) < 0') ?? '', /: integer overflow\n/);
    assert.match(onCreate('uint(-1) > 0u') ?? '', /: unsigned integer overflow\n/);
    assert.equal(onCreate('int(1.5) == 1 && uint(1) == 1u && int(-9223372036854774784.0) < 0'), undefined);
  });

  it('timestamp() and duration() literals that do not parse, in every version (folded when planned)', () => {
    assert.match(
      onCreate("timestamp('invalid') > timestamp('2000-01-01T00:00:00Z')") ?? '',
      /invalid timestamp argument/,
    );
    assert.match(onCreate("duration('1d') > duration('1s')") ?? '', /invalid duration argument/);
    assert.match(onCreate("duration('1d') > duration('1s')", 28) ?? '', /invalid duration argument/);
    assert.match(onCreate("duration('1d') > duration('1s')", 30) ?? '', /invalid duration argument/);
    assert.equal(
      onCreate("duration('1h') > duration('1s') && timestamp('2000-01-01T00:00:00Z') > timestamp(0)"),
      undefined,
    );
  });

  it("point at the literal, as cel-go's validators, and refuse seconds outside the years 1 to 9999", () => {
    assert.match(
      onCreate("duration('1us') < duration('1nns')") ?? '',
      /compilation failed: ERROR: <input>:1:28: invalid duration argument/,
    );
    assert.match(onCreate("timestamp('1000-00-00T00:00:00Z')") ?? '', /<input>:1:11: invalid timestamp argument/);
    assert.match(onCreate('timestamp(-62135596801)') ?? '', /<input>:1:11: invalid timestamp argument/);
    assert.match(onCreate('timestamp(253402300800)') ?? '', /invalid timestamp argument/);
    assert.equal(onCreate('timestamp(-62135596800) < timestamp(253402300799)'), undefined);
  });
});
