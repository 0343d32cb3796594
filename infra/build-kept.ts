// Function builds kept by content, for test suites that build the same functions run after run: a
// bundle with its CEL precompiled costs two esbuild builds and a node process, about a second of
// CPU, and most tests only need the bundle, not the building. Off unless KEPT_BUILDS_ENV names a
// folder. A kept build is named by what shapes it besides the files (esbuild's options with the
// project's folder left out, esbuild's and Node's versions, this toolkit's build code, the
// TypeScript and package settings above the project) and reused only while every file the build
// read (esbuild's metafile) still has the hash it had; anything else is built and kept anew.
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  utimesSync,
} from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';
import { hashOf, sha256, TOOLKIT } from './build-cache.mjs';
import { writeFileSafely } from './files.ts';

/**
 * The environment variable naming the folder where function builds are kept (a relative one from
 * this toolkit's folder, whatever the directory of the process that builds); unset, every build is
 * made.
 */
export const KEPT_BUILDS_ENV = 'KLW_KEPT_BUILDS';

/**
 * How long a kept build is kept unused: builds of scratch projects whose files differ every run
 * are never used again, and a day covers a working day's runs of the others.
 */
const UNUSED_MS = 24 * 60 * 60 * 1000;

/** Changes whenever kept builds are laid out or named differently, so older ones are not reused. */
const RECIPE = 'klw-kept-build-1';

/** The output files of a build, as esbuild hands them over. */
export interface BuildOutput {
  path: string;
  contents: Uint8Array;
}

/**
 * What a kept build records: the files it read (relative to the project) and what it wrote
 * (relative to outdir), with their hashes.
 */
interface Manifest {
  inputs: Array<[string, string]>;
  outputs: Array<[string, string]>;
}

/**
 * This toolkit's build code (infra/build*.ts), which shapes a bundle as much as its options do;
 * undefined where it cannot be read (an installed toolkit carries no sources), and nothing is kept.
 */
function toolkitCode(): string | undefined {
  const infra = dirname(fileURLToPath(import.meta.url));
  const files = existsSync(infra) ? readdirSync(infra).filter((f) => /^build.*\.ts$/.test(f)) : [];
  if (!files.length) return undefined;
  return files
    .sort()
    .map((f) => `${f}:${hashOf(join(infra, f))}`)
    .join('\n');
}

/** The TypeScript and package settings esbuild may read resolving from `root`: every folder up to the top. */
function settingsAbove(root: string): string {
  const found: string[] = [];
  for (let dir = resolve(root), up = 0; ; dir = dirname(dir), up++) {
    for (const name of ['tsconfig.json', 'package.json']) found.push(`${up}/${name}:${hashOf(join(dir, name))}`);
    if (dirname(dir) === dir) break;
  }
  return found.join('\n');
}

/** The name of a build of `options` in `root`, the same for the same build in another folder; undefined: not to be kept. */
function keyOf(root: string, options: esbuild.BuildOptions): string | undefined {
  const code = toolkitCode();
  if (code === undefined) return undefined;
  const plain = JSON.stringify(options, (_k, v) => (typeof v === 'function' ? String(v) : v))
    .split(root)
    .join('<root>');
  return sha256([RECIPE, esbuild.version, process.version, code, settingsAbove(root), plain].join('\n'));
}

/** The outputs (paths under `outdir`) of the build kept in `dir` when every file it read is unchanged, else undefined. */
function reuse(dir: string, root: string, outdir: string): BuildOutput[] | undefined {
  try {
    const manifest = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as Manifest;
    if (!manifest.inputs.every(([file, hash]) => hashOf(resolve(root, file)) === hash)) return undefined;
    const outputs: BuildOutput[] = [];
    for (const [file, hash] of manifest.outputs) {
      const contents = readFileSync(join(dir, 'out', file));
      if (sha256(contents) !== hash) return undefined;
      outputs.push({ path: join(outdir, file), contents });
    }
    // Used: kept another day (removeUnused).
    const now = new Date();
    utimesSync(dir, now, now);
    return outputs;
  } catch {
    // Half there (another process is keeping it) or not a kept build: built again.
    return undefined;
  }
}

/**
 * Keeps a build beside the others of its name in `folder`, under the hash of its manifest (the
 * same build of other files is another one): written whole into a folder of its own, then renamed
 * into place.
 */
function keep(folder: string, root: string, outdir: string, result: esbuild.BuildResult): void {
  const inputs = Object.keys(result.metafile?.inputs ?? {}).map((file): [string, string] => [
    file,
    hashOf(resolve(root, file)),
  ]);
  const outputs = (result.outputFiles ?? []).map((f) => ({ file: relative(outdir, f.path).split(sep).join('/'), f }));
  const manifest = JSON.stringify({ inputs, outputs: outputs.map(({ file, f }) => [file, sha256(f.contents)]) });
  mkdirSync(folder, { recursive: true });
  const draft = mkdtempSync(join(folder, 'draft-'));
  try {
    for (const { file, f } of outputs) writeFileSafely(join(draft, 'out', file), f.contents, { parents: true });
    writeFileSafely(join(draft, 'manifest.json'), manifest);
    renameSync(draft, join(folder, sha256(manifest).slice(0, 32)));
  } catch {
    // Another process kept the same build first: theirs is as good.
  } finally {
    rmSync(draft, { recursive: true, force: true });
  }
}

/** Removes the kept builds in `folder` (a name's variants) unused for UNUSED_MS, and names left with none. */
function removeUnused(folder: string): void {
  const oldest = Date.now() - UNUSED_MS;
  for (const name of readdirSync(folder)) {
    const variants = join(folder, name);
    for (const variant of readdirSync(variants)) {
      const stat = statSync(join(variants, variant), { throwIfNoEntry: false });
      if (stat && stat.mtimeMs < oldest) rmSync(join(variants, variant), { recursive: true, force: true });
    }
    if (!readdirSync(variants).length) rmSync(variants, { recursive: true, force: true });
  }
}

/**
 * The output files of `build` (which builds `options`, whose metafile it must return), reused from
 * the folder KEPT_BUILDS_ENV names when it kept the same build with the same files read, and kept
 * there when made. Without the variable, `build` runs every time.
 */
export async function keptBuild(
  options: esbuild.BuildOptions & { absWorkingDir: string; outdir: string },
  build: () => Promise<esbuild.BuildResult>,
): Promise<BuildOutput[]> {
  const folder = process.env[KEPT_BUILDS_ENV];
  if (!folder) return (await build()).outputFiles ?? [];
  const root = resolve(options.absWorkingDir);
  const key = keyOf(root, options);
  if (!key) return (await build()).outputFiles ?? [];
  const kept = join(resolve(TOOLKIT, folder), key);
  const found = (existsSync(kept) ? readdirSync(kept, { withFileTypes: true }) : []).filter(
    (e) => e.isDirectory() && !e.name.startsWith('draft-'),
  );
  for (const variant of found) {
    const outputs = reuse(join(kept, variant.name), root, options.outdir);
    if (outputs) return outputs;
  }
  const result = await build();
  keep(kept, root, options.outdir, result);
  try {
    removeUnused(dirname(kept));
  } catch {
    // Another process removes them at once: either is as good.
  }
  return result.outputFiles ?? [];
}

/**
 * The deployment zip of a build's `outputs` (paths under `outdir`), which `make` zips from them
 * and nothing else: reused from the folder KEPT_BUILDS_ENV names when it kept the zip of the same
 * files, and kept there when made (a kept build is zipped again by every use otherwise: tens of
 * milliseconds of deflate for a bundle and its maps). A kept zip is used only while its bytes
 * still have the hash its name gives. Without the variable, `make` runs every time.
 */
export async function keptZip(
  outputs: readonly BuildOutput[],
  outdir: string,
  make: () => Promise<Buffer>,
): Promise<Buffer> {
  const folder = process.env[KEPT_BUILDS_ENV];
  const code = folder ? toolkitCode() : undefined;
  if (!folder || code === undefined) return make();
  const files = outputs.map((f) => `${relative(outdir, f.path).split(sep).join('/')}:${sha256(f.contents)}`).sort();
  // What else shapes the bytes: the zip library and the zlib of this Node.
  const zipper = hashOf(join(TOOLKIT, 'node_modules', 'yazl', 'package.json'));
  const kept = join(
    resolve(TOOLKIT, folder),
    sha256([RECIPE, 'zip', process.version, zipper, code, ...files].join('\n')),
  );
  for (const name of existsSync(kept) ? readdirSync(kept) : []) {
    const file = join(kept, name);
    try {
      if (!statSync(file).isFile()) continue;
      const archive = readFileSync(file);
      if (`${sha256(archive)}.zip` !== name) continue;
      const now = new Date();
      utimesSync(file, now, now);
      return archive;
    } catch {
      // Gone meanwhile (removed as unused): made again.
    }
  }
  const archive = await make();
  try {
    writeFileSafely(join(kept, `${sha256(archive)}.zip`), archive, { parents: true });
  } catch {
    // Another process kept the same zip first, or the folder cannot be written: made next time.
  }
  return archive;
}
