/**
 * matchConditions in the emulator: an API server that does not know them (before 1.28) sends
 * every review its rules match, so start-api evaluates them as a newer API server would and
 * answers a review they exclude itself, without invoking the function. The evaluation runs in
 * worker threads of the function's own (a ConditionPool), never on the emulator's event loop: a
 * slow condition delays only that review, which is answered by the webhook's failurePolicy once
 * the webhook's timeout has passed.
 */
import { EventEmitter } from 'node:events';
import { Worker, type ResourceLimits } from 'node:worker_threads';
import {
  answerWithoutCalling,
  matchConditionsFor,
  rejectionMessage,
  skipReason,
} from '../../lib/matchconditions/matcher.ts';
import type { AdmissionRegistration, MatchCondition, Registration } from '../../lib/registration.ts';
import { completeAdmissionReview, parseAdmissionReview } from '../../lib/review/envelope.ts';
import type { AdmissionReview } from '../../lib/review/schemas.ts';
import { BAD_GATEWAY, jsonMessage, type HttpResponse } from './results.ts';

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
interface Envelope {
  apiVersion: AdmissionReview['apiVersion'];
  uid: string;
}

/** True when start-api evaluates the registration's matchConditions before invoking the function. */
export function hasMatchConditions(registration: Registration | undefined): registration is AdmissionRegistration {
  if (registration === undefined || registration.type === 'conversion') return false;
  return (registration.matchConditions?.length ?? 0) > 0;
}

/** A review response wrapped in the request's envelope, as an HTTP answer. */
function reviewAnswer(envelope: Envelope, response: Parameters<typeof completeAdmissionReview>[1]): HttpResponse {
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
interface JobMessage {
  id: number;
  spec: ConditionsSpec;
  body: Uint8Array;
}

/** What a worker thread posts back. */
type WorkerMessage =
  | { ready: true }
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

/** The module an evaluator thread runs, unless a pool names another. */
const WORKER_FILE = new URL('./conditions-worker.mjs', import.meta.url);

/**
 * Heap of one evaluator thread (MB): a review of the largest size start-api takes (10 MB) is
 * parsed and copied into CEL values a few times over, well inside it; a condition that builds
 * more (large strings in a comprehension) stops the thread, and the review gets the failurePolicy answer.
 */
export const CONDITIONS_HEAP_MB = 512;

/** Reviews waiting for a free thread of one function before the emulator answers 429, as the function's pool does. */
export const MAX_QUEUED_CONDITIONS = 256;

/** Options of a ConditionPool. */
export interface ConditionPoolOptions {
  /** Most evaluator threads at once. */
  size: number;
  /** Where the pool's log lines go. */
  log: (line: string) => void;
  /** The threads' resource limits (default: a heap of CONDITIONS_HEAP_MB). */
  resourceLimits?: ResourceLimits;
  /**
   * The module the threads run (default conditions-worker.mjs), for tests and diagnostics: one that
   * speaks the same messages, e.g. to stand in a review that never finishes or exhausts the heap.
   */
  worker?: URL;
  /** The Kubernetes version ("1.30") to evaluate conditions as (`--kube-version`), over the registration's own. */
  kubeVersion?: string;
}

/** One review waiting for, or under, evaluation. */
interface Job {
  id: number;
  spec: ConditionsSpec;
  body: Uint8Array;
  timeoutMs: number;
  envelope?: Envelope;
  timer?: NodeJS.Timeout;
  /** Stops listening for the client going away. */
  forget?: () => void;
  resolve: (answer: HttpResponse | undefined) => void;
}

/** One evaluator thread. */
interface Evaluator {
  worker: Worker;
  ready: boolean;
  job?: Job;
}

/**
 * Worker threads that evaluate one function's matchConditions, one review at a time each, at
 * most `size` at once; reviews wait for a free one in order. Each evaluation is bounded by the
 * webhook's timeout: past it the thread is stopped (and replaced when needed), and the review
 * gets the answer its failurePolicy gives a call that timed out. Emits `evaluating` (the job's
 * id) when a thread starts on a review, and `settled` when a review has its answer.
 */
export class ConditionPool extends EventEmitter {
  private readonly evaluators = new Set<Evaluator>();
  private readonly queue: Job[] = [];
  private sequence = 0;
  private closed = false;

  /** `name`: the function's. */
  constructor(
    readonly name: string,
    private readonly options: ConditionPoolOptions,
  ) {
    super();
  }

  /** Evaluator threads alive now. */
  get size(): number {
    return this.evaluators.size;
  }

  /**
   * Evaluates a registration's conditions for a request body, within `timeoutMs` of a thread
   * starting on it (a thread starts, and compiles the conditions, before the clock runs): the
   * answer the emulator sends when the function is not to be invoked, undefined when it is
   * (the conditions hold, or the body is no review). Once `signal` aborts (the client went
   * away), the review is dropped, its thread stopped if it has one, and the answer is a 502.
   */
  evaluate(
    registration: AdmissionRegistration,
    body: Buffer,
    timeoutMs: number,
    signal?: AbortSignal,
  ): Promise<HttpResponse | undefined> {
    if (this.closed || signal?.aborted) return Promise.resolve(BAD_GATEWAY);
    if (this.queue.length >= MAX_QUEUED_CONDITIONS) return Promise.resolve(jsonMessage(429, 'Too Many Requests'));
    const spec: ConditionsSpec = {
      name: registration.name,
      webhookName: registration.webhookName,
      failurePolicy: registration.failurePolicy ?? 'Fail',
      matchConditions: registration.matchConditions ?? [],
    };
    const kubernetesVersion = this.options.kubeVersion ?? registration.kubernetesVersion;
    if (kubernetesVersion) spec.kubernetesVersion = kubernetesVersion;
    return new Promise((resolve) => {
      const job: Job = { id: ++this.sequence, spec, body, timeoutMs, resolve };
      if (signal) {
        const onAbort = () => this.abandoned(job);
        signal.addEventListener('abort', onAbort, { once: true });
        job.forget = () => signal.removeEventListener('abort', onAbort);
      }
      this.queue.push(job);
      this.pump();
    });
  }

  /**
   * The client of a review went away (the API server gave up on it at its own timeout): a
   * review still waiting leaves the queue, one under evaluation has its thread stopped, so
   * nobody's abandoned reviews hold threads the next ones wait for.
   */
  private abandoned(job: Job): void {
    const waiting = this.queue.indexOf(job);
    if (waiting !== -1) this.queue.splice(waiting, 1);
    else {
      const evaluator = [...this.evaluators].find((e) => e.job === job);
      if (!evaluator) return;
      evaluator.job = undefined;
      this.retire(evaluator);
    }
    const uid = job.envelope ? { uid: job.envelope.uid } : {};
    const reason = 'the client went away';
    this.options.log(JSON.stringify({ msg: 'not invoked: matchConditions', function: this.name, ...uid, reason }));
    this.settle(job, BAD_GATEWAY);
    this.pump();
  }

  /** Hands waiting reviews to idle threads, starting threads while under `size`. */
  private pump(): void {
    while (this.queue.length && !this.closed) {
      const idle = [...this.evaluators].find((e) => e.ready && !e.job);
      if (idle) {
        this.start(idle, this.queue.shift()!);
        continue;
      }
      const starting = [...this.evaluators].filter((e) => !e.ready).length;
      // A thread on its way up takes the next review once ready.
      if (this.evaluators.size >= this.options.size || starting >= this.queue.length) return;
      this.spawn(this.queue[starting]!.spec);
    }
  }

  /** Starts a thread, which compiles `spec` (of the review it is started for) before it says it is ready. */
  private spawn(spec: ConditionsSpec): void {
    const resourceLimits = this.options.resourceLimits ?? { maxOldGenerationSizeMb: CONDITIONS_HEAP_MB };
    const worker = new Worker(this.options.worker ?? WORKER_FILE, { resourceLimits });
    worker.postMessage({ warm: spec });
    const evaluator: Evaluator = { worker, ready: false };
    this.evaluators.add(evaluator);
    worker.on('message', (message: WorkerMessage) => this.message(evaluator, message));
    worker.on('error', (err) => this.lost(evaluator, `${err.name}: ${err.message}`));
    worker.on('exit', (code) => this.lost(evaluator, `evaluator exited with code ${code}`));
  }

  private start(evaluator: Evaluator, job: Job): void {
    evaluator.job = job;
    job.timer = setTimeout(() => this.timedOut(evaluator, job), job.timeoutMs);
    job.timer.unref();
    const message: JobMessage = { id: job.id, spec: job.spec, body: job.body };
    evaluator.worker.postMessage(message);
    this.emit('evaluating', job.id);
  }

  private message(evaluator: Evaluator, message: WorkerMessage): void {
    if ('ready' in message) {
      evaluator.ready = true;
      this.pump();
      return;
    }
    const job = evaluator.job;
    if (!job || job.id !== message.id) return;
    if ('envelope' in message) {
      job.envelope = message.envelope;
      return;
    }
    evaluator.job = undefined;
    if (message.error !== undefined) {
      this.settle(job, this.failed(job, `evaluation failed: ${message.error}`, BAD_GATEWAY));
    } else if (message.excluded) {
      const { status, body, reason, uid } = message.excluded;
      this.options.log(JSON.stringify({ msg: 'not invoked: matchConditions', function: this.name, uid, reason }));
      const text = Buffer.from(body.buffer, body.byteOffset, body.byteLength);
      this.settle(job, { status, headers: { 'content-type': 'application/json' }, body: text });
    } else this.settle(job, undefined);
    this.pump();
  }

  /** The timeout passed while a thread evaluated the review: the thread is stopped, the review answered by policy. */
  private timedOut(evaluator: Evaluator, job: Job): void {
    if (evaluator.job !== job) return;
    evaluator.job = undefined;
    this.retire(evaluator);
    const seconds = job.timeoutMs / 1000;
    const error = `the conditions did not finish within the webhook's timeout (${seconds}s)`;
    this.settle(job, this.failed(job, error, jsonMessage(504, 'Endpoint request timed out')));
    this.pump();
  }

  /**
   * A thread died (out of memory, or it could not start): its review is answered by
   * failurePolicy; when it never got ready, those waiting fail too.
   */
  private lost(evaluator: Evaluator, why: string): void {
    if (!this.evaluators.has(evaluator)) return;
    this.evaluators.delete(evaluator);
    const job = evaluator.job;
    evaluator.job = undefined;
    if (job) this.settle(job, this.failed(job, `evaluation failed: ${why}`, BAD_GATEWAY));
    if (!evaluator.ready && !this.closed) {
      // It could not load the evaluator: starting another would fail the same way.
      const error = `matchConditions evaluator of ${this.name} did not start: ${why}`;
      this.options.log(JSON.stringify({ msg: 'emulator fault', error }));
      for (const waiting of this.queue.splice(0)) this.settle(waiting, BAD_GATEWAY);
      return;
    }
    this.pump();
  }

  private retire(evaluator: Evaluator): void {
    this.evaluators.delete(evaluator);
    void evaluator.worker.terminate();
  }

  /**
   * The answer by failurePolicy when the conditions could not be evaluated: with the review's
   * envelope, the review answer a newer API server gives (Ignore: allowed; Fail: its internal
   * error); without one (the body was still being parsed), `fallback`, the HTTP error a failed
   * call gets, which the API server itself answers by failurePolicy.
   */
  private failed(job: Job, error: string, fallback: HttpResponse): HttpResponse {
    const { spec, envelope } = job;
    const ignore = spec.failurePolicy === 'Ignore';
    const uid = envelope ? { uid: envelope.uid } : {};
    const { failurePolicy } = spec;
    const line = { msg: 'not invoked: matchConditions', function: this.name, ...uid, reason: error, failurePolicy };
    this.options.log(JSON.stringify(line));
    if (!envelope) return fallback;
    if (ignore) return reviewAnswer(envelope, { allowed: true });
    const message = rejectionMessage(spec.webhookName, { error });
    return reviewAnswer(envelope, { allowed: false, status: { code: 500, reason: 'InternalError', message } });
  }

  private settle(job: Job, answer: HttpResponse | undefined): void {
    clearTimeout(job.timer);
    job.forget?.();
    job.resolve(answer);
    this.emit('settled', job.id);
  }

  /** Stops every thread; reviews still waiting or under evaluation get a 502. */
  async close(): Promise<void> {
    this.closed = true;
    const evaluators = [...this.evaluators];
    this.evaluators.clear();
    for (const e of evaluators) if (e.job) this.settle(e.job, BAD_GATEWAY);
    for (const job of this.queue.splice(0)) this.settle(job, BAD_GATEWAY);
    await Promise.all(evaluators.map((e) => e.worker.terminate()));
  }
}
