// The emulator's matchConditions threads: a pool per function that evaluates reviews off the
// event loop, each within its time bound, a stalled thread replaced.
import { EventEmitter } from 'node:events';
import { Worker, type ResourceLimits } from 'node:worker_threads';
import { rejectionMessage } from '../../../lib/matchconditions/matcher.ts';
import type { AdmissionRegistration } from '../../../lib/internal.ts';
import { BAD_GATEWAY, jsonMessage, type HttpResponse } from '../../../lib/internal.ts';
import {
  type ConditionsSpec,
  type Envelope,
  reviewAnswer,
  type JobMessage,
  type WorkerMessage,
} from './match-conditions.ts';

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
