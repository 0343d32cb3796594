// klw's side of the loader: one child process (child.mjs) imports every function module a
// command needs, and klw reads back their registrations. Whatever a module does at load (exit,
// loop, await forever, throw anything) ends or stalls that child, and klw reports it by file.
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { Registration } from '../../lib/internal.ts';
import { KlwError } from '../errors.ts';
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
export async function loadModules(targets: LoadTarget[], timeoutMs: number): Promise<LoadedModule[]> {
  return loadIn(await loaderBundle(), targets, timeoutMs);
}

/** loadModules in a child on the built loader `bundle` (source maps on, as tsx has them), or on child.mjs alone. */
function loadIn(bundle: string | undefined, targets: LoadTarget[], timeoutMs: number): Promise<LoadedModule[]> {
  return new Promise((resolvePromise, reject) => {
    const { NODE_TEST_CONTEXT: _test, ...env } = process.env;
    const child = fork(CHILD, bundle ? [bundle] : [], {
      execArgv: bundle ? ['--enable-source-maps'] : [],
      env,
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
      serialization: 'advanced',
    });
    const results: LoadedModule[] = [];
    let stderr = '';
    let settled = false;
    let timer: NodeJS.Timeout | undefined;
    const kill = () => child.kill('SIGKILL');
    process.once('exit', kill);
    const finish = (error?: string) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      process.off('exit', kill);
      kill();
      if (error === undefined) resolvePromise(results);
      else reject(new KlwError(error));
    };
    const current = () => targets[results.length];
    const arm = (ms: number) => {
      clearTimeout(timer);
      timer = setTimeout(() => {
        const target = ready ? current() : undefined;
        finish(
          target
            ? `${target.file} did not finish loading within ${seconds(ms)}: an endless loop, a top-level ` +
                'await that never settles or a call that never answers runs when the module is imported; ' +
                'move that work into the handler'
            : `the loader of function modules did not start within ${seconds(ms)}: the machine is too busy`,
        );
      }, ms);
    };
    let ready = false;
    child.stdout!.on('data', (chunk: Buffer) => process.stderr.write(chunk));
    child.stderr!.on('data', (chunk: Buffer) => {
      process.stderr.write(chunk);
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
      finish(
        target
          ? `${target.file}: the process loading it ${exited} before the module finished loading: a function ` +
              'module must not call process.exit() (nor end the process) when it is imported; klw imports it ' +
              'to read its registration'
          : `the loader of function modules ${exited}${stderr ? `: ${stderr.trim()}` : ''}`,
      );
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
