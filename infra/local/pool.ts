import { fork, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { type FunctionRuntime, lambdaEnvironment } from './environment.ts';

import { realTimer } from './timer.ts';

export { realTimer, type InvocationTimer } from './timer.ts';

/** The outcome of one invocation. */
export type Invocation =
  | { kind: 'result'; result: unknown; cold: boolean; durationMs: number; requestId: string }
  | {
      kind: 'error';
      error: { errorType: string; errorMessage: string; stackTrace: string[] };
      cold: boolean;
      durationMs: number;
      requestId: string;
    }
  | { kind: 'timeout'; cold: boolean; durationMs: number; requestId: string }
  | { kind: 'crash'; message: string; cold: boolean; durationMs: number; requestId: string; errorType?: CrashType }
  | { kind: 'throttled'; requestId: string };

/** Why an execution environment died, as Lambda names it. */
export type CrashType = 'Runtime.ExitError' | 'Runtime.OutOfMemory';

/** How often a busy worker's resident memory is checked against its memory size (ms). */
export const MEMORY_CHECK_MS = 20;

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
  /** Stops its timeout clock. */
  cancel?: () => void;
  resolve: (outcome: Invocation) => void;
}

interface Slot {
  worker: ChildProcess;
  generation: number;
  invocations: number;
  /** Invocations handed to this worker, in the order it runs them. */
  inFlight: Pending[];
  dead: boolean;
  /** Set when the worker went past its memory size: what it held, in MB. */
  outOfMemory?: number;
}

/** Resident memory of a process in MB (Linux `/proc`), or undefined where it cannot be read. */
export function residentMb(pid: number): number | undefined {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = /^VmRSS:\s+(\d+) kB/m.exec(status);
    return kb ? Number(kb[1]) / 1024 : undefined;
  } catch {
    return undefined;
  }
}

/** Kills a worker process and waits until it is gone. */
function stopProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.ref(); // keep the emulator alive until it is gone
    child.once('exit', () => resolve());
    child.kill('SIGKILL');
  });
}

/**
 * A pool of Lambda-like execution environments (worker processes) for one function: one
 * invocation at a time per worker, at most `concurrency` workers, the timeout enforced
 * by killing the worker, the memory size by watching its resident memory (heap, Buffers
 * and all), and a crashed, timed-out or out-of-memory worker replaced.
 */
export class FunctionPool {
  private runtime: FunctionRuntime;
  private slots: Slot[] = [];
  private waiting: Array<() => void> = [];
  private generation = 0;
  private sequence = 0;
  private closed = false;
  /** Retired workers not yet exited (one may still hold the debugger port). */
  private exiting = 0;

  /** With a debugger port, the pool's worker starts at once. */
  constructor(runtime: FunctionRuntime) {
    this.runtime = runtime;
    this.keepWarm();
  }

  /** Workers allowed at once: one with a debugger port (one process can listen on it), else `concurrency`. */
  private get limit(): number {
    return this.runtime.inspectPort !== undefined ? 1 : this.runtime.concurrency;
  }

  /** True when another worker may start now; with a debugger port, not before the last one has exited and freed it. */
  private canSpawn(): boolean {
    if (this.runtime.inspectPort !== undefined && this.exiting > 0) return false;
    return this.slots.length < this.limit;
  }

  /** With a debugger port: starts the worker when there is none, so the port listens before any invocation. */
  private keepWarm(): void {
    if (this.runtime.inspectPort === undefined || this.closed || this.slots.length > 0 || !this.canSpawn()) return;
    this.spawn();
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
    const { name, bundle, env, memoryMb, region = env.AWS_REGION ?? 'us-east-1' } = this.runtime;
    const { inspectPort } = this.runtime;
    const worker = fork(
      WORKER_FILE,
      [
        JSON.stringify({
          bundleUrl: pathToFileURL(bundle).href,
          functionName: name,
          memoryMb,
          region,
          ...(inspectPort !== undefined ? { deferInit: true } : {}),
        }),
      ],
      {
        // Only what Lambda gives a function: its own environment, not the emulator's.
        env: lambdaEnvironment(this.runtime, region),
        // The heap may not outgrow the memory size; the watchdog covers Buffers and the rest.
        execArgv: [
          `--max-old-space-size=${memoryMb}`,
          ...(this.runtime.execArgv ?? []),
          ...(inspectPort !== undefined ? [`--inspect=127.0.0.1:${inspectPort}`] : []),
        ],
        serialization: 'advanced',
        stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
      },
    );
    const slot: Slot = { worker, generation: this.generation, invocations: 0, inFlight: [], dead: false };
    const onLog = this.runtime.onLog ?? ((line: string) => process.stdout.write(`${line}\n`));
    const onLine = (line: string) => {
      // V8's own report when the heap limit is reached, written just before it aborts.
      if (/heap out of memory|Allocation failed/i.test(line)) slot.outOfMemory ??= memoryMb;
      onLog(line);
    };
    for (const stream of [worker.stdout!, worker.stderr!])
      createInterface({ input: stream, crlfDelay: Infinity }).on('line', onLine);
    // One listener for the worker's life.
    worker.on('message', (msg: WorkerReply) => {
      if (msg.id !== undefined) this.reply(slot, msg);
    });
    worker.on('error', (err) => this.fail(slot, `${err.name}: ${err.message}`));
    // 'close', not 'exit': by then its last output (an out-of-memory report) has been read.
    worker.on('close', (code, signal) =>
      this.fail(slot, signal ? `worker killed by ${signal}` : `worker exited with code ${code}`),
    );
    worker.unref();
    worker.channel?.unref();
    for (const stream of [worker.stdout, worker.stderr])
      (stream as unknown as { unref?: () => void } | null)?.unref?.();
    this.slots.push(slot);
    this.watchMemory();
    return slot;
  }

  private memoryTimer?: NodeJS.Timeout;

  /** Checks busy workers' resident memory while any runs; one past its memory size is killed, as Lambda does. */
  private watchMemory(): void {
    if (this.memoryTimer) return;
    this.memoryTimer = setInterval(() => {
      for (const slot of this.slots) {
        if (slot.dead || slot.inFlight.length === 0 || slot.worker.pid === undefined) continue;
        const rss = residentMb(slot.worker.pid);
        if (rss !== undefined && rss > this.runtime.memoryMb) {
          slot.outOfMemory = rss;
          slot.worker.kill('SIGKILL');
        }
      }
      if (this.slots.length === 0) {
        clearInterval(this.memoryTimer);
        this.memoryTimer = undefined;
      }
    }, MEMORY_CHECK_MS);
    this.memoryTimer.unref();
  }

  /** Starts the timeout clock of the invocation the worker is running now. */
  private begin(slot: Slot): void {
    const head = slot.inFlight[0];
    if (!head || head.started !== undefined) return;
    head.started = performance.now();
    // The timeout counts the init phase of a cold start too, as Lambda's does.
    head.cancel = (this.runtime.timer ?? realTimer)(this.runtime.timeoutMs, () => {
      this.finish(slot, {
        kind: 'timeout',
        cold: head.cold,
        durationMs: performance.now() - head.started!,
        requestId: head.requestId,
      });
      this.retire(slot);
    });
  }

  /** Answers the running invocation and starts the clock of the next. */
  private finish(slot: Slot, outcome: Invocation): void {
    const head = slot.inFlight.shift();
    if (!head) return;
    head.cancel?.();
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
    if (head) {
      const durationMs = performance.now() - (head.started ?? performance.now());
      const outcome: Invocation =
        slot.outOfMemory !== undefined
          ? {
              kind: 'crash',
              errorType: 'Runtime.OutOfMemory',
              message: `out of memory: the function went past its memory size of ${this.runtime.memoryMb} MB (${Math.round(slot.outOfMemory)} MB); ${message}`,
              cold: head.cold,
              durationMs,
              requestId: head.requestId,
            }
          : {
              kind: 'crash',
              errorType: 'Runtime.ExitError',
              message,
              cold: head.cold,
              durationMs,
              requestId: head.requestId,
            };
      this.finish(slot, outcome);
    }
    this.retire(slot);
  }

  /** Stops a worker; invocations still queued on it are handed to others. */
  private retire(slot: Slot): void {
    if (slot.dead) return;
    slot.dead = true;
    const i = this.slots.indexOf(slot);
    if (i >= 0) this.slots.splice(i, 1);
    this.exiting += 1;
    const exited = () => {
      this.exiting -= 1;
      if (this.runtime.inspectPort === undefined) return;
      // The debugger port is free again: a new worker may take it.
      this.keepWarm();
      this.wake();
    };
    if (slot.worker.exitCode !== null || slot.worker.signalCode !== null) queueMicrotask(exited);
    else slot.worker.once('exit', exited);
    slot.worker.kill('SIGKILL');
    const orphans = slot.inFlight.splice(0);
    for (const p of orphans) {
      p.cancel?.();
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
    return (
      this.canSpawn() || this.slots.some((s) => s.generation === this.generation && !s.dead && s.inFlight.length === 0)
    );
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
    return this.canSpawn() ? this.spawn() : undefined;
  }

  /** Runs one invocation, waiting for a free worker (or answering throttled when too many wait). */
  async invoke(event: unknown, requestId: string = randomUUID()): Promise<Invocation> {
    if (this.closed) return { kind: 'crash', message: 'pool is closed', cold: false, durationMs: 0, requestId };
    // First come, first served: nobody overtakes an invocation that is already waiting.
    let slot = this.waiting.length ? undefined : this.acquire();
    let turns = 0;
    while (!slot) {
      if (turns === 0 && this.waiting.length >= MAX_QUEUED) return { kind: 'throttled', requestId };
      await new Promise<void>((resolve) =>
        turns++ === 0 ? this.waiting.push(resolve) : this.waiting.unshift(resolve),
      );
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
      target.worker.send({ id, event, requestId, timeoutMs: this.runtime.timeoutMs });
      this.begin(target);
    });
  }

  /** Runs new invocations with new settings (a changed registration); in-flight ones finish on the old workers. */
  update(runtime: FunctionRuntime): void {
    this.runtime = runtime;
    this.swap(runtime.bundle);
  }

  /** Runs new invocations on a rebuilt bundle; in-flight ones finish on the old workers, which then stop. */
  swap(bundle: string = this.runtime.bundle): void {
    this.runtime = { ...this.runtime, bundle };
    this.generation += 1;
    for (const slot of [...this.slots]) if (slot.inFlight.length === 0) this.retire(slot);
    this.keepWarm();
  }

  /** Stops every worker. */
  async close(): Promise<void> {
    this.closed = true;
    const slots = this.slots.splice(0);
    for (const s of slots) {
      s.dead = true;
      s.worker.removeAllListeners('close');
      for (const p of s.inFlight.splice(0)) {
        p.cancel?.();
        p.resolve({ kind: 'crash', message: 'pool is closed', cold: p.cold, durationMs: 0, requestId: p.requestId });
      }
    }
    clearInterval(this.memoryTimer);
    await Promise.all(slots.map((s) => stopProcess(s.worker)));
    for (const waiting of this.waiting.splice(0)) waiting();
  }
}
