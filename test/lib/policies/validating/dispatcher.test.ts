// The validating policy dispatcher (apiserver admission/plugin/policy/validating
// admission_test.go, the tests that need no live informer), restated with real CEL instead of
// the test's fake compiler: denyPolicy denies, its bindings deny, warn and audit; params by name,
// missing, of an unknown kind, a native ConfigMap; audit annotations across bindings.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { paramSourcesOf } from '../../../../lib/policies/generic/params.ts';
import { dispatchValidating, truncateBytes } from '../../../../lib/policies/validating/dispatcher.ts';
import type { ValidatingBindingSpec, ValidatingPolicySpec } from '../../../../lib/policies/validating/types.ts';
import { compileValidatingPolicy } from '../../../../lib/policies/validating/validator.ts';
import type { AdmissionRequest, KubeObject } from '../../../../lib/review/schemas.ts';
import { bothWays, type Cluster, compared } from './both-ways.ts';

const paramsKind = { apiVersion: 'example.com/v1', kind: 'ParamsConfig' };
const param = (name: string, extra: Record<string, unknown> = {}): KubeObject =>
  ({ ...paramsKind, metadata: { name, namespace: 'default', resourceVersion: '1' }, ...extra }) as KubeObject;
const fakeParams = param('replicas-test.example.com', { maxReplicas: 3 });

/** attributeRecord(nil, fakeParams, Create): a create of the params object itself. */
const attr: AdmissionRequest = {
  uid: 'u',
  kind: { group: 'example.com', version: 'v1', kind: 'ParamsConfig' },
  resource: { group: 'example.com', version: 'v1', resource: 'paramsconfigs' },
  name: fakeParams.metadata!.name,
  namespace: 'default',
  operation: 'CREATE',
  userInfo: { username: 'dave' },
  object: fakeParams,
} as AdmissionRequest;

const everything = {
  resourceRules: [{ operations: ['*' as const], apiGroups: ['*'], apiVersions: ['*'], resources: ['*'] }],
};
const denyPolicy = (extra: Partial<ValidatingPolicySpec> = {}): ValidatingPolicySpec => ({
  name: 'denypolicy.example.com',
  paramKind: paramsKind,
  failurePolicy: 'Fail',
  matchConstraints: everything,
  validations: [{ expression: 'false', message: 'Denied' }],
  ...extra,
});
const binding = (extra: Partial<ValidatingBindingSpec> = {}): ValidatingBindingSpec => ({
  name: 'denybinding.example.com',
  policyName: 'denypolicy.example.com',
  paramRef: { name: fakeParams.metadata!.name, namespace: 'default', parameterNotFoundAction: 'Deny' },
  validationActions: ['Deny'],
  ...extra,
});
const env = (objects: KubeObject[] = [fakeParams]): Cluster => ({ params: objects });
/** Dispatches natively and, served as a webhook, in-function: the answers must be equal (both-ways.ts). */
const dispatch = (policy: ValidatingPolicySpec, bindings: ValidatingBindingSpec[], cluster: Cluster = env()) =>
  bothWays([{ spec: policy, bindings }], attr, cluster);

describe('admission_test.go', () => {
  it('TestBasicPolicyDefinitionFailure: denied, no warnings, no annotations', async () => {
    const got = await dispatch(denyPolicy(), [binding()]);
    assert.equal(got.allowed, false);
    assert.equal(
      got.status?.message,
      `paramsconfigs.example.com "replicas-test.example.com" is forbidden: ValidatingAdmissionPolicy 'denypolicy.example.com' with binding 'denybinding.example.com' denied request: Denied`,
    );
    assert.equal(got.status?.code, 422);
    assert.equal(got.status?.reason, 'Invalid');
    assert.deepEqual(got.warnings, []);
    assert.deepEqual(got.auditAnnotations, {});
  });
  it('TestDefinitionDoesntMatch: a policy whose constraints miss is not evaluated', async () => {
    const evenNames = { ...everything, objectSelector: { matchLabels: { even: 'true' } } };
    assert.equal((await dispatch(denyPolicy({ matchConstraints: evenNames }), [binding()])).allowed, true);
  });
  it('TestInvalidParamSourceGVK: the policy fails to configure', async () => {
    // Natively only: a function's params are its own, of its own kind.
    const got = dispatchValidating(
      [
        {
          policy: compileValidatingPolicy(
            denyPolicy({ paramKind: { apiVersion: 'example.com/v1', kind: 'BadParamKind' } }),
          ),
          bindings: [binding()],
        },
      ],
      attr,
      { params: (k) => (k.kind === 'BadParamKind' ? undefined : paramSourcesOf([])(k)) },
    );
    assert.match(
      got.status!.message,
      /failed to configure policy: failed to find resource referenced by paramKind: 'example.com\/v1, Kind=BadParamKind'/,
    );
  });
  it('TestInvalidParamSourceInstanceName: a missing param under Deny', async () => {
    const got = await dispatch(denyPolicy(), [binding()], env([]));
    assert.match(
      got.status!.message,
      /failed to configure binding: no params found for policy binding with `Deny` parameterNotFoundAction/,
    );
  });
  it('TestEmptyParamRef: evaluated once with null params', async () => {
    const policy = denyPolicy({ validations: [{ expression: 'params != null', message: 'Denied' }] });
    assert.match((await dispatch(policy, [binding({ paramRef: undefined })])).status!.message, /Denied$/);
  });
  it('TestEmptyParamSource: a binding paramRef without a paramKind is ignored', async () => {
    const got = await dispatch(denyPolicy({ paramKind: undefined }), [binding()], {});
    assert.match(got.status!.message, /Denied$/);
  });
  it('TestNativeTypeParam: a ConfigMap param', async () => {
    const cm = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: fakeParams.metadata!.name, namespace: 'default' },
      data: { coolkey: 'coolvalue' },
    } as KubeObject;
    const policy = denyPolicy({
      paramKind: { apiVersion: 'v1', kind: 'ConfigMap' },
      validations: [
        {
          expression: 'false',
          messageExpression: "params.data.coolkey == 'coolvalue' ? 'correct type' : 'Incorrect param type'",
        },
      ],
    });
    assert.match((await dispatch(policy, [binding()], env([cm]))).status!.message, /correct type$/);
  });
  it('TestAuditValidationAction: both failures in the annotation, allowed', async () => {
    const p = (n: number, message: string) =>
      denyPolicy({
        name: `denypolicy${n}.example.com`,
        paramKind: undefined,
        validations: [{ expression: 'false', message }],
      });
    const b = (n: number) =>
      binding({
        name: `denybinding${n}.example.com`,
        policyName: `denypolicy${n}.example.com`,
        paramRef: undefined,
        validationActions: ['Audit'],
      });
    const got = await bothWays(
      [
        { spec: p(1, "I'm sorry Dave"), bindings: [b(1)] },
        { spec: p(2, "I can't do that"), bindings: [b(2)] },
      ],
      attr,
    );
    assert.equal(got.allowed, true);
    assert.deepEqual(got.warnings, []);
    assert.deepEqual(Object.keys(got.auditAnnotations), ['validation.policy.admission.k8s.io/validation_failure']);
    assert.deepEqual(JSON.parse(got.auditAnnotations['validation.policy.admission.k8s.io/validation_failure']!), [
      {
        message: "I'm sorry Dave",
        policy: 'denypolicy1.example.com',
        binding: 'denybinding1.example.com',
        expressionIndex: 0,
        validationActions: ['Audit'],
      },
      {
        message: "I can't do that",
        policy: 'denypolicy2.example.com',
        binding: 'denybinding2.example.com',
        expressionIndex: 0,
        validationActions: ['Audit'],
      },
    ]);
  });
  const sorry = denyPolicy({ paramKind: undefined, validations: [{ expression: 'false', message: "I'm sorry Dave" }] });
  const warning =
    "Validation failed for ValidatingAdmissionPolicy 'denypolicy.example.com' with binding 'denybinding.example.com': I'm sorry Dave";
  it('TestWarnValidationAction: one warning, allowed, no annotations', async () => {
    const got = await dispatch(sorry, [binding({ paramRef: undefined, validationActions: ['Warn'] })], {});
    assert.deepEqual(got, { allowed: true, warnings: [warning], auditAnnotations: {} });
  });
  it('TestAllValidationActions: denied, warned and audited', async () => {
    const got = await dispatch(
      sorry,
      [binding({ paramRef: undefined, validationActions: ['Deny', 'Warn', 'Audit'] })],
      {},
    );
    assert.equal(got.allowed, false);
    assert.deepEqual(got.warnings, [warning]);
    assert.deepEqual(JSON.parse(got.auditAnnotations['validation.policy.admission.k8s.io/validation_failure']!), [
      {
        message: "I'm sorry Dave",
        policy: 'denypolicy.example.com',
        binding: 'denybinding.example.com',
        expressionIndex: 0,
        validationActions: ['Deny', 'Warn', 'Audit'],
      },
    ]);
  });
  it('TestNamespaceParamRefClusterScopedParamError: a namespace for a cluster-scoped paramKind', async () => {
    const clusterEnv = { params: [], namespacedKinds: () => false };
    const got = await dispatch(denyPolicy(), [binding({ paramRef: { name: 'x', namespace: 'default' } })], clusterEnv);
    assert.match(got.status!.message, /paramRef.namespace must not be provided for a cluster-scoped `paramKind`/);
  });
  it('TestAuditAnnotations: values of bindings joined once each; an erring annotation denies', async () => {
    const params2 = param('replicas-test2.example.com');
    const params3 = param('replicas-test3.example.com');
    const policy = denyPolicy({
      validations: [],
      auditAnnotations: [
        {
          key: 'example-key',
          valueExpression: "params.metadata.name == 'replicas-test2.example.com' ? 'special-value' : 'normal-value'",
        },
        { key: 'excluded-key', valueExpression: 'null' },
        {
          key: 'error-key',
          valueExpression: "string(1 / (size(params.metadata.name) - size(params.metadata.name))) + 'example error'",
        },
      ],
    });
    const b = (n: string, name: string) =>
      binding({
        name: `denybinding${n}.example.com`,
        paramRef: { name, namespace: 'default', parameterNotFoundAction: 'Deny' },
      });
    const got = await dispatch(
      policy,
      [b('', fakeParams.metadata!.name!), b('2', params2.metadata!.name!), b('3', params3.metadata!.name!)],
      env([fakeParams, params2, params3]),
    );
    assert.deepEqual(Object.keys(got.auditAnnotations), ['denypolicy.example.com/example-key']);
    assert.deepEqual(got.auditAnnotations['denypolicy.example.com/example-key']!.split(', ').sort(), [
      'normal-value',
      'special-value',
    ]);
    assert.equal(got.allowed, false);
    assert.match(got.status!.message, /resulted in error: division by zero/);
  });
});

describe('the dispatcher beyond the restated tests', () => {
  it('reason to status code: Forbidden 403, Unauthorized 401, RequestEntityTooLarge 413', async () => {
    for (const [reason, code] of [
      ['Forbidden', 403],
      ['Unauthorized', 401],
      ['RequestEntityTooLarge', 413],
      ['Invalid', 422],
    ] as const) {
      const got = await dispatch(
        denyPolicy({ paramKind: undefined, validations: [{ expression: 'false', reason }] }),
        [binding({ paramRef: undefined })],
        {},
      );
      assert.deepEqual([got.status?.code, got.status?.reason], [code, reason]);
    }
  });
  it('an audit annotation value is cut at 10 KiB of UTF-8 as Go cuts it (a split character: one U+FFFD a byte)', async () => {
    assert.equal(truncateBytes('abc', 2), 'ab');
    assert.equal(truncateBytes('a\u20acb', 3), 'a\ufffd\ufffd');
    assert.equal(truncateBytes('a\u20acb', 4), 'a\u20ac');
    const policy = denyPolicy({
      paramKind: undefined,
      validations: [],
      auditAnnotations: [{ key: 'k', valueExpression: 'string(object.big)' }],
    });
    const got = dispatchValidating(
      [{ policy: compileValidatingPolicy(policy), bindings: [binding({ paramRef: undefined })] }],
      { ...attr, object: { ...fakeParams, big: '\u20ac'.repeat(4000) } as KubeObject },
      {},
    );
    const value = got.auditAnnotations['denypolicy.example.com/k']!;
    assert.equal(value, `${'\u20ac'.repeat(3413)}\ufffd`);
  });
  it('failurePolicy Ignore admits configuration errors', async () => {
    const got = await dispatch(denyPolicy({ failurePolicy: 'Ignore' }), [binding()], env([]));
    assert.equal(got.allowed, true);
  });
  it('a policy without matchConstraints fails to configure', async () => {
    const got = await dispatch(denyPolicy({ matchConstraints: undefined }), [binding()]);
    assert.match(
      got.status!.detail,
      /^ValidatingAdmissionPolicy 'denypolicy.example.com' denied request: failed to configure policy: policy contained no match constraints, a required field$/,
    );
  });
  it('a binding whose matchResources miss is not evaluated', async () => {
    const got = await dispatch(denyPolicy(), [
      binding({
        matchResources: {
          resourceRules: [{ operations: ['DELETE'], apiGroups: ['*'], apiVersions: ['*'], resources: ['*'] }],
          matchPolicy: 'Equivalent',
        },
      }),
    ]);
    assert.equal(got.allowed, true);
  });
  it('namespaceObject is the request namespace', async () => {
    const policy = denyPolicy({
      paramKind: undefined,
      validations: [{ expression: "namespaceObject.metadata.labels.team == 'a'" }],
    });
    const ns = (team: string) => ({
      namespaces: [
        { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'default', labels: { team } } } as KubeObject,
      ],
    });
    assert.equal((await dispatch(policy, [binding({ paramRef: undefined })], ns('a'))).allowed, true);
    assert.equal((await dispatch(policy, [binding({ paramRef: undefined })], ns('b'))).allowed, false);
  });
});

describe('both-ways.ts', () => {
  it('compared the in-function answers of the cases above', () =>
    assert.ok(compared.pairs > 15, String(compared.pairs)));
});
