/**
 * One invocation of a MutatingAdmissionPolicy (a policy, a binding, a param), evaluated as the
 * API server's dispatcher evaluates it: its matchConditions, then its mutations in order, each on
 * the object the previous one left (defaulted after each, as the API server's scheme defaults its
 * kind), under a budget of its own; `variables.<name>` evaluated at
 * most once per invocation (conditions and mutations share them); a failing mutation recorded
 * (the next ones still run), an error the API server answers with a status of its own stopping
 * the request.
 */
import {
  type ActivationInput,
  decideMatch,
  MATCH_CONDITIONS_COST_BUDGET,
  type PolicyProgram,
  policyActivation,
  RUNTIME_CEL_COST_BUDGET,
  toCel,
} from '../cel.ts';
import { compileConditions, type PolicyConditions } from '../generic/conditions.ts';
import {
  type CompiledVariables,
  compileVariables,
  compose,
  evaluateFilter,
  type PolicyEnvironment,
} from '../generic/composition.ts';
import { type CompiledMutation, compileMutation } from './cel.ts';
import { defaultObject } from './defaults.ts';
import { jsonEqual } from './json-patch.ts';
import { applyMutationValue, type KindSchema, type MutationStatus } from './mutation.ts';
import { markTyped } from './smd/apply.ts';
import type { MutatingPolicySpec } from './types.ts';

/** A policy compiled once: its variables, matchConditions and mutations (or their compile errors). */
export interface CompiledMutatingPolicy {
  spec: MutatingPolicySpec;
  failurePolicy: 'Fail' | 'Ignore';
  variables: CompiledVariables;
  conditions: PolicyConditions;
  mutations: Array<CompiledMutation | string>;
}

/** Compiles a policy as the API server's compilePolicy: `params` declared only with a paramKind. */
export function compileMutatingPolicy(
  spec: MutatingPolicySpec,
  options: Pick<PolicyEnvironment, 'kubernetesVersion' | 'typeCheck'> = {},
): CompiledMutatingPolicy {
  const env: PolicyEnvironment = { ...options, hasParams: spec.paramKind !== undefined };
  const variables = compileVariables(spec.variables ?? [], env);
  const scope = { ...env, variables: variables.names, libraryVariables: variables.libraries };
  return {
    spec,
    failurePolicy: spec.failurePolicy ?? 'Fail',
    variables,
    conditions: compileConditions(spec.matchConditions ?? [], variables, env),
    mutations: spec.mutations.map((m) =>
      m.patchType === 'ApplyConfiguration'
        ? compileMutation(m.applyConfiguration.expression, 'ApplyConfiguration', scope)
        : compileMutation(m.jsonPatch.expression, 'JSONPatch', scope),
    ),
  };
}

/** What one invocation reads: the request, the kind it matched as, its param and Namespace. */
export interface InvocationInput extends Omit<ActivationInput, 'withoutAuthorizer' | 'kindOnly'> {
  /** The matched kind's merge schema (ApplyConfiguration mutations need one; built-in kinds are defaulted). */
  kindSchema?: KindSchema;
  /** True: the object is the API server's decoding of its built-in kind, so it reads as typed. */
  objectIsTyped?: boolean;
}

/** The outcome of one invocation. */
export interface InvocationOutcome {
  /** False when the mutations did not run: a matchCondition was false or failed (its error then in `errors`). */
  matched: boolean;
  object: Record<string, unknown> | null;
  changed: boolean;
  /** The errors, each as the API server words it before naming the policy and binding. */
  errors: string[];
  /** An error the API server answers with its own status, ending the request (failurePolicy aside). */
  status?: MutationStatus;
}

/** Options of one evaluation. */
export interface EvaluateOptions {
  /** Each mutation's cost budget; the API server's RuntimeCELCostBudget unless a test sets another. */
  budget?: number;
  /** Asked once the conditions matched: false skips the mutations (a policy not due in a reinvocation). */
  proceed?: () => boolean;
}

/** Evaluates one policy, binding and param on a request. */
export function evaluateMutatingPolicy(
  compiled: CompiledMutatingPolicy,
  input: InvocationInput,
  { budget = RUNTIME_CEL_COST_BUDGET, proceed }: EvaluateOptions = {},
): InvocationOutcome {
  const original = (input.request.object ?? null) as Record<string, unknown> | null;
  // The object is read into CEL when an expression reads it (setObject), not here.
  const full = policyActivation({ ...input, request: { ...input.request, object: null } });
  const hasConditions = Boolean(compiled.spec.matchConditions?.length);
  // One activation for the invocation: the variables' cache is the invocation's, as in the API
  // server, where conditions and mutations share one composition context.
  const composed = compose(
    hasConditions ? policyActivation({ ...input, namespace: null, kindOnly: true }) : full,
    compiled.variables,
  );
  const activation = composed.activation;
  if (hasConditions) {
    const conditions = compiled.spec.matchConditions ?? [];
    const filter = evaluateFilter(
      compiled.conditions.programs,
      conditions.map((c) => c.expression),
      composed,
      MATCH_CONDITIONS_COST_BUDGET,
    );
    const outcome =
      filter.error !== undefined
        ? decideMatch({ failure: filter.error }, compiled.failurePolicy)
        : decideMatch(
            filter.evaluations.map((e, i) => ({
              name: conditions[i]!.name,
              ...(e.error !== undefined ? { error: e.error } : { value: e.value }),
            })),
            compiled.failurePolicy,
          );
    if (!('matched' in outcome)) return { matched: false, object: original, changed: false, errors: [outcome.error] };
    if (!outcome.matched) return { matched: false, object: original, changed: false, errors: [] };
  }
  if (proceed && !proceed()) return { matched: false, object: original, changed: false, errors: [] };
  activation.request = full.request;
  activation.namespaceObject = full.namespaceObject;
  const errors: string[] = [];
  let object = original;
  if (original && input.objectIsTyped && input.kindSchema?.builtin) markTyped(original);
  for (const mutation of compiled.mutations) {
    if (object === null) continue;
    if (typeof mutation === 'string') {
      errors.push(mutation);
      continue;
    }
    // An expression that never names `object` (and no variable that might) does not read it into CEL.
    activation.object = mutation.readsObject || compiled.variables.names.length ? toCel(object) : null;
    const result = runMutation(mutation, composed, object, input.kindSchema, budget);
    if ('status' in result) return { matched: true, object: original, changed: false, errors, status: result.status };
    if ('error' in result) errors.push(result.error);
    // The patched object is read back as its kind and defaulted by the kind's defaulters.
    else object = input.kindSchema?.builtin ? defaultObject(input.matched.kind, result.object) : result.object;
  }
  return { matched: true, object, changed: !jsonEqual(object, original), errors };
}

/** One mutation: its expression evaluated under its budget, its value applied to the object. */
function runMutation(
  mutation: CompiledMutation,
  composed: ReturnType<typeof compose>,
  object: Record<string, unknown>,
  kindSchema: KindSchema | undefined,
  budget: number,
): { object: Record<string, unknown> } | { error: string } | { status: MutationStatus } {
  const program: PolicyProgram = { program: mutation.program };
  const filter = evaluateFilter([program], [mutation.expression], composed, budget);
  if (filter.error !== undefined) return { error: filter.error };
  const evaluation = filter.evaluations[0]!;
  if (evaluation.error !== undefined) return { error: evaluation.error };
  let value: ReturnType<CompiledMutation['read']>;
  try {
    value = mutation.read(evaluation.value);
  } catch (err) {
    return { error: err instanceof Error ? err.message : String(err) };
  }
  return applyMutationValue(mutation.kind, value, object, kindSchema);
}
