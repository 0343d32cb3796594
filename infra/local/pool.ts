import { randomUUID } from 'node:crypto';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { createInterface } from 'node:readline';
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
  /** Most invocations at once (Lambda reserved concurrency). */
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

interface Slot {
  worker: Worker;
  ready: Promise<void>;
  busy: boolean;
  generation: number;
  invocations: number;
  settle?: (outcome: Invocation) => void;
}

/**
 * A pool of Lambda-like execution environments (worker threads) for one function:
 * one invocation at a time per worker, at most `concurrency` workers, the timeout
 * enforced by terminating the worker, and a crashed or timed-out worker replaced.
 */
export class FunctionPool {
  private runtime: FunctionRuntime;
  private slots: Slot[] = [];
  private queue: Array<() => void> = [];
  private generation = 0;
  private closed = false;

  constructor(runtime: FunctionRuntime) {
    this.runtime = runtime;
  }

  /** Function name. */
  get name(): string {
    return this.runtime.name;
  }

  /** Workers alive now (busy or idle). */
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
    const slot: Slot = { worker, busy: false, generation: this.generation, invocations: 0, ready: Promise.resolve() };
    slot.ready = new Promise((resolve, reject) => {
      const onMessage = (msg: { ready?: boolean }) => {
        if (msg.ready) {
          worker.off('message', onMessage);
          resolve();
        }
      };
      worker.on('message', onMessage);
      worker.once('error', reject);
    });
    slot.ready.catch(() => {});
    const fail = (message: string) => {
      this.remove(slot);
      slot.settle?.({ kind: 'crash', message, cold: slot.invocations <= 1, durationMs: 0, requestId: '' });
    };
    worker.on('error', (err) => fail(`${err.name}: ${err.message}`));
    worker.on('exit', (code) => fail(`worker exited with code ${code}`));
    worker.unref();
    this.slots.push(slot);
    return slot;
  }

  private remove(slot: Slot): void {
    const i = this.slots.indexOf(slot);
    if (i >= 0) this.slots.splice(i, 1);
    void slot.worker.terminate();
    this.next();
  }

  private next(): void {
    const waiting = this.queue.shift();
    if (waiting) waiting();
  }

  private acquire(): Slot | undefined {
    const idle = this.slots.find((s) => !s.busy && s.generation === this.generation);
    if (idle) return idle;
    if (this.slots.filter((s) => s.generation === this.generation || s.busy).length < this.runtime.concurrency) return this.spawn();
    return undefined;
  }

  /** Runs one invocation, waiting for a free worker (or answering throttled when too many wait). */
  async invoke(event: unknown, requestId: string = randomUUID()): Promise<Invocation> {
    if (this.closed) return { kind: 'crash', message: 'pool is closed', cold: false, durationMs: 0, requestId };
    let slot = this.acquire();
    while (!slot) {
      if (this.queue.length >= MAX_QUEUED) return { kind: 'throttled', requestId };
      await new Promise<void>((resolve) => this.queue.push(resolve));
      slot = this.acquire();
    }
    slot.busy = true;
    slot.invocations += 1;
    const cold = slot.invocations === 1;
    const started = performance.now();
    const id = randomUUID();
    const timeoutMs = this.runtime.timeoutMs;
    const outcome = await new Promise<Invocation>((resolve) => {
      const done = (o: Invocation) => {
        clearTimeout(timer);
        slot!.worker.off('message', onMessage);
        slot!.settle = undefined;
        resolve(o);
      };
      const elapsed = () => performance.now() - started;
      const onMessage = (msg: { id?: string; ok?: boolean; result?: unknown; error?: { errorType: string; errorMessage: string; stackTrace: string[] } }) => {
        if (msg.id !== id) return;
        done(msg.ok ? { kind: 'result', result: msg.result, cold, durationMs: elapsed(), requestId } : { kind: 'error', error: msg.error!, cold, durationMs: elapsed(), requestId });
      };
      // The timeout counts the init phase of a cold start too, as Lambda's does.
      const timer = setTimeout(() => {
        done({ kind: 'timeout', cold, durationMs: elapsed(), requestId });
        this.remove(slot!);
      }, timeoutMs);
      slot!.settle = (o) => done({ ...o, durationMs: elapsed(), requestId } as Invocation);
      slot!.worker.on('message', onMessage);
      slot!.ready.then(
        () => slot!.worker.postMessage({ id, event, requestId, deadline: Date.now() + timeoutMs - elapsed() }),
        () => {},
      );
    });
    if (this.slots.includes(slot)) {
      slot.busy = false;
      if (slot.generation !== this.generation) this.remove(slot);
      else this.next();
    }
    return outcome;
  }

  /** Runs new invocations on a rebuilt bundle; in-flight ones finish on the old workers, which then stop. */
  swap(bundle: string = this.runtime.bundle): void {
    this.runtime = { ...this.runtime, bundle };
    this.generation += 1;
    for (const slot of [...this.slots]) if (!slot.busy) this.remove(slot);
  }

  /** Stops every worker. */
  async close(): Promise<void> {
    this.closed = true;
    const slots = [...this.slots];
    this.slots = [];
    for (const s of slots) s.worker.removeAllListeners('exit');
    await Promise.all(slots.map((s) => s.worker.terminate()));
    for (const waiting of this.queue.splice(0)) waiting();
  }
}
