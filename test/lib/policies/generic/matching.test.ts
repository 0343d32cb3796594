// Matching of admission policies (apiserver admission/plugin/policy/matching matching_test.go,
// TestMatcher), restated with the same equivalent resources: deployments co-located in every
// group, each version's kind and its `scale` subresource's kind, and a kind-less widget.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { builtinEquivalents } from '../../../../lib/policies/generic/equivalent.ts';
import { type Equivalent, matchResources } from '../../../../lib/policies/generic/matching.ts';
import type { NamedRuleWithOperations } from '../../../../lib/policies/generic/types.ts';
import type { LabelSelector } from '../../../../lib/registration.ts';
import type { AdmissionRequest } from '../../../../lib/review/schemas.ts';

const gvr = (group: string, version: string, resource: string) => ({ group, version, resource });
const gvk = (group: string, version: string, kind: string) => ({ group, version, kind });

/** The test's mapper: deployments in extensions/v1beta1, apps/v1, apps/v1beta1, apps/v1alpha1. */
const deployments: Array<[ReturnType<typeof gvr>, ReturnType<typeof gvk>, ReturnType<typeof gvk>]> = [
  [
    gvr('extensions', 'v1beta1', 'deployments'),
    gvk('extensions', 'v1beta1', 'Deployment'),
    gvk('extensions', 'v1beta1', 'Scale'),
  ],
  [gvr('apps', 'v1', 'deployments'), gvk('apps', 'v1', 'Deployment'), gvk('autoscaling', 'v1', 'Scale')],
  [gvr('apps', 'v1beta1', 'deployments'), gvk('apps', 'v1beta1', 'Deployment'), gvk('apps', 'v1beta1', 'Scale')],
  [gvr('apps', 'v1alpha1', 'deployments'), gvk('apps', 'v1alpha1', 'Deployment'), gvk('apps', 'v1alpha1', 'Scale')],
];
const equivalents = (resource: ReturnType<typeof gvr>, sub: string): Equivalent[] => {
  if (resource.resource === 'deployments')
    return deployments.map(([r, k, s]) => ({ resource: r, kind: sub === 'scale' ? s : k }));
  if (resource.group === 'example.com' && resource.resource === 'widgets')
    return ['v1', 'v2'].map((v) => ({ resource: gvr('example.com', v, 'widgets'), kind: gvk('', '', '') }));
  return [{ resource, kind: gvk('', '', '') }];
};

const attrs = (
  kind: ReturnType<typeof gvk>,
  resource: ReturnType<typeof gvr>,
  sub = '',
  object?: unknown,
): AdmissionRequest =>
  ({
    uid: 'u',
    kind,
    resource,
    subResource: sub || undefined,
    namespace: 'ns',
    name: 'name',
    operation: 'CREATE',
    userInfo: {},
    object,
  }) as AdmissionRequest;

const rule = (
  groups: string[],
  versions: string[],
  resources: string[],
  names?: string[],
): NamedRuleWithOperations => ({
  operations: ['*'],
  apiGroups: groups,
  apiVersions: versions,
  resources,
  scope: '*',
  ...(names ? { resourceNames: names } : {}),
});

const all: LabelSelector = {};
const depV1 = attrs(gvk('apps', 'v1', 'Deployment'), gvr('apps', 'v1', 'deployments'));
const scaleV1 = attrs(gvk('autoscaling', 'v1', 'Scale'), gvr('apps', 'v1', 'deployments'), 'scale');
const scaleExt = attrs(gvk('autoscaling', 'v1', 'Scale'), gvr('extensions', 'v1beta1', 'deployments'), 'scale');
const plainV1 = attrs(gvk('autoscaling', 'v1', 'Scale'), gvr('apps', 'v1', 'deployments'));
const dr = ['deployments', 'deployments/scale'];

interface Row {
  name: string;
  criteria: Parameters<typeof matchResources>[1];
  attrs: AdmissionRequest;
  matches: boolean;
  kind?: ReturnType<typeof gvk>;
  resource?: ReturnType<typeof gvr>;
  error?: string;
}

const badSelector: LabelSelector = { matchExpressions: [{ key: 'key', operator: 'In', values: ['bad value'] }] };
const pod = attrs(gvk('example.apiserver.k8s.io', 'v1', 'Pod'), gvr('example.apiserver.k8s.io', 'v1', 'pods'), '', {
  metadata: {},
});

const rows: Row[] = [
  {
    name: 'no rules (just write)',
    criteria: { namespaceSelector: all, objectSelector: null, resourceRules: [] },
    attrs: depV1,
    matches: false,
  },
  {
    name: 'wildcard rule, match as requested',
    criteria: { namespaceSelector: all, objectSelector: all, resourceRules: [rule(['*'], ['*'], ['*'])] },
    attrs: depV1,
    matches: true,
    kind: gvk('apps', 'v1', 'Deployment'),
  },
  {
    name: 'specific rules, prefer exact match',
    criteria: {
      resourceRules: [
        rule(['extensions'], ['v1'], ['deployments']),
        rule(['apps'], ['v1beta1'], ['deployments']),
        rule(['apps'], ['v1'], ['deployments']),
      ],
    },
    attrs: depV1,
    matches: true,
    kind: gvk('apps', 'v1', 'Deployment'),
  },
  {
    name: 'specific rules, match miss',
    criteria: {
      resourceRules: [rule(['extensions'], ['v1beta1'], ['deployments']), rule(['apps'], ['v1beta1'], ['deployments'])],
    },
    attrs: depV1,
    matches: false,
  },
  {
    name: 'specific rules, exact match miss',
    criteria: {
      matchPolicy: 'Exact',
      resourceRules: [rule(['extensions'], ['v1beta1'], ['deployments']), rule(['apps'], ['v1beta1'], ['deployments'])],
    },
    attrs: depV1,
    matches: false,
  },
  {
    name: 'specific rules, equivalent match, prefer extensions',
    criteria: {
      matchPolicy: 'Equivalent',
      resourceRules: [rule(['extensions'], ['v1beta1'], ['deployments']), rule(['apps'], ['v1beta1'], ['deployments'])],
    },
    attrs: depV1,
    matches: true,
    resource: gvr('extensions', 'v1beta1', 'deployments'),
    kind: gvk('extensions', 'v1beta1', 'Deployment'),
  },
  {
    name: 'specific rules, equivalent match, prefer apps',
    criteria: {
      matchPolicy: 'Equivalent',
      resourceRules: [rule(['apps'], ['v1beta1'], ['deployments']), rule(['extensions'], ['v1beta1'], ['deployments'])],
    },
    attrs: depV1,
    matches: true,
    resource: gvr('apps', 'v1beta1', 'deployments'),
    kind: gvk('apps', 'v1beta1', 'Deployment'),
  },
  {
    name: 'specific rules, subresource prefer exact match',
    criteria: {
      resourceRules: [
        rule(['extensions'], ['v1beta1'], dr),
        rule(['apps'], ['v1beta1'], dr),
        rule(['apps'], ['v1'], dr),
      ],
    },
    attrs: scaleV1,
    matches: true,
    kind: gvk('autoscaling', 'v1', 'Scale'),
  },
  {
    name: 'specific rules, subresource match miss',
    criteria: { resourceRules: [rule(['extensions'], ['v1beta1'], dr), rule(['apps'], ['v1beta1'], dr)] },
    attrs: scaleV1,
    matches: false,
  },
  {
    name: 'specific rules, subresource exact match miss',
    criteria: {
      matchPolicy: 'Exact',
      resourceRules: [rule(['extensions'], ['v1beta1'], dr), rule(['apps'], ['v1beta1'], dr)],
    },
    attrs: scaleV1,
    matches: false,
  },
  {
    name: 'specific rules, subresource equivalent match, prefer extensions',
    criteria: {
      matchPolicy: 'Equivalent',
      resourceRules: [rule(['extensions'], ['v1beta1'], dr), rule(['apps'], ['v1beta1'], dr)],
    },
    attrs: scaleV1,
    matches: true,
    resource: gvr('extensions', 'v1beta1', 'deployments'),
    kind: gvk('extensions', 'v1beta1', 'Scale'),
  },
  {
    name: 'specific rules, subresource equivalent match, prefer apps',
    criteria: {
      matchPolicy: 'Equivalent',
      resourceRules: [rule(['apps'], ['v1beta1'], dr), rule(['extensions'], ['v1beta1'], dr)],
    },
    attrs: scaleV1,
    matches: true,
    resource: gvr('apps', 'v1beta1', 'deployments'),
    kind: gvk('apps', 'v1beta1', 'Scale'),
  },
  {
    name: 'specific rules, prefer exact match and name match',
    criteria: { resourceRules: [rule(['apps'], ['v1'], ['deployments'], ['name'])] },
    attrs: plainV1,
    matches: true,
    kind: gvk('autoscaling', 'v1', 'Scale'),
  },
  {
    name: 'specific rules, prefer exact match and name match miss',
    criteria: { resourceRules: [rule(['apps'], ['v1'], ['deployments'], ['wrong-name'])] },
    attrs: plainV1,
    matches: false,
  },
  {
    name: 'specific rules, subresource equivalent match, prefer extensions and name match',
    criteria: { matchPolicy: 'Equivalent', resourceRules: [rule(['apps'], ['v1'], dr, ['name'])] },
    attrs: scaleExt,
    matches: true,
    resource: gvr('apps', 'v1', 'deployments'),
    kind: gvk('autoscaling', 'v1', 'Scale'),
  },
  {
    name: 'specific rules, subresource equivalent match, prefer extensions and name match miss',
    criteria: { matchPolicy: 'Equivalent', resourceRules: [rule(['apps'], ['v1'], dr, ['wrong-name'])] },
    attrs: scaleExt,
    matches: false,
  },
  {
    name: 'exclude resource match on miss',
    criteria: {
      resourceRules: [rule(['*'], ['*'], ['*'])],
      excludeResourceRules: [rule(['extensions'], ['v1beta1'], ['deployments'])],
    },
    attrs: plainV1,
    matches: true,
    kind: gvk('autoscaling', 'v1', 'Scale'),
  },
  {
    name: 'exclude resource miss on match',
    criteria: {
      resourceRules: [rule(['*'], ['*'], ['*'])],
      excludeResourceRules: [rule(['extensions'], ['v1beta1'], ['deployments'])],
    },
    attrs: attrs(gvk('autoscaling', 'v1', 'Scale'), gvr('extensions', 'v1beta1', 'deployments')),
    matches: false,
  },
  {
    name: 'treat empty ResourceRules as match',
    criteria: { excludeResourceRules: [rule(['extensions'], ['v1beta1'], ['deployments'])] },
    attrs: plainV1,
    matches: true,
  },
  {
    name: 'treat non-empty ResourceRules as no match',
    criteria: { resourceRules: [{ operations: [], apiGroups: [], apiVersions: [], resources: [] }] },
    attrs: plainV1,
    matches: false,
  },
  {
    name: "erroring namespace selector on otherwise non-matching rule doesn't error",
    criteria: { namespaceSelector: badSelector, resourceRules: [rule(['*'], ['*'], ['deployments'])] },
    attrs: pod,
    matches: false,
  },
  {
    name: 'erroring namespace selector on otherwise matching rule errors',
    criteria: { namespaceSelector: badSelector, resourceRules: [rule(['*'], ['*'], ['pods'])] },
    attrs: pod,
    matches: false,
    error: 'bad value',
  },
  {
    name: "erroring object selector on otherwise non-matching rule doesn't error",
    criteria: { objectSelector: badSelector, resourceRules: [rule(['*'], ['*'], ['deployments'])] },
    attrs: pod,
    matches: false,
  },
  {
    name: 'erroring object selector on otherwise matching rule errors',
    criteria: { objectSelector: badSelector, resourceRules: [rule(['*'], ['*'], ['pods'])] },
    attrs: pod,
    matches: false,
    error: 'bad value',
  },
  {
    name: 'an equivalent without a kind is an error (the mapper registers kind-less widgets)',
    criteria: { matchPolicy: 'Equivalent', resourceRules: [rule(['example.com'], ['v2'], ['widgets'])] },
    attrs: attrs(gvk('example.com', 'v1', 'Widget'), gvr('example.com', 'v1', 'widgets')),
    matches: false,
    error: 'unable to convert to example.com/v2, Resource=widgets: unknown kind',
  },
];

describe('matching_test.go TestMatcher', () => {
  for (const row of rows) {
    it(row.name, () => {
      const got = matchResources(row.attrs, row.criteria, {
        equivalents,
        namespace: () => ({ metadata: { labels: {} } }),
      });
      if (row.error) assert.ok(got.error?.includes(row.error), JSON.stringify(got));
      else assert.equal(got.error, undefined, JSON.stringify(got));
      assert.equal(got.matches, row.matches);
      if (!got.matches) return;
      if (row.kind) assert.deepEqual(got.as.kind, row.kind);
      assert.deepEqual(got.as.resource, row.resource ?? row.attrs.resource);
    });
  }
});

describe('namespace and object selectors', () => {
  const labelled = (labels: Record<string, string>) => ({ metadata: { labels } });
  const criteria = { namespaceSelector: { matchLabels: { team: 'a' } } };
  it('reads the labels of the request namespace', () => {
    assert.equal(matchResources(depV1, criteria, { namespace: () => labelled({ team: 'a' }) }).matches, true);
    assert.equal(matchResources(depV1, criteria, { namespace: () => labelled({ team: 'b' }) }).matches, false);
  });
  it('a namespace that does not exist is an error', () => {
    assert.equal(matchResources(depV1, criteria, { namespace: () => undefined }).error, 'namespaces "ns" not found');
  });
  it('never exempts cluster-scoped resources other than namespaces', () => {
    const node = { ...depV1, namespace: undefined, resource: gvr('', 'v1', 'nodes') } as AdmissionRequest;
    assert.equal(matchResources(node, criteria, {}).matches, true);
  });
  it("a Namespace's create is matched by its own labels", () => {
    const ns = {
      ...depV1,
      namespace: 'x',
      resource: gvr('', 'v1', 'namespaces'),
      object: labelled({ team: 'a' }),
    } as AdmissionRequest;
    assert.equal(matchResources(ns, criteria, {}).matches, true);
  });
  it('the object selector matches the object or the old object', () => {
    const sel = { objectSelector: { matchLabels: { app: 'web' } } };
    const update = {
      ...depV1,
      operation: 'UPDATE',
      object: labelled({}),
      oldObject: labelled({ app: 'web' }),
    } as AdmissionRequest;
    assert.equal(matchResources(update, sel).matches, true);
    assert.equal(matchResources({ ...update, oldObject: labelled({}) } as AdmissionRequest, sel).matches, false);
  });
});

describe('the built-in equivalent resources', () => {
  it('deployments at 1.34: apps/v1 alone (extensions/v1beta1 stopped being served in 1.16)', () => {
    const got = builtinEquivalents(gvr('apps', 'v1', 'deployments'), '');
    assert.deepEqual(got, [{ resource: gvr('apps', 'v1', 'deployments'), kind: gvk('apps', 'v1', 'Deployment') }]);
  });
  it('a scale subresource is autoscaling/v1 Scale', () => {
    const got = builtinEquivalents(gvr('apps', 'v1', 'deployments'), 'scale');
    assert.deepEqual(got[0]?.kind, gvk('autoscaling', 'v1', 'Scale'));
  });
  it('every served version of a resource is an equivalent', () => {
    const got = builtinEquivalents(gvr('autoscaling', 'v2', 'horizontalpodautoscalers'), '', 23);
    assert.ok(got.length >= 2, JSON.stringify(got));
  });
});
