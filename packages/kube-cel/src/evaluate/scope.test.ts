// Environments built for a scope (the parts an expression names) answer as the whole environment:
// every expression of Kubernetes' validation table, of the CEL conformance sections Kubernetes
// enables and of a list reaching each part is compiled without its type check both ways and
// evaluated over the same variables; values, errors and costs must be equal.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { inspect } from 'node:util';
import { compileExpression, compileInWholeEnvironment, isCompileError, type CompileOptions } from '../compile.ts';
import { admissionVariables, toCel } from '../admission/variables.ts';
import { Duration, UnsignedInt } from '../engine.ts';
import { FULL_SCOPE, SCOPE, scopedEnvironment, scopeOf } from './environment.ts';
import { VALIDATION_GROUPS } from '../../test/k8s-validation-table.ts';
import { conformanceCases, KUBERNETES_SECTIONS } from '../../test/conformance-suite.ts';
import { declarationsOf, valueBindings } from '../../test/engines.ts';

/** What compiling and evaluating answered, as text to compare. */
function outcome(
  expression: string,
  variables: Record<string, unknown>,
  options: CompileOptions,
  whole = false,
): string {
  let compiled: ReturnType<typeof compileExpression>;
  try {
    compiled = (whole ? compileInWholeEnvironment : compileExpression)(expression, { ...options, typeCheck: false });
  } catch (err) {
    // Declarations the environment cannot hold (the conformance suite's protobuf messages).
    return `throws: ${(err as Error).message}`;
  }
  if (isCompileError(compiled)) return `compile: ${compiled.message}`;
  try {
    const { value, cost } = compiled.evaluate(variables);
    return `value: ${inspect(value, { depth: 50 })} cost ${cost}`;
  } catch (err) {
    const e = err as { summary?: string; message?: string; cost?: number };
    return `error: ${e.summary ?? e.message} cost ${e.cost}`;
  }
}

/** Asserts that the scoped and the whole environment answer the same; how many were compared. */
function sameEverywhere(
  cases: Array<{ expression: string; variables: Record<string, unknown>; options?: CompileOptions }>,
): number {
  const differences: string[] = [];
  for (const { expression, variables, options = {} } of cases) {
    const scoped = outcome(expression, variables, options);
    const full = outcome(expression, variables, options, true);
    if (scoped !== full) differences.push(`${expression}\n  scoped: ${scoped}\n  full:   ${full}`);
  }
  assert.deepEqual(differences, []);
  return cases.length;
}

const review = {
  uid: 'u-1',
  kind: { group: 'apps', version: 'v1', kind: 'Deployment' },
  resource: { group: 'apps', version: 'v1', resource: 'deployments' },
  operation: 'CREATE',
  name: 'web',
  namespace: 'shop',
  userInfo: { username: 'alice', groups: ['dev', 'system:authenticated'], extra: { team: ['a'] } },
  object: { metadata: { name: 'web', labels: { app: 'web' } }, spec: { replicas: 3 } },
} as never;

/** Expressions reaching each part of the environment, and some reaching none. */
const REACHING = [
  "request.namespace == 'shop'",
  'request.kind == null',
  'request.userInfo != null && request.userInfo.groups.size() == 2',
  'type(request.kind) == kubernetes.GroupVersionKind',
  "authorizer.group('apps').resource('deployments').namespace('shop').check('get').allowed()",
  "authorizer.path('/healthz').check('get').reason() == ''",
  'authorizer.requestResource.check("create").allowed() || true',
  'namespaceObject == null',
  "namespaceObject.metadata.name == 'shop'",
  'has(namespaceObject.metadata) || true',
  "object.metadata.name.lowerAscii() == 'web'",
  "quantity('1Gi') == null || quantity('1Gi').isGreaterThan(quantity('1Mi'))",
  "ip('10.0.0.1').family() == 4 && cidr('10.0.0.0/8').containsIP('10.0.0.1')",
  "url('https://x/y').getHost() == 'x'",
  'object.spec.replicas <= 5',
  "string(object.spec.replicas) + ' replicas'",
  // string() as cel-go converts, in every environment (string-conversions.ts).
  "string(1e6) == '1e+06' && string(-0.5) == '-0.5' && string(2u) == '2' && string(true) == 'true'",
  "string(b'\\xff')",
  "string(b'caf\\xc3\\xa9')",
  "string(timestamp('2024-01-01T00:00:00.5+01:00')) + string(duration('-1.5s'))",
  'string(object.metadata)',
  'string(null)',
  'type(object.spec.replicas) == int && type(object.metadata) == map',
  "int(timestamp('2024-01-01T00:00:00Z')) > 0",
  "duration('1s') == null",
  "b'a' < b'b'",
  'int(1u) == 1',
  'kubernetes.Namespace',
  'unknownVariable == 1',
  'object.undefinedField',
  'optional.of(1) == null',
  "[1, 2].exists(x, x == 2) && {'a': 1}.all(k, k == 'a')",
];

describe('environments built for a scope', () => {
  it("tells the semantics the engine's own classes of uints and durations, which its exports name", () => {
    const [uint, duration] = scopedEnvironment(0).evaluate("[dyn(0u), dyn(duration('1s'))]") as [object, object];
    assert.equal(uint.constructor, UnsignedInt);
    assert.equal(duration.constructor, Duration);
  });

  it('reads the parts an expression names, and every part from a kubernetes type name', () => {
    assert.equal(scopeOf("object.metadata.name == 'x'"), 0);
    assert.equal(scopeOf('request.name'), SCOPE.request);
    assert.equal(scopeOf("authorizer.path('/').check('get').allowed()"), SCOPE.authorizer);
    assert.equal(scopeOf('namespaceObject == null'), SCOPE.namespace);
    assert.equal(scopeOf("object.name.lowerAscii() == 'x'"), SCOPE.libraries);
    assert.equal(scopeOf("string(object.spec.replicas) == '1'"), SCOPE.strings);
    assert.equal(scopeOf('string(request.name) + string (1)'), SCOPE.request | SCOPE.strings);
    assert.equal(scopeOf('x == kubernetes.NamespaceSpec'), FULL_SCOPE & ~SCOPE.libraries);
    assert.equal(scopeOf("quantity('1') == kubernetes.Quantity"), FULL_SCOPE);
    // A longer name is not the part's variable.
    assert.equal(scopeOf('requests.size() + authorizers'), 0);
  });

  it('declares in each part only what scopeOf keys it on', () => {
    const names = (scope: number) => {
      const defs = scopedEnvironment(scope).getDefinitions() as { variables: Array<{ name: string }> };
      const parts = ['object', 'oldObject', 'request', 'authorizer', 'namespaceObject'];
      return defs.variables
        .map((v) => v.name)
        .filter((n) => parts.includes(n))
        .sort();
    };
    assert.deepEqual(names(0), ['object', 'oldObject']);
    assert.deepEqual(names(SCOPE.request), ['object', 'oldObject', 'request']);
    assert.deepEqual(names(SCOPE.authorizer), ['authorizer', 'object', 'oldObject']);
    assert.deepEqual(names(SCOPE.namespace), ['namespaceObject', 'object', 'oldObject']);
    assert.deepEqual(names(FULL_SCOPE), ['authorizer', 'namespaceObject', 'object', 'oldObject', 'request']);
    // string() as cel-go converts: with SCOPE.strings, or the libraries.
    const converts = (scope: number) =>
      (scopedEnvironment(scope).getDefinitions() as { functions: Array<{ name: string }> }).functions.some(
        (f) => f.name === 'string__k8s',
      );
    assert.deepEqual([converts(0), converts(SCOPE.request), converts(SCOPE.strings)], [false, false, true]);
  });

  it('answers as the whole environment on expressions reaching each part', () => {
    const allow = () => ({ decision: 'Allow' as const });
    const variables = [
      admissionVariables(review),
      admissionVariables(review, {
        authorize: allow,
        namespaceObject: { metadata: { name: 'shop', labels: { a: 'b' } }, spec: {} },
      }),
    ];
    for (const v of variables) sameEverywhere(REACHING.map((expression) => ({ expression, variables: v })));
  });

  it("answers as the whole environment on Kubernetes' validation table", () => {
    const cases = VALIDATION_GROUPS.flatMap((g) => {
      const variables = {
        object: toCel(JSON.parse(g.object)),
        oldObject: g.oldObject === undefined ? null : toCel(JSON.parse(g.oldObject)),
      };
      const expressions = [...g.valid, ...(g.errors ?? []).map(([e]) => e), ...(g.costs ?? []).map(([e]) => e)];
      return expressions.map((expression) => ({ expression, variables }));
    });
    assert.ok(sameEverywhere(cases) > 500);
  });

  it('answers as the whole environment on the conformance sections Kubernetes enables', () => {
    const sections = new Set<string>(KUBERNETES_SECTIONS);
    const cases = conformanceCases()
      .filter((c) => sections.has(c.section))
      .flatMap((c) => {
        let variables: Record<string, unknown>;
        try {
          variables = valueBindings(c);
        } catch {
          return [];
        }
        return [{ expression: c.expr, variables, options: { declarations: declarationsOf(c) } }];
      });
    assert.ok(sameEverywhere(cases) > 1000);
  });
});
