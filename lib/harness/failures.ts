import { AsyncLocalStorage } from 'node:async_hooks';
import { relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createLogger, type Logger } from '../log.ts';

/** How the user's function failed on one review: the adapter answered for it. */
export interface FunctionFailure {
  /** `error`: it threw or answered what is no answer; `timeout`: it did not answer within its budget. */
  kind: 'error' | 'timeout';
  /** The error as the function's log line names it (`TypeError: Cannot read properties of undefined`). */
  error: string;
  /** The first line of the stack in the user's own code (`functions/pods/index.ts:12:31`), when there is one. */
  at?: string;
  /** The whole stack, as logged. */
  stack?: string;
}

/**
 * The lines the adapter logs a failed function with (lib/webhook.ts logFailure), each with an
 * error id, the error and its stack.
 */
const FAILURE_LINES = new Set([
  'user function failed',
  'user function too slow',
  'converter failed',
  'converter too slow',
  'converted objects cannot be written as JSON',
]);

/** The failures logged during one invoke (each call its own list, however many run at once). */
const current = new AsyncLocalStorage<FunctionFailure[]>();

/**
 * A logger that records the failures of user functions (the adapter logs each with an error
 * id, the error and its stack) for the invoke running, and passes every line on to `next`.
 */
export function failureRecorder(next: Logger = createLogger({ level: 'silent' })): Logger {
  return {
    debug: (msg, fields) => next.debug(msg, fields),
    info: (msg, fields) => next.info(msg, fields),
    warn: (msg, fields) => next.warn(msg, fields),
    error: (msg, fields) => {
      const failures = current.getStore();
      if (
        failures &&
        FAILURE_LINES.has(msg) &&
        typeof fields?.errorId === 'string' &&
        typeof fields.error === 'string'
      ) {
        failures.push(failureOf(fields.error, typeof fields.stack === 'string' ? fields.stack : undefined));
      }
      next.error(msg, fields);
    },
  };
}

/** Runs `fn` collecting the failures the recorders log meanwhile. */
export async function recordingFailures<T>(fn: () => Promise<T>): Promise<{ value: T; failures: FunctionFailure[] }> {
  const failures: FunctionFailure[] = [];
  const value = await current.run(failures, fn);
  return { value, failures };
}

function failureOf(error: string, stack: string | undefined): FunctionFailure {
  const failure: FunctionFailure = { kind: error.startsWith('DeadlineExceeded:') ? 'timeout' : 'error', error };
  if (stack !== undefined) {
    failure.stack = stack;
    const at = userFrame(stack);
    if (at !== undefined) failure.at = at;
  }
  return failure;
}

/** This library's own folder (lib/, or pkg/lib/ in the package): its frames are not the user's. */
const LIBRARY_DIR = fileURLToPath(new URL('..', import.meta.url));

// `    at name (/file.ts:12:31)`, `    at /file.ts:12:31`, `    at async name (file:///file.ts:12:31)`.
const FRAME = /^\s*at (?:.*? \()?((?:file:\/\/)?\/[^()]*?|[A-Za-z]:\\[^()]*?):(\d+):(\d+)\)?$/;

/**
 * The first frame of a stack in the user's code, relative to the working directory: not
 * Node's own, not a dependency's (node_modules), not this library's. Lines are those of the
 * TypeScript source where source maps are on (tsx turns them on; `node --enable-source-maps`).
 */
export function userFrame(stack: string, cwd: string = process.cwd()): string | undefined {
  for (const line of stack.split('\n')) {
    const m = FRAME.exec(line);
    if (!m) continue;
    const file = m[1]!.startsWith('file://') ? fileURLToPath(m[1]!) : m[1]!;
    if (file.includes(`${sep}node_modules${sep}`) || file.startsWith(LIBRARY_DIR)) continue;
    const shown = relative(cwd, file);
    return `${shown.startsWith('..') ? file : shown.split(sep).join('/')}:${m[2]}:${m[3]}`;
  }
  return undefined;
}
