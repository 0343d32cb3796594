import { randomUUID } from 'node:crypto';
import type { Invocation } from '../invoker.ts';
import type { FunctionRuntime } from './environment.ts';
import { realTimer } from './timer.ts';
import { crashOutcome, forkWorker, MemoryWatch, replyOutcome, type Slot, stopProcess } from './worker-process.ts';

export type { CrashType, Invocation, InvocationTimer } from '../invoker.ts';
export { realTimer } from './timer.ts';
export { MEMORY_CHECK_MS, residentMb } from './worker-process.ts';

/** Invocations waiting for a free environment before the pool answers 429, as Lambda throttles. */
export const MAX_QUEUED = 256;

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
  /** Kills a busy worker past its memory size, as Lambda does. */
  private readonly memory = new MemoryWatch(
    () => this.slots,
    () => this.runtime.memoryMb,
  );

  /** With a debugger port, the pool's worker starts at once. */
  constructor(runtime: FunctionRuntime) {
    this.runtime = runtime;
    this.keepWarm();
  }

  /**
   * True when another worker may start now: at most `concurrency`, or with a debugger port one
   * (one process can listen on it), and not before the last one has exited and freed the port.
   */
  private canSpawn(): boolean {
    if (this.runtime.inspectPort === undefined) return this.slots.length < this.runtime.concurrency;
    return this.exiting === 0 && this.slots.length < 1;
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
    const slot = forkWorker(this.runtime, this.generation, {
      reply: (msg) => {
        const head = slot.inFlight[0];
        if (head && head.id === msg.id) this.finish(slot, replyOutcome(head, msg));
      },
      fail: (message) => this.fail(slot, message),
    });
    this.slots.push(slot);
    this.memory.watch();
    return slot;
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

  /** A worker crashed: the running invocation crashed with it; those queued behind it go to another worker. */
  private fail(slot: Slot, message: string): void {
    if (slot.dead) return;
    const head = slot.inFlight[0];
    if (head) this.finish(slot, crashOutcome(slot, head, message, this.runtime.memoryMb));
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
    this.memory.stop();
    await Promise.all(slots.map((s) => stopProcess(s.worker)));
    for (const waiting of this.waiting.splice(0)) waiting();
  }
}
