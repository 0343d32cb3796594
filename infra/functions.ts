import { createHash } from 'node:crypto';
import { readdirSync, rmSync, existsSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import * as esbuild from 'esbuild';
import type { AdmissionWebhook } from '../lib/admission/webhook.ts';
import type { ConversionWebhook, Registration } from '../lib/internal.ts';
import { findFunctions, noFunctionsMessage, type FunctionSource } from '../lib/harness/discover.ts';
import { KlwError } from './errors.ts';
import { makeDir, writeFileSafely } from './files.ts';
import type { Finding } from './lint/finding.ts';

/** A function found under `functions/`: where its code is and what it registers. */
export interface FunctionEntry {
  name: string;
  /** Absolute path of `functions/<name>/index.{ts,mts,js,mjs}`. */
  entry: string;
  webhook: AdmissionWebhook | ConversionWebhook;
  registration: Registration;
  /** True when the module exports a `handler` other than its registration's: the bundle runs that one. */
  ownHandler?: boolean;
}

/** What a function module lacks when it has no default registration (nor `handler`), and the fix. */
export const NO_REGISTRATION =
  'exports no default registration: end it with `export default defineValidatingWebhook({...})` ' +
  '(or defineMutatingWebhook, defineConversionWebhook); klw build makes the Lambda handler from it';

/** The names of the function folders under `<root>/functions` (those with an entry file), sorted. */
export function functionNames(root: string): string[] {
  return findFunctions(root).map((f) => f.name);
}

/** Where loadFunctions keeps the transpiled entries it imports. */
export function loadDir(root: string): string {
  return join(root, '.klw', 'load');
}

/**
 * Imports a function's entry without needing a TypeScript loader: esbuild bundles the
 * function's own files (TypeScript or JavaScript, ESM syntax, any package `type`) into an ES
 * module under `.klw/load/`, leaving packages (this toolkit among them) to Node's resolution
 * from the project. The file is named by its content, so changed code is imported afresh.
 */
async function importFunction(root: string, source: FunctionSource): Promise<unknown> {
  let code: string;
  try {
    const out = await esbuild.build({
      absWorkingDir: root,
      entryPoints: [source.entry],
      bundle: true,
      packages: 'external',
      platform: 'node',
      target: 'node20',
      format: 'esm',
      sourcemap: 'inline',
      write: false,
      logLevel: 'silent',
    });
    code = out.outputFiles[0]!.text;
  } catch (err) {
    const first = (err as esbuild.BuildFailure).errors?.[0];
    const where = first?.location ? `${first.location.file}:${first.location.line}: ` : '';
    throw new KlwError(`functions/${source.name}: ${where}${first?.text ?? (err as Error).message}`);
  }
  const dir = loadDir(root);
  const hash = createHash('sha256').update(code).digest('hex').slice(0, 16);
  const file = join(dir, `${source.name}-${hash}.mjs`);
  if (!existsSync(file)) {
    makeDir(dir);
    for (const old of readdirSync(dir))
      if (old.startsWith(`${source.name}-`) && /^[0-9a-f]{16}\.mjs$/.test(old.slice(source.name.length + 1)))
        rmSync(join(dir, old), { force: true });
    writeFileSafely(file, code);
  }
  try {
    return await import(pathToFileURL(file).href);
  } catch (err) {
    // A registration refused by define…Webhook (or any throw at load) names the file it is in.
    const message = err instanceof Error ? err.message : String(err);
    throw new KlwError(`${relative(root, source.entry).split('\\').join('/')}: ${message}`, { cause: err });
  }
}

/** A value as an error names it: `a string`, `an object`, `null`. */
function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  const type = typeof value;
  return `${/^[aeiou]/.test(type) ? 'an' : 'a'} ${type}`;
}

/**
 * Imports every function (or the named ones) and reads the registration it exports:
 * the one source of truth for bundles, manifests and deployment. A project without any
 * function is an error that says where functions go.
 */
export async function loadFunctions(root: string, only?: string[]): Promise<FunctionEntry[]> {
  const sources = findFunctions(root);
  if (!sources.length) throw new KlwError(noFunctionsMessage(root));
  const names = sources.map((s) => s.name);
  for (const wanted of only ?? []) {
    if (!names.includes(wanted))
      throw new KlwError(`no function "${wanted}" in ${join(root, 'functions')} (have: ${names.join(', ')})`);
  }
  const entries: FunctionEntry[] = [];
  for (const source of only?.length ? sources.filter((s) => only.includes(s.name)) : sources) {
    const file = relative(resolve(root), source.entry).split('\\').join('/');
    type Module = { default?: AdmissionWebhook | ConversionWebhook; handler?: unknown };
    const mod = (await importFunction(root, source)) as Module;
    const webhook = mod.default;
    if (!webhook?.registration || typeof webhook.handler !== 'function') {
      const problem =
        webhook === undefined
          ? NO_REGISTRATION
          : `exports default ${describe(webhook)}, not a registration: export default the value ` +
            'defineValidatingWebhook, defineMutatingWebhook or defineConversionWebhook returns';
      throw new KlwError(`${file} ${problem}`);
    }
    if (mod.handler !== undefined && typeof mod.handler !== 'function') {
      throw new KlwError(
        `${file} exports handler as ${describe(mod.handler)}, not a function: remove that export ` +
          '(klw build makes the handler from the default export) or export webhook.handler',
      );
    }
    if (webhook.registration.name !== source.name) {
      throw new KlwError(
        `${file}: function ${source.name} registers the name "${webhook.registration.name}"; ` +
          "the folder and the registration's name must match: rename one",
      );
    }
    const ownHandler = typeof mod.handler === 'function' && mod.handler !== webhook.handler;
    entries.push({
      name: source.name,
      entry: source.entry,
      webhook,
      registration: webhook.registration,
      ...(ownHandler ? { ownHandler } : {}),
    });
  }
  return entries;
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
