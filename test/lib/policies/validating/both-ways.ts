// The shared runner of the validating policy tables: each case is dispatched natively, as the API
// server evaluates its policies, and every policy–binding pair the API server would send to the
// policy served as a webhook is also evaluated in-function (the webhook of its definition, with the
// same params, Namespace objects and authorizer); both answers must be equal: allowed, code and
// reason, the message after its prefix, warnings, audit annotations. A pair the API server refuses
// to create (no rules, Deny with Warn) or would never send (its rules or selectors miss) is checked
// natively only.
import assert from 'node:assert/strict';
import { invoke } from '../../../../lib/harness/invoke.ts';
import type { Authorize } from '../../../../lib/policies/cel.ts';
import { namespacedKindsOf, paramSourcesOf } from '../../../../lib/policies/generic/params.ts';
import { servePolicy, type ValidatingPolicyDefinition } from '../../../../lib/policies/validating/define.ts';
import { dispatchValidating, type PoliciesVerdict } from '../../../../lib/policies/validating/dispatcher.ts';
import type { ValidatingBindingSpec, ValidatingPolicySpec } from '../../../../lib/policies/validating/types.ts';
import { compileValidatingPolicy } from '../../../../lib/policies/validating/validator.ts';
import type { AdmissionRequest, KubeObject } from '../../../../lib/review/schemas.ts';
import { assertSameAnswer, webhookCalled } from '../../../../lib/testing/policies.ts';

/** What the cluster holds for a case. */
export interface Cluster {
  params?: KubeObject[];
  /** Namespace objects; a request's namespace not among them is not found. */
  namespaces?: KubeObject[];
  authorize?: Authorize;
  /** The scope of param kinds, when the params do not show it (none of a kind given). */
  namespacedKinds?: (kind: { apiVersion: string; kind: string }) => boolean;
}

/** A policy and its bindings, as written. */
export interface Hook {
  spec: ValidatingPolicySpec;
  bindings: ValidatingBindingSpec[];
}

/** How many pairs were compared in-function (a suite asserts it compared some). */
export const compared = { pairs: 0 };

/** The definition of one policy–binding pair, with nothing defaulted that the spec leaves unset. */
function definitionOf(spec: ValidatingPolicySpec, binding: ValidatingBindingSpec, cluster: Cluster) {
  const mc = spec.matchConstraints;
  const ref = binding.paramRef;
  return {
    name: 'policy-fn',
    policyName: spec.name,
    bindingName: binding.name,
    matchConstraints: {
      resourceRules: mc?.resourceRules ?? [],
      ...(mc?.excludeResourceRules ? { excludeResourceRules: mc.excludeResourceRules } : {}),
      namespaceSelector: mc?.namespaceSelector ?? {},
      objectSelector: mc?.objectSelector ?? {},
      matchPolicy: mc?.matchPolicy ?? 'Exact',
    },
    ...(spec.matchConditions ? { matchConditions: spec.matchConditions } : {}),
    ...(spec.variables ? { variables: spec.variables } : {}),
    validations: spec.validations ?? [],
    ...(spec.auditAnnotations ? { auditAnnotations: spec.auditAnnotations } : {}),
    failurePolicy: spec.failurePolicy ?? 'Fail',
    ...(spec.paramKind ? { paramKind: spec.paramKind } : {}),
    validationActions: binding.validationActions,
    ...(ref ? { paramRef: { ...ref, parameterNotFoundAction: ref.parameterNotFoundAction ?? 'Allow' } } : {}),
    ...(binding.matchResources
      ? {
          matchResources: {
            matchPolicy: 'Exact',
            ...binding.matchResources,
          } as ValidatingBindingSpec['matchResources'],
        }
      : {}),
    params: cluster.params ?? [],
    namespaces: cluster.namespaces ?? [],
    ...(cluster.namespacedKinds && spec.paramKind
      ? { paramScope: cluster.namespacedKinds(spec.paramKind) ? 'Namespaced' : 'Cluster' }
      : {}),
  } as ValidatingPolicyDefinition<unknown>;
}

/** Dispatches natively; asserts each pair's in-function answer equals its native one. */
export async function bothWays(
  hooks: Hook[],
  request: AdmissionRequest,
  cluster: Cluster = {},
): Promise<PoliciesVerdict> {
  const params = cluster.params ?? [];
  const env = {
    params: paramSourcesOf(params, cluster.namespacedKinds ?? namespacedKindsOf(params)),
    namespace: (name: string) => cluster.namespaces?.find((n) => n.metadata?.name === name),
    ...(cluster.authorize ? { authorize: cluster.authorize } : {}),
  };
  const compiled = hooks.map((h) => ({ policy: compileValidatingPolicy(h.spec), bindings: h.bindings }));
  const native = dispatchValidating(compiled, request, env);
  for (const [i, { spec, bindings }] of hooks.entries())
    for (const binding of bindings) {
      if (binding.paramRef && !spec.paramKind) continue;
      let served: ReturnType<typeof servePolicy>;
      try {
        served = servePolicy(
          definitionOf(spec, binding, cluster),
          cluster.authorize ? { authorize: cluster.authorize } : {},
        );
      } catch {
        continue;
      }
      const single = dispatchValidating([{ policy: compiled[i]!.policy, bindings: [binding] }], request, env);
      const labels = env.namespace(request.namespace ?? '')?.metadata?.labels ?? {};
      if (!webhookCalled(served, request, labels)) {
        assert.ok(single.allowed, 'the API server sends the webhook no such request, yet the native policy denies it');
        continue;
      }
      const review = { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request } as const;
      const answer = await invoke(served, review as never, { matchRules: false });
      assertSameAnswer(single, answer, spec.name);
      compared.pairs++;
    }
  return native;
}
