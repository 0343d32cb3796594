import { createHash } from 'node:crypto';
import { join, relative, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { BuildFailure } from 'esbuild';
import type { AdmissionWebhook } from '../lib/admission/webhook.ts';
import type { ConversionWebhook, Registration } from '../lib/internal.ts';
import { findFunctions, noFunctionsMessage, type FunctionSource } from '../lib/harness/discover.ts';
import { describeThrown, KlwError, thrownIn } from './errors.ts';
import { cachedBuild } from './build-cache.mjs';
import type { Finding } from './lint/finding.ts';
import { checkModule, type FunctionModule } from './loader/check.ts';
import type { LoadTarget } from './loader/child.ts';
import { LOAD_TIMEOUT_MS, type LoaderOptions, loadModules } from './loader/load.ts';

/** A function found under `functions/`: where its code is and what it registers. */
export interface FunctionEntry {
  name: string;
  /** Absolute path of `functions/<name>/index.{ts,mts,js,mjs}`. */
  entry: string;
  registration: Registration;
  /** True when the module exports a `handler` other than its registration's: the bundle runs that one. */
  ownHandler?: boolean;
}

export { NO_REGISTRATION } from './loader/check.ts';

/** The names of the function folders under `<root>/functions` (those with an entry file), sorted. */
export function functionNames(root: string): string[] {
  return findFunctions(root).map((f) => f.name);
}

/** Where loadFunctions keeps the transpiled entries it imports. */
export function loadDir(root: string): string {
  return join(root, '.klw', 'load');
}

/**
 * Builds the functions' entries so that they import without a TypeScript loader: esbuild bundles
 * each function's own files (TypeScript or JavaScript, ESM syntax, any package `type`) into an ES
 * module under `.klw/load/`, leaving packages to Node's resolution from the project, with the
 * code they share (this toolkit's sources, in its own checkout) in chunks imported once. The
 * build is reused while none of the files it read changed (infra/build-cache.mjs); each set of
 * functions built together has its own cache folder. Returns each function's module file.
 */
async function transpile(root: string, sources: FunctionSource[]): Promise<string[]> {
  const entryPoints = Object.fromEntries(sources.map((s) => [s.name, s.entry]));
  const set = createHash('sha256').update(JSON.stringify(entryPoints)).digest('hex').slice(0, 16);
  let dir: string;
  try {
    ({ dir } = await cachedBuild({ root, cacheDir: join(loadDir(root), set), entryPoints, sourceUrls: false }));
  } catch (err) {
    throw await buildError(root, sources, err);
  }
  return sources.map((s) => join(dir, `${s.name}.mjs`));
}

/** The error of the first function (in order) that does not build on its own, naming it; else `err`'s. */
async function buildError(root: string, sources: FunctionSource[], err: unknown): Promise<KlwError> {
  // Imported here only: a build that is current (the common case) never loads the compiler.
  const esbuild = await import('esbuild');
  for (const source of sources) {
    try {
      await esbuild.build({
        absWorkingDir: root,
        entryPoints: [source.entry],
        bundle: true,
        packages: 'external',
        platform: 'node',
        target: 'node20',
        format: 'esm',
        write: false,
        logLevel: 'silent',
      });
    } catch (failure) {
      const first = (failure as BuildFailure).errors?.[0];
      const where = first?.location ? `${first.location.file}:${first.location.line}: ` : '';
      return new KlwError(`functions/${source.name}: ${where}${first?.text ?? describeThrown(failure)}`);
    }
  }
  return new KlwError(`functions: ${describeThrown(err)}`, { cause: err });
}

/** How function modules are loaded; the defaults suit every command, tests make them small. */
export interface LoadOptions extends Partial<LoaderOptions> {
  /** How long one module may take to load (the first also the loader's start); default LOAD_TIMEOUT_MS. */
  timeoutMs?: number;
}

/** The functions found and transpiled, each with the module file the loader imports. */
async function prepare(root: string, only?: string[]): Promise<Array<LoadTarget & { entry: string }>> {
  const sources = findFunctions(root);
  if (!sources.length) throw new KlwError(noFunctionsMessage(root));
  const names = sources.map((s) => s.name);
  for (const wanted of only ?? []) {
    if (!names.includes(wanted))
      throw new KlwError(`no function "${wanted}" in ${join(root, 'functions')} (have: ${names.join(', ')})`);
  }
  const chosen = only?.length ? sources.filter((s) => only.includes(s.name)) : sources;
  const modules = await transpile(root, chosen);
  return chosen.map((source, i) => ({
    name: source.name,
    file: relative(resolve(root), source.entry).split('\\').join('/'),
    url: pathToFileURL(modules[i]!).href,
    entry: source.entry,
  }));
}

/**
 * Imports every function (or the named ones) and reads the registration it exports: the one
 * source of truth for bundles, manifests and deployment. The modules are imported in one child
 * process (loadModules), never in klw's own, so a module that exits, stalls or throws anything
 * at load is an error naming its file. A project without any function is an error that says
 * where functions go.
 */
export async function loadFunctions(
  root: string,
  only?: string[],
  options: LoadOptions = {},
): Promise<FunctionEntry[]> {
  const targets = await prepare(root, only);
  const loaded = await loadModules(targets, {
    project: root,
    ...options,
    timeoutMs: options.timeoutMs ?? LOAD_TIMEOUT_MS,
  });
  return targets.map((t, i) => ({
    name: t.name,
    entry: t.entry,
    registration: loaded[i]!.registration,
    ...(loaded[i]!.ownHandler ? { ownHandler: true } : {}),
  }));
}

/**
 * The webhooks of the named functions (all when none), to call in this process (klw audit runs
 * them against a cluster's objects): loaded in the child first, so a module that exits, stalls or
 * throws at load is refused before it is imported here.
 */
export async function loadWebhooks(
  root: string,
  only?: string[],
  options: LoadOptions = {},
): Promise<Array<AdmissionWebhook | ConversionWebhook>> {
  const targets = await prepare(root, only);
  await loadModules(targets, { project: root, ...options, timeoutMs: options.timeoutMs ?? LOAD_TIMEOUT_MS });
  const webhooks: Array<AdmissionWebhook | ConversionWebhook> = [];
  for (const target of targets) {
    try {
      webhooks.push(
        (await checkModule(target.name, target.file, (await import(target.url)) as FunctionModule)).webhook,
      );
    } catch (err) {
      throw new KlwError(thrownIn(target.file, err), { cause: err });
    }
  }
  return webhooks;
}

/**
 * A warning for each module whose `handler` export is not its registration's: the zip runs that
 * handler while the manifests describe the registration, so the two can disagree unseen.
 */
export function ownHandlerFindings(root: string, functions: FunctionEntry[]): Finding[] {
  return functions
    .filter((f) => f.ownHandler)
    .map((f) => ({
      level: 'warning' as const,
      rule: 'handler-export',
      subject: f.name,
      message:
        `${relative(resolve(root), f.entry).split('\\').join('/')} exports a handler that is not its default ` +
        "registration's: the zip runs it, while the manifests describe the registration; " +
        'export webhook.handler or remove that export',
    }));
}
