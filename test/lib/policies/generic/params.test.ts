// Params of validating policies, restated from apiserver admission/plugin/policy/validating
// admission_test.go: TestParamRef (every valid paramRef shape, for a namespaced and a
// cluster-scoped param kind, a namespaced and a cluster-scoped request, then with its params
// deleted), TestNamespaceParamRefName, TestMultiplePoliciesSharedParamType, and
// TestReconfigureBinding / TestRemoveBinding / TestRemoveDefinition (the informer's updates as
// dispatches with the new specs). Which params were evaluated is read from the Audit action's
// validation_failure annotation: each failed evaluation names its param. Every case is evaluated
// natively and in-function (both-ways.ts), the two answers equal.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ParamRef } from '../../../../lib/policies/generic/types.ts';
import { VALIDATION_FAILURE_ANNOTATION, type PoliciesVerdict } from '../../../../lib/policies/validating/dispatcher.ts';
import type { ValidatingBindingSpec, ValidatingPolicySpec } from '../../../../lib/policies/validating/types.ts';
import type { AdmissionRequest, KubeObject } from '../../../../lib/review/schemas.ts';
import { bothWays, compared } from '../validating/both-ways.ts';

const NAMESPACED = { apiVersion: 'example.com/v1', kind: 'ParamsConfig' };
const CLUSTER = { apiVersion: 'example.com/v1', kind: 'ClusterScopedParamsConfig' };
const NAME = 'replicas-test.example.com';
const MATCHING_NS = 'mynamespace';
const OTHER_NS = 'othernamespace';
const yes = { doesitmatch: 'yes' };
const no = { doesitmatch: 'no' };
const unaffiliated = { notaffiliated: 'no' };

const newParam = (name: string, namespace: string, labels: Record<string, string>): KubeObject =>
  ({ ...NAMESPACED, metadata: { name, namespace, labels } }) as KubeObject;
const newClusterParam = (name: string, labels: Record<string, string>): KubeObject =>
  ({ ...CLUSTER, metadata: { name, labels } }) as KubeObject;

/** The library of params that tries to fool the lookup (as the Go test builds it). */
const library: KubeObject[] = [
  ...[no, yes, unaffiliated].flatMap((labels, i) =>
    ['default', MATCHING_NS, OTHER_NS].map((ns) => newParam(NAME + (i ? String(i) : ''), ns, labels)),
  ),
  newParam(`${NAME}3`, 'default', unaffiliated),
  newParam(`${NAME}3`, MATCHING_NS, yes),
  newParam(`${NAME}3`, OTHER_NS, yes),
  newClusterParam(NAME, yes),
  newClusterParam(`${NAME}1`, no),
  newClusterParam(`${NAME}2`, unaffiliated),
  newClusterParam(`${NAME}3`, yes),
  newClusterParam(`${NAME}4`, no),
  newClusterParam(`${NAME}5`, unaffiliated),
];

const request = (object: KubeObject, namespace: string): AdmissionRequest =>
  ({
    uid: 'u',
    kind: { group: 'example.com', version: 'v1', kind: object.kind },
    resource: { group: 'example.com', version: 'v1', resource: `${object.kind!.toLowerCase()}s` },
    name: object.metadata!.name,
    namespace,
    operation: 'CREATE',
    userInfo: { username: 'u' },
    object,
  }) as AdmissionRequest;
const namespacedRequest = request(newParam('some param', OTHER_NS, {}), OTHER_NS);
const clusterRequest = request(newClusterParam('other param', {}), '');

const everything = {
  resourceRules: [{ operations: ['*' as const], apiGroups: ['*'], apiVersions: ['*'], resources: ['*'] }],
};
const policyOf = (
  name: string,
  paramKind: typeof NAMESPACED | undefined,
  expression = 'false',
): ValidatingPolicySpec => ({
  name,
  ...(paramKind ? { paramKind } : {}),
  failurePolicy: 'Fail',
  matchConstraints: everything,
  validations: [
    {
      expression,
      messageExpression: paramKind
        ? "params.metadata.?namespace.orValue('') + '/' + params.metadata.name"
        : "'no params'",
    },
  ],
});
const bindingOf = (policyName: string, paramRef?: ParamRef, name = `${policyName}-binding`): ValidatingBindingSpec => ({
  name,
  policyName,
  ...(paramRef ? { paramRef } : {}),
  validationActions: ['Audit', 'Deny'],
});

/** The params each evaluation saw (namespace/name), from the audit annotation. */
function evaluated(verdict: PoliciesVerdict): string[] {
  const value = verdict.auditAnnotations[VALIDATION_FAILURE_ANNOTATION];
  return value ? (JSON.parse(value) as Array<{ message: string }>).map((f) => f.message).sort() : [];
}
const key = (p: KubeObject) => `${p.metadata!.namespace ?? ''}/${p.metadata!.name}`;

interface Shape {
  clusterScoped: boolean;
  name: boolean;
  namespace: boolean;
  selector: boolean;
  denyNotFound: boolean;
}

/** The valid shapes, named as the Go test names its subtests. */
function shapes(): Array<Shape & { title: string }> {
  const out: Array<Shape & { title: string }> = [];
  for (const clusterScoped of [false, true])
    for (const name of [false, true])
      for (const namespace of [false, true]) {
        if (clusterScoped && namespace) continue;
        for (const selector of [false, true]) {
          if (selector && name) continue;
          for (const denyNotFound of [false, true]) {
            const title = `${clusterScoped ? 'ClusterScoped' : ''}ParamRef${name ? 'WithName' : selector ? 'WithLabelSelector' : 'WithEverythingSelector'}${namespace ? 'WithNamespace' : ''}${denyNotFound ? 'DenyNotFound' : 'AllowNotFound'}`;
            out.push({ title, clusterScoped, name, namespace, selector, denyNotFound });
          }
        }
      }
  return out;
}

/** The params a shape must find for a request in `requestNamespace`, computed independently of the code. */
function expected(s: Shape, ref: ParamRef, requestNamespace: string): string[] {
  const kind = s.clusterScoped ? CLUSTER : NAMESPACED;
  return library
    .filter((p) => p.kind === kind.kind)
    .filter((p) => !ref.name || p.metadata!.name === ref.name)
    .filter((p) => !ref.namespace || p.metadata!.namespace === ref.namespace)
    .filter((p) => s.clusterScoped || ref.namespace || p.metadata!.namespace === requestNamespace)
    .filter((p) => {
      const wanted = ref.selector?.matchLabels ?? {};
      return Object.entries(wanted).every(([k, v]) => p.metadata!.labels?.[k] === v);
    })
    .map(key)
    .sort();
}

describe('admission_test.go TestParamRef', () => {
  for (const s of shapes()) {
    it(s.title, async () => {
      const ref: ParamRef = {
        ...(s.name ? { name: NAME } : { selector: s.selector ? { matchLabels: yes } : {} }),
        ...(s.namespace ? { namespace: MATCHING_NS } : {}),
        parameterNotFoundAction: s.denyNotFound ? 'Deny' : 'Allow',
      };
      const policy = policyOf('denypolicy.example.com', s.clusterScoped ? CLUSTER : NAMESPACED);
      const hooks = [{ spec: policy, bindings: [bindingOf('denypolicy.example.com', ref)] }];
      const namespaced = (k: { kind: string }) => k.kind === NAMESPACED.kind;
      const withParams = { params: library, namespacedKinds: namespaced };
      const withoutParams = { params: [], namespacedKinds: namespaced };
      const errorsOnCluster = !s.namespace && !s.clusterScoped;
      const clusterError =
        /failed to configure binding: cannot use namespaced paramRef in policy binding that matches cluster-scoped resources$/;
      const notFound =
        /failed to configure binding: no params found for policy binding with `Deny` parameterNotFoundAction$/;

      const ns = await bothWays(hooks, namespacedRequest, withParams);
      const wantNs = expected(s, ref, OTHER_NS);
      assert.ok(wantNs.length > 0, 'every shape finds a param');
      assert.deepEqual(evaluated(ns), wantNs);
      assert.match(ns.status!.message, /denied request: /);

      const cluster = await bothWays(hooks, clusterRequest, withParams);
      if (errorsOnCluster) {
        assert.match(cluster.status!.message, clusterError);
        assert.deepEqual(evaluated(cluster), []);
      } else {
        const wantCluster = expected(s, ref, '');
        assert.ok(wantCluster.length > 0);
        assert.deepEqual(evaluated(cluster), wantCluster);
      }

      // Every param deleted: parameterNotFoundAction decides.
      for (const [req, clusterScopedRequest] of [
        [namespacedRequest, false],
        [clusterRequest, true],
      ] as const) {
        const gone = await bothWays(hooks, req, withoutParams);
        assert.deepEqual(evaluated(gone), []);
        if (clusterScopedRequest && errorsOnCluster) assert.match(gone.status!.message, clusterError);
        else if (s.denyNotFound) assert.match(gone.status!.message, notFound);
        else assert.equal(gone.allowed, true);
      }
    });
  }
});

describe('admission_test.go: params by name, shared kinds, reconfiguration', () => {
  const configMap = (namespace: string): KubeObject =>
    ({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: NAME, namespace, resourceVersion: '1' },
      data: { coolkey: namespace },
    }) as KubeObject;
  const configMaps = ['default', MATCHING_NS, OTHER_NS].map(configMap);

  it('TestNamespaceParamRefName: a paramRef by name finds the param of the request namespace', async () => {
    const cmKind = { apiVersion: 'v1', kind: 'ConfigMap' };
    const policy = {
      ...policyOf('denypolicy.example.com', cmKind),
      validations: [{ expression: 'false', messageExpression: "'correct type ' + params.data.coolkey" }],
    };
    const hooks = [{ spec: policy, bindings: [bindingOf('denypolicy.example.com', { name: NAME })] }];
    const seen: Array<string | undefined> = [];
    for (const ns of ['default', MATCHING_NS, OTHER_NS, 'default']) {
      const verdict = await bothWays(hooks, request(configMap(ns), ns), { params: configMaps });
      assert.match(verdict.status!.message, /correct type /);
      seen.push(evaluated(verdict)[0]);
    }
    assert.deepEqual(seen, [
      'correct type default',
      'correct type mynamespace',
      'correct type othernamespace',
      'correct type default',
    ]);
  });

  it('TestMultiplePoliciesSharedParamType: a policy dropping its paramKind leaves the other its params', async () => {
    const params = { params: [newParam(NAME, 'default', {})] };
    const ref: ParamRef = { name: NAME, parameterNotFoundAction: 'Deny' };
    const req = request(newParam(NAME, 'default', {}), 'default');
    const policy2 = {
      ...policyOf('denypolicy2.example.com', NAMESPACED),
      validations: [{ expression: 'false', message: 'Policy2Denied' }],
    };
    const hooks = (policy1: ValidatingPolicySpec, ref1?: ParamRef) => [
      {
        spec: policy1,
        bindings: [bindingOf(policy1.name, ref1, 'denybinding1.example.com')],
      },
      { spec: policy2, bindings: [bindingOf('denypolicy2.example.com', ref, 'denybinding2.example.com')] },
    ];
    const admits = { ...policyOf('denypolicy1.example.com', NAMESPACED, 'true') };
    const first = await bothWays(hooks(admits, ref), req, params);
    assert.match(first.status!.message, /with binding 'denybinding2.example.com' denied request: Policy2Denied$/);
    const { paramKind: _, ...withoutParamKind } = admits;
    const second = await bothWays(hooks({ ...withoutParamKind, validations: [{ expression: 'true' }] }), req, params);
    assert.match(second.status!.message, /denied request: Policy2Denied$/);
  });

  it('TestReconfigureBinding, TestRemoveBinding, TestRemoveDefinition: the specs in force decide', async () => {
    const params = { params: [newParam(NAME, 'default', {})] };
    const req = request(newParam(NAME, 'default', {}), 'default');
    const policy = policyOf('denypolicy.example.com', NAMESPACED);
    const denied = await bothWays(
      [
        {
          spec: policy,
          bindings: [bindingOf('denypolicy.example.com', { name: NAME, parameterNotFoundAction: 'Deny' })],
        },
      ],
      req,
      params,
    );
    assert.equal(denied.allowed, false);
    // The binding now names a param that does not exist.
    const reconfigured = await bothWays(
      [
        {
          spec: policy,
          bindings: [
            bindingOf('denypolicy.example.com', {
              name: 'replicas-test2.example.com',
              parameterNotFoundAction: 'Deny',
            }),
          ],
        },
      ],
      req,
      params,
    );
    assert.match(
      reconfigured.status!.message,
      /no params found for policy binding with `Deny` parameterNotFoundAction$/,
    );
    assert.equal((await bothWays([{ spec: policy, bindings: [] }], req, params)).allowed, true, 'binding removed');
    assert.equal((await bothWays([], req, params)).allowed, true, 'definition removed');
  });
});

describe('both-ways.ts', () => {
  it('compared the in-function answers of the cases above', () =>
    assert.ok(compared.pairs > 50, String(compared.pairs)));
});
