// Type checking of ValidatingAdmissionPolicy against the kinds it matches, restated from apiserver
// admission/plugin/policy/validating typechecking_test.go: TestExtractTypeNames (which kinds the
// rules resolve to, with a RESTMapper of pods and deployments) and TestTypeCheck (each row's
// schema returned for every kind, as the test's fake resolver does), then the same checks with the
// built-in kinds' own schemas, as `klw lint` runs them.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { on } from '../../../../lib/index.ts';
import { Deployment } from '../../../../lib/k8s/kinds.ts';
import type { OpenApiSchema } from '../../../../lib/policies/generic/schema-types.ts';
import { defineValidatingPolicy } from '../../../../lib/policies/validating/define.ts';
import {
  type ExpressionWarning,
  type TypeCheckSource,
  typeCheckPolicySpec,
  typeCheckValidatingPolicy,
  typesToCheck,
} from '../../../../lib/policies/validating/typecheck.ts';
import type { ValidatingPolicySpec } from '../../../../lib/policies/validating/types.ts';

type Rule = { apiGroups: string[]; apiVersions: string[]; resources: string[] };
const rule = (apiGroups: string[], apiVersions: string[], resources: string[]) => ({
  operations: ['*' as const],
  apiGroups,
  apiVersions,
  resources,
});
const policy = (rules: Rule[], extra: Partial<ValidatingPolicySpec> = {}): ValidatingPolicySpec => ({
  name: 'p',
  matchConstraints: { resourceRules: rules.map((r) => rule(r.apiGroups, r.apiVersions, r.resources)) },
  ...extra,
});

/** buildTypeChecker: a RESTMapper of pods and deployments, a resolver returning one schema for every kind. */
function fakeSource(schema: OpenApiSchema | undefined): TypeCheckSource {
  const kinds: Record<string, string> = { '/v1/pods': 'Pod', 'apps/v1/deployments': 'Deployment' };
  return {
    kindsFor: ({ group, version, resource }) => {
      const kind = kinds[`${group}/${version}/${resource}`];
      return kind ? [{ group, version, kind }] : [];
    },
    typeOf: (gvk, types) => (schema ? (types.openApi(schema, gvk.kind, true) ?? 'dyn') : undefined),
  };
}

describe('typechecking_test.go TestExtractTypeNames', () => {
  const rows: Array<[string, ValidatingPolicySpec, string[]]> = [
    ['empty', { name: 'p' }, []],
    ['specific', policy([rule(['apps'], ['v1'], ['deployments'])]), ['apps/v1 Deployment']],
    [
      'multiple',
      policy([rule(['apps'], ['v1'], ['deployments']), rule([''], ['v1'], ['pods'])]),
      ['/v1 Pod', 'apps/v1 Deployment'],
    ],
    ['all resources', policy([rule(['apps'], ['v1'], ['*'])]), []],
    ['sub resources', policy([rule(['apps'], ['v1'], ['pods/*'])]), []],
    [
      'mixtures',
      policy([rule(['apps'], ['v1'], ['deployments']), rule(['apps'], ['*'], ['deployments'])]),
      ['apps/v1 Deployment'],
    ],
  ];
  for (const [name, spec, want] of rows)
    it(name, () => {
      const got = typesToCheck(spec, fakeSource(undefined)).map((k) => `${k.group}/${k.version} ${k.kind}`);
      assert.deepEqual(got, want);
    });
});

const string: OpenApiSchema = { type: 'string' };
const int64: OpenApiSchema = { type: 'integer', format: 'int64' };
const objectOf = (properties: Record<string, OpenApiSchema>): OpenApiSchema => ({ type: 'object', properties });
const deployments = policy([rule(['apps'], ['v1'], ['deployments'])]);
const deploymentPolicy = (
  validations: ValidatingPolicySpec['validations'],
  extra: Partial<ValidatingPolicySpec> = {},
) => ({
  ...deployments,
  validations,
  ...extra,
});
const fooIsBar = deploymentPolicy([{ expression: "object.foo == 'bar'" }]);

type Assertion = (warnings: ExpressionWarning[]) => void;
const toBeEmpty: Assertion = (w) => assert.deepEqual(w, []);
const toHaveLengthOf =
  (n: number): Assertion =>
  (w) =>
    assert.equal(w.length, n);
const toHaveFieldRef =
  (...paths: string[]): Assertion =>
  (w) =>
    assert.deepEqual(
      w.map((x) => x.fieldRef),
      paths,
    );
const toContain =
  (text: string): Assertion =>
  (w) => {
    assert.ok(w.length > 0, `expected a warning containing ${text}`);
    for (const x of w) assert.ok(x.warning.includes(text), x.warning);
  };

describe('typechecking_test.go TestTypeCheck', () => {
  const rows: Array<[string, ValidatingPolicySpec, OpenApiSchema | undefined, Assertion[]]> = [
    ['empty', { name: 'p' }, undefined, [toBeEmpty]],
    ['unresolved schema', fooIsBar, undefined, [toBeEmpty]],
    ['passed check', fooIsBar, objectOf({ foo: string }), [toBeEmpty]],
    [
      'undefined field',
      fooIsBar,
      objectOf({ bar: string }),
      [toHaveFieldRef('spec.validations[0].expression'), toContain("undefined field 'foo'")],
    ],
    [
      'field type mismatch',
      fooIsBar,
      objectOf({ foo: int64 }),
      [toHaveFieldRef('spec.validations[0].expression'), toContain('found no matching overload')],
    ],
    [
      'params',
      deploymentPolicy([{ expression: 'object.foo == params.bar' }], {
        paramKind: { apiVersion: 'v1', kind: 'DoesNotMatter' },
      }),
      objectOf({ foo: string }),
      [toHaveFieldRef('spec.validations[0].expression'), toContain("undefined field 'bar'")],
    ],
    [
      'params with untyped schema',
      deploymentPolicy([{ expression: 'params != null' }], { paramKind: { apiVersion: 'v1', kind: 'Config' } }),
      {},
      [toBeEmpty],
    ],
    [
      'multiple expressions',
      deploymentPolicy([{ expression: "object.foo == 'bar'" }, { expression: "object.bar == 'foo'" }]),
      objectOf({ foo: string }),
      [toHaveFieldRef('spec.validations[1].expression'), toHaveLengthOf(1)],
    ],
    [
      'message expressions',
      deploymentPolicy([{ expression: "object.foo == 'bar'", messageExpression: 'object.foo + 114514' }]),
      objectOf({ foo: string }),
      [toHaveFieldRef('spec.validations[0].messageExpression'), toHaveLengthOf(1)],
    ],
    [
      'authorizer',
      deploymentPolicy([{ expression: "authorizer.group('').resource('endpoints').check('create').allowed()" }]),
      objectOf({ foo: string }),
      [toBeEmpty],
    ],
    [
      'authorizer invalid',
      deploymentPolicy([{ expression: 'authorizer.allowed()' }]),
      objectOf({ foo: string }),
      [
        toHaveFieldRef('spec.validations[0].expression'),
        toHaveLengthOf(1),
        toContain("found no matching overload for 'allowed' applied to 'kubernetes.authorization.Authorizer"),
      ],
    ],
    [
      'additionalProperties: true',
      {
        ...policy([rule(['example.com'], ['v1alpha1'], ['reproducers'])]),
        validations: [{ expression: 'has(object.spec.text)' }],
      },
      objectOf({
        spec: objectOf({ text: string }),
        status: objectOf({ problematicProperty: { type: 'object', additionalProperties: true } }),
      }),
      [toBeEmpty],
    ],
    ['schema without type', deploymentPolicy([{ expression: 'true' }]), {}, [toBeEmpty]],
    [
      'variables valid',
      deploymentPolicy([{ expression: 'variables.works' }], { variables: [{ name: 'works', expression: 'true' }] }),
      objectOf({ foo: int64 }),
      [toHaveLengthOf(0)],
    ],
    [
      'variables missing field',
      deploymentPolicy([{ expression: 'variables.nonExisting' }], {
        variables: [{ name: 'works', expression: 'true' }],
      }),
      objectOf({ foo: int64 }),
      [toHaveLengthOf(1), toHaveFieldRef('spec.validations[0].expression'), toContain("undefined field 'nonExisting'")],
    ],
    [
      'variables field wrong type',
      deploymentPolicy([{ expression: 'variables.name == object.foo' }], {
        variables: [{ name: 'name', expression: "'something'" }],
      }),
      objectOf({ foo: int64 }),
      [
        toHaveLengthOf(1),
        toHaveFieldRef('spec.validations[0].expression'),
        toContain("found no matching overload for '_==_' applied to '(string, int)"),
      ],
    ],
    [
      'error in variables, not reported during type checking.',
      deploymentPolicy([{ expression: 'variables.name == object.foo' }], {
        variables: [{ name: 'name', expression: "object.foo == 'str'" }],
      }),
      objectOf({ foo: int64 }),
      [toHaveLengthOf(0)],
    ],
  ];
  for (const [name, spec, schema, assertions] of rows)
    it(name, () => {
      const warnings = typeCheckPolicySpec(spec, fakeSource(schema));
      for (const a of assertions) a(warnings);
    });

  it("a warning names each kind, as Go prints it, then cel-go's issues", () => {
    const both = policy([rule(['apps'], ['v1'], ['deployments']), rule([''], ['v1'], ['pods'])], {
      validations: [{ expression: "object.foo == 'bar'" }],
    });
    const [w] = typeCheckPolicySpec(both, fakeSource(objectOf({ bar: string })));
    const issue = "ERROR: <input>:1:7: undefined field 'foo'\n | object.foo == 'bar'\n | ......^\n";
    assert.equal(w!.warning, `/v1, Kind=Pod: ${issue}\napps/v1, Kind=Deployment: ${issue}`);
  });
});

describe('type checking with the built-in kinds', () => {
  const webhook = defineValidatingPolicy({
    name: 'replicas',
    matchConstraints: { resourceRules: [on(Deployment).create().update()] },
    variables: [{ name: 'name', expression: 'object.metadata.name' }],
    validations: [
      { expression: 'object.spec.replicas <= 5', messageExpression: "'too many: ' + object.spec.replicas" },
      { expression: "object.spec.template.spec.containers.all(c, c.image.startsWith('registry.example/'))" },
      { expression: 'object.spec.replica > 1' },
      {
        expression:
          "variables.name.startsWith('web') && object.metadata.creationTimestamp < timestamp('2030-01-01T00:00:00Z')",
      },
      { expression: "object.spec.template.spec.containers.all(c, c.resources.limits['cpu'] == '1')" },
    ],
  });
  it('a typed Deployment: the misspelt field, the int added to a string', () => {
    const warnings = typeCheckValidatingPolicy(webhook, '1.31');
    assert.deepEqual(
      warnings.map((w) => w.fieldRef),
      ['spec.validations[0].messageExpression', 'spec.validations[2].expression'],
    );
    assert.match(
      warnings[0]!.warning,
      /^apps\/v1, Kind=Deployment: ERROR: <input>:1:14: found no matching overload for '_\+_' applied to '\(string, int\)'/,
    );
    assert.match(warnings[1]!.warning, /undefined field 'replica'/);
  });
  it('a kind the version does not serve is not checked; a bad version is refused', () => {
    const old = typeCheckValidatingPolicy(
      { spec: { ...webhook.validatingPolicy.spec, matchConstraints: deploymentsOf('extensions', 'v1beta1') } },
      '1.31',
    );
    assert.deepEqual(old, []);
    assert.throws(() => typeCheckValidatingPolicy(webhook, 'latest'), /kubernetesVersion "latest": expected 1.<minor>/);
  });
  it('custom kinds are checked with their schema when given', () => {
    const spec = policy([rule(['example.com'], ['v1'], ['widgets'])], {
      validations: [{ expression: 'object.spec.size > 1' }],
    });
    const widget = { group: 'example.com', version: 'v1', kind: 'Widget', resource: 'widgets' };
    assert.deepEqual(typeCheckValidatingPolicy(spec, '1.31'), []);
    const warnings = typeCheckValidatingPolicy(spec, '1.31', {
      customKinds: [{ ...widget, schema: objectOf({ spec: objectOf({ size: string }) }) }],
    });
    assert.match(
      warnings[0]!.warning,
      /^example.com\/v1, Kind=Widget: .*found no matching overload for '_>_' applied to '\(string, int\)'/,
    );
  });
});

function deploymentsOf(group: string, version: string) {
  return { resourceRules: [rule([group], [version], ['deployments'])] };
}
