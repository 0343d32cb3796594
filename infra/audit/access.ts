// matchConditions' authorizer checks during an audit, answered by the cluster's access reviews.
import type { AdmissionRegistration, AdmissionReview } from '../../lib/internal.ts';
import type { AuthorizationAttributes, AuthorizationDecision, Authorize } from '../../packages/kube-cel/src/index.ts';
import { answerWithoutCalling } from '../../lib/matchconditions/matcher.ts';
import { accessReview, type KubeClient } from './kubeapi.ts';

/** The user the reviews name: the auditor. */
export type UserInfo = AdmissionReview['request']['userInfo'];

/** Rounds of asking per object: a check may only be reached once another's answer is known (`a && b`). */
const MAX_AUTHORIZER_ROUNDS = 8;

/**
 * The cluster's answers to matchConditions' `authorizer` checks, asked with access reviews and
 * kept for the run by user and attributes. The API server asks its authorizer for the
 * requesting user; in an audit that user is the auditor.
 */
export class AccessReviews {
  private readonly answers = new Map<string, AuthorizationDecision | Error>();
  private readonly asking = new Map<string, Promise<void>>();
  private readonly reported = new Set<string>();

  constructor(
    private readonly client: KubeClient,
    private readonly auditor: UserInfo,
    private readonly mode: 'self' | 'subject',
    private readonly problems: string[],
  ) {}

  private static key(a: AuthorizationAttributes): string {
    const { username, uid, groups, extra } = a.user;
    return JSON.stringify([
      username,
      uid ?? '',
      groups ?? [],
      extra ?? {},
      a.verb,
      a.path ?? null,
      a.group ?? '',
      a.resource ?? '',
      a.subresource ?? '',
      a.namespace ?? '',
      a.name ?? '',
      a.fieldSelectorRequirements ?? [],
      a.labelSelectorRequirements ?? [],
    ]);
  }

  /** The answer already known: a decision, the error asking failed with, or undefined. */
  known(attributes: AuthorizationAttributes): AuthorizationDecision | Error | undefined {
    return this.answers.get(AccessReviews.key(attributes));
  }

  /** Asks the cluster once per run; a failure is kept as the answer (the check errors) and reported. */
  ask(attributes: AuthorizationAttributes): Promise<void> {
    const key = AccessReviews.key(attributes);
    let asking = this.asking.get(key);
    if (!asking) {
      const self = this.mode === 'self' && attributes.user.username === this.auditor.username;
      asking = accessReview(this.client, attributes, self).then(
        (decision) => void this.answers.set(key, decision),
        (err: unknown) => {
          const error = err instanceof Error ? err : new Error(String(err));
          this.answers.set(key, error);
          // One problem per user and failure, naming the first check it hit: the conditions were not evaluated as the API server would.
          const reported = `${attributes.user.username}\0${error.message}`;
          if (!this.reported.has(reported)) {
            this.reported.add(reported);
            this.problems.push(
              `authorizer check ${describeCheck(attributes)} for ${attributes.user.username}: ${error.message}`,
            );
          }
        },
      );
      this.asking.set(key, asking);
    }
    return asking;
  }

  /**
   * Asks every check the registration's conditions make for this request, round after round
   * (evaluating with what is known, asking what was reached and is not), and returns the
   * authorizer answering from those answers for the evaluation that counts.
   */
  settle(reg: AdmissionRegistration, request: AdmissionReview['request']): Promise<Authorize> {
    return this.settleEvaluation((authorize) => answerWithoutCalling(reg, request, authorize));
  }

  /**
   * The same for any evaluation that calls the authorizer (a policy's conditions, validations and
   * mutations): `evaluate` is run with the answers known so far until it reaches no check that was
   * not asked.
   */
  async settleEvaluation(evaluate: (authorize: Authorize) => unknown): Promise<Authorize> {
    for (let round = 0; round < MAX_AUTHORIZER_ROUNDS; round++) {
      const missing: AuthorizationAttributes[] = [];
      evaluate((attributes) => {
        const answer = this.known(attributes);
        if (answer === undefined) {
          missing.push(attributes);
          return { decision: 'NoOpinion' };
        }
        if (answer instanceof Error) throw answer;
        return answer;
      });
      if (!missing.length) break;
      await Promise.all(missing.map((attributes) => this.ask(attributes)));
    }
    return (attributes) => {
      const answer = this.known(attributes);
      if (answer instanceof Error) throw answer;
      if (answer === undefined)
        throw new Error(
          `authorizer check ${describeCheck(attributes)} not asked: more than ${MAX_AUTHORIZER_ROUNDS} rounds of dependent checks`,
        );
      return answer;
    };
  }
}

/** `use exemptions.example.com in namespace shop`, `get /healthz`. */
function describeCheck(a: AuthorizationAttributes): string {
  if (a.path !== undefined) return `${a.verb} ${a.path}`;
  const resource = `${a.resource ?? ''}${a.subresource ? `/${a.subresource}` : ''}${a.group ? `.${a.group}` : ''}`;
  return `${a.verb} ${resource}${a.name ? ` ${a.name}` : ''}${a.namespace ? ` in namespace ${a.namespace}` : ''}`;
}
