// The generic parts of admission policies: variable composition as the API server's CEL plugin
// composes them (composition.go: lazily, at most once per activation, each variable's own error,
// its cost charged to the filter), the environment's declarations (params only with a paramKind,
// authorizer not in messageExpressions), and params found as generic/policy_dispatcher.go's
// CollectParams finds them.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { compilePolicyExpression, type PolicyCompileOptions, readsVariables } from '../../../../lib/policies/cel.ts';
import {
  compileExpressions,
  compileVariables,
  compose,
  evaluateFilter,
  OUT_OF_BUDGET,
} from '../../../../lib/policies/generic/composition.ts';
import { collectParams, paramSourcesOf } from '../../../../lib/policies/generic/params.ts';
import type { KubeObject } from '../../../../lib/review/schemas.ts';

const env = { hasParams: false };

/** Evaluates expressions with variables over an object, under a budget. */
function filter(
  variables: Array<[string, string]>,
  expressions: string[],
  budget = 10_000_000,
  object: unknown = { a: 1n },
) {
  const vars = compileVariables(
    variables.map(([name, expression]) => ({ name, expression })),
    env,
  );
  const programs = compileExpressions(expressions, vars, env, ['any']);
  return evaluateFilter(programs, expressions, compose({ object }, vars), budget);
}

describe('variables (composition.go)', () => {
  it('a variable reads the ones declared before it', () => {
    const got = filter(
      [
        ['x', 'object.a + 1'],
        ['y', 'variables.x * 2'],
      ],
      ['variables.y'],
    );
    assert.deepEqual(got, { evaluations: [{ value: 4n }], remaining: got.error ? 0 : got.remaining });
  });
  it('a variable reading a later one does not compile, and says so when read', () => {
    const got = filter(
      [
        ['x', 'variables.y'],
        ['y', '1'],
      ],
      ['variables.x == 1'],
    );
    assert.ok(!got.error);
    assert.match(
      got.evaluations![0]!.error!,
      /composited variable "x" fails to compile: compilation failed: .*undefined field 'y'/,
    );
  });
  it("is declared with its own type, as the composited compiler declares it (composition.go's AddField)", () => {
    const vars = compileVariables(
      [
        { name: 'works', expression: 'true' },
        { name: 'count', expression: 'size(object.items)' },
        { name: 'broken', expression: 'object.' },
      ],
      env,
    );
    assert.deepEqual(vars.types, ['bool', 'int', 'dyn']);
    const [asBool, mixed, fromBroken] = compileExpressions(
      ['variables.works', "variables.count + 'x' == 'y'", 'variables.broken'],
      vars,
      env,
      ['bool'],
    );
    assert.equal(asBool!.error, undefined);
    assert.equal(
      mixed!.error,
      "compilation failed: ERROR: <input>:1:17: found no matching overload for '_+_' applied to '(int, string)'\n | variables.count + 'x' == 'y'\n | ................^",
    );
    assert.equal(fromBroken!.error, 'must evaluate to bool but got dyn');
  });
  it('is evaluated at most once per activation, and only when read', () => {
    const vars = compileVariables([{ name: 'x', expression: 'object.a + 1' }], env);
    const composed = compose({ object: { a: 1n } }, vars);
    const programs = compileExpressions(['variables.x == 2', 'variables.x == 2', 'true'], vars, env, ['bool']);
    const got = evaluateFilter(programs, ['variables.x == 2', 'variables.x == 2', 'true'], composed, 1000);
    assert.ok(!got.error);
    // Two reads of `variables.x == 2` (3 units each: the read, the field, `==`) and the variable's
    // own 3 units (object, .a, +) once; `true` is free.
    assert.equal(1000 - got.remaining!, 3 + 3 + 3);
  });
  it('an error is the error of each expression that reads it', () => {
    const got = filter([['bad', 'object.nope']], ['variables.bad == 1', 'true', 'variables.bad == 2']);
    assert.ok(!got.error);
    assert.equal(
      got.evaluations![0]!.error,
      `expression 'variables.bad == 1' resulted in error: composited variable "bad" fails to evaluate: no such key: nope`,
    );
    assert.deepEqual(got.evaluations![1], { value: true });
    assert.match(got.evaluations![2]!.error!, /fails to evaluate: no such key: nope/);
  });
  it('a variable past the budget stops the filter', () => {
    const got = filter([['x', 'object.a + 1 + 2 + 3']], ['variables.x > 0'], 3);
    assert.deepEqual(got, { error: OUT_OF_BUDGET });
  });
});

describe('the policy environment', () => {
  const opts = (o: Partial<PolicyCompileOptions>): PolicyCompileOptions => ({
    hasParams: false,
    hasAuthorizer: true,
    variables: [],
    returns: ['bool'],
    ...o,
  });
  it('params exist only with a paramKind', () => {
    assert.match(compilePolicyExpression('params.x == 1', opts({})).error!, /undeclared reference to 'params'/);
    assert.equal(compilePolicyExpression('params.x == 1', opts({ hasParams: true })).error, undefined);
  });
  it('messageExpressions have no authorizer', () => {
    const e = "authorizer.group('').resource('pods').check('get').allowed() ? 'a' : 'b'";
    assert.match(
      compilePolicyExpression(e, opts({ hasAuthorizer: false, returns: ['string'] })).error!,
      /undeclared reference to 'authorizer'/,
    );
    assert.equal(compilePolicyExpression(e, opts({ returns: ['string'] })).error, undefined);
  });
  it("compile errors are CompileCELExpression's words once, placed as cel-go places them", () => {
    assert.equal(
      compilePolicyExpression('object.a ==', opts({})).error,
      "compilation failed: ERROR: <input>:1:12: Syntax error: mismatched input '<EOF>' expecting {'[', '{', '(', '.', '-', '!', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}\n | object.a ==\n | ...........^",
    );
    assert.equal(
      compilePolicyExpression(
        "'x' + \n  string(authorizer.path('/a').check('get').allowed())",
        opts({ hasAuthorizer: false }),
      ).error,
      "compilation failed: ERROR: <input>:2:10: undeclared reference to 'authorizer' (in container '')\n |   string(authorizer.path('/a').check('get').allowed())\n | .........^",
    );
    assert.equal(
      compilePolicyExpression('variables.known && variables.nope', opts({ variables: ['known'] })).error,
      "compilation failed: ERROR: <input>:1:29: undefined field 'nope'\n | variables.known && variables.nope\n | ............................^",
    );
  });
  it('an expression of the wrong type is refused as CompileCELExpression refuses it', () => {
    assert.equal(compilePolicyExpression("'a'", opts({})).error, 'must evaluate to bool but got string');
    assert.equal(
      compilePolicyExpression('1', opts({ returns: ['string', 'null_type'] })).error,
      'must evaluate to one of [string null_type] but got int',
    );
  });
});

const cm = (name: string, namespace: string, labels: Record<string, string> = {}): KubeObject =>
  ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace, labels } }) as KubeObject;
const kind = { apiVersion: 'v1', kind: 'ConfigMap' };
const sources = paramSourcesOf([cm('p', 'ns'), cm('q', 'ns', { x: 'y' }), cm('p', 'other')]);

describe('policy_dispatcher.go CollectParams', () => {
  it('no paramKind, or no paramRef: one evaluation with null params', () => {
    assert.deepEqual(collectParams(undefined, { name: 'p' }, 'ns', sources), { params: [null] });
    assert.deepEqual(collectParams(kind, undefined, 'ns', sources), { params: [null] });
  });
  it('by name, in the request namespace or the binding one', () => {
    assert.equal(collectParams(kind, { name: 'p' }, 'ns', sources).params?.[0]?.metadata?.namespace, 'ns');
    assert.equal(
      collectParams(kind, { name: 'p', namespace: 'other' }, 'ns', sources).params?.[0]?.metadata?.namespace,
      'other',
    );
  });
  it('by selector: every match; {} selects all', () => {
    assert.deepEqual(
      collectParams(kind, { selector: { matchLabels: { x: 'y' } } }, 'ns', sources).params?.map(
        (p) => p?.metadata?.name,
      ),
      ['q'],
    );
    assert.equal(collectParams(kind, { selector: {} }, 'ns', sources).params?.length, 2);
  });
  it('none found: nothing to evaluate, or an error under Deny', () => {
    assert.deepEqual(collectParams(kind, { name: 'nope' }, 'ns', sources), { params: [] });
    assert.deepEqual(collectParams(kind, { name: 'nope', parameterNotFoundAction: 'Deny' }, 'ns', sources), {
      error: 'no params found for policy binding with `Deny` parameterNotFoundAction',
    });
  });
  it('the configuration errors', () => {
    assert.equal(
      collectParams(kind, { name: 'p' }, '', sources).error,
      'cannot use namespaced paramRef in policy binding that matches cluster-scoped resources',
    );
    const cluster = paramSourcesOf([], () => false);
    assert.equal(
      collectParams(kind, { name: 'p', namespace: 'x' }, 'ns', cluster).error,
      'paramRef.namespace must not be provided for a cluster-scoped `paramKind`',
    );
    assert.equal(
      collectParams(kind, { name: 'p' }, 'ns', undefined).error,
      'paramKind kind `&ParamKind{APIVersion:v1,Kind:ConfigMap,}` not known',
    );
    assert.equal(
      collectParams(kind, { name: 'p', selector: {} }, 'ns', sources).error,
      'paramRef.name and paramRef.selector are mutually exclusive',
    );
    assert.equal(collectParams(kind, {}, 'ns', sources).error, 'one of name or selector must be provided');
  });
});

describe("variables whose values may be of the libraries' types", () => {
  it('are those naming the libraries and those reading one, at any remove', () => {
    const vars = compileVariables(
      [
        ['ip', "ip('10.0.0.1')"],
        ['plain', 'object.a + 1'],
        ['list', '[variables.ip]'],
        ['first', 'variables.list[0]'],
        ['after', 'variables.plain * 2'],
        ['whole', "variables['ip']"],
        ['size', "'10.0.0.1'.size()"],
      ].map(([name, expression]) => ({ name: name!, expression: expression! })),
      { ...env, typeCheck: false },
    );
    assert.deepEqual(vars.libraries, ['ip', 'list', 'first', 'whole']);
  });
  it('are read by `variables.<name>` or by `variables` read otherwise', () => {
    const CASES: ReadonlyArray<readonly [string, boolean]> = [
      ['variables.a == variables.b', true],
      ['variables . a', true],
      ['variables.plain == 1', false],
      ['variables.ab == 1', false],
      ["variables['a']", true],
      ['variables[name]', true],
      ["'a' in variables", true],
      ['object.variables.a', false],
      ['myvariables.a', false],
      ['object.a == 1', false],
    ];
    for (const [expression, reads] of CASES) assert.equal(readsVariables(expression, ['a']), reads, expression);
    assert.equal(readsVariables('variables.a', []), false);
  });
});
