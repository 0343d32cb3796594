import { existsSync, readdirSync, readFileSync, statSync, watch as watchTree, type FSWatcher } from 'node:fs';
import { join, resolve } from 'node:path';
import * as esbuild from 'esbuild';
import { parse as parseYaml } from 'yaml';
import type { Registration } from '../../../lib/internal.ts';
import { buildAll, bundleOptions, bundlePath } from '../../build.ts';
import { readRegularFile, writeFileSafely } from '../../files.ts';
import { loadFunctions, type FunctionEntry } from '../../functions.ts';
import { KlwError } from '../../errors.ts';
import { RESERVED_VARIABLES, type FunctionRuntime } from './environment.ts';
import { FunctionPool, type InvocationTimer } from './pool.ts';
import { runtimeFor } from './runtime.ts';

/** The Lambda runtime assumed when neither the registration nor serverless.yml names one. */
export const DEFAULT_LAMBDA_RUNTIME = 'nodejs24.x';

/** SAM's `--env-vars` file: `Parameters` for every function, then one object per function name. */
export type EnvVarsFile = Record<string, Record<string, string | number | boolean>>;

/** Reads and checks an `--env-vars` file (SAM's format: `{"Parameters": {...}, "<function>": {...}}`); `warn` is told of each variable Lambda reserves, whose value is not used. */
export function readEnvVars(file: string, warn: (message: string) => void = () => {}): EnvVarsFile {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    throw new KlwError(`${file}: not a JSON env-vars file (${(err as Error).message})`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    throw new KlwError(`${file}: expected {"Parameters": {...}, "<function>": {...}}`);
  for (const [key, vars] of Object.entries(parsed)) {
    if (typeof vars !== 'object' || vars === null || Array.isArray(vars))
      throw new KlwError(`${file}: "${key}" must be an object of variable names to values`);
    for (const [name, value] of Object.entries(vars)) {
      if (!['string', 'number', 'boolean'].includes(typeof value))
        throw new KlwError(`${file}: ${key}.${name} must be a string, number or boolean`);
      if ((RESERVED_VARIABLES as readonly string[]).includes(name))
        warn(`${file}: ${key}.${name} is ignored: Lambda reserves ${name} and sets it itself (the emulator too)`);
    }
  }
  return parsed as EnvVarsFile;
}

/** The variables an env-vars file gives one function: `Parameters` first, its own entry over them. */
export function envVarsFor(file: EnvVarsFile | undefined, name: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const source of [file?.Parameters, file?.[name]])
    for (const [k, v] of Object.entries(source ?? {})) out[k] = String(v);
  return out;
}

/** The Lambda runtime a function is configured with: its registration, else serverless.yml's provider, else the default. */
export function configuredRuntime(root: string, reg?: Registration): string {
  const own = (reg?.lambda as { runtime?: unknown } | undefined)?.runtime;
  if (typeof own === 'string') return own;
  const file = join(root, 'serverless.yml');
  if (existsSync(file)) {
    try {
      const runtime = (parseYaml(readRegularFile(file)) as { provider?: { runtime?: unknown } } | null)?.provider
        ?.runtime;
      if (typeof runtime === 'string') return runtime;
    } catch {
      // lint reports a broken serverless.yml; the default stands here
    }
  }
  return DEFAULT_LAMBDA_RUNTIME;
}

/** A warning when the Node major running the emulator differs from the configured Lambda runtime's, else undefined. */
export function runtimeMismatch(runtime: string, nodeVersion: string = process.versions.node): string | undefined {
  const wanted = /^nodejs(\d+)\.x$/.exec(runtime)?.[1];
  const running = nodeVersion.replace(/^v/, '').split('.')[0];
  if (!wanted || wanted === running) return undefined;
  return `the functions are configured for Lambda ${runtime} (Node ${wanted}) but the emulator runs Node ${running}: behaviour may differ: run with --node runtime (or --node ${wanted}) to run them on Node ${wanted}, installed from the npm registry`;
}

/** The distinct runtime-parity warnings for a set of functions (see runtimeMismatch); every local command gives them. */
export function runtimeWarnings(
  root: string,
  registrations: Registration[],
  nodeVersion: string = process.versions.node,
): string[] {
  const warnings = new Set<string>();
  for (const reg of registrations) {
    const warning = runtimeMismatch(configuredRuntime(root, reg), nodeVersion);
    if (warning) warnings.add(warning);
  }
  return [...warnings];
}

/** Options of a local project: how its functions are built and run. */
export interface ProjectOptions {
  root: string;
  /** Build before starting (default true). */
  build?: boolean;
  /** Workers per function. */
  concurrency?: number;
  /** `--env-vars` contents. */
  envVars?: EnvVarsFile;
  /** Variables every function gets (the local path secret). */
  extraEnv?: Record<string, string>;
  /** Variables of one function on top of the others (a fleet's KLW_FLEET), given every function served. */
  envFor?: (reg: Registration, functions: readonly Registration[]) => Record<string, string>;
  /** Extra node options for the worker processes. */
  execArgv?: string[];
  /** `--inspect`: the first debugger port; each function gets its own from here on (one worker each, started at once). */
  inspectPort?: number;
  /** Where the functions' own log lines go. */
  functionLog?: (line: string) => void;
  /** Where the emulator's own lines go (JSON text). */
  log: (line: string) => void;
  /** Runs the functions' timeout clocks (default: the wall clock). */
  invocationTimer?: InvocationTimer;
}

/** What changed in the project on a reload. */
export interface ProjectChange {
  added: string[];
  removed: string[];
  /** Functions whose registration changed. */
  changed: string[];
}

/** Writes build outputs atomically (the one file writer), so a worker never imports half a bundle. */
function writeOutputs(files: esbuild.OutputFile[]): void {
  for (const file of files) {
    writeFileSafely(file.path, file.contents, { parents: true });
  }
}

/** True when one of a build's files differs from the file on disk (or there is none). */
function differsOnDisk(files: esbuild.OutputFile[]): boolean {
  return files.some((file) => {
    try {
      return !Buffer.from(file.contents).equals(readFileSync(file.path));
    } catch {
      return true;
    }
  });
}

/** How long file events settle before the project is reloaded (ms): editors write in bursts. */
const SETTLE_MS = 150;

/**
 * The functions of a project as the emulator runs them: registrations, bundles and one
 * worker pool per function; with `watch`, code changes rebuild and swap workers, and new,
 * removed or re-registered functions are picked up without a restart.
 */
export class LocalProject {
  functions: FunctionEntry[] = [];
  readonly pools = new Map<string, FunctionPool>();
  private contexts = new Map<string, esbuild.BuildContext>();
  private watcher?: FSWatcher;
  private timer?: NodeJS.Timeout;
  private reloading = Promise.resolve();
  private listeners: Array<(change: ProjectChange) => void | Promise<void>> = [];
  /** Debugger port of each function name ever served: kept across reloads, so a re-added function gets its port back. */
  private inspectPorts = new Map<string, number>();
  /** Runtime-parity warnings already given. */
  private warned = new Set<string>();

  private constructor(readonly options: ProjectOptions) {}

  /** Loads (and by default builds) every function and makes its pool. */
  static async open(options: ProjectOptions): Promise<LocalProject> {
    const project = new LocalProject({ ...options, root: resolve(options.root) });
    project.functions = await loadFunctions(project.root);
    const stale =
      options.build === false
        ? project.functions.filter((f) => !existsSync(bundlePath(project.root, f.name)))
        : project.functions;
    if (stale.length) await buildAll(project.root, stale);
    project.warnRuntimes(project.functions);
    for (const fn of project.functions) project.pools.set(fn.name, new FunctionPool(project.runtime(fn.registration)));
    return project;
  }

  /** The debugger port of a function under `--inspect` (assigned at its first sight, the same after reloads), else undefined. */
  inspectPort(name: string): number | undefined {
    const first = this.options.inspectPort;
    if (first === undefined) return undefined;
    let port = this.inspectPorts.get(name);
    if (port === undefined) {
      port = first + this.inspectPorts.size;
      this.inspectPorts.set(name, port);
      this.say({ msg: 'debugger', function: name, inspect: `127.0.0.1:${port}` });
    }
    return port;
  }

  /** Logs each runtime-parity warning (emulator Node major vs configured Lambda runtime) once. */
  private warnRuntimes(functions: FunctionEntry[]): void {
    for (const warning of runtimeWarnings(
      this.root,
      functions.map((f) => f.registration),
    )) {
      if (this.warned.has(warning)) continue;
      this.warned.add(warning);
      this.say({ level: 'warn', msg: warning });
    }
  }

  get root(): string {
    return this.options.root;
  }

  /** The registration of a function being served. */
  registration(name: string): Registration | undefined {
    return this.functions.find((f) => f.name === name)?.registration;
  }

  /** How one function runs: its registration's settings, the env-vars file and the extra variables on top. */
  runtime(reg: Registration): FunctionRuntime {
    const base = runtimeFor(this.root, reg, this.options.concurrency, process.env, this.options.functionLog);
    const inspectPort = this.inspectPort(reg.name);
    return {
      ...base,
      env: {
        ...base.env,
        ...envVarsFor(this.options.envVars, reg.name),
        ...this.options.extraEnv,
        ...this.options.envFor?.(
          reg,
          this.functions.map((f) => f.registration),
        ),
      },
      lambdaRuntime: configuredRuntime(this.root, reg),
      execArgv: ['--enable-source-maps', ...(this.options.execArgv ?? [])],
      // Under the debugger, one worker: the one listening on the function's port.
      ...(inspectPort !== undefined ? { inspectPort } : {}),
      ...(this.options.invocationTimer ? { timer: this.options.invocationTimer } : {}),
    };
  }

  /** Sets a variable every function gets (a path secret read again); a pool takes it when updated with `runtime`. */
  setExtraEnv(name: string, value: string): void {
    this.options.extraEnv = { ...this.options.extraEnv, [name]: value };
  }

  /** Calls `listener` after every reload that changed the set of functions or a registration. */
  onChange(listener: (change: ProjectChange) => void | Promise<void>): void {
    this.listeners.push(listener);
  }

  /** Rebuilds on code changes and reloads on registration changes, new and removed functions. */
  async watch(): Promise<void> {
    for (const fn of this.functions) await this.watchCode(fn);
    const dir = join(this.root, 'functions');
    this.watcher = watchTree(dir, { recursive: true }, () => {
      clearTimeout(this.timer);
      this.timer = setTimeout(() => {
        this.reloading = this.reloading
          .then(() => this.reload())
          .then(
            () => undefined,
            (err: unknown) =>
              this.say({ msg: 'reload failed; still serving the last good functions', error: (err as Error).message }),
          );
      }, SETTLE_MS);
    });
  }

  /** Resolves once every reload started so far has finished. */
  async settled(): Promise<void> {
    await this.reloading;
  }

  private say(fields: Record<string, unknown>): void {
    this.options.log(JSON.stringify(fields));
  }

  /**
   * Watches one function's code: each build after the first swaps its workers. The first build
   * (esbuild's own, as watching starts) swaps them only when its bundle differs from the one
   * served, an edit made before watching began; it is waited for, so what is served once this
   * resolves is the code on disk.
   */
  private async watchCode(fn: FunctionEntry): Promise<void> {
    let first = true;
    let firstBuilt = () => {};
    const firstBuild = new Promise<void>((resolvePromise) => {
      firstBuilt = resolvePromise;
    });
    const ctx = await esbuild.context({
      ...bundleOptions(this.root, fn),
      write: false,
      plugins: [
        {
          name: 'klw-swap',
          setup: (build) => {
            build.onEnd((result) => {
              if (result.errors.length) {
                this.say({
                  msg: 'rebuild failed; still serving the last good build',
                  function: fn.name,
                  errors: result.errors.map((e) => e.text),
                });
              } else {
                const outputs = result.outputFiles ?? [];
                const swap = !first || differsOnDisk(outputs);
                writeOutputs(outputs);
                if (swap) {
                  this.pools.get(fn.name)?.swap();
                  this.say({ msg: 'rebuilt', function: fn.name });
                }
              }
              first = false;
              firstBuilt();
            });
          },
        },
      ],
    });
    await ctx.watch();
    this.contexts.set(fn.name, ctx);
    await firstBuild;
  }

  /** Loads the registrations again and serves what changed. */
  async reload(): Promise<ProjectChange> {
    const next = await loadFunctions(this.root).catch((err: unknown) => {
      // A function folder emptied or half written: keep serving what there is.
      if (err instanceof KlwError && !existsSync(join(this.root, 'functions'))) return [];
      throw err;
    });
    const before = new Map(this.functions.map((f) => [f.name, f]));
    const change: ProjectChange = { added: [], removed: [], changed: [] };
    for (const fn of next) {
      const old = before.get(fn.name);
      if (!old) change.added.push(fn.name);
      else if (JSON.stringify(old.registration) !== JSON.stringify(fn.registration)) change.changed.push(fn.name);
    }
    for (const name of before.keys()) if (!next.some((f) => f.name === name)) change.removed.push(name);
    if (!change.added.length && !change.removed.length && !change.changed.length) return change;

    if (change.added.length)
      await buildAll(
        this.root,
        next.filter((f) => change.added.includes(f.name)),
      );
    this.warnRuntimes(next.filter((f) => change.added.includes(f.name) || change.changed.includes(f.name)));
    this.functions = next;
    for (const name of change.removed) {
      await this.contexts.get(name)?.dispose();
      this.contexts.delete(name);
      const pool = this.pools.get(name);
      this.pools.delete(name);
      await pool?.close();
    }
    for (const name of change.added) {
      const fn = next.find((f) => f.name === name)!;
      this.pools.set(name, new FunctionPool(this.runtime(fn.registration)));
      if (this.watcher) await this.watchCode(fn);
    }
    for (const name of change.changed)
      this.pools.get(name)?.update(this.runtime(next.find((f) => f.name === name)!.registration));
    this.say({ msg: 'functions changed', ...change });
    for (const listener of this.listeners) await listener(change);
    return change;
  }

  /** Newest modification time under a function's folder (ms), to tell a stale bundle. */
  static newestSource(dir: string): number {
    return newest(dir);
  }

  /** Stops watching and every worker. */
  async close(): Promise<void> {
    this.watcher?.close();
    clearTimeout(this.timer);
    await this.reloading.catch(() => {});
    await Promise.all([...this.contexts.values()].map((c) => c.dispose()));
    await Promise.all([...this.pools.values()].map((p) => p.close()));
  }
}

function newest(path: string): number {
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  let max = stat.mtimeMs;
  for (const entry of readdirSync(path))
    if (entry !== 'node_modules' && !entry.startsWith('.')) max = Math.max(max, newest(join(path, entry)));
  return max;
}
