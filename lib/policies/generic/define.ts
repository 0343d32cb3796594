/**
 * What defineValidatingPolicy and defineMutatingPolicy share: the definition's matching fields,
 * the checks the API server makes of them, and their completion with the API server's defaults.
 * The spec and binding are built in the API's field order (the order manifests are written in).
 */
import { defaultNamespaceSelector, type LabelSelector, type MatchCondition } from '../../registration.ts';
import { plainRule, type TypedRule } from '../../rule-builder.ts';
import type { MatchResources, NamedRuleWithOperations, ParamKind, ParamRef, Variable } from './types.ts';

/** A typed rule of matchConstraints, optionally naming the objects it applies to. */
export type PolicyRule<T> = TypedRule<T> & { resourceNames?: string[] };

/**
 * Which requests a policy applies to: typed rules (`on(Deployment).create().update()`), and
 * namespaceSelector (default: every namespace but the system ones), objectSelector,
 * excludeResourceRules, matchPolicy (default `Equivalent`).
 */
export interface PolicyMatchConstraints<T> {
  resourceRules: Array<PolicyRule<T>>;
  excludeResourceRules?: NamedRuleWithOperations[];
  namespaceSelector?: LabelSelector;
  objectSelector?: LabelSelector;
  matchPolicy?: 'Exact' | 'Equivalent';
}

/** The fields every policy definition has, validating or mutating. */
export interface CommonPolicyDefinition<T> {
  name: string;
  policyName?: string;
  bindingName?: string;
  matchConstraints: PolicyMatchConstraints<T>;
  matchConditions?: MatchCondition[];
  variables?: Variable[];
  failurePolicy?: 'Fail' | 'Ignore';
  paramKind?: ParamKind;
  paramRef?: ParamRef;
  matchResources?: MatchResources;
}

/** The matchConstraints of a completed spec. */
export interface CompletedMatchConstraints {
  resourceRules: NamedRuleWithOperations[];
  excludeResourceRules?: NamedRuleWithOperations[];
  namespaceSelector: LabelSelector;
  objectSelector: LabelSelector;
  matchPolicy: 'Exact' | 'Equivalent';
}

/** What the API server refuses of the matching rules, thrown naming the field (checked first). */
export function checkMatchConstraints(d: CommonPolicyDefinition<unknown>): void {
  if (!d.matchConstraints?.resourceRules?.length)
    throw new TypeError(
      `policy ${d.name}: matchConstraints.resourceRules must hold at least one rule, such as on(Deployment).create()`,
    );
}

/** What the API server refuses of the binding's paramRef, thrown naming the field (checked last). */
export function checkParamRef(d: CommonPolicyDefinition<unknown>): void {
  if (d.paramRef && !d.paramKind) throw new TypeError(`policy ${d.name}: paramRef needs the policy's paramKind`);
  if (d.paramRef?.name && d.paramRef.selector)
    throw new TypeError(`policy ${d.name}: paramRef takes a name or a selector, not both`);
}

const rule = (r: PolicyRule<unknown> | NamedRuleWithOperations): NamedRuleWithOperations => ({
  ...plainRule(r),
  ...(r.resourceNames?.length ? { resourceNames: [...r.resourceNames] } : {}),
});

/** The first fields of a spec, defaults applied: name, failurePolicy (`Fail`), matchConstraints. */
export function specHead(d: CommonPolicyDefinition<unknown>): {
  name: string;
  failurePolicy: 'Fail' | 'Ignore';
  matchConstraints: CompletedMatchConstraints;
} {
  const mc = d.matchConstraints;
  return {
    name: d.policyName ?? d.name,
    failurePolicy: d.failurePolicy ?? 'Fail',
    matchConstraints: {
      resourceRules: mc.resourceRules.map(rule),
      ...(mc.excludeResourceRules?.length ? { excludeResourceRules: mc.excludeResourceRules.map(rule) } : {}),
      namespaceSelector: mc.namespaceSelector ?? defaultNamespaceSelector(),
      objectSelector: mc.objectSelector ?? {},
      matchPolicy: mc.matchPolicy ?? 'Equivalent',
    },
  };
}

/** The spec's fields after the kind's own: paramKind, matchConditions and variables, each only when given. */
export function specTail(d: CommonPolicyDefinition<unknown>): {
  paramKind?: ParamKind;
  matchConditions?: MatchCondition[];
  variables?: Variable[];
} {
  return {
    ...(d.paramKind ? { paramKind: { ...d.paramKind } } : {}),
    ...(d.matchConditions?.length ? { matchConditions: d.matchConditions.map((c) => ({ ...c })) } : {}),
    ...(d.variables?.length ? { variables: d.variables.map((v) => ({ ...v })) } : {}),
  };
}

/** The binding's first fields: its name (default the function's) and the policy's. */
export function bindingHead(d: CommonPolicyDefinition<unknown>): { name: string; policyName: string } {
  return { name: d.bindingName ?? d.name, policyName: d.policyName ?? d.name };
}

/**
 * The binding's fields after the kind's own: paramRef (parameterNotFoundAction `Deny`) and
 * matchResources (matchPolicy `Equivalent`), each only when given.
 */
export function bindingTail(d: CommonPolicyDefinition<unknown>): {
  paramRef?: ParamRef;
  matchResources?: MatchResources;
} {
  return {
    ...(d.paramRef ? { paramRef: { parameterNotFoundAction: 'Deny' as const, ...d.paramRef } } : {}),
    ...(d.matchResources ? { matchResources: { matchPolicy: 'Equivalent' as const, ...d.matchResources } } : {}),
  };
}
