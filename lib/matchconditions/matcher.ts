/**
 * Evaluation of matchConditions as the API server does it (apiserver
 * admission/plugin/webhook/matchconditions/matcher.go): every condition is evaluated; any
 * false skips the webhook (false wins over errors); otherwise an error falls to the
 * webhook's failurePolicy (Fail rejects the request, Ignore skips the webhook).
 */
import type { AdmissionRegistration, MatchCondition } from '../registration.ts';
import type { AdmissionRequest } from '../review/schemas.ts';
import {
  type Authorize,
  type CelKubeVersion,
  CelCompileError,
  CelEngineNotLoaded,
  check,
  compile,
  kubeVersionFromText,
  MATCH_CONDITIONS_COST_BUDGET,
  noOpinion,
  type Program,
} from '../../packages/kube-cel/src/index.ts';
import { variablesFor } from './variables.ts';
import { WebhookError } from '../errors.ts';

/** One condition's evaluation: its value, or the error it raised (in the API server's words). */
export interface ConditionEvaluation {
  name: string;
  value?: unknown;
  error?: string;
}

/** What the API server does with a request after matchConditions. */
export type MatchOutcome =
  /** Every condition true (or none): the webhook is called. */
  | { matched: true }
  /** Condition `name` was false: the webhook is skipped. */
  | { matched: false; name: string }
  /** A condition failed to evaluate and failurePolicy is Ignore: the webhook is skipped. */
  | { matched: false; name: string; error: string }
  /** A condition failed to evaluate and failurePolicy is Fail: the request is rejected. */
  | { error: string; name: string };

/**
 * The API server's decision from the evaluations, in declaration order; `failure` stands
 * for a failure to evaluate at all (the filter's error).
 */
export function decideMatch(
  evaluations: ConditionEvaluation[] | { failure: string },
  failurePolicy: 'Fail' | 'Ignore' = 'Fail',
): MatchOutcome {
  if (!Array.isArray(evaluations)) {
    return failurePolicy === 'Fail'
      ? { error: evaluations.failure, name: '' }
      : { matched: false, name: '', error: evaluations.failure };
  }
  const errors: ConditionEvaluation[] = [];
  for (const e of evaluations) {
    if (e.error !== undefined) errors.push(e);
    // Only a real false skips; an error or a non-bool never does.
    else if (e.value === false) return { matched: false, name: e.name };
    else if (e.value !== true)
      errors.push({
        name: e.name,
        error: `matchCondition ${JSON.stringify(e.name)}: expected bool, got ${typeof e.value}`,
      });
  }
  if (errors.length) {
    const error = aggregate(errors.map((e) => e.error!));
    return failurePolicy === 'Fail'
      ? { error, name: errors[0]!.name }
      : { matched: false, name: errors[0]!.name, error };
  }
  return { matched: true };
}

/**
 * The errors of several conditions as apimachinery's utilerrors.NewAggregate prints them: one alone as
 * it is; more, each message once, joined with `, ` in brackets.
 */
function aggregate(messages: string[]): string {
  const unique = [...new Set(messages)];
  return unique.length === 1 ? unique[0]! : `[${unique.join(', ')}]`;
}

/**
 * A condition's evaluation error as the API server's filter words it (admission/plugin/cel
 * filter.go): `expression '<expression as written>' resulted in error: <cel-go's message>`.
 */
export function evaluationError(expression: string, message: string): string {
  return `expression '${expression}' resulted in error: ${message}`;
}

/** Compiled matchConditions of one webhook. */
export interface Matcher {
  conditions: MatchCondition[];
  /** True when a condition it evaluates uses `authorizer` (never with skipAuthorizer): only then does `evaluate` ask `authorize`. */
  usesAuthorizer: boolean;
  /** Evaluates the conditions for a request; `authorize` answers `authorizer` checks. */
  evaluate(request: AdmissionRequest, authorize?: Authorize): MatchOutcome;
}

/**
 * A condition that does not compile: every evaluation of it is an error, which the API server's
 * filter words `compilation error: <the compiler's message>`.
 */
class CompilationFailed extends WebhookError {
  readonly code = 'CONDITION_COMPILATION_FAILED';
}

function broken(expression: string, message: string): Program {
  return {
    expression,
    type: 'error',
    usesAuthorizer: false,
    evaluate() {
      throw new CompilationFailed(`compilation error: ${message}`);
    },
  };
}

/**
 * Compiles conditions into a matcher. `skipAuthorizer` leaves out conditions that use
 * `authorizer` (in-function enforcement, where no authorizer exists); `typeCheck: false`
 * only parses them.
 */
export function createMatcher(
  conditions: MatchCondition[],
  failurePolicy: 'Fail' | 'Ignore' = 'Fail',
  options: { skipAuthorizer?: boolean; typeCheck?: boolean; kubeVersion?: CelKubeVersion } = {},
): Matcher {
  const { kubeVersion } = options;
  const compiled = conditions
    .map((c) => {
      const typeCheck = options.typeCheck !== false;
      try {
        return {
          name: c.name,
          expression: c.expression,
          program: compile(c.expression.trim(), { typeCheck, kubeVersion }),
        };
      } catch (err) {
        if (!(err instanceof CelCompileError)) throw err;
        // Refused for the version only: say which condition and which version.
        const newer = kubeVersion && check(c.expression.trim(), { typeCheck }).valid;
        const why = newer
          ? `matchCondition ${JSON.stringify(c.name)} is not available in Kubernetes ${kubeVersion.major}.${kubeVersion.minor}: ${err.message}`
          : err.message;
        return { name: c.name, expression: c.expression, program: broken(c.expression, why) };
      }
    })
    .filter((c) => !(options.skipAuthorizer && c.program.usesAuthorizer));
  return {
    conditions,
    usesAuthorizer: compiled.some((c) => c.program.usesAuthorizer),
    evaluate(request, authorize = noOpinion) {
      if (!compiled.length) return { matched: true };
      let variables: Record<string, unknown>;
      try {
        variables = variablesFor(request, authorize);
      } catch (err) {
        return decideMatch({ failure: err instanceof Error ? err.message : String(err) }, failurePolicy);
      }
      const evaluations: ConditionEvaluation[] = [];
      let budget = MATCH_CONDITIONS_COST_BUDGET;
      for (const { name, expression, program } of compiled) {
        let cost = 0;
        try {
          const evaluation = program.evaluate(variables);
          cost = evaluation.cost;
          evaluations.push({ name, value: evaluation.value });
        } catch (err) {
          // Left to the engine before its chunk is loaded: evaluated again once it is (afterChunks).
          if (err instanceof CelEngineNotLoaded) throw err;
          cost = (err as { cost?: number }).cost ?? 0;
          const message = err instanceof Error ? err.message : String(err);
          evaluations.push({
            name,
            error: err instanceof CompilationFailed ? message : evaluationError(expression, message),
          });
        }
        // Past the budget of all conditions, the API server's filter fails as a whole.
        budget -= cost;
        if (budget < 0)
          return decideMatch(
            { failure: 'validation failed due to running out of cost budget, no further validation rules will be run' },
            failurePolicy,
          );
      }
      return decideMatch(evaluations, failurePolicy);
    },
  };
}

const matchers = new WeakMap<AdmissionRegistration, Matcher>();

/** The compiled matcher of a registration's matchConditions, compiled once per registration. */
export function matchConditionsFor(registration: AdmissionRegistration): Matcher {
  let matcher = matchers.get(registration);
  if (!matcher) {
    matcher = createMatcher(registration.matchConditions ?? [], registration.failurePolicy, {
      kubeVersion: kubeVersionFromText(registration.kubernetesVersion),
    });
    matchers.set(registration, matcher);
  }
  return matcher;
}

/** How the test kit reports a skipped call: `skipped by matchCondition <name>`. */
export function skipReason(outcome: MatchOutcome): string | undefined {
  if ('matched' in outcome && !outcome.matched) {
    return 'error' in outcome
      ? `skipped: matchCondition ${JSON.stringify(outcome.name)} failed to evaluate and failurePolicy is Ignore (${outcome.error})`
      : `skipped by matchCondition ${outcome.name}`;
  }
  return undefined;
}

/**
 * The message of an internal error evaluating a webhook's conditions (the emulator's evaluation timed
 * out or failed), which the API server answers as a failed call.
 */
export function rejectionMessage(webhookName: string, outcome: { error: string }): string {
  return `Internal error occurred: failed calling webhook "${webhookName}": failed evaluating match conditions: ${outcome.error}`;
}

/** The status the API server rejects a request with. */
export interface RejectionStatus {
  code: number;
  reason: string;
  message: string;
}

/**
 * The API server's answer when a webhook's conditions fail to evaluate under failurePolicy Fail
 * (webhook/generic/webhook.go ShouldCallHook): apierrors.NewForbidden of the request's group and
 * resource, its name and the conditions' error: `pods "web" is forbidden: expression '…' resulted
 * in error: no such key: labels`.
 */
export function forbiddenByConditions(
  request: Pick<AdmissionRequest, 'resource' | 'name'>,
  error: string,
): RejectionStatus {
  const { group, resource } = request.resource ?? { group: '', resource: '' };
  const groupResource = group ? `${resource}.${group}` : resource;
  const name = request.name ?? '';
  let message = `forbidden: ${error}`;
  if (groupResource)
    message = name
      ? `${groupResource} ${JSON.stringify(name)} is forbidden: ${error}`
      : `${groupResource} is forbidden: ${error}`;
  return { code: 403, reason: 'Forbidden', message };
}

/** The answer the API server stands by when matchConditions keep it from calling a webhook. */
export interface NotCalled {
  outcome: Exclude<MatchOutcome, { matched: true }>;
  /** The AdmissionResponse (without uid): allowed when skipped, an internal error when rejected. */
  response: { allowed: boolean; status?: RejectionStatus };
}

/**
 * Evaluates a registration's matchConditions for a request: undefined when the webhook is
 * to be called, else the outcome and the answer the API server gives without calling it.
 */
export function answerWithoutCalling(
  registration: AdmissionRegistration,
  request: AdmissionRequest,
  authorize?: Authorize,
): NotCalled | undefined {
  if (!registration.matchConditions?.length) return undefined;
  const outcome = matchConditionsFor(registration).evaluate(request, authorize);
  if ('matched' in outcome && outcome.matched) return undefined;
  if ('matched' in outcome) return { outcome, response: { allowed: true } };
  return { outcome, response: { allowed: false, status: forbiddenByConditions(request, outcome.error) } };
}
