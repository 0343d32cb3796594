// klw lint of policies: what the API server refuses when a policy or binding is created, restated
// from Kubernetes' pkg/apis/admissionregistration/validation/validation.go
// (validateValidatingAdmissionPolicySpec, validateValidation, validateAuditAnnotation,
// validateVariable, validateMatchConditions, validateValidationActions, validateParamRef), and
// every expression compiled for each cluster's Kubernetes version; messages name file, field, fix.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { lintPolicy, type PolicyLintTarget } from '../../../infra/lint/policies.ts';
import type { PolicyRegistration } from '../../../infra/policies/registration.ts';

const FILE = 'functions/limit/index.ts';
const rules = [
  { operations: ['CREATE'], apiGroups: ['apps'], apiVersions: ['v1'], resources: ['deployments'], scope: '*' },
];

/** A valid validating policy, with `spec` and `binding` merged over it. */
function validating(spec: Record<string, unknown> = {}, binding: Record<string, unknown> = {}): PolicyRegistration {
  return {
    kind: 'ValidatingAdmissionPolicy',
    serve: 'auto',
    policy: {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingAdmissionPolicy',
      metadata: { name: 'limit' },
      spec: {
        failurePolicy: 'Fail',
        matchConstraints: { resourceRules: rules, matchPolicy: 'Equivalent' },
        validations: [{ expression: 'object.spec.replicas <= 5' }],
        ...spec,
      },
    },
    binding: {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingAdmissionPolicyBinding',
      metadata: { name: 'limit' },
      spec: { policyName: 'limit', validationActions: ['Deny'], ...binding },
    },
  };
}

/** A valid mutating policy, with `spec` merged over it. */
function mutating(spec: Record<string, unknown> = {}): PolicyRegistration {
  const base = validating();
  return {
    ...base,
    kind: 'MutatingAdmissionPolicy',
    policy: {
      ...base.policy,
      kind: 'MutatingAdmissionPolicy',
      spec: {
        failurePolicy: 'Fail',
        matchConstraints: { resourceRules: rules },
        reinvocationPolicy: 'Never',
        mutations: [
          {
            patchType: 'ApplyConfiguration',
            applyConfiguration: { expression: 'Object{metadata: Object.metadata{labels: {"a": "b"}}}' },
          },
        ],
        ...spec,
      },
    },
    binding: { ...base.binding, kind: 'MutatingAdmissionPolicyBinding', spec: { policyName: 'limit' } },
  };
}

const messages = (p: PolicyRegistration, targets: PolicyLintTarget[] = [{ label: 'the newest Kubernetes' }]) =>
  lintPolicy('limit', FILE, p, targets).map((f) => `${f.level} ${f.rule}: ${f.message}`);

describe('lint of a policy: what the API server refuses when it is created', () => {
  const table: Array<[string, PolicyRegistration, RegExp]> = [
    [
      'no validations nor auditAnnotations',
      validating({ validations: [] }),
      /spec.validations: validations or auditAnnotations must contain at least one item/,
    ],
    [
      'an empty expression',
      validating({ validations: [{ expression: '  ' }] }),
      /validations\[0\].expression: expression is not specified/,
    ],
    [
      'a blank messageExpression',
      validating({ validations: [{ expression: 'true', messageExpression: ' ' }] }),
      /validations\[0\].messageExpression: must be non-empty if specified/,
    ],
    [
      'a message with a line break',
      validating({ validations: [{ expression: 'true', message: 'a\nb' }] }),
      /validations\[0\].message: message must not contain line breaks/,
    ],
    [
      'an unsupported reason',
      validating({ validations: [{ expression: 'true', reason: 'Teapot' }] }),
      /validations\[0\].reason: "Teapot" is not supported; write one of Unauthorized, Forbidden, Invalid, RequestEntityTooLarge/,
    ],
    [
      'an unsupported failurePolicy',
      validating({ failurePolicy: 'Maybe' }),
      /spec.failurePolicy: "Maybe" is not supported/,
    ],
    [
      'no resourceRules',
      validating({ matchConstraints: { resourceRules: [] } }),
      /spec.matchConstraints.resourceRules: required/,
    ],
    [
      'a variable name that is no CEL identifier',
      validating({ variables: [{ name: 'in', expression: '1' }] }),
      /spec.variables\[0\].name: "in" is not a valid CEL identifier/,
    ],
    [
      'duplicate matchCondition names',
      validating({
        matchConditions: [
          { name: 'a', expression: 'true' },
          { name: 'a', expression: 'true' },
        ],
      }),
      /spec.matchConditions\[1\].name: "a" is a duplicate/,
    ],
    [
      'duplicate auditAnnotation keys',
      validating({
        auditAnnotations: [
          { key: 'k', valueExpression: "'v'" },
          { key: 'k', valueExpression: "'v'" },
        ],
      }),
      /spec.auditAnnotations\[1\].key: "k" is a duplicate/,
    ],
    [
      'an auditAnnotation key too long with the policy name',
      validating({ auditAnnotations: [{ key: 'k'.repeat(64), valueExpression: "'v'" }] }),
      /spec.auditAnnotations\[0\].key: .* is not a qualified name/,
    ],
    [
      'paramKind without kind',
      validating({ paramKind: { apiVersion: 'v1' } }),
      /spec.paramKind: apiVersion and kind are required/,
    ],
    [
      'Deny and Warn together',
      validating({}, { validationActions: ['Deny', 'Warn'] }),
      /binding spec.validationActions: must not contain both Deny and Warn/,
    ],
    [
      'no validationActions',
      validating({}, { validationActions: [] }),
      /binding spec.validationActions: at least one validation action is required/,
    ],
    [
      'a repeated action',
      validating({}, { validationActions: ['Audit', 'Audit'] }),
      /binding spec.validationActions\[1\]: "Audit" is a duplicate/,
    ],
    [
      'paramRef without paramKind',
      validating({}, { paramRef: { name: 'limits', parameterNotFoundAction: 'Deny' } }),
      /binding spec.paramRef: the policy has no paramKind.*add the policy's paramKind or remove paramRef/,
    ],
    [
      'paramRef with name and selector',
      validating(
        { paramKind: { apiVersion: 'v1', kind: 'ConfigMap' } },
        { paramRef: { name: 'a', selector: {}, parameterNotFoundAction: 'Deny' } },
      ),
      /binding spec.paramRef: name and selector are mutually exclusive/,
    ],
    [
      'paramRef without parameterNotFoundAction',
      validating({ paramKind: { apiVersion: 'v1', kind: 'ConfigMap' } }, { paramRef: { name: 'a' } }),
      /binding spec.paramRef.parameterNotFoundAction: undefined is not supported; write Deny or Allow/,
    ],
    ['a mutating policy without mutations', mutating({ mutations: [] }), /spec.mutations: required/],
    [
      'a mutation whose field does not match its patchType',
      mutating({ mutations: [{ patchType: 'JSONPatch', applyConfiguration: { expression: 'x' } }] }),
      /spec.mutations\[0\].jsonPatch.expression: required for patchType JSONPatch/,
    ],
    [
      'an unsupported reinvocationPolicy',
      mutating({ reinvocationPolicy: 'Always' }),
      /spec.reinvocationPolicy: "Always" is not supported; write Never or IfNeeded/,
    ],
  ];
  for (const [what, policy, expected] of table)
    it(`${what}: an error naming the file and the field`, () => {
      const found = messages(policy);
      assert.ok(
        found.some((m) => m.startsWith(`error policy-field: ${FILE}: `) && expected.test(m)),
        found.join('\n') || '(no findings)',
      );
    });

  it('valid policies give no finding', () => {
    assert.deepEqual(messages(validating()), []);
    assert.deepEqual(messages(mutating()), []);
  });

  it('a repeated variable name is a warning: the API server takes it, the last one wins', () => {
    const found = messages(
      validating({
        variables: [
          { name: 'a', expression: '1' },
          { name: 'a', expression: '2' },
        ],
      }),
    );
    assert.deepEqual(found.length, 1);
    assert.match(found[0]!, /^warning policy-field: .*spec.variables\[1\].name: "a" repeats variables\[0\]/);
  });
});

describe('lint of a policy: CEL for each Kubernetes version', () => {
  it('an expression from a newer library is an error for the older clusters only, naming them', () => {
    const policy = validating({ validations: [{ expression: "ip('10.0.0.1').family() == 4" }] });
    const found = messages(policy, [
      { kubernetesVersion: '1.28', label: 'cluster old' },
      { kubernetesVersion: '1.31', label: 'cluster new' },
    ]);
    assert.equal(found.length, 1, found.join('\n'));
    assert.match(
      found[0]!,
      /^error policy-cel: functions\/limit\/index.ts: spec.validations\[0\].expression: .*\(for cluster old\)/s,
    );
  });

  it('a messageExpression that is not a string, an auditAnnotation that does not compile, a bad variable', () => {
    const found = messages(
      validating({
        variables: [{ name: 'n', expression: 'object.spec.replicas +' }],
        validations: [{ expression: 'true', messageExpression: '1 + 2' }],
        auditAnnotations: [{ key: 'k', valueExpression: 'nope(' }],
      }),
    ).join('\n');
    assert.match(found, /spec.variables\[0\].expression: "object.spec.replicas \+": compilation failed/);
    assert.match(found, /spec.validations\[0\].messageExpression: "1 \+ 2": must evaluate to string but got int/);
    assert.match(found, /spec.auditAnnotations\[0\].valueExpression: "nope\(": compilation failed/);
  });

  it('a mutating policy: its mutations and conditions compiled', () => {
    const found = messages(
      mutating({
        matchConditions: [{ name: 'c', expression: '1' }],
        mutations: [{ patchType: 'ApplyConfiguration', applyConfiguration: { expression: "'not an object'" } }],
      }),
    ).join('\n');
    assert.match(found, /spec.matchConditions\[0\].expression: "1": must evaluate to bool/);
    assert.match(found, /spec.mutations\[0\].applyConfiguration.expression: "'not an object'": /);
  });

  it("a mutation is compiled for each version, with the policy's variables and params", () => {
    const policy = mutating({
      variables: [{ name: 'label', expression: "'b'" }],
      mutations: [
        {
          patchType: 'JSONPatch',
          jsonPatch: {
            expression:
              "isIP('10.0.0.1') ? [JSONPatch{op: 'add', path: '/metadata/labels', value: {'a': variables.label}}] : []",
          },
        },
        { patchType: 'JSONPatch', jsonPatch: { expression: 'params.x ? [] : []' } },
      ],
    });
    const found = messages(policy, [
      { kubernetesVersion: '1.29', label: 'cluster old' },
      { kubernetesVersion: '1.31', label: 'cluster new' },
    ]);
    assert.equal(found.length, 2, found.join('\n'));
    assert.match(found[0]!, /spec.mutations\[0\].jsonPatch.expression: .*isIP.*\(for cluster old\)/s);
    assert.match(
      found[1]!,
      /spec.mutations\[1\].jsonPatch.expression: .*undeclared reference to 'params'.*\(for cluster old, cluster new\)/s,
    );
  });
});
