// One worker process of a function pool: forking it as Lambda starts an execution environment,
// what its replies and crashes mean as invocation outcomes, and the watch on its memory.
import { fork, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { Invocation } from '../invoker.ts';
import { type FunctionRuntime, lambdaEnvironment } from './environment.ts';

/** How often a busy worker's resident memory is checked against its memory size (ms). */
export const MEMORY_CHECK_MS = 20;

const WORKER_FILE = fileURLToPath(new URL('./worker.mjs', import.meta.url));

/** What a worker posts back. */
export interface WorkerReply {
  id?: number;
  ready?: boolean;
  ok?: boolean;
  result?: unknown;
  error?: { errorType: string; errorMessage: string; stackTrace: string[] };
}

/** An invocation handed to a worker and not answered yet. */
export interface Pending {
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

export interface Slot {
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
export function stopProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.ref(); // keep the emulator alive until it is gone
    child.once('exit', () => resolve());
    child.kill('SIGKILL');
  });
}

/** Forks a worker of the function, its log lines passed on; `on` hears its replies and its end. */
export function forkWorker(
  runtime: FunctionRuntime,
  generation: number,
  on: { reply: (msg: WorkerReply) => void; fail: (message: string) => void },
): Slot {
  const { name, bundle, env, memoryMb, region = env.AWS_REGION ?? 'us-east-1' } = runtime;
  const { inspectPort } = runtime;
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
      env: lambdaEnvironment(runtime, region),
      // The heap may not outgrow the memory size; the watchdog covers Buffers and the rest.
      execArgv: [
        `--max-old-space-size=${memoryMb}`,
        ...(runtime.execArgv ?? []),
        ...(inspectPort !== undefined ? [`--inspect=127.0.0.1:${inspectPort}`] : []),
      ],
      serialization: 'advanced',
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    },
  );
  const slot: Slot = { worker, generation, invocations: 0, inFlight: [], dead: false };
  const onLog = runtime.onLog ?? ((line: string) => process.stdout.write(`${line}\n`));
  const onLine = (line: string) => {
    // V8's own report when the heap limit is reached, written just before it aborts.
    if (/heap out of memory|Allocation failed/i.test(line)) slot.outOfMemory ??= memoryMb;
    onLog(line);
  };
  for (const stream of [worker.stdout!, worker.stderr!])
    createInterface({ input: stream, crlfDelay: Infinity }).on('line', onLine);
  // One listener for the worker's life.
  worker.on('message', (msg: WorkerReply) => {
    if (msg.id !== undefined) on.reply(msg);
  });
  worker.on('error', (err) => on.fail(`${err.name}: ${err.message}`));
  // 'close', not 'exit': by then its last output (an out-of-memory report) has been read.
  worker.on('close', (code, signal) =>
    on.fail(signal ? `worker killed by ${signal}` : `worker exited with code ${code}`),
  );
  worker.unref();
  worker.channel?.unref();
  for (const stream of [worker.stdout, worker.stderr]) (stream as unknown as { unref?: () => void } | null)?.unref?.();
  return slot;
}

/** The outcome of the running invocation from its worker's reply. */
export function replyOutcome(head: Pending, msg: WorkerReply): Invocation {
  const durationMs = performance.now() - (head.started ?? performance.now());
  return msg.ok
    ? { kind: 'result', result: msg.result, cold: head.cold, durationMs, requestId: head.requestId }
    : { kind: 'error', error: msg.error!, cold: head.cold, durationMs, requestId: head.requestId };
}

/** The outcome of the running invocation when its worker died: out of memory, or another exit. */
export function crashOutcome(slot: Slot, head: Pending, message: string, memoryMb: number): Invocation {
  const durationMs = performance.now() - (head.started ?? performance.now());
  const { cold, requestId } = head;
  if (slot.outOfMemory === undefined)
    return { kind: 'crash', errorType: 'Runtime.ExitError', message, cold, durationMs, requestId };
  const held = Math.round(slot.outOfMemory);
  return {
    kind: 'crash',
    errorType: 'Runtime.OutOfMemory',
    message: `out of memory: the function went past its memory size of ${memoryMb} MB (${held} MB); ${message}`,
    cold,
    durationMs,
    requestId,
  };
}

/** Checks busy workers' resident memory while any runs; one past its memory size is killed, as Lambda does. */
export class MemoryWatch {
  private timer?: NodeJS.Timeout;

  constructor(
    private readonly slots: () => readonly Slot[],
    private readonly memoryMb: () => number,
  ) {}

  /** Starts checking, unless it already is; it stops by itself once no worker is left. */
  watch(): void {
    if (this.timer) return;
    this.timer = setInterval(() => {
      for (const slot of this.slots()) {
        if (slot.dead || slot.inFlight.length === 0 || slot.worker.pid === undefined) continue;
        const rss = residentMb(slot.worker.pid);
        if (rss !== undefined && rss > this.memoryMb()) {
          slot.outOfMemory = rss;
          slot.worker.kill('SIGKILL');
        }
      }
      if (this.slots().length === 0) this.stop();
    }, MEMORY_CHECK_MS);
    this.timer.unref();
  }

  /** Stops checking. */
  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }
}
