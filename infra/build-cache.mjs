// The toolkit built once into JavaScript, for a checkout of the repository: klw (infra/bin/klw.mjs)
// and the loader's child (loader/bundle.ts) run the build instead of the TypeScript sources through
// tsx, which costs a second or more of CPU per process. esbuild bundles the entry points into a
// folder named by the build's content; a manifest beside it lists the files the build read, with
// their size and modification time, so a later run checks those (a stat each) and the build's own
// files (a hash, or a stat each once a check has recorded them verified: VERIFIED) instead of
// building again. Any change, a link planted where a file of the cache should be, or a file that
// does not match its hash, means a new build. Concurrent first runs each build into a folder of
// their own and rename it into place: the first one wins, the others use it.
// Plain JavaScript: klw runs it before anything can load TypeScript.
import { createHash, randomBytes } from 'node:crypto';
import {
  closeSync,
  constants,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundled, REQUIRED_ESBUILD } from './build-cache-esbuild.mjs';

/** The toolkit's root: the repository in a checkout. */
export const TOOLKIT = fileURLToPath(new URL('../', import.meta.url));

/**
 * Where the toolkit's builds are kept: inside the toolkit, so the packages they import (left out
 * of the builds) resolve from its node_modules as they do for the sources.
 */
export const TOOLKIT_CACHE = join(TOOLKIT, 'node_modules', '.cache', 'klw');

/** The toolkit's entry points: klw's command line and the Serverless plugin. */
export const TOOLKIT_ENTRIES = { cli: 'infra/cli.ts', plugin: 'infra/deploy/serverless-plugin.ts' };

/**
 * The loader's child process, built on its own: a child starts for every command that loads
 * functions, and alone it loads less than from chunks shared with the command line.
 */
export const LOADER_CACHE = join(TOOLKIT, 'node_modules', '.cache', 'klw-loader');

/** The loader child's entry point. */
export const LOADER_ENTRIES = { child: 'infra/loader/child.ts' };

/** Changes whenever this file builds differently, so that builds made by an older recipe are not reused. */
const RECIPE = 'klw-build-3';

/** The manifest of the build in use, in the cache folder. */
const MANIFEST = 'current.json';

/**
 * How long an older build is kept beside a new one: a process that started on it (a local server
 * left running) may still import a part of it; a day covers a working day's servers.
 */
const OLD_BUILD_MS = 24 * 60 * 60 * 1000;

/** What is at `path` itself (a link is not followed), or undefined when nothing is. */
function entryAt(path) {
  return lstatSync(path, { throwIfNoEntry: false });
}

/** The files besides the sources whose change changes the build: the compiler and the TypeScript settings. */
function extraInputs(root) {
  return [
    join(root, 'tsconfig.json'),
    join(TOOLKIT, 'node_modules', 'esbuild', 'package.json'),
    fileURLToPath(import.meta.url),
    fileURLToPath(new URL('./build-cache-esbuild.mjs', import.meta.url)),
  ];
}

/** Each file's state as the manifest keeps it: size and modification time, or '-' when missing. */
function stateOf(file) {
  const stat = statSync(file, { throwIfNoEntry: false });
  return stat ? `${stat.size}:${stat.mtimeMs}` : '-';
}

/**
 * How close to a build's start a source's modification time must be for its size and time not
 * to be trusted alone: a file system keeps times in ticks (a few milliseconds on Linux, two
 * seconds on FAT), so a second edit of the same size within one tick leaves both unchanged. Such
 * a source's content is compared with the content built.
 */
const RACY_MS = 2000;

/** The sha256 of `data`, in hex. */
export function sha256(data) {
  return createHash('sha256').update(data).digest('hex');
}

/** The sha256 of the file's content, or '-' when it cannot be read. */
export function hashOf(file) {
  try {
    return sha256(readFileSync(file));
  } catch {
    return '-';
  }
}

/**
 * `path` (relative, as the manifest keeps it) under `root`: joined as it is when it is a plain
 * path down from root (most are: a check reads hundreds), else resolved.
 */
function under(root, path) {
  const plain =
    !root.endsWith(sep) &&
    /^(?:[^./\\]|\.[^./\\])/.test(path) &&
    !/(?:^|[/\\])\.{1,2}(?:[/\\]|$)|[/\\]{2}|[/\\]$|\\/.test(path);
  return plain ? `${root}${sep}${path}` : resolve(root, path);
}

/**
 * True when the manifest's record of an input (path, state, content hash) still describes the
 * file: same size and time and, when that time is within RACY_MS of the build's start or later,
 * the same content.
 */
function unchanged(root, input, started) {
  if (!Array.isArray(input) || input.length !== 3) return false;
  const [path, state, hash] = input;
  const file = under(root, String(path));
  if (stateOf(file) !== state) return false;
  const mtime = Number(String(state).split(':')[1]);
  return !(mtime >= started - RACY_MS) || hashOf(file) === hash;
}

/** The hash naming a build: of its files' names and contents. */
function contentHash(files) {
  const hash = createHash('sha256');
  for (const [name, contents] of files) hash.update(`${name}\0`).update(contents).update('\0');
  return hash.digest('hex').slice(0, 16);
}

/** A build file's record: its name, its size, and the hash of its content when it is code (source maps are only sized). */
function recordOf(name, contents) {
  const hash = name.endsWith('.map') ? '' : createHash('sha256').update(contents).digest('hex');
  return [name, contents.length, hash];
}

/**
 * The builds this process found intact, with what their files were then (`seen`: fileState of
 * each) and whether that is in the verified record (VERIFIED): while those are unchanged the
 * files are not hashed again, so a process that asks many times (each function load of a test)
 * pays for the hashes once.
 */
const verified = new Map();

/**
 * The record, in the build's folder, of the build files an earlier check hashed and found intact:
 * their states (inode, size, modification and change time) then. A later process finding the
 * very same states trusts the files without hashing them (klw starts many times a minute; the
 * hashes are most of its check). It trusts the kernel's change time: every write, truncation,
 * rename over a file or change of its times sets it to the current time, and no call a user can
 * make sets it back; so a file changed since, its size and modification time kept or not, has
 * another state and is hashed again. A record is written only when every file's change time is
 * RACY_MS older than the check, so that no change within the same tick of the clock can follow it
 * unseen. (On a file system without change times of its own, such as FAT, that trust is weaker:
 * there the build's own files, written by this module alone, are what it covers.)
 */
const VERIFIED = '.verified.json';

/** A build file's state as the verified record keeps it: while it holds, the file is the one hashed. */
export function fileState(name, stat) {
  return `${name}:${stat.ino}:${stat.size}:${stat.mtimeMs}:${stat.ctimeMs}`;
}

/** True when the build's verified record holds exactly `seen` (its files and their states). */
function recordedIntact(dir, seen) {
  const file = join(dir, VERIFIED);
  try {
    if (!entryAt(file)?.isFile()) return false;
    return readFileSync(file, 'utf8') === seen;
  } catch {
    return false;
  }
}

/**
 * Writes the verified record (see VERIFIED); false when the cache cannot take it (the next
 * process then hashes the files).
 */
function recordIntact(dir, seen) {
  const file = join(dir, VERIFIED);
  try {
    if (entryAt(file) && !entryAt(file).isFile()) rmSync(file, { recursive: true, force: true });
    writeAtomically(file, Buffer.from(seen));
    return true;
  } catch {
    return false;
  }
}

/**
 * True when `dir` is a real folder (no link) holding each recorded file as a regular file (no
 * link) of its size and, for code, its content's hash: a build cut short or changed since is not
 * trusted. The hashes are skipped when this process (`verified`) or an earlier one (VERIFIED)
 * found the files, in the very same states, intact. `now` is the clock the files' age is judged by.
 */
function intact(dir, records, now = Date.now) {
  if (!Array.isArray(records) || !entryAt(dir)?.isDirectory()) return false;
  const checked = now();
  const stats = [];
  let newest = 0;
  for (const record of records) {
    if (!Array.isArray(record) || record.length !== 3) return false;
    const [name, size] = record;
    if (typeof name !== 'string' || name.split('/').includes('..')) return false;
    const stat = entryAt(join(dir, name));
    if (!stat?.isFile() || stat.size !== size) return false;
    stats.push(fileState(name, stat));
    newest = Math.max(newest, stat.ctimeMs, stat.mtimeMs);
  }
  const seen = `${dir}\0${JSON.stringify(records)}\0${stats.join('\0')}`;
  const old = newest < checked - RACY_MS;
  const known = verified.get(dir);
  if (known?.seen === seen) {
    // Found intact by this process before the files were old enough to record: recorded now.
    if (!known.recorded && old) known.recorded = recordIntact(dir, seen);
    return true;
  }
  if (recordedIntact(dir, seen)) {
    verified.set(dir, { seen, recorded: true });
    return true;
  }
  for (const [name, , hash] of records) {
    if (
      hash &&
      createHash('sha256')
        .update(readFileSync(join(dir, name)))
        .digest('hex') !== hash
    )
      return false;
  }
  verified.set(dir, { seen, recorded: old && recordIntact(dir, seen) });
  return true;
}

/** The manifest's build when it is intact and none of its inputs changed; else undefined. */
function current(spec) {
  const file = join(spec.cacheDir, MANIFEST);
  try {
    if (!entryAt(spec.cacheDir)?.isDirectory() || !entryAt(file)?.isFile()) return undefined;
    const manifest = JSON.parse(readFileSync(file, 'utf8'));
    if (manifest?.recipe !== recipeOf(spec) || typeof manifest.dir !== 'string' || !/^[0-9a-f]{16}$/.test(manifest.dir))
      return undefined;
    if (!Array.isArray(manifest.inputs) || !Array.isArray(manifest.files)) return undefined;
    if (typeof manifest.started !== 'number') return undefined;
    for (const input of manifest.inputs) if (!unchanged(spec.root, input, manifest.started)) return undefined;
    const dir = join(spec.cacheDir, manifest.dir);
    return intact(dir, manifest.files, spec.now) ? dir : undefined;
  } catch {
    return undefined; // unreadable or not JSON: built again
  }
}

/**
 * What, besides the inputs, a build depends on: the recipe, the entry points (in any order: a
 * caller listing them slowest first, say, gets the same build), where it is.
 */
function recipeOf(spec) {
  const entries = Array.isArray(spec.entryPoints)
    ? [...spec.entryPoints].map(String).sort()
    : Object.entries(spec.entryPoints).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `${RECIPE}\0${spec.root}\0${JSON.stringify(entries)}\0${spec.sourceUrls}`;
}

/** Writes `data` to `file` atomically: a new file beside it (never through a link), renamed over it. */
function writeAtomically(file, data) {
  const temp = `${file}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
  const fd = openSync(temp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o644);
  try {
    for (let at = 0; at < data.length; ) at += writeSync(fd, data, at, data.length - at);
  } finally {
    closeSync(fd);
  }
  renameSync(temp, file);
}

/** Removes the cache's entries other than `keep` last changed more than OLD_BUILD_MS ago. */
function removeOld(cacheDir, keep) {
  for (const name of readdirSync(cacheDir)) {
    const path = join(cacheDir, name);
    const stat = entryAt(path);
    if (name !== MANIFEST && path !== keep && stat && Date.now() - stat.mtimeMs > OLD_BUILD_MS)
      rmSync(path, { recursive: true, force: true });
  }
}

/** The cache folder, made when missing; anything else there (a link, a file) is removed first, never followed. */
export function cacheFolder(cacheDir) {
  const stat = entryAt(cacheDir);
  if (stat && !stat.isDirectory()) rmSync(cacheDir, { force: true });
  mkdirSync(cacheDir, { recursive: true });
  return cacheDir;
}

/** Builds the entry points, puts the build in its content-named folder and writes the manifest. */
async function build(spec) {
  const started = Date.now();
  // Required, not imported: an import of this CommonJS package has Node scan its source for the
  // names it exports first, which costs more than loading it.
  const esbuild = createRequire(import.meta.url)('esbuild');
  const outdir = join(spec.cacheDir, 'out');
  const { out, read, packages } = await bundled(esbuild, spec, outdir);
  spec.afterBuild?.();
  const files = out.outputFiles.map((f) => [relative(outdir, f.path).split(sep).join('/'), f.contents]);
  files.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const name = contentHash(files);
  const dir = join(cacheFolder(spec.cacheDir), name);
  const records = files.map(([file, contents]) => recordOf(file, contents));
  if (!intact(dir, records, spec.now)) {
    const draft = mkdtempSync(join(spec.cacheDir, 'draft-'));
    for (const [file, contents] of files) {
      mkdirSync(dirname(join(draft, file)), { recursive: true });
      writeAtomically(join(draft, file), contents);
    }
    try {
      renameSync(draft, dir);
    } catch {
      // Another process put the same build there first, or something unusable is there.
      if (!intact(dir, records, spec.now)) {
        rmSync(dir, { recursive: true, force: true });
        renameSync(draft, dir);
      }
      rmSync(draft, { recursive: true, force: true });
    }
  }
  // The stand-in for esbuild is made from its package: its package.json is the input.
  const sources = Object.keys(out.metafile.inputs).filter((i) => !i.startsWith(`${REQUIRED_ESBUILD}:`));
  const inputs = [...new Set([...sources.map((i) => resolve(spec.root, i)), ...packages, ...extraInputs(spec.root)])];
  const manifest = {
    recipe: recipeOf(spec),
    dir: name,
    files: records,
    started,
    // A source changed since it was read for this build is recorded as changed: built again next time.
    inputs: inputs.map((file) => {
      const hash = hashOf(file);
      const state = read.has(file) && read.get(file) !== hash ? 'changed' : stateOf(file);
      return [relative(spec.root, file), state, hash];
    }),
  };
  const manifestFile = join(spec.cacheDir, MANIFEST);
  if (entryAt(manifestFile) && !entryAt(manifestFile).isFile()) rmSync(manifestFile, { recursive: true, force: true });
  writeAtomically(manifestFile, Buffer.from(JSON.stringify(manifest)));
  removeOld(spec.cacheDir, dir);
  return dir;
}

/**
 * The folder of the build of `entryPoints` (name to source file, relative to `root`), built when
 * the cache has none or its sources changed since; `built` says whether this call built it.
 * Defaults: the toolkit's own entry points, root and cache folder. `sourceUrls: false` leaves
 * `import.meta.url` the built file's own (a project's functions, as their bundles have it);
 * `afterBuild`, for tests, runs once esbuild has read the sources, before the build is recorded;
 * `now`, for tests, is the clock the verified record (VERIFIED) judges the files' age by.
 */
export async function cachedBuild(options = {}) {
  const spec = {
    root: resolve(options.root ?? TOOLKIT),
    cacheDir: resolve(options.cacheDir ?? TOOLKIT_CACHE),
    entryPoints: options.entryPoints ?? TOOLKIT_ENTRIES,
    sourceUrls: options.sourceUrls ?? true,
    afterBuild: options.afterBuild,
    now: options.now ?? Date.now,
  };
  const dir = current(spec);
  if (dir) return { dir, built: false };
  return { dir: await build(spec), built: true };
}
