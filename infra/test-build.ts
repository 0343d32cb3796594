// `klw test` runs TypeScript test files from one esbuild build of them all (infra/build-cache.mjs)
// rather than through tsx: tsx costs every test process half a second of CPU to start and slows
// each module it loads. The build keeps what a user sees: each module's `import.meta.url` (and
// dirname, filename) is its source file's, source maps name the .ts lines in stack traces and test
// locations, and the reporter (infra/test-names.mjs) shows the source paths in place of the built
// ones. A file that loads TypeScript at run time still runs through tsx (NEEDS_TSX), unless it says
// that what it loads is JavaScript (NO_TSX_MARKER). The project's functions, which
// describeConformance imports at run time, are built with the files that call it: the test
// processes find their builds through BUILT_FUNCTIONS_ENV.
import { createHash } from 'node:crypto';
import { existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, utimesSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { pathToFileURL } from 'node:url';
import { cacheFolder, cachedBuild } from './build-cache.mjs';
import { findFunctions } from '../lib/harness/discover.ts';
import { writeFileSafely } from './files.ts';

/** The test files the build takes: TypeScript ones (JavaScript ones run as they are). */
const BUILT = /\.test\.m?ts$/;

/**
 * What makes a test file load TypeScript at run time, which a build cannot give it, so that it
 * runs through tsx: `import()` of anything but a string literal (a template literal starting
 * with ./ or ../ is bundled as a pattern; `import(${` is code written into a template literal,
 * for another process), `require` or `createRequire` (tsx resolves those as
 * the TypeScript settings map names), `__dirname`/`__filename` (CommonJS) or `import.meta.resolve`.
 * (describeConformance imports the project's functions from their build: CONFORMANCE.)
 */
export const NEEDS_TSX =
  /\bimport\(\s*(?!['"][^'"\n]*['"]\s*[,)]|`\.{1,2}\/|\$\{)|\b(?:require|createRequire)(?:\.resolve)?\s*\(|\b__(?:dirname|filename)\b|\bimport\.meta\.resolve\b/;

/** A test file that imports the project's functions at run time: the build takes them too. */
const CONFORMANCE = /\bdescribeConformance\s*\(/;

/**
 * True when a test file calls describeConformance, which registers its suites once the functions
 * are loaded: after the file's import, too late for a suite of a group (infra/test-group.mjs), so
 * such a file keeps a process of its own.
 */
export function importsFunctions(text: string): boolean {
  return CONFORMANCE.test(text);
}

/**
 * The line a test file carries to run from the build although NEEDS_TSX matches its text: what it
 * loads at run time is JavaScript (a bundle it built, say) and what it resolves is a path.
 */
export const NO_TSX_MARKER = '// klw-test: no-tsx';

/** A test file's `// klw-test: <name>` line (NO_TSX_MARKER, test-groups' OWN_PROCESS_MARKER). */
export function markerLine(name: string): RegExp {
  return new RegExp(`^\\s*//\\s*klw-test:\\s*${name}(?=\\s|$)`, 'm');
}

const NO_TSX_LINE = markerLine('no-tsx');

/** True when a test file's text needs tsx: NEEDS_TSX matches it and it does not carry NO_TSX_MARKER. */
export function needsTsx(text: string): boolean {
  return NEEDS_TSX.test(text) && !NO_TSX_LINE.test(text);
}

/** Where the builds of a project's tests are kept: in its node_modules, so packages resolve from there. */
export function testCacheRoot(root: string): string {
  return join(resolve(root), 'node_modules', '.cache', 'klw-test');
}

/**
 * How long a build of another set of test files is kept unused: `klw test <file>` while working
 * on a file keeps its own build beside the whole suite's, and a day covers a working day's sets.
 */
const UNUSED_BUILD_MS = 24 * 60 * 60 * 1000;

/** How each test file runs: `run` is what node --test is given, `source` the file a user knows. */
export interface PreparedTests {
  /** Per file (as given, relative to root): the path node --test runs. */
  run: Record<string, string>;
  /** Absolute path run → absolute source path, for the reporter and the timer. */
  names: Record<string, string>;
  /** True when a file runs through tsx. */
  tsx: boolean;
  /** The files (as given) that run from the build. */
  built: string[];
  /** Each function's entry (absolute) → its build, when a built file imports the functions (BUILT_FUNCTIONS_ENV). */
  functions: Record<string, string>;
}

/** Every test file name under the top folders of `files`: a test file added there changes the build's key. */
function testFilesAround(root: string, files: string[]): string[] {
  const tops = new Set(files.map((f) => f.split(/[\\/]/)[0]!).filter((d) => d && d !== '..'));
  const found: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (entry.name.startsWith('.') || entry.name === 'node_modules') continue;
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (BUILT.test(entry.name)) found.push(relative(root, path));
    }
  };
  for (const top of tops) {
    const abs = join(root, top);
    if (statSync(abs, { throwIfNoEntry: false })?.isDirectory()) walk(abs);
  }
  return found.sort();
}

/**
 * The cache folder of this set of test files: one per set, so that running one file while
 * working on it does not throw away the whole suite's build. Its name hashes the files to build
 * and the test files beside them (a test file pattern-imported, as test groups do, is then
 * never missing from the build).
 */
function cacheFor(root: string, built: string[]): string {
  const cacheRoot = cacheFolder(testCacheRoot(root));
  const key = createHash('sha256')
    .update(JSON.stringify([resolve(root), [...built].sort(), testFilesAround(root, built)]))
    .digest('hex')
    .slice(0, 16);
  return join(cacheRoot, key);
}

/** Removes the builds of other sets of test files left unused for UNUSED_BUILD_MS; marks `keep` used. */
function tidy(cacheRoot: string, keep: string): void {
  const now = new Date();
  utimesSync(keep, now, now);
  for (const name of readdirSync(cacheRoot)) {
    const path = join(cacheRoot, name);
    const stat = lstatSync(path, { throwIfNoEntry: false });
    if (stat && path !== keep && now.getTime() - stat.mtimeMs > UNUSED_BUILD_MS)
      rmSync(path, { recursive: true, force: true });
  }
}

/** The module a test file that needs tsx runs as: it runs the source through tsx in a process of its own. */
function tsxStarter(source: string): string {
  const runner = new URL('./test-tsx.mjs', import.meta.url).href;
  return `import { runThroughTsx } from ${JSON.stringify(runner)};\nawait runThroughTsx(${JSON.stringify(source)});\n`;
}

/**
 * Builds the TypeScript test files among `files` (relative to root) that can be built, and writes
 * under `scratch` a starter for each one that needs tsx. JavaScript test files run as they are.
 * Throws when the build fails (a syntax error, say): the caller runs the files through tsx, which
 * shows the error in its file.
 */
export async function prepareTests(root: string, files: string[], scratch: string): Promise<PreparedTests> {
  const abs = (file: string) => resolve(root, file);
  const typescript = files.filter((f) => BUILT.test(f));
  const texts = new Map(typescript.map((f) => [f, readFileSync(abs(f), 'utf8')]));
  const viaTsx = typescript.filter((f) => needsTsx(texts.get(f)!));
  const built = typescript.filter((f) => !viaTsx.includes(f));
  const prepared: PreparedTests = { run: {}, names: {}, tsx: viaTsx.length > 0, built, functions: {} };
  for (const file of files) prepared.run[file] = file;
  if (built.length) {
    const cacheDir = cacheFor(root, built);
    // Entry names keep each file's path below root, so the build mirrors the sources.
    const entryName = (source: string) =>
      relative(root, source)
        .split(sep)
        .join('/')
        .replace(/\.m?[jt]s$/, '');
    const entryPoints = Object.fromEntries(built.map((f) => [entryName(abs(f)), abs(f)]));
    // The functions, found as describeConformance finds them (its warnings are the test's to give).
    const functions = built.some((f) => CONFORMANCE.test(texts.get(f)!))
      ? findFunctions(root, () => {}).map((f) => f.entry)
      : [];
    const functionEntries = Object.fromEntries(functions.map((entry) => [entryName(entry), entry]));
    const { dir } = await cachedBuild({
      root,
      cacheDir,
      entryPoints: { ...functionEntries, ...entryPoints },
      sourceUrls: true,
    });
    tidy(testCacheRoot(root), cacheDir);
    const output = (name: string, source: string) => {
      const out = join(dir, `${name}.mjs`);
      if (!existsSync(out)) throw new Error(`the build of ${source} has no ${out}`);
      return out;
    };
    for (const [name, source] of Object.entries(entryPoints)) {
      const out = output(name, source);
      const file = built.find((f) => abs(f) === source)!;
      prepared.run[file] = out;
      prepared.names[out] = source;
    }
    for (const [name, entry] of Object.entries(functionEntries)) prepared.functions[entry] = output(name, entry);
  }
  for (const file of viaTsx) {
    const starter = join(scratch, 'tsx', `${relative(root, abs(file)).split(sep).join('/')}.mjs`);
    mkdirSync(dirname(starter), { recursive: true });
    writeFileSafely(starter, tsxStarter(abs(file)));
    prepared.run[file] = starter;
    prepared.names[starter] = abs(file);
  }
  return prepared;
}

/** The reporter showing `reporter` with the source paths in place of the run ones (infra/test-names.mjs). */
export function namingReporter(reporter: string, namesFile: string): string {
  const url = new URL('./test-names.mjs', import.meta.url);
  url.searchParams.set('reporter', reporter);
  url.searchParams.set('names', pathToFileURL(namesFile).href);
  return url.href;
}
