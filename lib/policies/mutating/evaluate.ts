/**
 * A MutatingAdmissionPolicy evaluated as the API server's dispatcher evaluates one policy and
 * binding: its matchConditions, its variables (lazily, each at most once), its mutations in
 * order on the object each previous one left, a failing mutation recorded (the next ones still
 * run) and answered by failurePolicy with the policy error's text.
 */
import type { AdmissionRequest, KubeObject } from '../../review/schemas.ts';
import {
  type Authorize,
  type CompiledMutation,
  type CompiledPolicyExpression,
  compileMutation,
  compilePolicyExpression,
  toCel,
  variablesFor,
} from './cel.ts';
import { jsonEqual } from './json-patch.ts';
import { applyMutationValue, type KindSchema } from './mutation.ts';

/** One mutation of a policy, as MutatingAdmissionPolicy writes it. */
export type Mutation =
  | { patchType: 'ApplyConfiguration'; applyConfiguration: { expression: string } }
  | { patchType: 'JSONPatch'; jsonPatch: { expression: string } };

/** A named expression (a variable, a match condition). */
export interface NamedExpression {
  name: string;
  expression: string;
}

/** What of a policy the evaluation reads. */
export interface MutatingPolicyEvaluation {
  name: string;
  /** The binding's name, for the error texts; `<policy>-binding` unless said. */
  bindingName?: string;
  failurePolicy?: 'Fail' | 'Ignore';
  matchConditions?: NamedExpression[];
  variables?: NamedExpression[];
  mutations: Mutation[];
}

/** A policy compiled once: each expression, or its compile error. */
export interface CompiledMutatingPolicy {
  policy: MutatingPolicyEvaluation;
  conditions: Array<[string, CompiledPolicyExpression | string]>;
  variables: Array<[string, CompiledPolicyExpression | string]>;
  mutations: Array<CompiledMutation | string>;
}

/** Compiles a policy's expressions. */
export function compileMutatingPolicy(policy: MutatingPolicyEvaluation): CompiledMutatingPolicy {
  return {
    policy,
    conditions: (policy.matchConditions ?? []).map((c) => [c.name, compilePolicyExpression(c.expression)]),
    variables: (policy.variables ?? []).map((v) => [v.name, compilePolicyExpression(v.expression)]),
    mutations: policy.mutations.map((m) =>
      m.patchType === 'ApplyConfiguration'
        ? compileMutation(m.applyConfiguration.expression, 'ApplyConfiguration')
        : compileMutation(m.jsonPatch.expression, 'JSONPatch'),
    ),
  };
}

/** What one evaluation reads beside the request. */
export interface PolicyInput {
  request: AdmissionRequest;
  /** The param object the binding's paramRef selected; null when the policy has no paramKind. */
  params?: unknown;
  /** The request's Namespace object (null for cluster-scoped requests). */
  namespaceObject?: unknown;
  authorize?: Authorize;
  /** The matched kind's merge schema (required for ApplyConfiguration mutations). */
  kindSchema?: KindSchema;
}

/** The outcome of one policy: the object after its mutations, and its errors as the API server words them. */
export interface PolicyOutcome {
  matched: boolean;
  object: KubeObject | null;
  changed: boolean;
  /** The policy errors, each `policy '<name>' with binding '<binding>' denied request: <error>`. */
  errors: string[];
}

const messageOf = (err: unknown) => (err instanceof Error ? err.message : String(err));

/** The `variables` object: each variable evaluated when first read, its value or error kept. */
function lazyVariables(compiled: CompiledMutatingPolicy, vars: Record<string, unknown>): Record<string, unknown> {
  const done = new Map<string, { value?: unknown; error?: unknown }>();
  const byName = new Map(compiled.variables);
  const target: Record<string, unknown> = {};
  return new Proxy(target, {
    get(_t, key) {
      if (typeof key !== 'string' || !byName.has(key)) return undefined;
      let entry = done.get(key);
      if (!entry) {
        const expression = byName.get(key) as CompiledPolicyExpression | string;
        try {
          if (typeof expression === 'string') throw new Error(expression);
          entry = { value: expression.run(vars) };
        } catch (error) {
          entry = { error };
        }
        done.set(key, entry);
      }
      if (entry.error !== undefined) throw entry.error;
      return entry.value;
    },
    has: (_t, key) => typeof key === 'string' && byName.has(key),
    ownKeys: () => [...byName.keys()],
    getOwnPropertyDescriptor: (_t, key) =>
      typeof key === 'string' && byName.has(key)
        ? { configurable: true, enumerable: true, writable: false, value: undefined }
        : undefined,
  });
}

/** False when a match condition is false; an error text when one failed and none was false. */
function conditionsMatch(compiled: CompiledMutatingPolicy, vars: Record<string, unknown>): boolean | string {
  let failure: string | undefined;
  for (const [name, condition] of compiled.conditions) {
    try {
      if (typeof condition === 'string') throw new Error(condition);
      if (condition.run(vars) === false) return false;
    } catch (err) {
      failure ??= `failed to evaluate match condition '${name}': ${messageOf(err)}`;
    }
  }
  return failure ?? true;
}

/** Evaluates one policy (with one binding and param) on a request. */
export function evaluateMutatingPolicy(compiled: CompiledMutatingPolicy, input: PolicyInput): PolicyOutcome {
  const { policy } = compiled;
  const prefix = `policy '${policy.name}' with binding '${policy.bindingName ?? `${policy.name}-binding`}' denied request: `;
  const original = (input.request.object ?? null) as KubeObject | null;
  const base = variablesFor(input.request, input.authorize);
  const vars: Record<string, unknown> = {
    ...base,
    params: toCel(input.params ?? null),
    namespaceObject: toCel(input.namespaceObject ?? null),
  };
  vars.variables = lazyVariables(compiled, vars);
  const matched = conditionsMatch(compiled, vars);
  if (matched === false) return { matched: false, object: original, changed: false, errors: [] };
  if (typeof matched === 'string')
    return { matched: true, object: original, changed: false, errors: [prefix + matched] };
  const errors: string[] = [];
  let object = original as Record<string, unknown> | null;
  for (const mutation of compiled.mutations) {
    if (object === null) continue;
    vars.object = toCel(object);
    try {
      if (typeof mutation === 'string') throw new Error(mutation);
      const result = applyMutationValue(mutation.kind, mutation.run(vars), object, input.kindSchema);
      if ('error' in result) errors.push(prefix + result.error);
      else object = result.object;
    } catch (err) {
      errors.push(prefix + messageOf(err));
    }
  }
  const changed = !jsonEqual(object, original);
  return { matched: true, object: object as KubeObject | null, changed, errors };
}
