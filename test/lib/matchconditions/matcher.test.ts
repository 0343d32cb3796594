import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  allow,
  defineMutatingWebhook,
  defineValidatingWebhook,
  type AdmissionWebhook,
  type KubeObject,
  type MatchCondition,
} from '../../../lib/index.ts';
import {
  checkMatchConditions,
  compileExpression,
  isCompileError,
  type Authorize,
  type AuthorizationAttributes,
} from '../../../lib/matchconditions/index.ts';
import {
  createMatcher,
  decideMatch,
  evaluationError,
  type ConditionEvaluation,
  type MatchOutcome,
} from '../../../lib/matchconditions/matcher.ts';
import { MATCH_CONDITIONS_COST_BUDGET, PER_CALL_COST_LIMIT } from '../../../packages/kube-cel/src/compile.ts';
import { variablesFor } from '../../../lib/matchconditions/variables.ts';
import { REGEX_CACHE_SIZE, regexCacheSize } from '../../../packages/kube-cel/src/libraries/regex.ts';
import { parseQuantity } from '../../../packages/kube-cel/src/libraries/quantity-parse.ts';
import { qualifiedNameProblem } from '../../../lib/matchconditions/rules.ts';
import { admissionReview, invoke, runAdmissionChain } from '../../../lib/testing/index.ts';

const podRules = [{ operations: ['CREATE' as const], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'] }];

function pod(name: string, namespace: string, extra: Record<string, unknown> = {}): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace },
    spec: { containers: [{ name: 'app', image: 'app:1' }] },
    ...extra,
  } as KubeObject;
}

/** Evaluates one expression against a pod CREATE; `value` or the error message. */
function run(expression: string, object: KubeObject | null = pod('web', 'default'), authorize?: Authorize): unknown {
  const compiled = compileExpression(expression);
  if (isCompileError(compiled)) throw new Error(compiled.message);
  const review = admissionReview(object, {
    namespace: 'default',
    userInfo: { username: 'alice', groups: ['dev', 'system:authenticated'] },
  });
  return compiled.run(variablesFor(review.request, authorize));
}

/** The API server's MatchResult, as matcher_test.go reads it. */
function matchResult(outcome: MatchOutcome): { matches: boolean; failedConditionName: string; error?: string } {
  if (!('matched' in outcome)) return { matches: false, failedConditionName: '', error: outcome.error };
  if (outcome.matched) return { matches: true, failedConditionName: '' };
  return { matches: false, failedConditionName: 'error' in outcome ? '' : outcome.name };
}

// Ported from kubernetes staging/src/k8s.io/apiserver/pkg/admission/plugin/webhook/matchconditions/matcher_test.go (TestMatch).
describe('matchConditions decision (matcher_test.go TestMatch)', () => {
  const T = (name = ''): ConditionEvaluation => ({ name, value: true });
  const F = (name = ''): ConditionEvaluation => ({ name, value: false });
  const E = (name = ''): ConditionEvaluation => ({ name, error: 'test error' });
  const cases: Array<{
    name: string;
    evaluations: ConditionEvaluation[];
    throwError?: boolean;
    failPolicy?: 'Fail' | 'Ignore';
    shouldMatch: boolean;
    returnedName?: string;
    expectError?: string;
  }> = [
    { name: 'test single matches', evaluations: [T()], shouldMatch: true },
    { name: 'test multiple match', evaluations: [T(), T()], shouldMatch: true },
    { name: 'test empty evals', evaluations: [], shouldMatch: true },
    { name: 'test single no match', evaluations: [F('test1')], shouldMatch: false, returnedName: 'test1' },
    {
      name: 'test multiple no match',
      evaluations: [F('test1'), F('test2')],
      shouldMatch: false,
      returnedName: 'test1',
    },
    {
      name: 'test mixed with no match first',
      evaluations: [F('test1'), T('test2')],
      shouldMatch: false,
      returnedName: 'test1',
    },
    {
      name: 'test mixed with no match last',
      evaluations: [T('test2'), F('test1')],
      shouldMatch: false,
      returnedName: 'test1',
    },
    {
      name: 'test mixed with no match middle',
      evaluations: [T('test2'), F('test1'), T('test2')],
      shouldMatch: false,
      returnedName: 'test1',
    },
    {
      name: 'test error, no fail policy',
      evaluations: [T()],
      throwError: true,
      shouldMatch: true,
      expectError: 'test error',
    },
    {
      name: 'test error, fail policy fail',
      evaluations: [T()],
      throwError: true,
      failPolicy: 'Fail',
      shouldMatch: true,
      expectError: 'test error',
    },
    {
      name: 'test error, fail policy ignore',
      evaluations: [T()],
      throwError: true,
      failPolicy: 'Ignore',
      shouldMatch: false,
    },
    { name: 'test mix of true, errors and false', evaluations: [T(), E(), F(), T(), E()], shouldMatch: false },
    {
      name: 'test mix of true, errors and fail policy not set',
      evaluations: [T(), E(), T(), E()],
      shouldMatch: false,
      expectError: 'test error',
    },
    {
      name: 'test mix of true, errors and fail policy fail',
      evaluations: [T(), E(), T(), E()],
      failPolicy: 'Fail',
      shouldMatch: false,
      expectError: 'test error',
    },
    {
      name: 'test mix of true, errors and fail policy ignore',
      evaluations: [T(), E(), T(), E()],
      failPolicy: 'Ignore',
      shouldMatch: false,
    },
  ];
  for (const tc of cases) {
    it(tc.name, () => {
      const result = matchResult(
        decideMatch(tc.throwError ? { failure: 'test error' } : tc.evaluations, tc.failPolicy),
      );
      if (result.error !== undefined) {
        assert.ok(tc.expectError, `unexpected error ${result.error}`);
        assert.ok(
          result.error.includes(tc.expectError),
          `expected error containing ${tc.expectError}, got ${result.error}`,
        );
        return;
      }
      assert.equal(tc.expectError, undefined, 'expected an error but got none');
      assert.equal(result.matches, tc.shouldMatch);
      assert.equal(result.failedConditionName, tc.returnedName ?? '');
    });
  }

  it("words errors as the API server: per expression, aggregated as apimachinery's errors", () => {
    const failed = (expression: string, error: string): ConditionEvaluation => ({
      name: 'n',
      error: evaluationError(expression, error),
    });
    assert.deepEqual(decideMatch([failed('object.a == 1', 'no such key: a')]), {
      error: "expression 'object.a == 1' resulted in error: no such key: a",
      name: 'n',
    });
    // Distinct errors in brackets, a repeated one once.
    const errors = [failed('a', 'e1'), T(), failed('b', 'e2'), failed('a', 'e1')];
    assert.equal(
      (decideMatch(errors) as { error: string }).error,
      "[expression 'a' resulted in error: e1, expression 'b' resulted in error: e2]",
    );
    const broken = { name: 'n', error: 'compilation error: compilation failed: ERROR: <input>:1:5: …' };
    assert.equal(
      (decideMatch([broken]) as { error: string }).error,
      'compilation error: compilation failed: ERROR: <input>:1:5: …',
    );
  });

  it('a matcher words a condition that fails to evaluate by its expression', () => {
    const matcher = createMatcher([
      { name: 'a', expression: 'object.x == 1' },
      { name: 'b', expression: "object.metadata.name == 'web'" },
    ]);
    const outcome = matcher.evaluate(admissionReview(pod('web', 'default')).request);
    assert.deepEqual(outcome, { error: "expression 'object.x == 1' resulted in error: no such key: x", name: 'a' });
  });

  it('a non-bool value is an error, not a false', () => {
    assert.deepEqual(
      matchResult(decideMatch([{ name: 'a', value: 'yes' }], 'Fail')).error,
      'matchCondition "a": expected bool, got string',
    );
  });
});

// Ported from kubernetes test/integration/apiserver/admissionwebhook/match_conditions_test.go (TestMatchConditions):
// which of the pods reach the webhook, for a validating and a mutating configuration alike.
describe('matchConditions through the test kit (match_conditions_test.go TestMatchConditions)', () => {
  const nonExistent = "object.nonExistentProperty == 'someval'";
  const trueAndErrors = (first: string): MatchCondition[] => [
    { name: first, expression: nonExistent },
    { name: 'test2', expression: 'true' },
    { name: 'test4', expression: 'true' },
    { name: 'test5', expression: nonExistent },
  ];
  const cases: Array<{
    name: string;
    conditions: MatchCondition[];
    pods: Array<[string, string]>;
    matched: Array<[string, string]>;
    expectErrorPod?: boolean;
    failPolicy?: 'Fail' | 'Ignore';
  }> = [
    {
      name: 'pods in namespace kube-system is ignored',
      conditions: [
        { name: 'pods-in-kube-system-exempt.kubernetes.io', expression: "object.metadata.namespace != 'kube-system'" },
      ],
      pods: [
        ['test1', 'kube-system'],
        ['test2', 'default'],
      ],
      matched: [['test2', 'default']],
    },
    {
      name: 'matchConditions are ANDed together',
      conditions: [
        { name: 'pods-in-kube-system-exempt.kubernetes.io', expression: "object.metadata.namespace != 'kube-system'" },
        { name: 'pods-with-name-test1.kubernetes.io', expression: "object.metadata.name == 'test1'" },
      ],
      pods: [
        ['test1', 'kube-system'],
        ['test1', 'default'],
        ['test2', 'default'],
      ],
      matched: [['test1', 'default']],
    },
    {
      name: 'mix of true, error and false should not match and not call webhook',
      conditions: [
        { name: 'test1', expression: nonExistent },
        { name: 'test2', expression: 'true' },
        { name: 'test3', expression: 'false' },
        { name: 'test4', expression: 'true' },
        { name: 'test5', expression: nonExistent },
      ],
      pods: [
        ['test1', 'kube-system'],
        ['test2', 'default'],
      ],
      matched: [],
    },
    {
      name: 'mix of true and error should reject request without fail policy',
      conditions: trueAndErrors('test1'),
      pods: [
        ['test1', 'kube-system'],
        ['test2', 'default'],
      ],
      matched: [],
      expectErrorPod: true,
    },
    {
      name: 'mix of true and error should reject request with fail policy fail',
      conditions: trueAndErrors('test1'),
      pods: [
        ['test1', 'kube-system'],
        ['test2', 'default'],
      ],
      matched: [],
      failPolicy: 'Fail',
      expectErrorPod: true,
    },
    {
      name: 'mix of true and error should match request and call webhook with fail policy ignore',
      conditions: trueAndErrors('tes1'),
      pods: [
        ['test1', 'kube-system'],
        ['test2', 'default'],
      ],
      matched: [],
      failPolicy: 'Ignore',
    },
    {
      name: 'has access to oldObject',
      conditions: [{ name: 'old-object-is-null.kubernetes.io', expression: 'oldObject == null' }],
      pods: [['test2', 'default']],
      matched: [['test2', 'default']],
    },
  ];
  for (const tc of cases) {
    for (const type of ['validating', 'mutating'] as const) {
      it(`${tc.name} (${type})`, async () => {
        const calls: Array<[string, string]> = [];
        const record = (request: { name?: string; namespace?: string }) =>
          void calls.push([request.name ?? '', request.namespace ?? '']);
        // The v1 API's default failurePolicy is Fail for both kinds.
        const common = {
          name: 'admission-test',
          rules: podRules,
          matchConditions: tc.conditions,
          failurePolicy: tc.failPolicy ?? 'Fail',
          namespaceSelector: {},
        };
        const webhook: AdmissionWebhook =
          type === 'validating'
            ? defineValidatingWebhook({ ...common, validate: (request) => (record(request), allow()) })
            : defineMutatingWebhook({ ...common, mutate: (_object, request) => void record(request) });
        for (const [name, namespace] of tc.pods) {
          const result = await runAdmissionChain(pod(name, namespace), [webhook], { namespace, name });
          assert.equal(result.allowed, !tc.expectErrorPod, `pod ${namespace}/${name}: ${result.message}`);
          if (tc.expectErrorPod)
            assert.match(
              result.message!,
              // Both failing conditions say the same: the aggregate says it once.
              /^pods "test\d" is forbidden: expression 'object\.nonExistentProperty == 'someval'' resulted in error: no such key: nonExistentProperty$/,
            );
        }
        assert.deepEqual(calls, tc.matched);
      });
    }
  }
});

// Ported from kubernetes test/integration/apiserver/admissionwebhook/match_conditions_test.go (TestMatchConditions_validation),
// and the rules of pkg/apis/admissionregistration/validation/validation.go (validateMatchConditions).
describe('checkMatchConditions (what the API server rejects)', () => {
  const repeated = (n: number) => Array.from({ length: n }, (_, i) => ({ name: `test${i}`, expression: 'true' }));
  const cases: Array<[string, unknown[], string[]]> = [
    ['valid match condition', [{ name: 'true', expression: 'true' }], []],
    [
      'multiple valid match conditions',
      [
        {
          name: 'exclude-leases',
          expression: "!(request.resource.group == 'coordination.k8s.io' && request.resource.resource == 'leases')",
        },
        { name: 'exclude-kubelet-requests', expression: "!('system:nodes' in request.userInfo.groups)" },
        {
          name: 'breakglass',
          expression:
            "!authorizer.group('admissionregistration.k8s.io').resource('validatingwebhookconfigurations').name('my-webhook.example.com').check('breakglass').allowed()",
        },
      ],
      [],
    ],
    [
      'invalid field should error',
      [{ name: 'old-object-is-null.kubernetes.io', expression: 'imnotafield == null' }],
      ['match-conditions-compile'],
    ],
    [
      'missing expression should error',
      [{ name: 'old-object-is-null.kubernetes.io' }],
      ['match-conditions-expression'],
    ],
    ['missing name should error', [{ expression: 'oldObject == null' }], ['match-conditions-name']],
    ['empty name should error', [{ name: '', expression: 'oldObject == null' }], ['match-conditions-name']],
    [
      'empty expression should error',
      [{ name: 'test-empty-expression.kubernetes.io', expression: '' }],
      ['match-conditions-expression'],
    ],
    ['blank expression should error', [{ name: 'blank', expression: '  \n ' }], ['match-conditions-expression']],
    [
      'duplicate name should error',
      [
        { name: 'test1', expression: 'oldObject == null' },
        { name: 'test1', expression: 'oldObject == null' },
      ],
      ['match-conditions-duplicate'],
    ],
    ['name must be qualified name', [{ name: ' test1', expression: 'oldObject == null' }], ['match-conditions-name']],
    ['less than 65 match conditions should pass', repeated(64), []],
    ['more than 64 match conditions should error', repeated(65), ['match-conditions-count']],
    [
      'a non-boolean result should error',
      [{ name: 'name', expression: 'object.metadata.name' }],
      ['match-conditions-type'],
    ],
    ['a string result should error', [{ name: 'op', expression: 'request.operation' }], ['match-conditions-type']],
    [
      'an unknown request field should error',
      [{ name: 'f', expression: "request.nope == ''" }],
      ['match-conditions-compile'],
    ],
    [
      'a type error should error',
      [{ name: 'f', expression: "request.operation + 1 == ''" }],
      ['match-conditions-compile'],
    ],
  ];
  for (const [name, conditions, rules] of cases) {
    it(name, () =>
      assert.deepEqual(
        checkMatchConditions(conditions).map((p) => p.rule),
        rules,
      ),
    );
  }

  it('a compile error names the expression and the position', () => {
    const [problem] = checkMatchConditions([{ name: 'broken', expression: "object.metadata.name == 'a' &&" }]);
    assert.equal(problem!.rule, 'match-conditions-compile');
    assert.match(
      problem!.message,
      /^matchCondition "broken": "object\.metadata\.name == 'a' &&": compilation failed: ERROR: <input>:1:\d+: /,
    );
    assert.match(problem!.message, /\n \| object\.metadata\.name == 'a' &&\n \| \.{30}\^$/);
  });

  it('checks names as qualified names', () => {
    assert.equal(qualifiedNameProblem('example.com/my-condition'), undefined);
    assert.equal(qualifiedNameProblem('a_b.c-d'), undefined);
    assert.match(qualifiedNameProblem('Example.com/x')!, /prefix part/);
    assert.match(qualifiedNameProblem('a/b/c')!, /qualified name/);
    assert.match(qualifiedNameProblem('x'.repeat(64))!, /63/);
    assert.match(qualifiedNameProblem('/x')!, /prefix part must be non-empty/);
    assert.match(qualifiedNameProblem('x/')!, /name part must be non-empty/);
  });

  it('rejects a matchConditions that is not a list', () => {
    assert.deepEqual(
      checkMatchConditions({}).map((p) => p.rule),
      ['match-conditions-type'],
    );
    assert.deepEqual(checkMatchConditions(undefined), []);
  });
});

describe('the matchConditions CEL environment', () => {
  const cases: Array<[string, unknown]> = [
    // Variables and macros.
    ["object.metadata.name == 'web' && request.operation == 'CREATE'", true],
    ['oldObject == null', true],
    ["request.kind.kind == 'Pod' && request.resource.resource == 'pods' && request.namespace == 'default'", true],
    ["request.userInfo.username == 'alice' && 'dev' in request.userInfo.groups", true],
    ['request.dryRun == false', true],
    ['has(object.metadata.labels)', false],
    ["has(object.spec.containers) && object.spec.containers.all(c, c.image.endsWith(':1'))", true],
    ["object.spec.containers.exists(c, c.name == 'app')", true],
    ["object.spec.containers.exists_one(c, c.name == 'app')", true],
    ['object.spec.containers.map(c, c.name)', ['app']],
    ["object.spec.containers.filter(c, c.name != 'app').size() == 0", true],
    ["object.metadata.?labels.app.orValue('none')", 'none'],
    // JSON numbers are ints, as the API server decodes them.
    ['object.spec.replicas + 1', 4n],
    ['object.spec.ratio * 2.0', 1.0],
    // Lists library.
    ['[1, 2, 3].isSorted() && ![3, 1].isSorted()', true],
    ['[1, 2, 3].sum()', 6n],
    ['[1.5, 2.5].sum()', 4],
    ['[3, 1, 2].min()', 1n],
    ["['b', 'c', 'a'].max()", 'c'],
    ['[1, 2, 1].indexOf(1)', 0n],
    ['[1, 2, 1].lastIndexOf(1)', 2n],
    ['[1, 2, 3].indexOf(9)', -1n],
    ['[1, 2, 3, 4].slice(1, 3)', [2n, 3n]],
    // Strings extension.
    ["'Hello'.lowerAscii() + 'x'.upperAscii()", 'helloX'],
    ["'a,b,c'.split(',')", ['a', 'b', 'c']],
    ["['a', 'b'].join('-')", 'a-b'],
    ["'a-b-c'.replace('-', '+')", 'a+b+c'],
    ["'a-b-c'.replace('-', '+', 1)", 'a+b-c'],
    ["'  x '.trim()", 'x'],
    ["'kubernetes'.substring(4, 7)", 'rne'],
    ["'kubernetes'.charAt(1)", 'u'],
    ["'kubernetes'.indexOf('e')", 3n],
    ["'kubernetes'.lastIndexOf('e')", 8n],
    // Regex library.
    ["'registry.io/app:1.2'.find('[0-9]+\\\\.[0-9]+')", '1.2'],
    ["'a1b22c333'.findAll('[0-9]+')", ['1', '22', '333']],
    ["'a1b22c333'.findAll('[0-9]+', 2)", ['1', '22']],
    ["'none'.find('[0-9]')", ''],
    ["'image:latest'.matches(':latest$')", true],
    ["matches('image:latest', 'latest')", true],
    // Quantity library.
    ["quantity('1Gi') == quantity('1024Mi')", true],
    ["quantity('500m').isLessThan(quantity('1'))", true],
    ["quantity('2').isGreaterThan(quantity('1500m'))", true],
    ["quantity('1k').compareTo(quantity('1000'))", 0n],
    ["quantity('1.5').isInteger()", false],
    ["quantity('2Ki').asInteger()", 2048n],
    ["quantity('1500m').asApproximateFloat()", 1.5],
    ["quantity('1').add(quantity('500m')) == quantity('1.5')", true],
    ["quantity('1').add(2).sub(1) == quantity('2')", true],
    ["sign(quantity('1').sub(quantity('3')))", -1n],
    ["isQuantity('250Mi') && isQuantity('1e3') && !isQuantity('ten')", true],
  ];
  const object = pod('web', 'default', {
    spec: { containers: [{ name: 'app', image: 'app:1' }], replicas: 3, ratio: 0.5 },
  });
  for (const [expression, expected] of cases) {
    it(expression, () => assert.deepEqual(run(expression, object), expected));
  }

  it('the authorizer checks as the requesting user', () => {
    const asked: AuthorizationAttributes[] = [];
    const authorize: Authorize = (a) => {
      asked.push(a);
      return a.verb === 'breakglass' ? { decision: 'Allow', reason: 'on call' } : { decision: 'Deny', reason: 'no' };
    };
    assert.equal(
      run(
        "authorizer.group('admissionregistration.k8s.io').resource('validatingwebhookconfigurations').name('w').check('breakglass').allowed()",
        undefined,
        authorize,
      ),
      true,
    );
    assert.deepEqual(asked[0], {
      user: { username: 'alice', uid: '', groups: ['dev', 'system:authenticated'], extra: {} },
      verb: 'breakglass',
      group: 'admissionregistration.k8s.io',
      resource: 'validatingwebhookconfigurations',
      name: 'w',
    });
    assert.equal(
      run(
        "authorizer.group('').resource('pods').subresource('exec').namespace('default').check('create').reason()",
        undefined,
        authorize,
      ),
      'no',
    );
    assert.equal(run("authorizer.path('/healthz').check('get').allowed()", undefined, authorize), false);
    assert.equal(asked.at(-1)!.path, '/healthz');
    assert.equal(run("authorizer.requestResource.check('breakglass').allowed()", undefined, authorize), true);
    assert.deepEqual(
      { ...asked.at(-1), user: undefined },
      {
        user: undefined,
        verb: 'breakglass',
        group: '',
        resource: 'pods',
        subresource: '',
        namespace: 'default',
        name: 'web',
      },
    );
    assert.equal(
      run(
        "authorizer.serviceAccount('ci', 'deployer').group('').resource('pods').check('get').allowed()",
        undefined,
        authorize,
      ),
      false,
    );
    assert.equal(asked.at(-1)!.user.username, 'system:serviceaccount:ci:deployer');
  });

  it('an authorizer that fails gives an errored decision', () => {
    const failing: Authorize = () => {
      throw new Error('webhook authorizer unreachable');
    };
    assert.equal(run("authorizer.path('/x').check('get').errored()", undefined, failing), true);
    assert.equal(
      run("authorizer.path('/x').check('get').error()", undefined, failing),
      'webhook authorizer unreachable',
    );
    assert.equal(run("authorizer.path('/x').check('get').allowed()", undefined, failing), false);
  });

  it('without an authorizer nothing is allowed', () => {
    assert.equal(run("authorizer.path('/x').check('get').allowed()"), false);
    assert.equal(run("authorizer.path('/x').check('get').reason()"), 'no authorizer configured');
  });

  const failures: Array<[string, RegExp]> = [
    ['[].min()', /min called on empty list/],
    ["quantity('1.5').asInteger()", /cannot convert value to integer/],
    ["quantity('ten') == quantity('1')", /quantities must match/],
    ["'abc'.charAt(9)", /index out of range/],
    ['[1, 2].slice(1, 5)', /cannot slice\(1, 5\), list is length 2/],
    ["object.metadata.labels['app'] == 'x'", /no such key: labels/],
    ["'a'.find(object.metadata.name + '(')", /error parsing regexp: missing closing \)/],
    ["'a'.matches(object.metadata.name + '(?=x)')", /error parsing regexp: invalid or unsupported Perl syntax/],
    ['object.mixed.sum()', /^no such overload$/],
  ];
  const mixed = pod('web', 'default', { mixed: [1, 'a'] });
  for (const [expression, error] of failures) {
    it(`${expression} fails to evaluate`, () =>
      assert.throws(
        () => run(expression, mixed),
        (err: { summary?: string; message: string }) => error.test(err.summary ?? err.message),
      ));
  }

  it('sums numbers and durations only: a list of quantities is refused when checked', () => {
    assert.ok(isCompileError(compileExpression("[quantity('1')].sum()")));
  });

  it('typeCheck: false only parses (in-function enforcement)', () => {
    const unchecked = compileExpression("request.operation + 1 == ''", { typeCheck: false });
    assert.ok(!isCompileError(unchecked) && unchecked.type === 'unchecked');
    assert.ok(isCompileError(compileExpression("request.operation + 1 == ''")));
    assert.ok(isCompileError(compileExpression('1 +', { typeCheck: false })));
  });

  it('reports whether an expression uses the authorizer', () => {
    const uses = compileExpression("authorizer.path('/x').check('get').allowed()");
    const not = compileExpression("object.metadata.name == 'authorizer'");
    assert.ok(!isCompileError(uses) && uses.usesAuthorizer);
    assert.ok(!isCompileError(not) && !not.usesAuthorizer);
  });

  it('a matcher says whether any condition it evaluates uses the authorizer', () => {
    const checks: MatchCondition = { name: 'may-get', expression: "authorizer.path('/x').check('get').allowed()" };
    const named: MatchCondition = { name: 'named', expression: "object.metadata.name == 'authorizer'" };
    assert.equal(createMatcher([named, checks]).usesAuthorizer, true);
    assert.equal(createMatcher([named]).usesAuthorizer, false);
    assert.equal(createMatcher([]).usesAuthorizer, false);
    assert.equal(
      createMatcher([named, checks], 'Fail', { skipAuthorizer: true }).usesAuthorizer,
      false,
      'left out, so never evaluated',
    );
  });
});

describe('regular expressions are RE2', () => {
  // Exponential for a backtracking engine: JavaScript's RegExp takes seconds on 29
  // characters and never finishes on thousands; RE2 answers in time linear in the input.
  const evil = "object.metadata.annotations['team'].matches('^([a-z0-9]+-?)+$')";
  const annotated = (team: string) =>
    pod('web', 'default', { metadata: { name: 'web', namespace: 'default', annotations: { team } } });

  it('a pattern that backtracks exponentially is answered on a short input', () => {
    assert.equal(run(evil, annotated(`${'a'.repeat(28)}!`)), false);
    assert.equal(run(evil, annotated(`${'a'.repeat(14)}-b`)), true);
  });

  it('and on 10,000 characters', () => {
    assert.equal(run(evil, annotated(`${'a'.repeat(10_000)}!`)), false);
    assert.equal(run(evil, annotated(`${'ab-'.repeat(3_333)}c`)), true);
    assert.equal(run("object.metadata.annotations['team'].find('(a+)+!')", annotated('a'.repeat(10_000))), '');
    assert.equal(
      run("object.metadata.annotations['team'].findAll('(a|aa)+b').size()", annotated(`${'a'.repeat(10_000)}b`)),
      1n,
    );
  });

  const cases: Array<[string, unknown]> = [
    // (?i) and RE2-only syntax, which JavaScript reads otherwise (\z is a plain z there).
    ["'ABC'.matches('(?i)^abc$')", true],
    ["'ab'.matches('b\\\\z')", true],
    ["'ab'.matches('[[:alpha:]]+')", true],
    ["'αβγ'.matches('^\\\\p{Greek}+$')", true],
    // Leftmost-first, as Go: the first alternative wins.
    ["'ab'.find('a|ab')", 'a'],
    // Go's FindAllString: no empty match right after a match.
    ["'123 abc 456'.findAll('[0-9]*')", ['123', '', '', '', '', '456']],
    ["'aaa'.findAll('^a')", ['a']],
    ["'a1b2c3'.findAll('[0-9]', 0)", []],
    ["'a1b2c3'.findAll('[0-9]', -1)", ['1', '2', '3']],
  ];
  for (const [expression, expected] of cases) {
    it(expression, () => assert.deepEqual(run(expression), expected));
  }

  it('a pattern read from the request is compiled when evaluated, and RE2 refuses lookaround there too', () => {
    assert.throws(
      () => run("'x'.matches(object.metadata.name + '(?!y)')"),
      /error parsing regexp: invalid or unsupported Perl syntax: `\(\?!`/,
    );
    assert.throws(() => run("'x'.find(object.metadata.name + '(?<=y)')"), /error parsing regexp/);
  });

  it('the cache of compiled patterns stays bounded', () => {
    for (let i = 0; i < REGEX_CACHE_SIZE * 2; i++) run(`'x${i}'.matches(object.metadata.name + '${i}')`);
    assert.equal(regexCacheSize(), REGEX_CACHE_SIZE);
  });
});

describe("the environment is the API server's for webhook matchConditions", () => {
  // expression → the type it compiles to, or the compile error the API server gives.
  const cases: Array<[string, string | RegExp]> = [
    // namespaceObject is declared (plugin/cel/compile.go declares it for every admission
    // expression); webhooks get it null.
    ["namespaceObject.metadata.name == 'shop'", 'bool'],
    ["namespaceObject.metadata.labels['team'] == 'a'", 'bool'],
    ['namespaceObject.status.phase', 'string'],
    // Strings extension version 2: no reverse (version 3); lists version 3 has one of lists.
    ["'abc'.reverse() == 'cba'", /found no matching overload for 'reverse' applied to 'string\.\(\)'/],
    ["'abc'.charAt(1) == 'b'", 'bool'],
    // No bindings extension in the base environment.
    ['cel.bind(x, 1, x + 1) == 2', /undeclared reference to 'cel'/],
    // The engine's byte helpers are not Kubernetes functions.
    ["b'a'.hex() == '61'", /undeclared reference to 'hex'/],
    ["b'{}'.json() == {}", /undeclared reference to 'json'/],
    ["b'a'.string() == 'a'", /undeclared reference to 'string'/],
    // Regex literals RE2 refuses: the pattern of a member `matches` is a compile error
    // (cel.ValidateRegexLiterals, 1.29); the others fail when the program is built.
    ["'a'.matches('(?=a)')", /^compilation failed: ERROR: <input>:1:13: invalid matches argument\n/],
    ["'a'.find('(?<=a)b') == ''", /^program instantiation failed: error parsing regexp: invalid named capture/],
    [
      "'aa'.findAll('(a)\\\\1').size() == 1",
      /^program instantiation failed: error parsing regexp: invalid escape sequence: `\\1`$/,
    ],
    ["matches('a', '(')", /^program instantiation failed: error parsing regexp: missing closing \): `\(`$/],
    ["'a'.matches('^[a-z]+$')", 'bool'],
    ["'a'.matches__re2('a')", /undeclared reference to 'matches__re2'/],
    ["1.matches('a')", /found no matching overload for 'matches' applied to 'int\.\(string\)'/],
    // The URL library.
    ["url('https://example.com/x').getHost() == 'example.com'", 'bool'],
    ["isURL('/x') && url('/x').getQuery().size() == 0", 'bool'],
    ["url('https://example.com/x') == url('https://example.com/x')", 'bool'],
  ];
  for (const [expression, expected] of cases) {
    it(expression, () => {
      const compiled = compileExpression(expression);
      if (typeof expected === 'string')
        assert.equal(isCompileError(compiled) ? compiled.message : compiled.type, expected);
      else assert.match(isCompileError(compiled) ? compiled.message : `compiled to ${compiled.type}`, expected);
    });
  }

  it('namespaceObject is null for a webhook, so reading it is an evaluation error', () => {
    assert.throws(() => run("namespaceObject.metadata.name == 'default'"), /namespaceObject/);
  });

  // The examples of k8s.io/apiserver/pkg/cel/library/urls.go.
  const urls: Array<[string, unknown]> = [
    ["url('https://user:pass@example.com:80/path?query=val#fragment').getScheme()", 'https'],
    ["url('https://user:pass@example.com:80/path?query=val#fragment').getHost()", 'example.com:80'],
    ["url('https://user:pass@example.com:80/path?query=val#fragment').getEscapedPath()", '/path'],
    ["url('https://user:pass@example.com:80/path?query=val#fragment').getQuery()", { query: ['val'] }],
    ["url('/path').getScheme()", ''],
    ["url('https://example.com/').getScheme()", 'https'],
    ["url('https://example.com:80/').getHost()", 'example.com:80'],
    ["url('https://example.com/').getHost()", 'example.com'],
    ["url('https://[::1]:80/').getHost()", '[::1]:80'],
    ["url('https://[::1]/').getHost()", '[::1]'],
    ["url('/path').getHost()", ''],
    ["url('https://example.com:80/').getHostname()", 'example.com'],
    ["url('https://127.0.0.1:80/').getHostname()", '127.0.0.1'],
    ["url('https://[::1]:80/').getHostname()", '::1'],
    ["url('/path').getHostname()", ''],
    ["url('https://example.com:80/').getPort()", '80'],
    ["url('https://example.com/').getPort()", ''],
    ["url('/path').getPort()", ''],
    ["url('https://example.com/path').getEscapedPath()", '/path'],
    ["url('https://example.com/path with spaces/').getEscapedPath()", '/path%20with%20spaces/'],
    ["url('https://example.com').getEscapedPath()", ''],
    ["url('https://example.com/path?k1=a&k2=b&k2=c').getQuery()", { k1: ['a'], k2: ['b', 'c'] }],
    [
      "url('https://example.com/path?key with spaces=value with spaces').getQuery()",
      { 'key with spaces': ['value with spaces'] },
    ],
    ["url('https://example.com/path?').getQuery()", {}],
    ["url('https://example.com/path').getQuery()", {}],
    ["isURL('https://user:pass@example.com:80/path?query=val#fragment')", true],
    ["isURL('/absolute-path')", true],
    ["isURL('https://a:b:c/')", false],
    ["isURL('../relative-path')", false],
    ["isURL('')", false],
    [
      "url('HTTPS://Example.com/a%2Fb').getScheme() + ' ' + url('HTTPS://Example.com/a%2Fb').getHost() + ' ' + url('HTTPS://Example.com/a%2Fb').getEscapedPath()",
      'https Example.com /a%2Fb',
    ],
  ];
  for (const [expression, expected] of urls) {
    it(expression, () => assert.deepEqual(run(expression), expected));
  }

  it('url() of what Go refuses is an evaluation error', () => {
    assert.throws(
      () => run("url('https://a:b:c/').getHost()"),
      /URL parse error during conversion from string: parse "https:\/\/a:b:c\/": invalid port ":c" after host/,
    );
    assert.throws(() => run("url('../relative-path').getHost()"), /invalid URI for request/);
  });
});

describe('the cost limit', () => {
  // n items: the nested map costs about 15·n² units (cel-go's 14 per step of a map, and the reads).
  const listOf = (n: number) => pod('web', 'default', { items: Array.from({ length: n }, (_, i) => i) });
  const review = (n: number) => admissionReview(listOf(n), { namespace: 'default' });
  const nested = 'object.items.map(x, object.items.map(y, x + y)).size() > 0';

  it('counts operations: a step of map costs what cel-go charges (14 for x + 1), of all 3', () => {
    const compiled = compileExpression('object.items.map(x, x + 1).size() == 2000');
    assert.ok(!isCompileError(compiled));
    assert.equal(compiled.run(variablesFor(review(2000).request)), true);
    // Per step: the accumulator read (1), the one-element list (10), list + (1), x (1), x + 1 (1).
    assert.ok(compiled.lastCost >= 14 * 2000 && compiled.lastCost < 14 * 2000 + 20, `cost ${compiled.lastCost}`);
    // Per step of all: the loop condition (2) and the accumulator read (1); the literal is free.
    const all = compileExpression('object.items.all(a, true)');
    assert.ok(!isCompileError(all));
    assert.equal(all.run(variablesFor(review(1000).request)), true);
    assert.ok(all.lastCost >= 3 * 1000 && all.lastCost < 3 * 1000 + 20, `cost ${all.lastCost}`);
  });

  it('charges comprehension steps: nested all over 1,000 items with a literal body is stopped', () => {
    const compiled = compileExpression('object.items.all(a, object.items.all(b, true))');
    assert.ok(!isCompileError(compiled));
    assert.throws(() => compiled.run(variablesFor(review(1000).request)), /actual cost limit exceeded/);
    assert.equal(compiled.run(variablesFor(review(500).request)), true);
  });

  it('charges nothing for literals, &&, || and ?: (as cel-go)', () => {
    const cost = (expression: string) => {
      const compiled = compileExpression(expression);
      assert.ok(!isCompileError(compiled));
      compiled.run(variablesFor(review(1).request));
      return compiled.lastCost;
    };
    const one = cost("object.metadata.name == 'web'");
    assert.ok(one > 0);
    assert.equal(cost("object.metadata.name == 'web' && object.metadata.name == 'web'"), 2 * one);
    assert.equal(cost("object.metadata.name != 'web' || object.metadata.name == 'web'"), 2 * one);
    assert.equal(cost("object.metadata.name == 'web' ? 'a' : 'b'"), one);
  });

  it(`stops an expression past ${PER_CALL_COST_LIMIT} units: an evaluation error, by failurePolicy`, () => {
    const compiled = compileExpression(nested);
    assert.ok(!isCompileError(compiled));
    assert.throws(
      () => compiled.run(variablesFor(review(2000).request)),
      /operation cancelled: actual cost limit exceeded/,
    );
    // Stopped at the first charge past the limit (at most one list append's worth beyond it).
    assert.ok(
      compiled.lastCost > PER_CALL_COST_LIMIT && compiled.lastCost <= PER_CALL_COST_LIMIT + 12,
      `cost ${compiled.lastCost}`,
    );
    // 300 items are stopped too, as cel-go stops them; 200 stay under the limit.
    assert.throws(() => compiled.run(variablesFor(review(300).request)), /actual cost limit exceeded/);
    assert.equal(compiled.run(variablesFor(review(200).request)), true);

    const conditions = [{ name: 'quadratic', expression: nested }];
    assert.deepEqual(createMatcher(conditions, 'Fail').evaluate(review(2000).request), {
      error: `expression '${nested}' resulted in error: operation cancelled: actual cost limit exceeded`,
      name: 'quadratic',
    });
    assert.deepEqual(createMatcher(conditions, 'Ignore').evaluate(review(2000).request), {
      matched: false,
      name: 'quadratic',
      error: `expression '${nested}' resulted in error: operation cancelled: actual cost limit exceeded`,
    });
    assert.deepEqual(createMatcher(conditions, 'Fail').evaluate(review(200).request), { matched: true });
  });

  it('an operator that absorbs errors does not absorb the stop', () => {
    assert.throws(() => run(`${nested} || true`, listOf(2000)), /actual cost limit exceeded/);
    assert.throws(
      () => run(`object.items.exists(x, object.items.exists(y, x + y < 0)) || true`, listOf(2000)),
      /actual cost limit exceeded/,
    );
  });

  it(`all conditions of a webhook share ${MATCH_CONDITIONS_COST_BUDGET} units; past them the conditions fail as a whole`, () => {
    // 200 items: about 600,000 units each, under the per-call limit; five exceed the budget.
    const heavy = (name: string, op: string) => ({
      name,
      expression: `object.items.map(x, object.items.map(y, x + y)).size() ${op} 0`,
    });
    const conditions = [
      heavy('first-false', '<'),
      heavy('second', '>'),
      heavy('third', '>'),
      heavy('fourth', '>'),
      heavy('fifth', '>'),
    ];
    const message = 'validation failed due to running out of cost budget, no further validation rules will be run';
    assert.deepEqual(createMatcher(conditions, 'Fail').evaluate(review(200).request), { error: message, name: '' });
    assert.deepEqual(createMatcher(conditions, 'Ignore').evaluate(review(200).request), {
      matched: false,
      name: '',
      error: message,
    });
    // Four stay within it: the false one skips the call.
    assert.deepEqual(createMatcher(conditions.slice(0, 4), 'Fail').evaluate(review(200).request), {
      matched: false,
      name: 'first-false',
    });
  });
});

describe('parseQuantity', () => {
  const cases: Array<[string, number | undefined]> = [
    ['1', 1],
    ['500m', 0.5],
    ['1.5Gi', 1.5 * 2 ** 30],
    ['1e3', 1000],
    ['1E-3', 0.001],
    ['-2k', -2000],
    ['.5', 0.5],
    ['100n', 100 * 1e-9],
    ['3u', 3e-6],
    ['', undefined],
    ['1.5.5', undefined],
    ['Gi', 0],
    ['1Gb', undefined],
    ['1e99', 1e96 * 1e3],
  ];
  for (const [text, value] of cases) {
    it(JSON.stringify(text), () => assert.equal(parseQuantity(text)?.asApproximateFloat(), value));
  }
});

describe('the test kit evaluates matchConditions', () => {
  const conditions = [
    { name: 'not-kube-system', expression: "request.namespace != 'kube-system'" },
    { name: 'has-app-label', expression: "has(object.metadata.labels) && 'app' in object.metadata.labels" },
  ];
  let calls = 0;
  const webhook = defineValidatingWebhook({
    name: 'labelled',
    rules: podRules,
    matchConditions: conditions,
    validate: () => (calls++, allow()),
  });

  it('skips the call when a condition is false, and says which', async () => {
    calls = 0;
    const result = await invoke(webhook, admissionReview(pod('web', 'default'), { namespace: 'default' }));
    assert.equal(result.allowed, true);
    assert.equal(result.skipped, 'skipped by matchCondition has-app-label');
    assert.equal(result.review.response.allowed, true);
    assert.equal(calls, 0);
  });

  it('calls the function when every condition is true', async () => {
    calls = 0;
    const labelled = pod('web', 'default', { metadata: { name: 'web', namespace: 'default', labels: { app: 'web' } } });
    const result = await invoke(webhook, admissionReview(labelled, { namespace: 'default' }));
    assert.equal(result.skipped, undefined);
    assert.equal(calls, 1);
  });

  it('calls the function regardless with matchConditions: false', async () => {
    calls = 0;
    await invoke(webhook, admissionReview(pod('web', 'kube-system'), { namespace: 'kube-system' }), {
      matchConditions: false,
    });
    assert.equal(calls, 1);
  });

  it('rejects without calling when a condition fails under failurePolicy Fail', async () => {
    let called = false;
    const strict = defineValidatingWebhook({
      name: 'strict',
      rules: podRules,
      matchConditions: [{ name: 'label', expression: "object.metadata.labels['app'] == 'x'" }],
      validate: () => ((called = true), allow()),
    });
    const result = await invoke(strict, admissionReview(pod('web', 'default'), { namespace: 'default' }));
    assert.equal(result.allowed, false);
    // As the API server answers (webhook.go ShouldCallHook): Forbidden, the filter's words.
    assert.equal(result.status?.code, 403);
    assert.equal(result.status?.reason, 'Forbidden');
    const error = "expression 'object.metadata.labels['app'] == 'x'' resulted in error: no such key: labels";
    assert.equal(result.matchConditionError, error);
    assert.equal(result.status?.message, `pods "web" is forbidden: ${error}`);
    assert.equal(called, false);
  });

  it('skips when a condition fails under failurePolicy Ignore', async () => {
    const lenient = defineMutatingWebhook({
      name: 'lenient',
      rules: podRules,
      matchConditions: [{ name: 'label', expression: "object.metadata.labels['app'] == 'x'" }],
      mutate: () => assert.fail('called'),
    });
    const result = await invoke(lenient, admissionReview(pod('web', 'default'), { namespace: 'default' }));
    assert.equal(result.allowed, true);
    assert.match(result.skipped!, /^skipped: matchCondition "label" failed to evaluate and failurePolicy is Ignore/);
  });

  it('a condition that does not compile fails every evaluation', async () => {
    const broken = defineValidatingWebhook({
      name: 'broken',
      rules: podRules,
      matchConditions: [{ name: 'bad', expression: 'object.metadata.name ==' }],
      validate: () => allow(),
    });
    const result = await invoke(broken, admissionReview(pod('web', 'default'), { namespace: 'default' }));
    assert.equal(result.allowed, false);
    assert.match(result.matchConditionError!, /compilation failed/);
  });

  it('passes the authorizer given to the chain', async () => {
    let called = false;
    const breakglass = defineValidatingWebhook({
      name: 'breakglass',
      rules: podRules,
      matchConditions: [
        { name: 'breakglass', expression: "!authorizer.group('').resource('pods').check('breakglass').allowed()" },
      ],
      validate: () => ((called = true), allow()),
    });
    const allowAll: Authorize = () => ({ decision: 'Allow' });
    const skipped = await runAdmissionChain(pod('web', 'default'), [breakglass], {
      namespace: 'default',
      invoke: { authorize: allowAll },
    });
    assert.equal(skipped.allowed, true);
    assert.equal(skipped.steps[0]!.result.skipped, 'skipped by matchCondition breakglass');
    assert.equal(called, false);
    await runAdmissionChain(pod('web', 'default'), [breakglass], { namespace: 'default' });
    assert.equal(called, true);
  });
});
