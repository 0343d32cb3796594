// The validator of ValidatingAdmissionPolicy (apiserver admission/plugin/policy/validating
// validator_test.go, TestValidate), restated: each case gives the evaluations of the validations,
// of their messageExpressions and of the audit annotations, and the decisions the validator makes
// of them; the cases that stop a filter (an error, the budget) run real expressions.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  compileValidatingPolicy,
  decideAuditAnnotations,
  decideValidations,
  validate,
} from '../../../../lib/policies/validating/validator.ts';
import type { Evaluation } from '../../../../lib/policies/generic/composition.ts';
import type { Validation } from '../../../../lib/policies/validating/types.ts';
import type { AdmissionRequest } from '../../../../lib/review/schemas.ts';

const T: Evaluation = { value: true };
const F: Evaluation = { value: false };
const E: Evaluation = { error: '' };
const v = (expression = '', extra: Partial<Validation> = {}): Validation => ({ expression, ...extra });
const expr = 'this.expression == unit.test';

interface Row {
  name: string;
  failurePolicy?: 'Fail' | 'Ignore';
  validations: Validation[];
  evaluations: Evaluation[];
  messages?: Evaluation[];
  /** Expected: action, and the message (contained) and reason where the Go case checks them. */
  want: Array<{ action: 'admit' | 'deny'; message?: string; reason?: string }>;
}

const rows: Row[] = [
  { name: 'test pass', validations: [v()], evaluations: [T], want: [{ action: 'admit' }] },
  {
    name: 'test multiple pass',
    validations: [v(), v()],
    evaluations: [T, T],
    want: [{ action: 'admit' }, { action: 'admit' }],
  },
  {
    name: 'test error with failurepolicy ignore',
    failurePolicy: 'Ignore',
    validations: [v()],
    evaluations: [E],
    want: [{ action: 'admit' }],
  },
  { name: 'test error with failurepolicy nil', validations: [v()], evaluations: [E], want: [{ action: 'deny' }] },
  {
    name: 'test fail with failurepolicy fail',
    failurePolicy: 'Fail',
    validations: [v()],
    evaluations: [E],
    want: [{ action: 'deny' }],
  },
  {
    name: 'test fail with failurepolicy ignore with multiple validations',
    failurePolicy: 'Ignore',
    validations: [v(), v()],
    evaluations: [T, E],
    want: [{ action: 'admit' }, { action: 'admit' }],
  },
  {
    name: 'test fail with failurepolicy nil with multiple validations',
    validations: [v(), v()],
    evaluations: [T, E],
    want: [{ action: 'admit' }, { action: 'deny' }],
  },
  {
    name: 'test fail with failurepolicy fail with multiple validations',
    failurePolicy: 'Fail',
    validations: [v(), v()],
    evaluations: [T, E],
    want: [{ action: 'admit' }, { action: 'deny' }],
  },
  {
    name: 'test fail with failurepolicy nil with multiple failed validations',
    validations: [v(), v()],
    evaluations: [E, E],
    want: [{ action: 'deny' }, { action: 'deny' }],
  },
  {
    name: 'test fail with failurepolicy fail with multiple failed validations',
    failurePolicy: 'Fail',
    validations: [v(), v()],
    evaluations: [E, E],
    want: [{ action: 'deny' }, { action: 'deny' }],
  },
  {
    name: 'test fail with failurepolicy ignore with multiple failed validations',
    failurePolicy: 'Ignore',
    validations: [v(), v()],
    evaluations: [E, E],
    want: [{ action: 'admit' }, { action: 'admit' }],
  },
  {
    name: 'test reason for fail no reason set',
    validations: [v(expr)],
    evaluations: [F],
    want: [{ action: 'deny', reason: 'Invalid', message: `failed expression: ${expr}` }],
  },
  {
    name: 'test reason for fail reason set',
    validations: [v(expr, { reason: 'Forbidden' })],
    evaluations: [F],
    want: [{ action: 'deny', reason: 'Forbidden', message: `failed expression: ${expr}` }],
  },
  {
    name: 'test reason for failed validations multiple validations',
    validations: [v(expr, { reason: 'Forbidden' }), v('this.expression.2 == unit.test.2', { reason: 'Unauthorized' })],
    evaluations: [F, F],
    want: [
      { action: 'deny', reason: 'Forbidden', message: `failed expression: ${expr}` },
      { action: 'deny', reason: 'Unauthorized', message: 'failed expression: this.expression.2 == unit.test.2' },
    ],
  },
  {
    name: 'test message for failed validations',
    validations: [v(expr, { reason: 'Forbidden', message: 'test' })],
    evaluations: [F],
    want: [{ action: 'deny', reason: 'Forbidden', message: 'test' }],
  },
  {
    name: 'test message for failed validations multiple validations',
    validations: [
      v(expr, { reason: 'Forbidden', message: 'test1' }),
      v(expr, { reason: 'Forbidden', message: 'test2' }),
    ],
    evaluations: [F, F],
    want: [
      { action: 'deny', reason: 'Forbidden', message: 'test1' },
      { action: 'deny', reason: 'Forbidden', message: 'test2' },
    ],
  },
  {
    name: 'messageExpression successful, empty message',
    validations: [v(expr, { reason: 'Forbidden' })],
    evaluations: [F],
    messages: [{ value: 'evaluated message' }],
    want: [{ action: 'deny', reason: 'Forbidden', message: 'evaluated message' }],
  },
  {
    name: 'messageExpression for multiple validations',
    validations: [
      v(expr, { reason: 'Forbidden', message: 'I am not overwritten' }),
      v(expr, { reason: 'Forbidden', message: 'I am overwritten' }),
    ],
    evaluations: [F, F],
    messages: [{ placeholder: true }, { value: 'evaluated message' }],
    want: [
      { action: 'deny', reason: 'Forbidden', message: 'I am not overwritten' },
      { action: 'deny', reason: 'Forbidden', message: 'evaluated message' },
    ],
  },
  {
    name: 'messageExpression successful, overwritten message',
    validations: [v(expr, { reason: 'Forbidden', message: 'I am overwritten' })],
    evaluations: [F],
    messages: [{ value: 'evaluated message' }],
    want: [{ action: 'deny', reason: 'Forbidden', message: 'evaluated message' }],
  },
  {
    name: 'messageExpression user failure',
    validations: [v(expr, { reason: 'Forbidden', message: 'test1' })],
    evaluations: [F],
    messages: [{ error: 'invalid' }],
    want: [{ action: 'deny', reason: 'Forbidden', message: 'test1' }],
  },
  {
    name: 'messageExpression eval to empty',
    validations: [v(expr, { reason: 'Forbidden', message: 'test1' })],
    evaluations: [F],
    messages: [{ value: ' ' }],
    want: [{ action: 'deny', reason: 'Forbidden', message: 'test1' }],
  },
  {
    name: 'messageExpression eval to multi-line',
    validations: [v(expr, { reason: 'Forbidden', message: 'test1' })],
    evaluations: [F],
    messages: [{ value: 'hello\nthere' }],
    want: [{ action: 'deny', reason: 'Forbidden', message: 'test1' }],
  },
  {
    name: 'messageExpression eval result too long',
    validations: [v(expr, { reason: 'Forbidden', message: 'test1' })],
    evaluations: [F],
    messages: [{ value: 'x'.repeat(5 * 1024 + 1) }],
    want: [{ action: 'deny', reason: 'Forbidden', message: 'test1' }],
  },
  {
    name: 'messageExpression eval to null',
    validations: [v(expr, { reason: 'Forbidden', message: 'test1' })],
    evaluations: [F],
    messages: [{ value: null }],
    want: [{ action: 'deny', reason: 'Forbidden', message: 'test1' }],
  },
];

describe('validator_test.go TestValidate: decisions from evaluations', () => {
  for (const row of rows) {
    it(row.name, () => {
      const messages = { evaluations: row.messages ?? row.evaluations.map(() => ({ placeholder: true })) };
      const got = decideValidations(row.validations, row.evaluations, messages, row.failurePolicy ?? 'Fail');
      assert.equal(got.length, row.want.length);
      for (const [i, want] of row.want.entries()) {
        assert.equal(got[i]!.action, want.action, `decision ${i}`);
        if (want.message !== undefined) assert.ok(got[i]!.message.includes(want.message), got[i]!.message);
        assert.equal(got[i]!.reason, want.reason);
      }
    });
  }

  it('messageExpression out of budget after successful eval of expression: the error by failurePolicy', () => {
    const got = decideValidations(
      [v(expr, { message: 'test1' })],
      [F],
      { error: 'validation failed due to running out of cost budget, no further validation rules will be run' },
      'Fail',
    );
    assert.equal(got[0]!.action, 'deny');
    assert.equal(got[0]!.evaluation, 'error');
    assert.match(got[0]!.message, /^failed messageExpression: .*running out of cost budget/);
  });
});

describe('validator_test.go TestValidate: audit annotations', () => {
  const a = (valueExpression: string) => ({ key: 'k', valueExpression });
  it('test empty validations with non-empty audit annotations', () => {
    assert.deepEqual(decideAuditAnnotations([a("'string value'")], [{ value: 'string value' }], 'Fail'), [
      { key: 'k', action: 'publish', value: 'string value' },
    ]);
  });
  it('test non-empty validations with non-empty audit annotations', () => {
    const decisions = decideValidations(
      [v(expr, { message: 'test1', reason: 'Forbidden' })],
      [T],
      { evaluations: [] },
      'Fail',
    );
    assert.deepEqual(
      decisions.map((d) => d.action),
      ['admit'],
    );
    assert.deepEqual(decideAuditAnnotations([a("'string value'")], [{ value: 'string value' }], 'Fail'), [
      { key: 'k', action: 'publish', value: 'string value' },
    ]);
  });
  it('test audit annotations with null return', () => {
    const got = decideAuditAnnotations(
      [a('null'), a("'string value'")],
      [{ value: null }, { value: 'string value' }],
      'Fail',
    );
    assert.deepEqual(
      got.map((g) => g.action),
      ['exclude', 'publish'],
    );
  });
  const bad = "valueExpression ''this is not valid CEL' resulted in error: <nil>";
  it('test audit annotations with failPolicy=fail', () => {
    assert.deepEqual(decideAuditAnnotations([a("'this is not valid CEL")], [{ error: bad }], 'Fail'), [
      { key: 'k', action: 'error', error: bad },
    ]);
  });
  it('test audit annotations with failPolicy=ignore', () => {
    assert.deepEqual(decideAuditAnnotations([a("'this is not valid CEL")], [{ error: bad }], 'Ignore'), [
      { key: 'k', action: 'exclude', error: bad },
    ]);
  });
  it('an int value is an unsupported return type', () => {
    const [got] = decideAuditAnnotations([a('1')], [{ value: 1n }], 'Fail');
    assert.equal(
      got!.error,
      "valueExpression '1' resulted in unsupported return type: int. Return type must be either string or null.",
    );
  });
});

const request = (object: Record<string, unknown>): AdmissionRequest =>
  ({
    uid: 'u',
    kind: { group: 'apps', version: 'v1', kind: 'Deployment' },
    resource: { group: 'apps', version: 'v1', resource: 'deployments' },
    name: 'web',
    namespace: 'default',
    operation: 'CREATE',
    userInfo: { username: 'alice' },
    object,
  }) as AdmissionRequest;
const matched = {
  kind: { group: 'apps', version: 'v1', kind: 'Deployment' },
  resource: { group: 'apps', version: 'v1', resource: 'deployments' },
};
const run = (
  spec: Parameters<typeof compileValidatingPolicy>[0],
  object: Record<string, unknown> = { spec: { replicas: 3 } },
) => validate(compileValidatingPolicy(spec), { request: request(object), matched });

describe('validator_test.go TestValidate: with real expressions', () => {
  it('no match suppresses failure (a false matchCondition)', () => {
    const got = run({
      name: 'p',
      matchConditions: [{ name: 'never', expression: 'false' }],
      validations: [{ expression: '1/0 == 1' }],
    });
    assert.deepEqual(got.decisions, []);
  });
  it('match error => presumed match: a matchCondition that errs under Fail is a deny decision', () => {
    const got = run({
      name: 'p',
      matchConditions: [{ name: 'e', expression: 'object.nope == 1' }],
      validations: [{ expression: 'true' }],
    });
    assert.equal(got.decisions.length, 1);
    assert.equal(got.decisions[0]!.action, 'deny');
    assert.match(got.decisions[0]!.message, /^expression 'object.nope == 1' resulted in error: no such key: nope$/);
  });
  it('a validation that errs is worded as the filter words it', () => {
    const got = run({ name: 'p', validations: [{ expression: 'object.spec.nope > 1' }] });
    assert.equal(got.decisions[0]!.message, "expression 'object.spec.nope > 1' resulted in error: no such key: nope");
  });
  it('messageExpression is evaluated and wins over message', () => {
    const got = run({
      name: 'p',
      validations: [
        {
          expression: 'object.spec.replicas < 2',
          message: 'm',
          messageExpression: "'replicas: ' + string(object.spec.replicas)",
        },
      ],
    });
    assert.deepEqual(got.decisions[0], {
      action: 'deny',
      evaluation: 'deny',
      reason: 'Invalid',
      message: 'replicas: 3',
    });
  });
  it('a variable that reads the authorizer works in validations and fails in messageExpressions', () => {
    // The message filter's activation has no authorizer (validator.go: expressionOptionalVars).
    const got = run({
      name: 'p',
      variables: [{ name: 'can', expression: "authorizer.group('').resource('pods').check('get').allowed()" }],
      validations: [
        { expression: '!variables.can', message: 'fallback', messageExpression: "variables.can ? 'can' : 'cannot'" },
      ],
    });
    // No opinion: not allowed, so the validation passes; with the message's own, it denies with the fallback.
    assert.deepEqual(got.decisions, [{ action: 'admit', evaluation: 'admit', message: '' }]);
    const denied = run({
      name: 'p',
      variables: [{ name: 'can', expression: "authorizer.group('').resource('pods').check('get').allowed()" }],
      validations: [
        { expression: 'variables.can', message: 'fallback', messageExpression: "variables.can ? 'can' : 'cannot'" },
      ],
    });
    assert.deepEqual(denied.decisions, [
      { action: 'deny', evaluation: 'deny', reason: 'Invalid', message: 'fallback' },
    ]);
  });
  it('the request carries the matched kind and resource and its own members', () => {
    const got = run({
      name: 'p',
      validations: [
        {
          expression: 'false',
          messageExpression: "request.kind.kind + '/' + request.resource.resource + '/' + request.name",
        },
      ],
    });
    assert.equal(got.decisions[0]!.message, 'Deployment/deployments/web');
  });
  it('test filter error: the runtime budget stops the validations, one error decision', () => {
    const spec = { name: 'p', validations: [{ expression: 'object.spec.replicas > 1' }] };
    const got = validate(compileValidatingPolicy(spec), { request: request({ spec: { replicas: 3 } }), matched }, 2);
    assert.deepEqual(got.decisions, [
      {
        action: 'deny',
        evaluation: 'error',
        message: 'validation failed due to running out of cost budget, no further validation rules will be run',
      },
    ]);
  });
  it('messageExpression out of budget after successful eval of expression (costBudget shared)', () => {
    const spec = {
      name: 'p',
      validations: [
        {
          expression: 'object.spec.replicas < 2',
          message: 'test1',
          messageExpression: "'n: ' + string(object.spec.replicas)",
        },
      ],
    };
    const compiled = compileValidatingPolicy(spec);
    const input = { request: request({ spec: { replicas: 3 } }), matched };
    assert.equal(validate(compiled, input, 100).decisions[0]!.message, 'n: 3');
    const got = validate(compiled, input, 4).decisions[0]!;
    assert.equal(got.evaluation, 'error');
    assert.match(got.message, /^failed messageExpression: validation failed due to running out of cost budget/);
  });
  it('test filter error multiple evaluations: one error decision for all of them', () => {
    const spec = {
      name: 'p',
      validations: [
        { expression: 'object.spec.replicas > 5', message: 'test1', reason: 'Forbidden' as const },
        { expression: 'object.spec.replicas > 6', message: 'test2', reason: 'Forbidden' as const },
      ],
    };
    const got = validate(compileValidatingPolicy(spec), { request: request({ spec: { replicas: 3 } }), matched }, 5);
    assert.equal(got.decisions.length, 1);
    assert.equal(got.decisions[0]!.action, 'deny');
    assert.equal(got.decisions[0]!.reason, undefined);
  });
  it('a validation that does not compile: compilation error, with the compiler words once', () => {
    const got = run({ name: 'p', validations: [{ expression: 'object.spec.replicas >' }] });
    assert.match(
      got.decisions[0]!.message,
      /^compilation error: compilation failed: ERROR: <input>:1:23: Syntax error/,
    );
  });
  it('a validation past the per-call limit fails alone', () => {
    const heavy =
      'size([1,2,3,4,5,6,7,8,9,10].map(a, [1,2,3,4,5,6,7,8,9,10].map(b, [1,2,3,4,5,6,7,8,9,10].map(c, [1,2,3,4,5,6,7,8,9,10].map(d, [1,2,3,4,5,6,7,8,9,10].map(e, [1,2,3,4,5,6,7,8,9,10].map(f, "x"))))))) == 0';
    const got = run({ name: 'p', validations: [{ expression: heavy }, { expression: 'true' }] });
    assert.equal(
      got.decisions[0]!.message,
      `expression '${heavy}' resulted in error: operation cancelled: actual cost limit exceeded`,
    );
    assert.equal(got.decisions[1]!.action, 'admit');
  });
});
