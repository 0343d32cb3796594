// klw's side of the loader: one child process (child.mjs) imports every function module a
// command needs, and klw reads back their registrations. Whatever a module does at load (exit,
// loop, await forever, throw anything) ends or stalls that child, and klw reports it by file.
import { type ChildProcess, fork } from 'node:child_process';
import type { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import type { Registration } from '../../lib/internal.ts';
import { KlwError } from '../errors.ts';
import { answerKey, answerOnceLoaded, keepAnswer, loadUnderWay } from './answers.ts';
import { loaderBundle } from './bundle.ts';
import type { LoadReply, LoadTarget } from './child.ts';

/**
 * How long one module may take to load before klw gives up on it: a module loads in well under
 * a second, and one that reads its settings at load (a top-level await) in a few; 60 s is far
 * beyond either, even on a busy machine, and short enough that CI says what hangs.
 */
export const LOAD_TIMEOUT_MS = 60_000;

/**
 * How long the loader itself may take to start (Node, and in a checkout the TypeScript loader),
 * before any module: apart from the modules' time, so a slow start is never blamed on a module.
 */
export const START_TIMEOUT_MS = 120_000;

const CHILD = fileURLToPath(new URL('./child.mjs', import.meta.url));

/** The last characters of the child's own stderr kept for an error that has no module to name. */
const STDERR_TAIL = 2000;

/**
 * How long klw waits, once the child is ending, for the rest of its output (a module's console
 * output at load, forwarded to klw's stderr before klw answers): what the child wrote is in the
 * pipe by then and is read at once, so only a process a module started and left holding the pipe
 * makes klw wait this long; klw then stops reading and goes on without that process's output.
 * klw's end of the pipe is destroyed then: that process gets EPIPE on its next write.
 */
export const OUTPUT_GRACE_MS = 2000;

/** Starts the loader's child: `fork` in use; tests wrap it to hold back what the child writes. */
export type StartLoader = (module: string, args: string[], options: Parameters<typeof fork>[2]) => ChildProcess;

/** How modules are loaded: each one's time limit; tests also set how the child starts and the output grace. */
export interface LoaderOptions {
  /** How long each module has to load, in milliseconds; past it the load fails naming the module. */
  timeoutMs: number;
  /** Starts the child; `fork` unless a test holds back what the child writes. */
  start?: StartLoader;
  /** How long klw waits for the child's output once it ends (OUTPUT_GRACE_MS unless a test sets it). */
  outputGraceMs?: number;
  /**
   * The project whose functions these are: when given, a load of the same modules, with nothing
   * changed (answers.ts), reuses the answer this process had, or waits for the same load under way
   * and reuses its answer, writing the modules' output again.
   */
  project?: string;
}

/** A module's registration as the child read it. */
export interface LoadedModule {
  registration: Registration;
  ownHandler: boolean;
}

function seconds(ms: number): string {
  return ms >= 1000 ? `${Math.round(ms / 100) / 10} s` : `${ms} ms`;
}

/**
 * Imports `targets` in one child process, in order, and resolves with what each registers; the
 * first failure rejects with a KlwError naming the module's file. Each module has `timeoutMs` to
 * load. The child's output (a module's console.log at load) goes to stderr, never to stdout,
 * where commands write manifests.
 */
export async function loadModules(targets: LoadTarget[], options: LoaderOptions): Promise<LoadedModule[]> {
  const bundle = await loaderBundle();
  const keyOf = () => (options.project === undefined ? undefined : answerKey(options.project, [bundle, targets]));
  const key = keyOf();
  // Kept, or kept by a load of the same key under way (a command started at the same moment).
  const kept = await answerOnceLoaded<LoadedModule[]>(key);
  if (kept) {
    for (const chunk of kept.output) process.stderr.write(chunk);
    return kept.modules;
  }
  const ended = loadUnderWay(key);
  try {
    const { modules, output } = await loadIn(bundle, targets, options);
    // Kept only when nothing changed while the child loaded, and all of its output was read.
    if (output && key !== undefined && keyOf() === key) keepAnswer(key, { modules, output });
    return modules;
  } finally {
    ended();
  }
}

/** The error when `target` (or, undefined, the loader's start) took more than `ms`. */
function stalled(target: LoadTarget | undefined, ms: number): string {
  return target
    ? `${target.file} did not finish loading within ${seconds(ms)}: an endless loop, a top-level ` +
        'await that never settles or a call that never answers runs when the module is imported; ' +
        'move that work into the handler'
    : `the loader of function modules did not start within ${seconds(ms)}: the machine is too busy`;
}

/** The error when the child `exited` while loading `target` (or before any), with its stderr's tail. */
function endedEarly(target: LoadTarget | undefined, exited: string, stderr: string): string {
  return target
    ? `${target.file}: the process loading it ${exited} before the module finished loading: a function ` +
        'module must not call process.exit() (nor end the process) when it is imported; klw imports it ' +
        'to read its registration'
    : `the loader of function modules ${exited}${stderr ? `: ${stderr.trim()}` : ''}`;
}

/**
 * Calls `then` once both of the child's output streams have ended, so that everything the child
 * wrote is forwarded before klw answers; when a stream stays open `graceMs` after this call (a
 * process the module started holds it), klw stops reading it, after one more turn of reading,
 * and destroys its end of the pipe: the holder's next write fails with EPIPE.
 */
function afterOutput(child: ChildProcess, graceMs: number, then: (whole: boolean) => void): void {
  const streams = [child.stdout, child.stderr].filter((stream) => stream && !stream.closed) as Readable[];
  let open = streams.length;
  if (!open) {
    then(true);
    return;
  }
  let whole = true;
  const grace = setTimeout(
    () =>
      setImmediate(() => {
        whole = false;
        for (const stream of streams) stream.destroy();
      }),
    graceMs,
  );
  for (const stream of streams) {
    stream.once('close', () => {
      if (--open) return;
      clearTimeout(grace);
      then(whole);
    });
  }
}

/** What one child answered, and what it wrote (undefined when klw stopped reading before its end). */
interface ChildAnswer {
  modules: LoadedModule[];
  output?: Buffer[];
}

/** loadModules in a child on the built loader `bundle` (source maps on, as tsx has them), or on child.mjs alone. */
function loadIn(bundle: string | undefined, targets: LoadTarget[], options: LoaderOptions): Promise<ChildAnswer> {
  const { timeoutMs, start = fork, outputGraceMs = OUTPUT_GRACE_MS } = options;
  return new Promise((resolvePromise, reject) => {
    const { NODE_TEST_CONTEXT: _test, ...env } = process.env;
    const child = start(CHILD, bundle ? [bundle] : [], {
      execArgv: bundle ? ['--enable-source-maps'] : [],
      env,
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
      serialization: 'advanced',
    });
    const results: LoadedModule[] = [];
    const output: Buffer[] = [];
    let stderr = '';
    let settled = false;
    let timer: NodeJS.Timeout | undefined;
    const kill = () => child.kill('SIGKILL');
    process.once('exit', kill);
    // The answer waits for the child's output, so a module's last words come before it; an error
    // made by a function reads the child's stderr only then.
    const finish = (error?: string | (() => string)) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      process.off('exit', kill);
      kill();
      afterOutput(child, outputGraceMs, (whole) => {
        if (error === undefined) resolvePromise({ modules: results, output: whole ? output : undefined });
        else reject(new KlwError(typeof error === 'string' ? error : error()));
      });
    };
    const current = () => targets[results.length];
    const arm = (ms: number) => {
      clearTimeout(timer);
      timer = setTimeout(() => {
        finish(stalled(ready ? current() : undefined, ms));
      }, ms);
    };
    let ready = false;
    child.stdout!.on('data', (chunk: Buffer) => {
      process.stderr.write(chunk);
      output.push(chunk);
    });
    child.stderr!.on('data', (chunk: Buffer) => {
      process.stderr.write(chunk);
      output.push(chunk);
      stderr = (stderr + chunk.toString('utf8')).slice(-STDERR_TAIL);
    });
    child.on('message', (reply: LoadReply) => {
      if ('done' in reply) return finish();
      if ('error' in reply) return finish(reply.error);
      if ('ready' in reply) ready = true;
      else results[reply.index] = { registration: reply.registration, ownHandler: reply.ownHandler };
      arm(timeoutMs);
    });
    child.on('error', (err) => finish(`could not start the loader of function modules: ${err.message}`));
    // Ended only once both the process and its channel are: the replies it sent before exiting come first.
    let exited: string | undefined;
    let disconnected = false;
    const ended = () => {
      if (exited === undefined || !disconnected) return;
      const target = ready ? current() : undefined;
      finish(() => endedEarly(target, exited!, stderr));
    };
    child.on('disconnect', () => {
      disconnected = true;
      ended();
    });
    child.on('exit', (code, signal) => {
      exited = signal ? `was killed by ${signal}` : `exited with code ${code}`;
      ended();
    });
    arm(Math.max(timeoutMs, START_TIMEOUT_MS));
    child.send(targets);
  });
}
