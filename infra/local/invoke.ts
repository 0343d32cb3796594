import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { toEvent } from '../../lib/harness/events.ts';
import type { EventSource } from '../../lib/gateway/sources.ts';
import { buildFunction, bundlePath } from '../build.ts';
import { KlwError, loadFunctions } from '../functions.ts';
import { FunctionPool, type Invocation } from './pool.ts';
import { runtimeFor } from './runtime.ts';

/** Options of `klw local invoke`. */
export interface LocalInvokeOptions {
  root: string;
  name: string;
  /** A Lambda event (JSON text). */
  event?: string;
  /** A bare AdmissionReview or ConversionReview (JSON text) to wrap in an event. */
  review?: string;
  format?: EventSource;
  /** Build first even when a bundle exists. */
  build?: boolean;
}

/** Reads a file, or stdin for `-`. */
export function readInput(file: string): string {
  return readFileSync(file === '-' ? 0 : file, 'utf8');
}

/** Runs the built bundle of one function once, as Lambda would, and returns the outcome. */
export async function localInvoke(options: LocalInvokeOptions): Promise<Invocation> {
  const root = resolve(options.root);
  const [fn] = await loadFunctions(root, [options.name]);
  if (!fn) throw new KlwError(`no function "${options.name}"`);
  if (options.build || !existsSync(bundlePath(root, fn.name))) await buildFunction(root, fn);
  let event: unknown;
  try {
    if (options.review !== undefined) event = toEvent(JSON.parse(options.review), { format: options.format ?? 'http', path: fn.registration.path, timeout: `${fn.registration.timeoutSeconds}s` });
    else event = JSON.parse(options.event ?? '{}');
  } catch (err) {
    throw new KlwError(`input is not JSON: ${(err as Error).message}`);
  }
  const pool = new FunctionPool({ ...runtimeFor(root, fn.registration), concurrency: 1 });
  try {
    return await pool.invoke(event);
  } finally {
    await pool.close();
  }
}
