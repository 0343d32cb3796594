// The environment without the Kubernetes libraries, for expressions that name none of them: the
// names that need them are what the libraries register, and the two environments answer alike.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { compileExpression, isCompileError } from '../compile.ts';
import { matchConditionsEnvironment } from '../evaluate/environment.ts';
import { LIBRARY_FUNCTIONS, LIBRARY_NAMESPACES, needsLibraries } from './names.ts';

interface Definitions {
  functions: Array<{ name: string; signature?: string }>;
  variables: Array<{ name: string }>;
}
const definitions = (libraries: boolean) =>
  matchConditionsEnvironment(libraries).getDefinitions() as unknown as Definitions;

/** The plain names of functions (the environment's internal suffixes off) and their signatures. */
function overloads(d: Definitions): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>();
  for (const f of d.functions) {
    const name = f.name.replace(/__(?:k8s|re2)$/, '');
    if (!out.has(name)) out.set(name, new Set());
    out.get(name)!.add(f.signature ?? f.name);
  }
  return out;
}

const TYPICAL = [
  "request.namespace != 'kube-system'",
  "!('system:nodes' in request.userInfo.groups)",
  "has(object.metadata.labels) && 'app' in object.metadata.labels",
  "object.spec.containers.exists(c, c.image != '' && c.name.startsWith('app'))",
];

describe('the environment without the libraries', () => {
  it('is left for every function and namespace the libraries register', () => {
    const [base, full] = [overloads(definitions(false)), overloads(definitions(true))];
    const added = [...full].filter(([name, sigs]) => base.get(name)?.size !== sigs.size).map(([name]) => name);
    assert.deepEqual(
      added.filter((name) => !LIBRARY_FUNCTIONS.has(name)),
      [],
    );
    assert.deepEqual(
      [...LIBRARY_FUNCTIONS].filter((name) => !added.includes(name)),
      [],
      'names the libraries no longer add',
    );
    const variables = (d: Definitions) => new Set(d.variables.map((v) => v.name));
    const [baseVars, fullVars] = [variables(definitions(false)), variables(definitions(true))];
    assert.deepEqual(new Set([...fullVars].filter((v) => !baseVars.has(v))), LIBRARY_NAMESPACES);
  });

  it('is what typical conditions need; a library call or namespace needs the libraries', () => {
    for (const expression of TYPICAL) assert.equal(needsLibraries(expression), false, expression);
    for (const expression of [
      "quantity('1Gi').isGreaterThan(quantity('1Mi'))",
      "object.metadata.name.matches('^a')",
      'sets.contains([1], [1])',
      "object.spec.x.split(',').size() == 2",
      "'a' in strings.quote('a')",
      "net.IP == type(ip('1.2.3.4'))",
    ])
      assert.equal(needsLibraries(expression), true, expression);
    // A field with a library's name is no call of it.
    assert.equal(needsLibraries('object.spec.format == object.net.ip'), false);
  });

  it('leaves string() and type() to every environment unless a value of a library type can reach them', () => {
    // Only a library function, a policy's variables or a kubernetes type name bring such a value.
    for (const expression of [
      "'at most 5 replicas, got ' + string(object.spec.replicas)",
      'type(object.spec.replicas) == int',
      "string(request.userInfo.groups[0]) == 'dev'",
    ])
      assert.equal(needsLibraries(expression), false, expression);
    for (const expression of [
      "string(variables.address) == '10.0.0.1'",
      'type(variables.limit) == int',
      'type(object.x) == kubernetes.Quantity',
      "string(ip('10.0.0.1'))",
      "string(cidr('10.0.0.0/8')) + string(1)",
    ])
      assert.equal(needsLibraries(expression), true, expression);
  });

  it('answers typical conditions as the full environment does', () => {
    const variables = {
      object: { metadata: { labels: { app: 'x' } }, spec: { containers: [{ image: 'i', name: 'app-1' }] } },
      request: { namespace: 'default', userInfo: { groups: ['a'] } },
    };
    for (const expression of TYPICAL) {
      const compiled = compileExpression(expression);
      assert.ok(!isCompileError(compiled), expression);
      assert.equal(compiled.type, 'bool');
      assert.equal(compiled.run(variables), true, expression);
    }
  });
});
