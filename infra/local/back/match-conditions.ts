import { answerWithoutCalling, matchConditionsFor, skipReason } from '../../../lib/matchconditions/matcher.ts';
import {
  type AdmissionRegistration,
  type MatchCondition,
  type Registration,
  completeAdmissionReview,
  parseAdmissionReview,
  type AdmissionReview,
} from '../../../lib/internal.ts';
import type { HttpResponse } from '../../../lib/internal.ts';

/**
 * What a worker thread needs of a registration to evaluate its conditions (a registration
 * holds functions, which cannot cross threads).
 */
export interface ConditionsSpec {
  name: string;
  webhookName: string;
  failurePolicy: 'Fail' | 'Ignore';
  matchConditions: MatchCondition[];
  /** The Kubernetes version ("1.30") whose CEL environment compiles the conditions; the newest when unset. */
  kubernetesVersion?: string;
}

/** The answer a review gets without its function: the review response, the reason logged, the review's uid. */
interface Excluded {
  answer: HttpResponse;
  reason: string;
  uid: string;
}

/** A review's envelope: enough to answer it (apiVersion, uid). */
export interface Envelope {
  apiVersion: AdmissionReview['apiVersion'];
  uid: string;
}

/** True when start-api evaluates the registration's matchConditions before invoking the function. */
export function hasMatchConditions(registration: Registration | undefined): registration is AdmissionRegistration {
  if (registration === undefined || registration.type === 'conversion') return false;
  return (registration.matchConditions?.length ?? 0) > 0;
}

/** A review response wrapped in the request's envelope, as an HTTP answer. */
export function reviewAnswer(
  envelope: Envelope,
  response: Parameters<typeof completeAdmissionReview>[1],
): HttpResponse {
  const review = completeAdmissionReview({ apiVersion: envelope.apiVersion, request: { uid: envelope.uid } }, response);
  return {
    status: 200,
    headers: { 'content-type': 'application/json' },
    body: Buffer.from(JSON.stringify(review)),
  };
}

/**
 * Evaluates a registration's conditions for a request body: the answer when they exclude the
 * review (allowed) or fail under failurePolicy Fail (denied), undefined when the function is
 * to be invoked or the body is no review. `onEnvelope` hears of the review before the
 * conditions are evaluated.
 */
function evaluateBody(
  registration: AdmissionRegistration,
  body: Uint8Array,
  onEnvelope?: (envelope: Envelope) => void,
): Excluded | undefined {
  let json: unknown;
  try {
    json = JSON.parse(Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('utf8'));
  } catch {
    return undefined;
  }
  const parsed = parseAdmissionReview(json);
  if (!parsed.ok) return undefined;
  const envelope = { apiVersion: parsed.review.apiVersion, uid: parsed.review.request.uid };
  onEnvelope?.(envelope);
  const notCalled = answerWithoutCalling(registration, parsed.review.request);
  if (!notCalled) return undefined;
  const { outcome, response } = notCalled;
  const reason = 'matched' in outcome ? skipReason(outcome)! : `rejected: ${response.status!.message}`;
  return { answer: reviewAnswer(envelope, notCalled.response), reason, uid: envelope.uid };
}

/**
 * The emulator's answer to a request body when the function's matchConditions exclude the
 * review (allowed) or fail under failurePolicy Fail (denied with the API server's message);
 * undefined when the function is to be invoked, or the body is no review (the function
 * answers that with its own 400). Evaluates on the calling thread (start-api evaluates in a
 * ConditionPool instead).
 */
export function answerByMatchConditions(
  registration: Registration | undefined,
  body: Buffer,
  log: (line: string) => void,
): HttpResponse | undefined {
  if (!hasMatchConditions(registration)) return undefined;
  const excluded = evaluateBody(registration, body);
  if (!excluded) return undefined;
  const { uid, reason } = excluded;
  log(JSON.stringify({ msg: 'not invoked: matchConditions', function: registration.name, uid, reason }));
  return excluded.answer;
}

/** A job for a worker thread. */
export interface JobMessage {
  id: number;
  spec: ConditionsSpec;
  body: Uint8Array;
}

/** What a worker thread posts back. */
export type WorkerMessage =
  /** The thread compiled the conditions; `from`: what it runs (the cached build, the TypeScript sources, the package's JavaScript). */
  | { ready: true; from?: 'build' | 'sources' | 'package' }
  | { id: number; envelope: Envelope }
  | { id: number; done: true; excluded?: ExcludedMessage; error?: string };

/** An Excluded as it crosses threads. */
interface ExcludedMessage {
  status: number;
  body: Uint8Array;
  reason: string;
  uid: string;
}

/** Registrations a worker thread has compiled, by spec: the matcher is compiled once per registration object. */
const compiled = new Map<string, AdmissionRegistration>();
/** Specs a worker thread keeps compiled (a function's conditions change only when it is re-registered). */
const COMPILED_SPECS = 32;

/** The registration standing for a spec in this thread: the same object each time, so its conditions compile once. */
function registrationFor(spec: ConditionsSpec): AdmissionRegistration {
  const key = JSON.stringify(spec);
  let registration = compiled.get(key);
  if (!registration) {
    if (compiled.size >= COMPILED_SPECS) compiled.delete(compiled.keys().next().value!);
    registration = { type: 'validating', ...spec } as unknown as AdmissionRegistration;
    compiled.set(key, registration);
  }
  return registration;
}

/** Compiles a spec's conditions in a thread before its first review: a review's time bound is for evaluating it. */
export function warmConditions(spec: ConditionsSpec): void {
  try {
    matchConditionsFor(registrationFor(spec));
  } catch {
    // A spec that does not compile fails its reviews with the compiler's error instead.
  }
}

/** Runs one job in a worker thread (conditions-worker.mjs), posting the envelope first and then the outcome. */
export function runConditionsJob(job: JobMessage, post: (message: WorkerMessage) => void): void {
  try {
    const excluded = evaluateBody(registrationFor(job.spec), job.body, (envelope) => post({ id: job.id, envelope }));
    if (!excluded) {
      post({ id: job.id, done: true });
      return;
    }
    const { answer, reason, uid } = excluded;
    post({ id: job.id, done: true, excluded: { status: answer.status, body: answer.body, reason, uid } });
  } catch (err) {
    post({ id: job.id, done: true, error: err instanceof Error ? `${err.name}: ${err.message}` : String(err) });
  }
}
