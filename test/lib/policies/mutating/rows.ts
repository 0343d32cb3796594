// The rows of the mutating-policy expression tests and their one runner: each row evaluated natively
// (its object or its error checked) and served from Lambda (its patch giving the native object).
import assert from 'node:assert/strict';
import { admissionReview } from '../../../../lib/harness/reviews.ts';
import { Deployment } from '../../../../lib/k8s/kinds.ts';
import { defaultObject } from '../../../../lib/policies/mutating/defaults.ts';
import { defineMutatingPolicy } from '../../../../lib/policies/mutating/define.ts';
import { compileMutatingPolicy, evaluateMutatingPolicy } from '../../../../lib/policies/mutating/evaluate.ts';
import type { Mutation } from '../../../../lib/policies/mutating/types.ts';
import type { Variable as NamedExpression } from '../../../../lib/policies/generic/types.ts';
import { expectMutatingPolicyParity } from '../../../../lib/testing/mutating-policies.ts';
import { builtinSchema } from '../../../../lib/policies/mutating/smd/schema.ts';
import type { KubeObject } from '../../../../lib/review/schemas.ts';
import { on } from '../../../../lib/rule-builder.ts';

export const MATCHED_KIND = { group: 'apps', version: 'v1', kind: 'Deployment' };
export const DEPLOYMENT = { schema: builtinSchema(), typeName: 'io.k8s.api.apps.v1.Deployment', builtin: true };
/** A Deployment as the API server holds it: defaulted (as it is when decoded, and after each mutation). */
export const deployment = (
  spec: Record<string, unknown>,
  metadata: Record<string, unknown> = { name: 'd' },
): KubeObject =>
  defaultObject(MATCHED_KIND, { apiVersion: 'apps/v1', kind: 'Deployment', metadata, spec }) as KubeObject;
export const withLabels = (labels: Record<string, string>) => deployment({}, { name: 'd', labels });
export const apply = (expression: string): Mutation => ({
  patchType: 'ApplyConfiguration',
  applyConfiguration: { expression },
});
export const jsonPatch = (expression: string): Mutation => ({ patchType: 'JSONPatch', jsonPatch: { expression } });

export interface Row {
  name: string;
  mutations: Mutation[];
  variables?: NamedExpression[];
  object: KubeObject;
  oldObject?: KubeObject;
  params?: unknown;
  namespaceObject?: unknown;
  want?: KubeObject;
  /** A text the policy error contains. */
  error?: string;
  /** The error is one the API server answers with a status of its own (this code), not a policy error. */
  statusCode?: number;
}

const MATCHED = {
  resource: { group: 'apps', version: 'v1', resource: 'deployments' },
  kind: { group: 'apps', version: 'v1', kind: 'Deployment' },
};

/** Evaluates the row natively; `options` as compileMutatingPolicy's (`typeCheck: false`: as in-function). */
export function run(row: Row, options: Parameters<typeof compileMutatingPolicy>[1] = {}) {
  const spec = {
    name: 'p',
    mutations: row.mutations,
    variables: row.variables ?? [],
    ...(row.params ? { paramKind: { apiVersion: 'v1', kind: 'ConfigMap' } } : {}),
  };
  const compiled = compileMutatingPolicy(spec, options);
  const review = admissionReview(row.object, row.oldObject ? { oldObject: row.oldObject } : {});
  return evaluateMutatingPolicy(compiled, {
    request: review.request,
    matched: MATCHED,
    params: row.params ?? null,
    namespace: row.namespaceObject ?? null,
    authorize: () => ({ decision: 'Allow' }),
    kindSchema: DEPLOYMENT,
  });
}

export function check(row: Row, options: Parameters<typeof compileMutatingPolicy>[1] = {}) {
  const outcome = run(row, options);
  assert.equal(outcome.status?.code, row.statusCode, `status ${JSON.stringify(outcome.status)}`);
  if (row.statusCode !== undefined) {
    assert.ok(outcome.status?.message.includes(row.error!), `${outcome.status?.message} does not contain ${row.error}`);
  } else if (row.error !== undefined) {
    assert.equal(outcome.errors.length, 1, `expected one error, got ${JSON.stringify(outcome.errors)}`);
    assert.ok(outcome.errors[0]?.includes(row.error), `${outcome.errors[0]} does not contain ${row.error}`);
  } else {
    assert.deepEqual(outcome.errors, []);
    assert.deepEqual(outcome.object, row.want);
  }
}

/** The row's policy served from Lambda: its answer (the object after its patch, or its denial) is the native one. */
export async function checkWebhook(row: Row) {
  const policy = defineMutatingPolicy({
    name: 'p',
    matchConstraints: { resourceRules: [on(Deployment).create().update()] },
    variables: row.variables ?? [],
    mutations: row.mutations,
    ...(row.params
      ? {
          paramKind: { apiVersion: 'v1', kind: 'ConfigMap' },
          paramRef: { name: 'p', namespace: 'default' },
          params: [row.params as KubeObject],
        }
      : {}),
  });
  await expectMutatingPolicyParity(policy, row.object, {
    namespace: 'default',
    ...(row.oldObject ? { oldObject: row.oldObject, operation: 'UPDATE' as const } : {}),
  });
}
