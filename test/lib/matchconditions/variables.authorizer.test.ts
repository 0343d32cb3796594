// The authorizer library (apiserver's library/authz.go) at the expression level: what each check
// hands the Authorize function, as the API server hands its authorizer the attributes, and what
// the builders and decisions give back.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  compileExpression,
  CostLimitExceeded,
  isCompileError,
  type AuthorizationAttributes,
  type AuthorizationDecision,
  type Authorize,
} from '../../../packages/kube-cel/src/compile.ts';
import { variablesFor } from '../../../lib/matchconditions/variables.ts';
import { admissionReview } from '../../../lib/testing/index.ts';

const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'web', namespace: 'shop' } };

/** Evaluates `expression` for a pod CREATE by alice (`object.s` = `s`), deciding with `authorize`. */
function evaluate(expression: string, authorize: Authorize, s = ''): unknown {
  const compiled = compileExpression(expression);
  if (isCompileError(compiled)) throw new Error(compiled.message);
  const review = admissionReview({ ...pod, s } as typeof pod, { namespace: 'shop', userInfo: { username: 'alice' } });
  return compiled.run(variablesFor(review.request, authorize));
}

/** The attributes one check of `expression` hands Authorize, without the user. */
function asked(expression: string, s?: string): Omit<AuthorizationAttributes, 'user'> {
  const seen: AuthorizationAttributes[] = [];
  evaluate(
    expression,
    (a) => {
      seen.push(a);
      return { decision: 'Allow' };
    },
    s,
  );
  assert.equal(seen.length, 1, expression);
  const { user: _, ...rest } = seen[0]!;
  return rest;
}

const PODS = "authorizer.group('').resource('pods')";
const list = { verb: 'list', group: '', resource: 'pods' };

describe('authorizer selectors: parsed for the authorizer, as the API server parses them', () => {
  const rows: Array<[string, Omit<AuthorizationAttributes, 'user'>]> = [
    [
      ".fieldSelector('spec.nodeName=node-a,status.phase!=Failed')",
      {
        ...list,
        fieldSelectorRequirements: [
          { field: 'spec.nodeName', operator: '=', value: 'node-a' },
          { field: 'status.phase', operator: '!=', value: 'Failed' },
        ],
      },
    ],
    [
      ".labelSelector('tier in (web, db),!legacy,app')",
      {
        ...list,
        labelSelectorRequirements: [
          { key: 'app', operator: 'exists', values: [] },
          { key: 'legacy', operator: '!', values: [] },
          { key: 'tier', operator: 'in', values: ['db', 'web'] },
        ],
      },
    ],
    // One that does not parse is handed over as its error, without requirements; the check goes on.
    [
      ".fieldSelector('spec.nodeName')",
      { ...list, fieldSelectorParsingError: "invalid selector: 'spec.nodeName'; can't understand 'spec.nodeName'" },
    ],
    [".labelSelector('app=web,')", { ...list, labelSelectorParsingError: "found '', expected: identifier after ','" }],
    [
      ".fieldSelector('a=b').labelSelector('a in (x')",
      {
        ...list,
        fieldSelectorRequirements: [{ field: 'a', operator: '=', value: 'b' }],
        labelSelectorParsingError: "unable to parse requirement: found '', expected: ',' or ')'",
      },
    ],
    // Empty, or parsing to no requirement: the authorizer sees no selector.
    [".fieldSelector('').labelSelector('')", list],
    [".fieldSelector(',').labelSelector(' ')", list],
    // The last call of each wins, an empty one included.
    [".fieldSelector('a=b').fieldSelector('')", list],
    [
      ".labelSelector('x').labelSelector('y')",
      { ...list, labelSelectorRequirements: [{ key: 'y', operator: 'exists', values: [] }] },
    ],
  ];
  for (const [chain, expected] of rows)
    it(chain, () => assert.deepEqual(asked(`${PODS}${chain}.check('list').allowed()`), expected));

  it('a check with a selector that does not parse is still decided by the authorizer', () => {
    const allowIfParsed: Authorize = (a) => ({ decision: a.labelSelectorParsingError ? 'Deny' : 'Allow' });
    assert.equal(evaluate(`${PODS}.labelSelector('-x').check('list').allowed()`, allowIfParsed), false);
    assert.equal(evaluate(`${PODS}.labelSelector('-x').check('list').errored()`, allowIfParsed), false);
    assert.equal(evaluate(`${PODS}.labelSelector('x').check('list').allowed()`, allowIfParsed), true);
  });

  it('requestResource takes selectors too', () => {
    assert.deepEqual(asked("authorizer.requestResource.labelSelector('app=web').check('list').allowed()"), {
      verb: 'list',
      group: '',
      resource: 'pods',
      subresource: '',
      namespace: 'shop',
      name: 'web',
      labelSelectorRequirements: [{ key: 'app', operator: '=', values: ['web'] }],
    });
  });

  it('a long selector is charged before the check: 1 MB passes the limit, the authorizer is not asked', () => {
    let calls = 0;
    const count: Authorize = () => (calls++, { decision: 'Allow' });
    const expression = `${PODS}.labelSelector(object.s).check('list').allowed()`;
    assert.throws(() => evaluate(expression, count, 'a,'.repeat(1 << 19)), CostLimitExceeded);
    assert.equal(calls, 0);
    // 9,999 characters cost 10 + 1,000 + 5,000 × 50 units: with the check, within the limit.
    const keys = Array.from({ length: 2000 }, (_, i) => `k${i.toString(36).padStart(3, '0')}`).join(',');
    const attributes = asked(`${PODS}.labelSelector(object.s).check('list').allowed()`, keys);
    assert.equal(attributes.labelSelectorRequirements?.length, 2000);
  });
});

describe('authorizer builders, as authz.go checks them', () => {
  const allow: Authorize = () => ({ decision: 'Allow' });
  const rows: Array<[string, true | RegExp]> = [
    ["authorizer.path('/healthz').check('get').allowed()", true],
    ["authorizer.path('healthz').check('get').allowed()", true],
    ["authorizer.path('').check('get').allowed()", /path must not be empty/],
    ["authorizer.path(' \\t\\n').check('get').allowed()", /path must not be empty/],
    // Blank as Go's TrimSpace reads it: Unicode spaces, but not U+FEFF.
    ["authorizer.path('\\u3000\\u00a0').check('get').allowed()", /path must not be empty/],
    ["authorizer.path('\\ufeff').check('get').allowed()", true],
    [`${PODS}.check('get').allowed()`, true],
    ["authorizer.group('apps').resource('').check('get').allowed()", /resource must not be empty/],
    ["authorizer.group('apps').resource('  ').check('get').allowed()", /resource must not be empty/],
    // The group, subresource, namespace and name may be empty (the core group, cluster scope, unset).
    [`${PODS}.subresource('').namespace('').name('').check('get').allowed()`, true],
    // The builder fails even where no check follows.
    ["[authorizer.path('')].size() == 1", /path must not be empty/],
  ];
  for (const [expression, expected] of rows)
    it(expression, () => {
      if (expected === true) assert.equal(evaluate(expression, allow), true);
      else assert.throws(() => evaluate(expression, allow), expected);
    });
});

describe('authorizer decisions', () => {
  const decide = (answer: () => AuthorizationDecision) => (part: string) =>
    evaluate(`${PODS}.check('get').${part}()`, answer as Authorize);
  const cases: Array<[string, () => AuthorizationDecision, Record<string, unknown>]> = [
    [
      'allowed',
      () => ({ decision: 'Allow', reason: 'rbac' }),
      { allowed: true, reason: 'rbac', errored: false, error: '' },
    ],
    ['denied', () => ({ decision: 'Deny' }), { allowed: false, reason: '', errored: false, error: '' }],
    // An authorizer may answer and fail at once (a union of authorizers where one failed).
    [
      'no opinion with an error',
      () => ({ decision: 'NoOpinion', reason: 'no RBAC rule', error: 'webhook authorizer: timeout' }),
      { allowed: false, reason: 'no RBAC rule', errored: true, error: 'webhook authorizer: timeout' },
    ],
    [
      'allowed with an error',
      () => ({ decision: 'Allow', error: '' }),
      { allowed: true, reason: '', errored: true, error: '' },
    ],
    [
      'thrown',
      () => {
        throw new Error('unreachable');
      },
      { allowed: false, reason: '', errored: true, error: 'unreachable' },
    ],
    [
      'no decision',
      () => ({ decision: 'Maybe' }) as unknown as AuthorizationDecision,
      { allowed: false, errored: true, error: 'Authorize gave no decision (Allow, Deny or NoOpinion): Maybe' },
    ],
    [
      'nothing',
      () => undefined as unknown as AuthorizationDecision,
      { allowed: false, errored: true, error: 'Authorize gave no decision (Allow, Deny or NoOpinion): undefined' },
    ],
  ];
  for (const [name, answer, expected] of cases)
    it(name, () => {
      const got = Object.fromEntries(Object.keys(expected).map((part) => [part, decide(answer)(part)]));
      assert.deepEqual(got, expected);
    });

  it('without an Authorize function nothing is allowed, and the reason says why', () => {
    const review = admissionReview(pod, { namespace: 'shop' });
    const compiled = compileExpression(`${PODS}.check('get').reason()`);
    assert.ok(!isCompileError(compiled));
    assert.equal(compiled.run(variablesFor(review.request)), 'no authorizer configured');
  });
});
