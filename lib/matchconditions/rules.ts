/**
 * The API server's rules for `matchConditions` (admissionregistration validation.go,
 * validateMatchConditions): at most 64, names qualified and unique, expressions non-empty,
 * compiling in the matchConditions environment to a bool.
 */
import type { MatchCondition } from '../registration.ts';
import { compileExpression, isCompileError } from './cel.ts';

/** Most matchConditions one webhook may have. */
export const MAX_MATCH_CONDITIONS = 64;

/** One broken rule: a lint rule id and the message. */
export interface ConditionProblem {
  level: 'error' | 'warning';
  rule: string;
  message: string;
}

// Qualified name (apimachinery validation.IsQualifiedName): an optional DNS-subdomain
// prefix and '/', then a name of at most 63 alphanumerics, '-', '_' or '.', alphanumeric at both ends.
const NAME_PART = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** Why a name is not a qualified name, or undefined when it is one. */
export function qualifiedNameProblem(name: string): string | undefined {
  const parts = name.split('/');
  if (parts.length > 2) return 'a qualified name must consist of a name, optionally prefixed by a DNS subdomain and "/"';
  const [prefix, local] = parts.length === 2 ? parts : [undefined, parts[0]!];
  if (prefix !== undefined) {
    if (!prefix) return 'prefix part must be non-empty';
    if (prefix.length > 253 || !DNS_SUBDOMAIN.test(prefix)) return `prefix part ${JSON.stringify(prefix)} must be a DNS subdomain`;
  }
  if (!local) return 'name part must be non-empty';
  if (local.length > 63) return 'name part must be no more than 63 characters';
  if (!NAME_PART.test(local)) return "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
  return undefined;
}

/**
 * Checks a webhook's matchConditions as the API server does when the configuration is
 * created; every problem is an error the API server would reject it with.
 */
export function checkMatchConditions(conditions: unknown): ConditionProblem[] {
  const problems: ConditionProblem[] = [];
  const add = (rule: string, message: string) => problems.push({ level: 'error', rule, message });
  if (conditions === undefined || conditions === null) return problems;
  if (!Array.isArray(conditions)) {
    add('match-conditions-type', 'matchConditions must be a list');
    return problems;
  }
  if (conditions.length > MAX_MATCH_CONDITIONS) add('match-conditions-count', `${conditions.length} matchConditions; at most ${MAX_MATCH_CONDITIONS}`);
  const seen = new Set<string>();
  conditions.forEach((c: Partial<MatchCondition> | null, i) => {
    const name = typeof c?.name === 'string' ? c.name : '';
    const label = name ? `matchCondition ${JSON.stringify(name)}` : `matchConditions[${i}]`;
    if (!name) add('match-conditions-name', `${label}: name is required`);
    else {
      const problem = qualifiedNameProblem(name);
      if (problem) add('match-conditions-name', `matchCondition name ${JSON.stringify(name)} must be a qualified name: ${problem}`);
      if (seen.has(name)) add('match-conditions-duplicate', `matchCondition name ${JSON.stringify(name)} is used twice`);
      seen.add(name);
    }
    const expression = typeof c?.expression === 'string' ? c.expression.trim() : '';
    if (!expression) {
      add('match-conditions-expression', `${label} needs an expression`);
      return;
    }
    const compiled = compileExpression(expression);
    if (isCompileError(compiled)) add('match-conditions-compile', `${label}: ${JSON.stringify(expression)}: ${compiled.message}`);
    else if (compiled.type !== 'bool') add('match-conditions-type', `${label}: ${JSON.stringify(expression)} must evaluate to bool, not ${compiled.type}`);
  });
  return problems;
}

/**
 * Problems of enforcing conditions inside the function as well (for clusters that drop
 * the field): conditions that use `authorizer` cannot be evaluated there.
 */
export function checkInFunctionConditions(conditions: MatchCondition[] | undefined): ConditionProblem[] {
  const problems: ConditionProblem[] = [];
  for (const c of conditions ?? []) {
    const compiled = compileExpression(c.expression.trim());
    if (!isCompileError(compiled) && compiled.usesAuthorizer) {
      problems.push({
        level: 'warning',
        rule: 'match-conditions-authorizer-in-function',
        message: `matchCondition ${JSON.stringify(c.name)} uses authorizer, which only the API server can evaluate; the function does not enforce it, so clusters without matchConditions call the function for what it would exclude`,
      });
    }
  }
  return problems;
}
