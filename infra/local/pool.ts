import { randomUUID } from 'node:crypto';
import { createInterface } from 'node:readline';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';

/** How one function runs locally, as Lambda would run it. */
export interface FunctionRuntime {
  name: string;
  /** Absolute path of the built bundle. */
  bundle: string;
  env: Record<string, string>;
  /** Lambda memory size in MB; also the worker's heap limit. */
  memoryMb: number;
  /** Lambda timeout in ms. */
  timeoutMs: number;
  /** Most execution environments (workers) at once (Lambda reserved concurrency). */
  concurrency: number;
  /** Receives each line the function writes (its logs); default: the emulator's own stdout. */
  onLog?: (line: string) => void;
}

/** The outcome of one invocation. */
export type Invocation =
  | { kind: 'result'; result: unknown; cold: boolean; durationMs: number; requestId: string }
  | { kind: 'error'; error: { errorType: string; errorMessage: string; stackTrace: string[] }; cold: boolean; durationMs: number; requestId: string }
  | { kind: 'timeout'; cold: boolean; durationMs: number; requestId: string }
  | { kind: 'crash'; message: string; cold: boolean; durationMs: number; requestId: string }
  | { kind: 'throttled'; requestId: string };

/** Invocations waiting for a free environment before the pool answers 429, as Lambda throttles. */
export const MAX_QUEUED = 256;

const WORKER_FILE = fileURLToPath(new URL('./worker.mjs', import.meta.url));

/** What a worker posts back. */
interface WorkerReply {
  id?: number;
  ready?: boolean;
  ok?: boolean;
  result?: unknown;
  error?: { errorType: string; errorMessage: string; stackTrace: string[] };
}

/** An invocation handed to a worker and not answered yet. */
interface Pending {
  id: number;
  event: unknown;
  requestId: string;
  cold: boolean;
  /** When the worker began it (undefined while it waits behind another). */
  started?: number;
  timer?: NodeJS.Timeout;
  resolve: (outcome: Invocation) => void;
}

interface Slot {
  worker: Worker;
  generation: number;
  invocations: number;
  /** Invocations handed to this worker, in the order it runs them. */
  inFlight: Pending[];
  dead: boolean;
}

/**
 * A pool of Lambda-like execution environments (worker threads) for one function: one
 * invocation at a time per worker, at most `concurrency` workers, the timeout enforced
 * by terminating the worker, and a crashed or timed-out worker replaced.
 */
export class FunctionPool {
  private runtime: FunctionRuntime;
  private slots: Slot[] = [];
  private waiting: Array<() => void> = [];
  private generation = 0;
  private sequence = 0;
  private closed = false;

  constructor(runtime: FunctionRuntime) {
    this.runtime = runtime;
  }

  /** Function name. */
  get name(): string {
    return this.runtime.name;
  }

  /** Workers alive now. */
  get size(): number {
    return this.slots.length;
  }

  private spawn(): Slot {
    const { name, bundle, env, memoryMb } = this.runtime;
    const worker = new Worker(WORKER_FILE, {
      workerData: { bundleUrl: `${pathToFileURL(bundle).href}?generation=${this.generation}`, functionName: name, memoryMb },
      env: {
        ...env,
        AWS_LAMBDA_FUNCTION_NAME: name,
        AWS_LAMBDA_FUNCTION_MEMORY_SIZE: String(memoryMb),
        AWS_LAMBDA_FUNCTION_VERSION: '$LATEST',
        AWS_REGION: env.AWS_REGION ?? 'us-east-1',
      },
      resourceLimits: { maxOldGenerationSizeMb: memoryMb },
      stdout: this.runtime.onLog !== undefined,
      stderr: this.runtime.onLog !== undefined,
    });
    if (this.runtime.onLog) {
      for (const stream of [worker.stdout, worker.stderr]) createInterface({ input: stream }).on('line', this.runtime.onLog);
    }
    const slot: Slot = { worker, generation: this.generation, invocations: 0, inFlight: [], dead: false };
    // One listener for the worker's life: adding and removing one per invocation would
    // start and stop its message port every time.
    worker.on('message', (msg: WorkerReply) => {
      if (msg.id !== undefined) this.reply(slot, msg);
    });
    worker.on('error', (err) => this.fail(slot, `${err.name}: ${err.message}`));
    worker.on('exit', (code) => this.fail(slot, `worker exited with code ${code}`));
    worker.unref();
    this.slots.push(slot);
    return slot;
  }

  /** Starts the timeout clock of the invocation the worker is running now. */
  private begin(slot: Slot): void {
    const head = slot.inFlight[0];
    if (!head || head.started !== undefined) return;
    head.started = performance.now();
    // The timeout counts the init phase of a cold start too, as Lambda's does.
    head.timer = setTimeout(() => {
      this.finish(slot, { kind: 'timeout', cold: head.cold, durationMs: performance.now() - head.started!, requestId: head.requestId });
      this.retire(slot);
    }, this.runtime.timeoutMs);
  }

  /** Answers the running invocation and starts the clock of the next. */
  private finish(slot: Slot, outcome: Invocation): void {
    const head = slot.inFlight.shift();
    if (!head) return;
    clearTimeout(head.timer);
    head.resolve(outcome);
    this.begin(slot);
    if (slot.generation !== this.generation && slot.inFlight.length === 0) this.retire(slot);
    else this.wake();
  }

  private reply(slot: Slot, msg: WorkerReply): void {
    const head = slot.inFlight[0];
    if (!head || head.id !== msg.id) return;
    const durationMs = performance.now() - (head.started ?? performance.now());
    this.finish(
      slot,
      msg.ok
        ? { kind: 'result', result: msg.result, cold: head.cold, durationMs, requestId: head.requestId }
        : { kind: 'error', error: msg.error!, cold: head.cold, durationMs, requestId: head.requestId },
    );
  }

  /** A worker crashed: the running invocation crashed with it; those queued behind it go to another worker. */
  private fail(slot: Slot, message: string): void {
    if (slot.dead) return;
    const head = slot.inFlight[0];
    if (head) this.finish(slot, { kind: 'crash', message, cold: head.cold, durationMs: performance.now() - (head.started ?? performance.now()), requestId: head.requestId });
    this.retire(slot);
  }

  /** Stops a worker; invocations still queued on it are handed to others. */
  private retire(slot: Slot): void {
    if (slot.dead) return;
    slot.dead = true;
    const i = this.slots.indexOf(slot);
    if (i >= 0) this.slots.splice(i, 1);
    void slot.worker.terminate();
    const orphans = slot.inFlight.splice(0);
    for (const p of orphans) {
      clearTimeout(p.timer);
      void this.invoke(p.event, p.requestId).then(p.resolve);
    }
    this.wake();
  }

  private wake(): void {
    const next = this.waiting.shift();
    if (next) next();
  }

  /** True when a worker can take another invocation now. */
  private hasRoom(): boolean {
    return this.slots.length < this.runtime.concurrency || this.slots.some((s) => s.generation === this.generation && !s.dead && s.inFlight.length === 0);
  }

  /**
   * An idle worker, or a new one while under `concurrency`. Never a busy one: an
   * invocation queued behind another would wait for it, however long it runs (up to its
   * timeout), while other workers sit idle. Waiting invocations queue here, first come,
   * first served, and go to whichever worker frees up first.
   */
  private acquire(): Slot | undefined {
    const idle = this.slots.find((s) => s.generation === this.generation && !s.dead && s.inFlight.length === 0);
    if (idle) return idle;
    if (this.slots.length < this.runtime.concurrency) return this.spawn();
    return undefined;
  }

  /** Runs one invocation, waiting for a free worker (or answering throttled when too many wait). */
  async invoke(event: unknown, requestId: string = randomUUID()): Promise<Invocation> {
    if (this.closed) return { kind: 'crash', message: 'pool is closed', cold: false, durationMs: 0, requestId };
    // First come, first served: nobody overtakes an invocation that is already waiting.
    let slot = this.waiting.length ? undefined : this.acquire();
    let turns = 0;
    while (!slot) {
      if (turns === 0 && this.waiting.length >= MAX_QUEUED) return { kind: 'throttled', requestId };
      await new Promise<void>((resolve) => (turns++ === 0 ? this.waiting.push(resolve) : this.waiting.unshift(resolve)));
      if (this.closed) return { kind: 'crash', message: 'pool is closed', cold: false, durationMs: 0, requestId };
      slot = this.acquire();
    }
    if (this.waiting.length && this.hasRoom()) this.wake();
    slot.invocations += 1;
    const id = ++this.sequence;
    const cold = slot.invocations === 1;
    const target = slot;
    return new Promise<Invocation>((resolve) => {
      target.inFlight.push({ id, event, requestId, cold, resolve });
      target.worker.postMessage({ id, event, requestId, timeoutMs: this.runtime.timeoutMs });
      this.begin(target);
    });
  }

  /** Runs new invocations on a rebuilt bundle; in-flight ones finish on the old workers, which then stop. */
  swap(bundle: string = this.runtime.bundle): void {
    this.runtime = { ...this.runtime, bundle };
    this.generation += 1;
    for (const slot of [...this.slots]) if (slot.inFlight.length === 0) this.retire(slot);
  }

  /** Stops every worker. */
  async close(): Promise<void> {
    this.closed = true;
    const slots = this.slots.splice(0);
    for (const s of slots) {
      s.dead = true;
      s.worker.removeAllListeners('exit');
      for (const p of s.inFlight.splice(0)) {
        clearTimeout(p.timer);
        p.resolve({ kind: 'crash', message: 'pool is closed', cold: p.cold, durationMs: 0, requestId: p.requestId });
      }
    }
    await Promise.all(slots.map((s) => s.worker.terminate()));
    for (const waiting of this.waiting.splice(0)) waiting();
  }
}
