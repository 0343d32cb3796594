// What a function runs with locally: its runtime settings, and the environment variables Lambda gives it.
import { randomUUID } from 'node:crypto';
import { dirname } from 'node:path';
import type { InvocationTimer } from './timer.ts';

/** How one function runs locally, as Lambda would run it. */
export interface FunctionRuntime {
  name: string;
  /** Absolute path of the built bundle. */
  bundle: string;
  env: Record<string, string>;
  /** Lambda memory size in MB: the most the worker process may hold (resident), heap and Buffers alike. */
  memoryMb: number;
  /** Lambda timeout in ms. */
  timeoutMs: number;
  /** Most execution environments (workers) at once (Lambda reserved concurrency). */
  concurrency: number;
  /** Receives each line the function writes (its logs); default: the emulator's own stdout. */
  onLog?: (line: string) => void;
  /** Extra node options for the worker processes (`--enable-source-maps`). */
  execArgv?: string[];
  /**
   * Debugger port (`--inspect=127.0.0.1:PORT`): the pool keeps one worker, started at once
   * and again as soon as the last one is gone, so a debugger can attach before the first
   * invocation; that worker loads the bundle at its first invocation, under the debugger.
   */
  inspectPort?: number;
  /** AWS region the function believes it runs in. */
  region?: string;
  /** The configured Lambda runtime (`nodejs24.x`), for AWS_EXECUTION_ENV. */
  lambdaRuntime?: string;
  /** Runs the timeout clocks (default `realTimer`). */
  timer?: InvocationTimer;
}

/**
 * Variables Lambda reserves and sets itself, so a function's own value for one is not used
 * (AWS_REGION aside: locally a function's AWS_REGION picks the region, as a deployed one's comes from where it runs).
 */
export const RESERVED_VARIABLES = [
  'AWS_LAMBDA_FUNCTION_NAME',
  'AWS_LAMBDA_FUNCTION_MEMORY_SIZE',
  'AWS_LAMBDA_FUNCTION_VERSION',
  'AWS_LAMBDA_LOG_GROUP_NAME',
  'AWS_LAMBDA_LOG_STREAM_NAME',
  'AWS_LAMBDA_INITIALIZATION_TYPE',
  'AWS_EXECUTION_ENV',
  'AWS_DEFAULT_REGION',
  'LAMBDA_TASK_ROOT',
  '_HANDLER',
] as const;

/** The variables Lambda sets in a function's environment: its defaults (TZ, LANG, PATH) under the function's own, the reserved ones over them. */
export function lambdaEnvironment(
  runtime: FunctionRuntime,
  region = runtime.env.AWS_REGION ?? 'us-east-1',
): Record<string, string> {
  const reserved: Record<(typeof RESERVED_VARIABLES)[number], string> = {
    AWS_LAMBDA_FUNCTION_NAME: runtime.name,
    AWS_LAMBDA_FUNCTION_MEMORY_SIZE: String(runtime.memoryMb),
    AWS_LAMBDA_FUNCTION_VERSION: '$LATEST',
    AWS_LAMBDA_LOG_GROUP_NAME: `/aws/lambda/${runtime.name}`,
    AWS_LAMBDA_LOG_STREAM_NAME: `${new Date().toISOString().slice(0, 10).replaceAll('-', '/')}/[$LATEST]${randomUUID().replaceAll('-', '')}`,
    AWS_LAMBDA_INITIALIZATION_TYPE: 'on-demand',
    AWS_EXECUTION_ENV: `AWS_Lambda_${runtime.lambdaRuntime ?? `nodejs${process.versions.node.split('.')[0]}.x`}`,
    AWS_DEFAULT_REGION: region,
    // Where the code is: the bundle's folder here, /var/task in Lambda.
    LAMBDA_TASK_ROOT: dirname(runtime.bundle),
    _HANDLER: 'index.handler',
  };
  return {
    // Lambda lets a function set these.
    TZ: ':UTC',
    LANG: 'en_US.UTF-8',
    ...(process.env.PATH ? { PATH: process.env.PATH } : {}),
    ...runtime.env,
    ...reserved,
    AWS_REGION: region,
  };
}
