// `serverless package` (osls, offline) of a scratch project, for the tests of what the plugin
// generates. One osls run costs about 3 s of CPU (most of it validating the configuration against
// the framework's schema), so each distinct successful run is kept in node_modules/.cache/klw-osls,
// named by everything its result depends on: the toolkit's sources and settings, the package
// versions (package-lock.json), Node's version, the osls binary (its resolved path and version),
// this file and test/helpers.ts, the project's files (a symlink by its target), the arguments and
// the environment osls reads (ENV_READ), but for the test runner's own (RUNNER_ONLY), which osls
// is not given. Any change there means a new osls run; a stored run gives back osls's output, the
// package folder it wrote and the bundles the plugin built in dist/. A failed run (an error, a
// killed or out-of-memory osls) is never kept, unless it is the failure the test expects, in
// osls's words.
import { createHash } from 'node:crypto';
import {
  cpSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  renameSync,
  rmSync,
  type Stats,
  writeFileSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cacheFolder } from '../../../infra/build-cache.mjs';
import { runServerless, serverlessBin } from '../../../infra/deploy/serverless.ts';
import { BUILT_FUNCTIONS_ENV } from '../../../lib/harness/discover.ts';
import { hashTree, toolkitHash } from '../../helpers.ts';

const TOOLKIT = fileURLToPath(new URL('../../../', import.meta.url));
/** Where the runs are kept. */
export const OSLS_CACHE = join(TOOLKIT, 'node_modules', '.cache', 'klw-osls');
/** Folders of a project that osls, the plugin or the loader write (their caches), never read as input. */
const OUTPUTS = new Set(['dist', '.serverless', 'node_modules', join('.klw', 'load')]);
/** The environment variables osls, the plugin and Node read: every one of these is part of a run's name. */
const ENV_READ = /^(KLW_|AWS_|SLS_|SERVERLESS_|NODE_|XDG_|HOME$|PATH$|TZ$|LANG$|LC_)/;
/**
 * What `klw test` tells its test processes, which neither osls nor the plugin reads: left out of
 * osls's environment and so of a run's name. BUILT_FUNCTIONS_ENV names the run's test build, which
 * changes with any test file: kept, it would make every run after such a change a new one.
 */
const RUNNER_ONLY = [BUILT_FUNCTIONS_ENV];
/** `env` without RUNNER_ONLY. */
export function oslsEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const out = { ...env };
  for (const name of RUNNER_ONLY) delete out[name];
  return out;
}
/** A kept run's name: the toolkit's hash, then the run's. */
const ENTRY = /^[0-9a-f]{16}-[0-9a-f]{16}$/;
/** A draft older than this was left by a run that died: no run of osls takes an hour. */
const DRAFT_AGE_MS = 60 * 60 * 1000;

/** What one osls run gave. */
type Result = { code: number; stdout: string; stderr: string };

/** The osls binary a project runs, resolved, and its package version. */
function oslsIdentity(work: string): string {
  const bin = serverlessBin(work);
  let real = bin;
  let version = 'none';
  try {
    real = realpathSync(bin);
    version = JSON.parse(readFileSync(join(dirname(dirname(real)), 'package.json'), 'utf8')).version;
  } catch {
    // Not installed: the run fails, and failures are not kept.
  }
  return `${bin}\0${real}\0${version}`;
}

/** The name of a run: the toolkit, then Node, osls, the project, arguments and environment. */
export function runName(work: string, args: string[], given: NodeJS.ProcessEnv): string {
  const env = oslsEnv(given);
  const hash = createHash('sha256').update(`${process.version}\0${oslsIdentity(work)}\0${JSON.stringify(args)}\0`);
  for (const name of Object.keys(env).sort()) if (ENV_READ.test(name)) hash.update(`${name}=${env[name]}\0`);
  hashTree(hash, work, work, OUTPUTS);
  return `${toolkit()}-${hash.digest('hex').slice(0, 16)}`;
}

/** The toolkit's sources and the versions of the tools it runs, and the code that keeps the runs. */
function toolkit(): string {
  return toolkitHash([fileURLToPath(import.meta.url), fileURLToPath(new URL('../../helpers.ts', import.meta.url))]);
}

/** What is at `path`, not following a symlink, or undefined. */
function entryAt(path: string): Stats | undefined {
  try {
    return lstatSync(path);
  } catch {
    return undefined;
  }
}

/** The cache folder, made a real folder: anything else there (a planted symlink, a file) is removed, never followed. */
function realCacheFolder(cache: string): string {
  cacheFolder(cache);
  if (!entryAt(cache)?.isDirectory()) throw new Error(`${cache}: not a folder; remove it`);
  return cache;
}

/** A kept run at `stored`, read only when it and its result are real files and folders, not symlinks. */
function storedRun(stored: string): Result | undefined {
  const stat = entryAt(stored);
  if (!stat) return undefined;
  if (!stat.isDirectory() || !entryAt(join(stored, 'result.json'))?.isFile()) {
    rmSync(stored, { recursive: true, force: true });
    return undefined;
  }
  return JSON.parse(readFileSync(join(stored, 'result.json'), 'utf8')) as Result;
}

/** Removes kept runs of other toolkit sources and drafts older than DRAFT_AGE_MS; other names are left alone. */
export function pruneRuns(cache: string, current: string, now: number): void {
  for (const name of readdirSync(cache)) {
    const path = join(cache, name);
    if (ENTRY.test(name) && !name.startsWith(`${current}-`)) rmSync(path, { recursive: true, force: true });
    else if (name.startsWith('.draft-') && now - (entryAt(path)?.mtimeMs ?? now) > DRAFT_AGE_MS)
      rmSync(path, { recursive: true, force: true });
  }
}

/** Copies `from` to `to` when it exists, replacing what `to` held. */
function copyIfThere(from: string, to: string): void {
  rmSync(to, { recursive: true, force: true });
  if (existsSync(from)) cpSync(from, to, { recursive: true });
}

/** How serverlessPackage runs: for its own tests, the runner, the cache folder and the clock. */
export interface PackageOptions {
  /** Run osls even when a kept run exists (and keep the new one): at least one successful run is real. */
  fresh?: boolean;
  /** Runs osls; runServerless. */
  run?: (work: string, args: string[], env: NodeJS.ProcessEnv) => Promise<Result>;
  /** The cache folder; OSLS_CACHE. */
  cache?: string;
  /** The clock for the age of drafts; Date.now. */
  now?: () => number;
  /**
   * The failure the caller expects, in osls's words: a failed run whose output matches it is kept
   * as a successful one is (a killed or out-of-memory osls says something else, and is not).
   */
  failure?: RegExp;
}

/**
 * Runs `serverless package <args> --package <packageDir>` in `work` with `given` but RUNNER_ONLY,
 * or gives back the stored successful run of the same inputs: osls's output, `packageDir` and `work/dist` as it left
 * them. Only a run that exits 0, or fails as `failure` says, is kept; runs of other toolkit sources
 * are removed when one is.
 */
export async function serverlessPackage(
  work: string,
  args: string[],
  packageDir: string,
  given: NodeJS.ProcessEnv,
  { fresh = false, run = runServerless, cache = OSLS_CACHE, now = Date.now, failure }: PackageOptions = {},
): Promise<Result> {
  const env = oslsEnv(given);
  const name = runName(work, args, env);
  const stored = join(cache, name);
  const kept = fresh || !entryAt(cache)?.isDirectory() ? undefined : storedRun(stored);
  if (kept) {
    copyIfThere(join(stored, 'package'), packageDir);
    copyIfThere(join(stored, 'dist'), join(work, 'dist'));
    return kept;
  }
  const result = await run(work, ['package', ...args, '--package', packageDir], env);
  if (result.code !== 0 && !failure?.test(result.stdout + result.stderr)) return result;
  const draft = mkdtempSync(join(realCacheFolder(cache), '.draft-'));
  copyIfThere(packageDir, join(draft, 'package'));
  copyIfThere(join(work, 'dist'), join(draft, 'dist'));
  writeFileSync(join(draft, 'result.json'), JSON.stringify(result));
  if (entryAt(stored)) rmSync(stored, { recursive: true, force: true });
  try {
    renameSync(draft, stored);
  } catch {
    // A test file running at once stored the same run first.
    rmSync(draft, { recursive: true, force: true });
  }
  pruneRuns(cache, toolkit(), now());
  return result;
}

/** The path secret the scratch projects keep locally, as klw does: no template may hold its value. */
export const PATH_SECRET = 'fixture-secret-value-never-in-a-template-0123456789';

/**
 * A scratch project inside the repository (so `kube-lambda-webhooks` resolves to this package)
 * holding the fixture's functions and the local path secret, and the environment osls runs in
 * there: no AWS credentials, the secret in KLW_PATH_SECRET. Projects made alike share their runs.
 */
export function packagingProject(prefix: string, functions: string): { work: string; env: NodeJS.ProcessEnv } {
  const work = mkdtempSync(join(TOOLKIT, prefix));
  cpSync(functions, join(work, 'functions'), { recursive: true });
  mkdirSync(join(work, '.klw', 'local'), { recursive: true });
  writeFileSync(join(work, '.klw', 'local', 'path-secret'), `${PATH_SECRET}\n`);
  return {
    work,
    env: { ...process.env, AWS_ACCESS_KEY_ID: '', AWS_SECRET_ACCESS_KEY: '', KLW_PATH_SECRET: PATH_SECRET },
  };
}

/** Every param the plugin takes that adds resources or settings, as the tests of the template give them. */
export const EVERY_PARAM = [
  '--param',
  'functionUrls=true',
  '--param',
  'provisionedConcurrency=2',
  '--param',
  'reservedConcurrency=5',
  '--param',
  'alarmTopicArn=arn:aws:sns:us-east-1:123456789012:oncall',
  '--param',
  'bearerTokenParameter=/team/token',
];
