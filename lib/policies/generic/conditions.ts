/**
 * A policy's matchConditions, as the API server's matcher evaluates them for policies: with the
 * policy's variables and params, the request's own resource, no Namespace object, under the
 * matchConditions budget; any false skips the policy, errors follow failurePolicy.
 */
import { decideMatch, MATCH_CONDITIONS_COST_BUDGET, type ConditionEvaluation, type MatchOutcome } from '../cel.ts';
import type { MatchCondition } from '../../registration.ts';
import {
  compileExpressions,
  compose,
  evaluateFilter,
  type CompiledVariables,
  type PolicyEnvironment,
} from './composition.ts';
import type { PolicyProgram } from '../cel.ts';

export type { MatchOutcome };

/** A policy's compiled matchConditions. */
export interface PolicyConditions {
  conditions: readonly MatchCondition[];
  programs: Array<PolicyProgram | undefined>;
}

/** Compiles matchConditions in the policy's environment (they must be bool). */
export function compileConditions(
  conditions: readonly MatchCondition[],
  variables: CompiledVariables,
  env: PolicyEnvironment,
): PolicyConditions {
  return {
    conditions,
    programs: compileExpressions(
      conditions.map((c) => c.expression),
      variables,
      env,
      ['bool'],
    ),
  };
}

/**
 * Evaluates compiled conditions with an activation that has no `variables` yet (they are composed
 * anew, as the matcher's own filter does).
 */
export function evaluateConditions(
  compiled: PolicyConditions,
  variables: CompiledVariables,
  base: Record<string, unknown>,
  failurePolicy: 'Fail' | 'Ignore',
): MatchOutcome {
  if (!compiled.conditions.length) return { matched: true };
  const filter = evaluateFilter(
    compiled.programs,
    compiled.conditions.map((c) => c.expression),
    compose(base, variables),
    MATCH_CONDITIONS_COST_BUDGET,
  );
  if (filter.error !== undefined) return decideMatch({ failure: filter.error }, failurePolicy);
  const evaluations: ConditionEvaluation[] = filter.evaluations.map((e, i) => ({
    name: compiled.conditions[i]!.name,
    ...(e.error !== undefined ? { error: e.error } : { value: e.value }),
  }));
  return decideMatch(evaluations, failurePolicy);
}
