/**
 * One policy's evaluation for one binding and param, as the API server's validator
 * (admission/plugin/policy/validating/validator.go): matchConditions first, then every validation
 * in order, every messageExpression with the budget the validations left, then the audit
 * annotations under a budget of their own; decisions by failurePolicy where an expression fails.
 */
import {
  MAX_MESSAGE_EXPRESSION_BYTES,
  policyActivation,
  RUNTIME_CEL_COST_BUDGET,
  celTypeName,
  type ActivationInput,
} from '../cel.ts';
import { compileConditions, evaluateConditions, type PolicyConditions } from '../generic/conditions.ts';
import {
  compileExpressions,
  compileVariables,
  compose,
  evaluateFilter,
  type CompiledVariables,
  type Evaluation,
  type PolicyEnvironment,
} from '../generic/composition.ts';
import type { PolicyProgram } from '../cel.ts';
import type { ValidatingPolicySpec, Validation } from './types.ts';

/** What a decision does to the request. */
export type DecisionAction = 'admit' | 'deny';

/** One validation's decision (PolicyDecision). */
export interface PolicyDecision {
  action: DecisionAction;
  /** `admit`, `deny` (the validation was false) or `error` (it could not be evaluated). */
  evaluation: 'admit' | 'deny' | 'error';
  message: string;
  /** The reason of a denial (`Invalid` when the validation sets none). */
  reason?: string;
}

/** One audit annotation's outcome (PolicyAuditAnnotation). */
export interface PolicyAuditAnnotation {
  key: string;
  action: 'publish' | 'exclude' | 'error';
  value?: string;
  error?: string;
}

/** The decisions and audit annotations of one evaluation. */
export interface ValidateResult {
  decisions: PolicyDecision[];
  auditAnnotations: PolicyAuditAnnotation[];
}

/** A policy with its expressions compiled once. */
export interface CompiledValidatingPolicy {
  spec: ValidatingPolicySpec;
  failurePolicy: 'Fail' | 'Ignore';
  variables: CompiledVariables;
  conditions: PolicyConditions;
  validations: Array<PolicyProgram | undefined>;
  /** The validations' expressions, and their messageExpressions (undefined where none), in order. */
  validationTexts: string[];
  messageTexts: Array<string | undefined>;
  messages: Array<PolicyProgram | undefined>;
  /** True when some validation has a messageExpression. */
  hasMessages: boolean;
  /** The auditAnnotations' valueExpressions, in order. */
  auditTexts: string[];
  auditAnnotations: Array<PolicyProgram | undefined>;
}

/** Compiles a policy as the API server's compilePolicy (messageExpressions without `authorizer`). */
export function compileValidatingPolicy(
  spec: ValidatingPolicySpec,
  options: Pick<PolicyEnvironment, 'kubernetesVersion' | 'typeCheck'> = {},
): CompiledValidatingPolicy {
  const env: PolicyEnvironment = { ...options, hasParams: spec.paramKind !== undefined };
  const variables = compileVariables(spec.variables ?? [], env);
  const validations = spec.validations ?? [];
  const messageTexts = validations.map((v) => v.messageExpression || undefined);
  const auditTexts = (spec.auditAnnotations ?? []).map((a) => a.valueExpression);
  return {
    spec,
    failurePolicy: spec.failurePolicy ?? 'Fail',
    variables,
    conditions: compileConditions(spec.matchConditions ?? [], variables, env),
    validationTexts: validations.map((v) => v.expression),
    messageTexts,
    hasMessages: messageTexts.some((m) => m !== undefined),
    auditTexts,
    validations: compileExpressions(
      validations.map((v) => v.expression),
      variables,
      env,
      ['bool'],
    ),
    messages: compileExpressions(
      validations.map((v) => v.messageExpression || undefined),
      variables,
      env,
      ['string'],
      false,
    ),
    auditAnnotations: compileExpressions(auditTexts, variables, env, ['string', 'null_type']),
  };
}

/** What an expression error does under a failurePolicy. */
const actionForError = (failurePolicy: 'Fail' | 'Ignore'): DecisionAction =>
  failurePolicy === 'Ignore' ? 'admit' : 'deny';

/** The one decision of an evaluation that failed as a whole. */
const failedWhole = (failurePolicy: 'Fail' | 'Ignore', message: string): ValidateResult => ({
  decisions: [{ action: actionForError(failurePolicy), evaluation: 'error', message }],
  auditAnnotations: [],
});

/**
 * Evaluates a compiled policy for a request, its matched kind, one param and its Namespace;
 * `budget` is the API server's RuntimeCELCostBudget unless a test sets another.
 */
export function validate(
  policy: CompiledValidatingPolicy,
  input: Omit<ActivationInput, 'withoutAuthorizer' | 'kindOnly'>,
  budget = RUNTIME_CEL_COST_BUDGET,
): ValidateResult {
  const fp = policy.failurePolicy;
  if (policy.spec.matchConditions?.length) {
    const base = policyActivation({ ...input, namespace: null, kindOnly: true });
    const outcome = evaluateConditions(policy.conditions, policy.variables, base, fp);
    if (!('matched' in outcome)) return failedWhole(fp, outcome.error);
    if (!outcome.matched) return { decisions: [], auditAnnotations: [] };
  }
  const validations = policy.spec.validations ?? [];
  // One activation for the three filters: the object is converted to CEL values once.
  const base = policyActivation(input);
  const checked = evaluateFilter(policy.validations, policy.validationTexts, compose(base, policy.variables), budget);
  if (checked.error !== undefined) return failedWhole(fp, checked.error);
  const none = { evaluations: [] as Evaluation[], remaining: checked.remaining };
  let messages: ReturnType<typeof evaluateFilter> = none;
  if (policy.hasMessages) {
    // messageExpressions see no authorizer.
    messages = evaluateFilter(
      policy.messages,
      policy.messageTexts,
      compose(base, policy.variables, 'authorizer'),
      checked.remaining,
    );
  }
  const decisions = decideValidations(validations, checked.evaluations, messages, fp);
  const audits = policy.spec.auditAnnotations ?? [];
  if (!audits.length) return { decisions, auditAnnotations: [] };
  const annotations = evaluateFilter(
    policy.auditAnnotations,
    policy.auditTexts,
    compose(base, policy.variables),
    budget,
  );
  if (annotations.error !== undefined) return failedWhole(fp, annotations.error);
  return { decisions, auditAnnotations: decideAuditAnnotations(audits, annotations.evaluations, fp) };
}

/** The byte length of a string in UTF-8. */
const utf8Length = (s: string) => new TextEncoder().encode(s).length;

/** A messageExpression's value as a message: a trimmed string of one line within the limit, else ''. */
function evaluatedMessage(evaluation: Evaluation | undefined): string {
  if (!evaluation || evaluation.error !== undefined || typeof evaluation.value !== 'string') return '';
  const message = evaluation.value.trim();
  if (utf8Length(message) > MAX_MESSAGE_EXPRESSION_BYTES || message.includes('\n')) return '';
  return message;
}

/**
 * The decisions of validations from their evaluations and their messageExpressions' (or the
 * error that stopped those), as the validator decides them.
 */
export function decideValidations(
  validations: readonly Validation[],
  evaluations: readonly Evaluation[],
  messages: { evaluations: Evaluation[]; error?: undefined } | { error: string; evaluations?: undefined },
  failurePolicy: 'Fail' | 'Ignore',
): PolicyDecision[] {
  return evaluations.map((evaluation, i) => {
    const validation = validations[i] ?? { expression: '' };
    if (evaluation.error !== undefined)
      return { action: actionForError(failurePolicy), evaluation: 'error', message: evaluation.error };
    if (messages.error !== undefined)
      return {
        action: actionForError(failurePolicy),
        evaluation: 'error',
        message: `failed messageExpression: ${messages.error}`,
      };
    if (evaluation.value === true) return { action: 'admit', evaluation: 'admit', message: '' };
    let message = evaluatedMessage(messages.evaluations[i]);
    if (!message && validation.message) message = validation.message.trim();
    if (!message) message = `failed expression: ${validation.expression.trim()}`;
    return { action: 'deny', evaluation: 'deny', reason: validation.reason ?? 'Invalid', message };
  });
}

/** The outcomes of audit annotations from their evaluations: a string publishes, null or '' excludes. */
export function decideAuditAnnotations(
  annotations: ReadonlyArray<{ key: string; valueExpression: string }>,
  evaluations: readonly Evaluation[],
  failurePolicy: 'Fail' | 'Ignore',
): PolicyAuditAnnotation[] {
  return evaluations.map((evaluation, i) => {
    const { key, valueExpression } = annotations[i] ?? { key: '', valueExpression: '' };
    if (evaluation.error !== undefined)
      return { key, action: failurePolicy === 'Ignore' ? 'exclude' : 'error', error: evaluation.error };
    const { value } = evaluation;
    if (typeof value === 'string') {
      const trimmed = value.trim();
      return trimmed ? { key, action: 'publish', value: trimmed } : { key, action: 'exclude' };
    }
    if (value === null || value === undefined) return { key, action: 'exclude' };
    return {
      key,
      action: 'error',
      error: `valueExpression '${valueExpression}' resulted in unsupported return type: ${celTypeName(value)}. Return type must be either string or null.`,
    };
  });
}
