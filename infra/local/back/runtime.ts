import type { Registration } from '../../../lib/internal.ts';
import { bundlePath } from '../../build.ts';
import { DEFAULT_MEMORY_MB } from '../../runtimes.ts';
import type { FunctionRuntime } from './environment.ts';
import { FunctionPool } from './pool.ts';

/** Environments per function when not told otherwise (Lambda would scale further). */
export const DEFAULT_CONCURRENCY = 4;

/** The emulator's AWS credentials and region, passed on as Lambda passes its role's (as sam local does). */
const AWS_PASS_THROUGH = ['AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY', 'AWS_SESSION_TOKEN', 'AWS_REGION'];

/** Environment variables of the emulator passed on to functions: KLW_* (token, log level) and AWS credentials. */
export function passThroughEnv(env: NodeJS.ProcessEnv = process.env): Record<string, string> {
  return Object.fromEntries(
    Object.entries(env).filter(
      (e): e is [string, string] =>
        (e[0].startsWith('KLW_') || AWS_PASS_THROUGH.includes(e[0])) && typeof e[1] === 'string',
    ),
  );
}

/** How a registered function runs locally: its bundle, environment, memory, timeout. */
export function runtimeFor(
  root: string,
  reg: Registration,
  concurrency = DEFAULT_CONCURRENCY,
  env: NodeJS.ProcessEnv = process.env,
  onLog?: (line: string) => void,
): FunctionRuntime {
  return {
    ...(onLog ? { onLog } : {}),
    name: reg.name,
    bundle: bundlePath(root, reg.name),
    env: { ...reg.lambda.environment, ...passThroughEnv(env) },
    memoryMb: reg.lambda.memorySize ?? DEFAULT_MEMORY_MB,
    // The Lambda timeout is the webhook timeout: past it the API server has given up anyway.
    timeoutMs: reg.timeoutSeconds * 1000,
    concurrency,
  };
}

/** One pool per function; function log lines go to `onLog` when given. */
export function poolsFor(
  root: string,
  registrations: Registration[],
  concurrency?: number,
  onLog?: (line: string) => void,
): Map<string, FunctionPool> {
  return new Map(
    registrations.map((reg) => [reg.name, new FunctionPool(runtimeFor(root, reg, concurrency, process.env, onLog))]),
  );
}
