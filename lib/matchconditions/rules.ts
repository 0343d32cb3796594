/**
 * The API server's rules for `matchConditions` (admissionregistration validation.go,
 * validateMatchConditions): at most 64, names qualified and unique, expressions non-empty,
 * compiling in the matchConditions environment to a bool.
 */
import type { MatchCondition } from '../registration.ts';
import { qualifiedNameProblem } from '../k8s/names.ts';
import { compileExpression, isCompileError } from '../../packages/kube-cel/src/index.ts';
import { celGoTypeName } from '../../packages/kube-cel/src/index.ts';
import { type CelKubeVersion, NEWEST_KUBE_VERSION } from '../../packages/kube-cel/src/index.ts';

export { qualifiedNameProblem };

/** Most matchConditions one webhook may have. */
export const MAX_MATCH_CONDITIONS = 64;

/** One broken rule: a lint rule id and the message. */
export interface ConditionProblem {
  level: 'error' | 'warning';
  rule: string;
  message: string;
}

/**
 * Checks a webhook's matchConditions as the API server of `kubeVersion` (the newest modelled by
 * default) does when the configuration is created; every problem is an error it would reject
 * the configuration with.
 */
export function checkMatchConditions(
  conditions: unknown,
  options: { kubeVersion?: CelKubeVersion } = {},
): ConditionProblem[] {
  const problems: ConditionProblem[] = [];
  const add = (rule: string, message: string) => problems.push({ level: 'error', rule, message });
  if (conditions === undefined || conditions === null) return problems;
  if (!Array.isArray(conditions)) {
    add('match-conditions-type', 'matchConditions must be a list');
    return problems;
  }
  if (conditions.length > MAX_MATCH_CONDITIONS)
    add('match-conditions-count', `${conditions.length} matchConditions; at most ${MAX_MATCH_CONDITIONS}`);
  const seen = new Set<string>();
  conditions.forEach((c: Partial<MatchCondition> | null, i) => {
    const name = typeof c?.name === 'string' ? c.name : '';
    const label = name ? `matchCondition ${JSON.stringify(name)}` : `matchConditions[${i}]`;
    if (!name) add('match-conditions-name', `${label}: name is required`);
    else {
      const problem = qualifiedNameProblem(name);
      if (problem)
        add(
          'match-conditions-name',
          `matchCondition name ${JSON.stringify(name)} must be a qualified name: ${problem}`,
        );
      if (seen.has(name))
        add('match-conditions-duplicate', `matchCondition name ${JSON.stringify(name)} is used twice`);
      seen.add(name);
    }
    const expression = typeof c?.expression === 'string' ? c.expression.trim() : '';
    if (!expression) {
      add('match-conditions-expression', `${label} needs an expression`);
      return;
    }
    const compiled = compileExpression(expression, { kubeVersion: options.kubeVersion, mode: 'create' });
    if (isCompileError(compiled)) {
      // Refused for the version only: say which version lacks what it uses.
      const v = options.kubeVersion;
      const newer = v && !isCompileError(compileExpression(expression));
      const where = newer ? versionRefusal(v, !isCompileError(compileExpression(expression, { kubeVersion: v }))) : '';
      add('match-conditions-compile', `${label}${where}: ${JSON.stringify(expression)}: ${compiled.message}`);
    } else if (compiled.type !== 'bool')
      // The API server's words: a dyn result (`object.spec.enabled`) is refused too.
      add(
        'match-conditions-type',
        `${label}: ${JSON.stringify(expression)}: ${notBool(compiled.type, options.kubeVersion)}`,
      );
  });
  return problems;
}

/**
 * Why `v` refuses an expression a newer version takes. `stored`: v itself has what it uses, but a
 * configuration being created is compiled in v's compatibility version's environment, one minor
 * version back (so that a rollback to it still reads the configuration).
 */
function versionRefusal(v: CelKubeVersion, stored: boolean): string {
  const shown = `${v.major}.${v.minor}`;
  if (!stored) return ` is not available in Kubernetes ${shown}`;
  return (
    ` is refused by Kubernetes ${shown} in a new configuration: it compiles new expressions in its ` +
    `compatibility version's environment (${v.major}.${v.minor - 1}, one minor version back, so that a rollback ` +
    `still reads them), which lacks what this one uses; Kubernetes ${v.major}.${v.minor + 1} takes it`
  );
}

/** The minor version whose API server names the type it got (its compiler's check of the output type, 1.32). */
const NAMES_OUTPUT_TYPE_SINCE = 32;

/** The API server's words for a condition whose type is not bool. */
function notBool(type: string, version: CelKubeVersion = NEWEST_KUBE_VERSION): string {
  const says = 'must evaluate to bool';
  return version.minor >= NAMES_OUTPUT_TYPE_SINCE ? `${says} but got ${celGoTypeName(type)}` : says;
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
