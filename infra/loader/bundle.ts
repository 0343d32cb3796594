// In a checkout of the repository the loader's child would run the toolkit's TypeScript through
// tsx, which costs a second or more of CPU per child. Instead klw builds the child once into
// JavaScript (esbuild) in a folder named by the build's content, and forks the child on that.
// Function modules are unchanged: klw transpiles each one as before (functions.ts).
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';
import { writeFileSafely } from '../files.ts';

/** The toolkit's root: the repository in a checkout. */
const TOOLKIT = fileURLToPath(new URL('../../', import.meta.url));
/** Where builds are kept: inside the toolkit, so the packages they import resolve from node_modules. */
export const BUNDLE_CACHE = join(TOOLKIT, 'node_modules', '.cache', 'klw-loader');

/** A built loader: its folder and the files it was built from, with the state they had. */
interface Built {
  dir: string;
  inputs: string[];
  signature: string;
}
let last: Built | undefined;

/** The state of the files a build read: any change to one (or one gone) changes it. */
function signatureOf(inputs: string[]): string {
  const hash = createHash('sha256');
  for (const file of inputs) {
    const stat = statSync(file, { throwIfNoEntry: false });
    hash.update(`${file}\0${stat ? `${stat.size}:${stat.mtimeMs}` : '-'}\0`);
  }
  return hash.digest('hex');
}

/** How long an older build is kept beside a new one: a run that started on it may still fork it. */
const OLD_BUILD_MS = 60 * 60 * 1000;

/** Removes the builds other than `current` last changed more than OLD_BUILD_MS ago. */
function removeOldBuilds(current: string): void {
  for (const name of readdirSync(BUNDLE_CACHE)) {
    const path = join(BUNDLE_CACHE, name);
    const stat = statSync(path, { throwIfNoEntry: false });
    if (path !== current && stat && Date.now() - stat.mtimeMs > OLD_BUILD_MS)
      rmSync(path, { recursive: true, force: true });
  }
}

/** Builds the loader into its content-named folder (made by one process, renamed into place). */
async function build(): Promise<Built> {
  const out = await esbuild.build({
    absWorkingDir: TOOLKIT,
    entryPoints: { child: 'infra/loader/child.ts' },
    bundle: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    packages: 'external',
    sourcemap: 'linked',
    outdir: join(BUNDLE_CACHE, 'out'),
    outExtension: { '.js': '.mjs' },
    metafile: true,
    write: false,
    logLevel: 'silent',
  });
  const hash = createHash('sha256');
  for (const f of out.outputFiles) hash.update(`${relative(BUNDLE_CACHE, f.path)}\0`).update(f.contents);
  const dir = join(BUNDLE_CACHE, hash.digest('hex').slice(0, 16));
  if (!existsSync(join(dir, 'child.mjs'))) {
    mkdirSync(BUNDLE_CACHE, { recursive: true });
    const draft = mkdtempSync(join(BUNDLE_CACHE, 'draft-'));
    for (const f of out.outputFiles)
      writeFileSafely(join(draft, relative(join(BUNDLE_CACHE, 'out'), f.path)), f.contents, { parents: true });
    try {
      renameSync(draft, dir);
    } catch {
      rmSync(draft, { recursive: true, force: true }); // another process put the same build there first
    }
    removeOldBuilds(dir);
  }
  const inputs = Object.keys(out.metafile.inputs).map((i) => join(TOOLKIT, i));
  return { dir, inputs, signature: signatureOf(inputs) };
}

/**
 * The folder of the loader built from the toolkit's sources, rebuilt when one of them changed;
 * undefined when klw runs from the compiled package (nothing to build) or the build fails (the
 * child then runs the sources through tsx, which reports the error).
 */
export async function loaderBundle(): Promise<string | undefined> {
  if (!existsSync(join(dirname(fileURLToPath(import.meta.url)), 'child.ts'))) return undefined;
  if (last && existsSync(join(last.dir, 'child.mjs')) && signatureOf(last.inputs) === last.signature) return last.dir;
  try {
    last = await build();
    return last.dir;
  } catch {
    return undefined;
  }
}
