import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { dirname, isAbsolute, join, relative } from 'node:path';
import type * as esbuild from 'esbuild';
import yazl from 'yazl';
import { makeDir, writeFileSafely } from './files.ts';
import { NO_REGISTRATION, type FunctionEntry } from './functions.ts';
import { KlwError } from './errors.ts';
import { esbuildTarget, projectRuntime } from './runtimes.ts';
import { SOURCES, type EventSource } from '../lib/internal.ts';
import { buildWithPrecompiledCel } from './build-cel.ts';
import { keptBuild, keptZip } from './build-kept.ts';

/** What `build` wrote for one function. */
export interface BuiltFunction {
  name: string;
  bundle: string;
  zip: string;
  bundleBytes: number;
  zipBytes: number;
  zipSha256: string;
}

/**
 * Time stamped on every zip entry, so the same code always gives the same zip
 * (DOS time starts in 1980; any fixed value works).
 */
const ZIP_MTIME = new Date('2020-01-01T00:00:00Z');

/** Where a function's bundle goes: `dist/functions/<name>/index.mjs`. */
export function bundlePath(root: string, name: string): string {
  return join(root, 'dist', 'functions', name, 'index.mjs');
}

/** Where a function's deployment zip goes: `dist/functions/<name>.zip`. */
export function zipPath(root: string, name: string): string {
  return join(root, 'dist', 'functions', `${name}.zip`);
}

/** The function's entry as a path from the project root with `/` separators: `functions/x/index.ts`. */
function entryFromRoot(root: string, entry: string): string {
  return (isAbsolute(entry) ? relative(root, entry) : entry).split('\\').join('/');
}

/**
 * The bundle's entry module: the Lambda handler is the module's `handler` export when it has one
 * (modules written that way keep working), else the handler of its default export, the
 * registration `define…Webhook` returns. A module with neither fails at init with the fix.
 */
export function entrySource(root: string, entry: string): string {
  const file = entryFromRoot(root, entry);
  return [
    `import * as fn from ${JSON.stringify(`./${file}`)};`,
    'const registration = fn.default;',
    "export const handler = typeof fn.handler === 'function' ? fn.handler : registration && registration.handler;",
    "if (typeof handler !== 'function') {",
    `  throw new TypeError(${JSON.stringify(`${file} ${NO_REGISTRATION}`)});`,
    '}',
    '',
  ].join('\n');
}

/** The name of the generated entry module in a bundle's source map; no such file is on disk. */
export const GENERATED_ENTRY = 'klw-entry.mjs';

/**
 * What a function's deployment puts in front of it, for leaving the rest out of its bundle: the
 * event sources that deliver its events, and whether it serves a fleet. Unknown (the default):
 * everything, so the bundle runs behind any source, with or without a fleet.
 */
export interface Deployment {
  sources: readonly EventSource[];
  fleet: boolean;
}

/** A deployment with every source and a fleet: a bundle that runs anywhere. */
export const ANY_DEPLOYMENT: Deployment = { sources: SOURCES.map((s) => s.name), fleet: true };

/**
 * The build-time constants that leave out of a bundle what its deployment does not use
 * (lib/gateway/sources.ts BUNDLED_SOURCES, lib/webhook.ts): esbuild then drops that code.
 */
export function deploymentDefines(deployment: Deployment): Record<string, string> {
  const defines: Record<string, string> = {};
  for (const { name } of SOURCES)
    if (!deployment.sources.includes(name)) defines[`process.env.KLW_BUNDLE_NO_${name.toUpperCase()}`] = '"1"';
  if (!deployment.fleet) defines['process.env.KLW_BUNDLE_NO_FLEET'] = '"1"';
  return defines;
}

/**
 * esbuild options for one function: ESM for the Node.js of the Lambda runtime (default: the
 * project's, see projectRuntime), minified, AWS SDK left to the runtime.
 */
export function bundleOptions(
  root: string,
  fn: Pick<FunctionEntry, 'name' | 'entry'>,
  runtime: string = projectRuntime(root),
  deployment: Deployment = ANY_DEPLOYMENT,
): esbuild.BuildOptions {
  return {
    absWorkingDir: root,
    // The entry is generated (entrySource), so a module needs no `handler` export of its own.
    stdin: { contents: entrySource(root, fn.entry), resolveDir: root, sourcefile: GENERATED_ENTRY, loader: 'js' },
    // The entry is index.mjs; what it imports only dynamically (the RE2 engine, loaded when a
    // condition uses a regular expression) is a chunk beside it, which the zip carries too.
    outdir: dirname(bundlePath(root, fn.name)),
    entryNames: 'index',
    chunkNames: 'chunks/[name]-[hash]',
    outExtension: { '.js': '.mjs' },
    splitting: true,
    bundle: true,
    platform: 'node',
    target: esbuildTarget(runtime),
    format: 'esm',
    minify: true,
    sourcemap: 'linked',
    // Maps give file:line in stack traces; the sources themselves would triple the zip.
    sourcesContent: false,
    // Paths in the source map are relative, so the same tree in another folder builds the same bytes.
    sourceRoot: '',
    legalComments: 'none',
    // The Lambda runtime ships AWS SDK v3; bundling it would only add cold-start time.
    external: ['@aws-sdk/*'],
    // CommonJS dependencies inside an ES module bundle need a real `require`.
    banner: {
      js: "import{createRequire as __klwRequire}from'node:module';const require=__klwRequire(import.meta.url);",
    },
    define: { 'process.env.NODE_ENV': '"production"', ...deploymentDefines(deployment) },
    logLevel: 'silent',
    metafile: true,
  };
}

function zip(files: Array<{ name: string; data: Buffer }>): Promise<Buffer> {
  return new Promise((resolvePromise, reject) => {
    const archive = new yazl.ZipFile();
    for (const file of [...files].sort((a, b) => a.name.localeCompare(b.name))) {
      archive.addBuffer(file.data, file.name, { mtime: ZIP_MTIME, mode: 0o100644, compress: true });
    }
    archive.end();
    const chunks: Buffer[] = [];
    archive.outputStream.on('data', (c: Buffer) => chunks.push(c));
    archive.outputStream.on('error', reject);
    archive.outputStream.on('end', () => resolvePromise(Buffer.concat(chunks)));
  });
}

/**
 * Bundles one function with esbuild for a Lambda runtime (default: the project's) and what its
 * deployment fronts it with (default: anything), and writes its deterministic zip.
 */
export async function buildFunction(
  root: string,
  fn: Pick<FunctionEntry, 'name' | 'entry'>,
  runtime: string = projectRuntime(root),
  deployment: Deployment = ANY_DEPLOYMENT,
): Promise<BuiltFunction> {
  const outfile = bundlePath(root, fn.name);
  // esbuild resolves from the project root, which must exist even though nothing is written yet.
  makeDir(root);
  // esbuild hands the files over rather than writing them, so they go through the one writer.
  const options = { ...bundleOptions(root, fn, runtime, deployment), write: false };
  // The same build kept from an earlier one when a test suite asks for that (build-kept.ts).
  const outputFiles = await keptBuild({ ...options, absWorkingDir: root, outdir: dirname(outfile) }, async () => {
    const built = await buildWithPrecompiledCel(options);
    // esbuild knows the module's exports: one with neither `default` nor `handler` is refused here,
    // not at init in Lambda.
    const missing = new Set(
      built.warnings.filter((w) => w.id === 'import-is-undefined').map((w) => /Import "(\w+)"/.exec(w.text)?.[1]),
    );
    if (missing.has('default') && missing.has('handler')) {
      throw new KlwError(`${entryFromRoot(root, fn.entry)} ${NO_REGISTRATION}`);
    }
    return built;
  });
  for (const file of outputFiles) writeFileSafely(file.path, file.contents, { parents: true });
  const code = readFileSync(outfile);
  // index.mjs, its map, and the chunks it loads on demand, at their paths beside it.
  const archive = await keptZip(outputFiles, dirname(outfile), () =>
    zip(
      outputFiles.map((file) => ({
        name: relative(dirname(outfile), file.path).split('\\').join('/'),
        data: Buffer.from(file.contents),
      })),
    ),
  );
  const zipFile = zipPath(root, fn.name);
  writeFileSafely(zipFile, archive);
  return {
    name: fn.name,
    bundle: relative(root, outfile),
    zip: relative(root, zipFile),
    bundleBytes: code.length,
    zipBytes: archive.length,
    zipSha256: createHash('sha256').update(archive).digest('hex'),
  };
}

/**
 * Builds every function for a Lambda runtime (default: the project's), each for its deployment
 * (`deploymentOf`, default: anything), reporting each as it is done.
 */
export async function buildAll(
  root: string,
  functions: Array<Pick<FunctionEntry, 'name' | 'entry'>>,
  onBuilt: (built: BuiltFunction) => void = () => {},
  runtime: string = projectRuntime(root),
  deploymentOf: (name: string) => Deployment = () => ANY_DEPLOYMENT,
): Promise<BuiltFunction[]> {
  const out: BuiltFunction[] = [];
  for (const fn of functions) {
    const built = await buildFunction(root, fn, runtime, deploymentOf(fn.name));
    onBuilt(built);
    out.push(built);
  }
  return out;
}

/** `45.2 KB`. */
export function formatBytes(bytes: number): string {
  return bytes < 1024 ? `${bytes} B` : `${(bytes / 1024).toFixed(1)} KB`;
}
