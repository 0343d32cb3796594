// The loader's child process: imports the function modules it is sent, one after the other, and
// answers each one's registration, or what went wrong with the first that failed.
import type { Registration } from '../../lib/internal.ts';
import { describeThrown, thrownIn } from '../errors.ts';
import { checkModule, type FunctionModule } from './check.ts';

/** One module to load: its function's name, its file as errors name it, the URL to import. */
export interface LoadTarget {
  name: string;
  file: string;
  url: string;
}

/** What the child answers: a module's registration or its error (by index), then `done`. */
export type LoadReply =
  | { index: number; registration: Registration; ownHandler: boolean }
  | { index: number; error: string }
  | { ready: true }
  | { done: true };

/** Sends one reply; resolves once it is on its way, so an exit right after cannot lose it. */
function send(reply: LoadReply): Promise<void> {
  return new Promise((resolvePromise, reject) => {
    try {
      process.send!(reply, undefined, {}, (err) => (err ? reject(err) : resolvePromise()));
    } catch (err) {
      reject(err);
    }
  });
}

/** Loads one module and checks what it exports; the reply names its file when it fails. */
async function loadOne(target: LoadTarget, index: number): Promise<LoadReply> {
  try {
    const mod = (await import(target.url)) as FunctionModule;
    // A throw the module left for right after its load (a timer of 0, a promise nobody awaits) is its own.
    await new Promise((resolvePromise) => setTimeout(resolvePromise, 0));
    const { registration, ownHandler } = await checkModule(target.name, target.file, mod);
    return { index, registration, ownHandler };
  } catch (err) {
    return { index, error: thrownIn(target.file, err) };
  }
}

/**
 * Serves one job: the list of modules, sent by klw as the first message. A throw that escapes a
 * module later (a timer's, a promise nobody awaits) is the failure of the module last loaded.
 */
export function serve(exit: (code?: number) => never): void {
  let current: LoadTarget | undefined;
  let index = -1;
  const escaped = (err: unknown) => {
    if (!current) exit(1);
    void send({ index, error: `${current!.file}: ${describeThrown(err)}` }).finally(() => exit(1));
  };
  process.on('uncaughtException', escaped);
  process.on('unhandledRejection', escaped);
  process.on('disconnect', () => exit(0));
  process.once('message', async (targets: LoadTarget[]) => {
    for (const target of targets) {
      current = target;
      index++;
      const reply = await loadOne(target, index);
      try {
        await send(reply);
      } catch (err) {
        await send({
          index,
          error:
            `${target.file}: its registration holds a value that is not data (${describeThrown(err)}): ` +
            'a registration holds strings, numbers, lists and plain objects only',
        });
        exit(1);
      }
      if ('error' in reply) exit(1);
    }
    await send({ done: true });
    exit(0);
  });
  void send({ ready: true });
}
