import { existsSync, readFileSync, statSync } from 'node:fs';
import { basename, dirname, resolve } from 'node:path';
import { toEvent } from '../../../lib/harness/events.ts';
import { parseJson, type EventSource } from '../../../lib/internal.ts';
import { buildFunction, bundlePath, GENERATED_ENTRY } from '../../build.ts';
import { loadFunctions } from '../../functions.ts';
import { KlwError } from '../../errors.ts';
import { ensureLocalPathSecret, PATH_SECRET_ENV, usesPathSecret } from '../../secrets/index.ts';
import { FunctionPool, type Invocation, type InvocationTimer } from './pool.ts';
import { configuredRuntime, envVarsFor, runtimeWarnings, type EnvVarsFile } from './project.ts';
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
  /** Build first even when the bundle is newer than the sources. */
  build?: boolean;
  /** `--env-vars` contents (SAM format). */
  envVars?: EnvVarsFile;
  /** Where the local path secret is kept (default `.klw/local`). */
  stateDir?: string;
  /** Where the function's own log lines go; default stderr, so stdout carries only the result. */
  functionLog?: (line: string) => void;
  /** Told about a rebuild and about a Node/runtime mismatch; default stderr. */
  say?: (line: string) => void;
  /** Runs the function's timeout clock (default: the wall clock). */
  invocationTimer?: InvocationTimer;
}

/** Reads a file, or stdin for `-`. */
export function readInput(file: string): string {
  return readFileSync(file === '-' ? 0 : file, 'utf8');
}

/**
 * True when the bundle is missing or older than any source it was built from (the files
 * its source map lists, outside node_modules, but for the generated entry module, which exists
 * only in the build), or than the function's folder itself.
 */
export function bundleIsStale(bundle: string, entry: string): boolean {
  if (!existsSync(bundle)) return true;
  const built = statSync(bundle).mtimeMs;
  const sources = new Set<string>([entry]);
  const map = `${bundle}.map`;
  if (existsSync(map)) {
    try {
      const parsed = JSON.parse(readFileSync(map, 'utf8')) as { sources?: string[]; sourceRoot?: string };
      for (const source of parsed.sources ?? [])
        if (!source.includes('node_modules') && basename(source) !== GENERATED_ENTRY)
          sources.add(resolve(dirname(bundle), parsed.sourceRoot ?? '', source));
    } catch {
      return true;
    }
  }
  for (const file of sources) {
    try {
      if (statSync(file).mtimeMs > built) return true;
    } catch {
      return true; // a source that went away: the bundle is from another tree
    }
  }
  return statSync(dirname(entry)).mtimeMs > built;
}

/** Runs the built bundle of one function once, as Lambda would (rebuilding a stale bundle first), and returns the outcome. */
export async function localInvoke(options: LocalInvokeOptions): Promise<Invocation> {
  const root = resolve(options.root);
  const say = options.say ?? ((line: string) => process.stderr.write(`${line}\n`));
  const [fn] = await loadFunctions(root, [options.name]);
  if (!fn) throw new KlwError(`no function "${options.name}"`);
  if (options.build || bundleIsStale(bundlePath(root, fn.name), fn.entry)) {
    if (!options.build) say(`klw: ${fn.name}: sources are newer than the bundle; rebuilding`);
    await buildFunction(root, fn);
  }
  for (const warning of runtimeWarnings(root, [fn.registration])) say(`klw: ${warning}`);
  const secret = usesPathSecret(fn.registration)
    ? ensureLocalPathSecret(resolve(root, options.stateDir ?? '.klw/local'))
    : undefined;
  let event: unknown;
  try {
    if (options.review !== undefined) {
      const path = secret ? `${fn.registration.path}/${secret.current}` : fn.registration.path;
      event = toEvent(parseJson(options.review), {
        format: options.format ?? 'http',
        path,
        timeout: `${fn.registration.timeoutSeconds}s`,
      });
    } else event = JSON.parse(options.event ?? '{}');
  } catch (err) {
    throw new KlwError(`input is not JSON: ${(err as Error).message}`);
  }
  const base = runtimeFor(
    root,
    fn.registration,
    1,
    process.env,
    options.functionLog ?? ((line) => process.stderr.write(`${line}\n`)),
  );
  const pool = new FunctionPool({
    ...base,
    env: {
      ...base.env,
      ...envVarsFor(options.envVars, fn.name),
      ...(secret ? { [PATH_SECRET_ENV]: secret.value } : {}),
    },
    lambdaRuntime: configuredRuntime(root, fn.registration),
    execArgv: ['--enable-source-maps'],
    concurrency: 1,
    ...(options.invocationTimer ? { timer: options.invocationTimer } : {}),
  });
  try {
    return await pool.invoke(event);
  } finally {
    await pool.close();
  }
}
