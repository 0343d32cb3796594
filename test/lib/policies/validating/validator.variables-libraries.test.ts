// Values of the Kubernetes libraries (IP, CIDR, quantity, URL, semver) that reach an expression only
// through `variables`, the expression naming none of the libraries' functions: each policy is
// dispatched natively and served as a webhook, in-function (both-ways.ts), where its expressions
// compile in environments of only the parts they need. The answers are cel-go's, as the API server
// gives them: its equality of these values is the libraries' own (apiserver pkg/cel ip.go and
// cidr.go compare the address or prefix, quantity.go compares the amounts, so 1 equals 1000m,
// url.go the URLs' texts, semver.go the versions as semver's EQ, build metadata aside).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ValidatingPolicySpec } from '../../../../lib/policies/validating/types.ts';
import type { AdmissionRequest } from '../../../../lib/review/schemas.ts';
import { bothWays, compared } from './both-ways.ts';

const request = {
  uid: 'u',
  kind: { group: '', version: 'v1', kind: 'ConfigMap' },
  resource: { group: '', version: 'v1', resource: 'configmaps' },
  name: 'c',
  namespace: 'default',
  operation: 'CREATE',
  userInfo: { username: 'dave' },
  object: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', namespace: 'default' } },
} as AdmissionRequest;

const everything = {
  resourceRules: [{ operations: ['*' as const], apiGroups: ['*'], apiVersions: ['*'], resources: ['*'] }],
};

/** A policy of these variables (a, b, … in order) whose one validation is `expression`. */
const policy = (
  variables: string[],
  expression: string,
  extra: Partial<ValidatingPolicySpec> = {},
): ValidatingPolicySpec => ({
  name: 'vars.example.com',
  failurePolicy: 'Fail',
  matchConstraints: everything,
  variables: variables.map((v, i) => ({ name: String.fromCharCode(97 + i), expression: v })),
  validations: [{ expression, message: 'denied' }],
  ...extra,
});

const bindings = (spec: ValidatingPolicySpec) => [
  { name: 'b', policyName: spec.name, validationActions: ['Deny' as const] },
];

/**
 * Dispatches both ways, after a policy of the same expressions whose variables hold plain values:
 * the environments those built (without the libraries) are there to be reused, as in a function
 * serving both policies.
 */
async function dispatch(spec: ValidatingPolicySpec) {
  const plain = { ...spec, variables: spec.variables!.map((v) => ({ ...v, expression: 'dyn(1)' })) };
  await bothWays([{ spec: plain, bindings: bindings(plain) }], request);
  return bothWays([{ spec, bindings: bindings(spec) }], request);
}

/** [what, variables, validation, allowed by cel-go's answer]. */
const CASES: ReadonlyArray<readonly [string, string[], string, boolean]> = [
  ['equal IPs', ["ip('10.0.0.1')", "ip('10.0.0.1')"], 'variables.a == variables.b', true],
  ['unequal IPs', ["ip('10.0.0.1')", "ip('10.0.0.2')"], 'variables.a != variables.b', true],
  ['IPv6 written two ways', ["ip('::1')", "ip('0:0::1')"], 'variables.a == variables.b', true],
  ['equal CIDRs', ["cidr('10.0.0.0/8')", "cidr('10.0.0.0/8')"], 'variables.a == variables.b', true],
  ['unequal CIDRs', ["cidr('10.0.0.0/8')", "cidr('10.0.0.0/16')"], 'variables.a != variables.b', true],
  ['quantities of one amount', ["quantity('1')", "quantity('1000m')"], 'variables.a == variables.b', true],
  ['unequal quantities', ["quantity('1')", "quantity('2')"], 'variables.a != variables.b', true],
  ['equal URLs', ["url('https://example.com/a')", "url('https://example.com/a')"], 'variables.a == variables.b', true],
  [
    'unequal URLs',
    ["url('https://example.com/a')", "url('https://example.com/b')"],
    'variables.a != variables.b',
    true,
  ],
  ['semvers apart from build metadata', ["semver('1.2.3')", "semver('1.2.3+b')"], 'variables.a == variables.b', true],
  ['unequal semvers', ["semver('1.2.3')", "semver('1.2.4')"], 'variables.a != variables.b', true],
  ['in a list', ["quantity('1')", "quantity('1000m')"], 'variables.a in [variables.b]', true],
  ['lists of them', ["ip('10.0.0.1')", "ip('10.0.0.1')"], '[variables.a] == [variables.b]', true],
  ['maps of them', ["cidr('10.0.0.0/8')", "cidr('10.0.0.0/8')"], "{'k': variables.a} == {'k': variables.b}", true],
  ['a macro', ["ip('10.0.0.1')", "ip('10.0.0.1')"], '[variables.a].exists(x, x == variables.b)', true],
  ['not null', ["ip('10.0.0.1')"], 'variables.a != null', true],
  ['one type', ["ip('10.0.0.1')", "ip('::1')"], 'type(variables.a) == type(variables.b)', true],
  ['through a variable', ["ip('10.0.0.1')", "ip('10.0.0.1')", 'variables.a'], 'variables.c == variables.b', true],
  [
    'through variables of variables',
    ["quantity('1')", "quantity('1000m')", '[variables.a]', 'variables.c[0]'],
    'variables.d == variables.b',
    true,
  ],
  ['a conditional', ["quantity('1')", "quantity('1000m')"], 'true ? variables.a == variables.b : false', true],
];

describe('library values through variables', () => {
  for (const [what, variables, expression, allowed] of CASES)
    it(`${what}: ${expression}`, async () => {
      assert.equal((await dispatch(policy(variables, expression))).allowed, allowed);
    });
  it('a messageExpression converting one to a string', async () => {
    // The libraries convert IPs and CIDRs to strings, not quantities (ip.go, cidr.go, quantity.go).
    const spec = policy(["ip('10.0.0.1')", "cidr('10.0.0.0/8')"], 'false', {
      validations: [{ expression: 'false', messageExpression: "string(variables.a) + ' ' + string(variables.b)" }],
    });
    assert.match((await dispatch(spec)).status!.message, /denied request: 10\.0\.0\.1 10\.0\.0\.0\/8$/);
  });
  it('a messageExpression comparing them', async () => {
    const spec = policy(["ip('10.0.0.1')", "ip('10.0.0.1')"], 'false', {
      validations: [{ expression: 'false', messageExpression: "variables.a == variables.b ? 'same' : 'apart'" }],
    });
    assert.match((await dispatch(spec)).status!.message, /denied request: same$/);
  });
  it('a matchCondition comparing them', async () => {
    // Not matched (false), the policy does not deny; an error would under failurePolicy Fail.
    const spec = policy(["ip('10.0.0.1')", "ip('10.0.0.1')"], 'false', {
      matchConditions: [{ name: 'apart', expression: 'variables.a != variables.b' }],
    });
    assert.equal((await dispatch(spec)).allowed, true);
  });
  it('an auditAnnotation comparing them', async () => {
    const spec = policy(["semver('1.2.3')", "semver('1.2.3+b')"], 'true', {
      auditAnnotations: [{ key: 'same', valueExpression: "variables.a == variables.b ? 'yes' : 'no'" }],
    });
    assert.deepEqual((await dispatch(spec)).auditAnnotations, { 'vars.example.com/same': 'yes' });
  });
  it('compared the in-function answers', () => assert.ok(compared.pairs >= 2 * CASES.length, String(compared.pairs)));
});
