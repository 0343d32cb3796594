// CEL expressions compiled at build time. A bundle that evaluates CEL in-function (enforced
// matchConditions, a policy served from Lambda) compiles its expressions when it loads in Lambda.
// The build loads the bundle once the same way, in a child process, learns what it compiles, and
// builds it again with those expressions precompiled (process.env.KUBE_CEL_PRECOMPILED): the cold
// start then skips reading them (cel-go's parser limits, literal rules, library names). A form is
// used only by the package and engine versions that made it; anything else compiles as before.
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';
import * as esbuild from 'esbuild';
import { engineGuardsPlugin } from './build-cel-engine.ts';
import { PENDING_KEY, PRECOMPILED_ENV, RECORD_ENV, RECORDED_KEY } from '../packages/kube-cel/src/bundling.ts';

/** The build-time constant the bundle reads its precompiled forms from. */
const PRECOMPILED_DEFINE = `process.env.${PRECOMPILED_ENV}`;
/**
 * How long loading a bundle to learn its expressions may take: a load that stalls (a function
 * waiting on the network at import) only leaves its expressions to compile at start.
 */
const RECORD_TIMEOUT_MS = 30_000;
/**
 * The most a loaded bundle may print of what it compiled: the forms of a function's expressions
 * take a few kilobytes; past this, a bundle printing without end is stopped and built without them.
 */
const RECORD_MAX_BYTES = 4 * 1024 * 1024;

/**
 * Loads the bundle as Lambda does (AWS_LAMBDA_FUNCTION_NAME set: expressions compile at load) with
 * recording on, waits for the chunks it loads (RE2, the Kubernetes libraries) and for what compiles
 * once they are, and prints what it compiled as JSON.
 */
const RECORDER = [
  'const { KLW_PRECOMPILE_BUNDLE: url } = process.env;',
  'await import(url);',
  `await Promise.allSettled(globalThis[Symbol.for(${JSON.stringify(PENDING_KEY)})] ?? []);`,
  // What compiles once a chunk is loaded runs in the same turn; one more lets it finish.
  'await new Promise((r) => setImmediate(r));',
  `process.stdout.write(JSON.stringify(globalThis[Symbol.for(${JSON.stringify(RECORDED_KEY)})] ?? []));`,
  'process.exit(0);',
].join('\n');

/**
 * What loading `bundle` compiled (forms), or none when it fails, stalls past `timeoutMs`, prints
 * more than `maxBytes` or prints nonsense.
 */
export function recordedForms(
  bundle: string,
  timeoutMs = RECORD_TIMEOUT_MS,
  maxBytes = RECORD_MAX_BYTES,
): Promise<unknown[]> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', RECORDER], {
      stdio: ['ignore', 'pipe', 'ignore'],
      env: {
        ...process.env,
        KLW_PRECOMPILE_BUNDLE: pathToFileURL(bundle).href,
        [RECORD_ENV]: '1',
        AWS_LAMBDA_FUNCTION_NAME: process.env.AWS_LAMBDA_FUNCTION_NAME ?? 'klw-precompile',
        KLW_LOG_LEVEL: 'silent',
      },
    });
    const out: Buffer[] = [];
    let size = 0;
    child.stdout.on('data', (c: Buffer) => {
      size += c.length;
      if (size > maxBytes) child.kill('SIGKILL');
      else out.push(c);
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', () => resolve([]));
    child.on('close', (code) => {
      clearTimeout(timer);
      if (code !== 0 || size > maxBytes) return resolve([]);
      try {
        const forms = JSON.parse(Buffer.concat(out).toString('utf8')) as unknown;
        resolve(Array.isArray(forms) ? forms.filter((f) => f !== null && typeof f === 'object') : []);
      } catch {
        resolve([]);
      }
    });
  });
}

/** An output file of a build, as esbuild hands it over. */
interface OutputFile {
  path: string;
  contents: Uint8Array;
}

/** Writes esbuild's output files where their paths say (relative to `outdir`, into `dir` when given). */
function writeOutputs(files: readonly OutputFile[], outdir: string, dir = outdir): void {
  for (const f of files) {
    const file = join(dir, relative(outdir, f.path));
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, f.contents);
  }
}

/**
 * The forms of the CEL expressions a bundle compiles when it loads, given the files of its build
 * into `outdir`: written into a scratch folder inside the project (`root`) and loaded in a child
 * process. None for a bundle without CEL.
 */
export async function precompiledCel(
  files: readonly OutputFile[],
  { root, outdir, entry }: { root: string; outdir: string; entry: string },
): Promise<unknown[]> {
  // Only a bundle carrying the CEL package (in it or in a chunk it shares) can record anything.
  const carries = (f: OutputFile) =>
    f.path.endsWith('.mjs') &&
    Buffer.from(f.contents.buffer, f.contents.byteOffset, f.contents.byteLength).includes(RECORDED_KEY);
  if (!files.some(carries)) return [];
  // Inside the project, so that what the bundle leaves external resolves as it does beside it.
  const state = join(root, '.klw');
  mkdirSync(state, { recursive: true });
  const scratch = mkdtempSync(join(state, 'precompile-'));
  try {
    writeOutputs(files, outdir, scratch);
    const forms = await recordedForms(join(scratch, `${entry}.mjs`));
    // The same code always gives the same bundle: forms in a fixed order.
    return forms
      .map((f) => [JSON.stringify(f), f] as const)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([, f]) => f);
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

/**
 * esbuild's build of `options` with the CEL expressions the bundle compiles at load precompiled
 * into it (see precompiledCel): built once, and built again with the forms when it has any (the
 * first build is the bundle when it has none). Written into `outdir` unless `write` is false.
 */
export async function buildWithPrecompiledCel<O extends esbuild.BuildOptions>(
  given: O,
): Promise<esbuild.BuildResult<O>> {
  const { outdir } = given;
  if (!outdir) throw new Error('buildWithPrecompiledCel: the options give no outdir');
  // The engine without its registration guards (build-cel-engine.ts), in both builds; in memory.
  const options: esbuild.BuildOptions & { write: false } = {
    ...given,
    write: false,
    plugins: [...(given.plugins ?? []), engineGuardsPlugin()],
  };
  const plain = await esbuild.build(options);
  const forms = await precompiledCel(plain.outputFiles ?? [], {
    root: options.absWorkingDir ?? process.cwd(),
    outdir,
    entry: options.entryNames ?? 'index',
  });
  const result = forms.length
    ? await esbuild.build({
        ...options,
        define: { ...options.define, [PRECOMPILED_DEFINE]: JSON.stringify(JSON.stringify(forms)) },
      })
    : plain;
  if (given.write === false) return result as esbuild.BuildResult<O>;
  writeOutputs(result.outputFiles ?? [], outdir);
  return { ...result, outputFiles: undefined } as esbuild.BuildResult<O>;
}
