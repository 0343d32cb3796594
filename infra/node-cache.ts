/**
 * The cache of Node binaries `--node` runs: what makes an entry trusted (klw installed it, no one
 * else can write it, its binary is the one recorded at install), the install lock with its
 * owner's identity, and the download folders a killed install leaves behind.
 */
import { createHash } from 'node:crypto';
import {
  createReadStream,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  chmodSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import { KlwError } from './errors.ts';
import { makeDir } from './files.ts';

/** Marks a cache entry as complete, and records its binary's digest: written last, after the binary ran. */
export const COMPLETE = '.klw-complete';

/** What klw records about an entry it installed. */
export interface EntryRecord {
  /** What the binary says it is, `v24.11.1`. */
  version: string;
  /** sha512 (hex) of `bin/node` as installed. */
  sha512: string;
  /** The npm package's integrity (`sha512-…`), as npm checked it at download. */
  integrity?: string;
}

/** The sha512 (hex) of a file, read as a stream. */
export function fileDigest(file: string): Promise<string> {
  return new Promise((resolvePromise, reject) => {
    const hash = createHash('sha512');
    createReadStream(file)
      .on('data', (c) => hash.update(c))
      .on('error', reject)
      .on('end', () => resolvePromise(hash.digest('hex')));
  });
}

/** The record of an entry, or undefined when it has none klw can use (a cut-off install, an older klw's). */
export function readRecord(entry: string): EntryRecord | undefined {
  try {
    const record = JSON.parse(readFileSync(join(entry, COMPLETE), 'utf8')) as Partial<EntryRecord>;
    return typeof record.version === 'string' && typeof record.sha512 === 'string'
      ? (record as EntryRecord)
      : undefined;
  } catch {
    return undefined;
  }
}

/** Writes an entry's record (the last step of an install). */
export function writeRecord(entry: string, record: EntryRecord): void {
  writeFileSync(join(entry, COMPLETE), `${JSON.stringify(record)}\n`, { mode: 0o644 });
}

/** Why klw must not trust a path of the cache, or undefined: a link, another owner, writable by others. */
export function distrust(path: string, uid: number | undefined = process.getuid?.()): string | undefined {
  const stat = lstatSync(path, { throwIfNoEntry: false });
  if (!stat) return undefined;
  if (stat.isSymbolicLink()) return 'is a symbolic link';
  if (uid !== undefined && stat.uid !== uid) return `is owned by uid ${stat.uid}, not by this user (uid ${uid})`;
  if (stat.mode & 0o022)
    return `is writable by ${stat.mode & 0o020 ? 'its group' : 'others'} (mode ${(stat.mode & 0o777).toString(8)})`;
  return undefined;
}

/** Refuses a cache entry that is a link, not this user's or writable by others, naming the path and the fix. */
export function checkTrusted(entry: string): void {
  for (const path of [entry, join(entry, 'bin'), join(entry, 'bin', 'node'), join(entry, COMPLETE)]) {
    const problem = distrust(path);
    if (problem)
      throw new KlwError(
        `--node: refusing the cached Node in ${entry}: ${path} ${problem}; klw runs only a binary it installed ` +
          `itself, that only you can change: remove ${entry} and run again to install it afresh`,
      );
  }
}

/** The folder holding the cache's entries, made or checked: never a link, nor another user's. */
export function ensureCacheDir(dir: string): void {
  makeDir(dir, { mode: 0o755 });
  const problem = distrust(dir);
  if (problem?.startsWith('is writable')) chmodSync(dir, lstatSync(dir).mode & 0o755);
  else if (problem)
    throw new KlwError(`--node: refusing the Node cache ${dir}: it ${problem}; remove it or set KLW_CACHE_DIR`);
}

/** Takes write access from group and others throughout an unpacked package (tar keeps the archive's modes). */
export function closeModes(path: string): void {
  const stat = lstatSync(path);
  if (stat.isSymbolicLink()) return;
  if (stat.mode & 0o022) chmodSync(path, stat.mode & 0o7755);
  if (stat.isDirectory()) for (const name of readdirSync(path)) closeModes(join(path, name));
}

/** When a process started (clock ticks since boot, from /proc), or undefined where that is unknown. */
export function processStart(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
  } catch {
    return undefined;
  }
}

/** Who holds a lock or a download folder: a pid and, where known, when that process started. */
export interface Owner {
  pid: number;
  start?: string;
}

/** This process as an owner. */
export function self(): Owner {
  const start = processStart(process.pid);
  return { pid: process.pid, ...(start ? { start } : {}) };
}

/**
 * True when `owner` still runs: its pid is alive and, where its start time was recorded, the
 * process with that pid started then (a pid reused by an unrelated process is not the owner).
 */
export function ownerAlive(owner: Owner): boolean {
  try {
    process.kill(owner.pid, 0);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  if (owner.start === undefined) return true;
  const start = processStart(owner.pid);
  return start === undefined || start === owner.start;
}

/** Download folders are `.download-<pid>-<start>-<random>`: their owner is in the name. */
export function downloadPrefix(owner: Owner = self()): string {
  return `.download-${owner.pid}-${owner.start ?? 'x'}-`;
}

/** How old a download folder without an owner in its name must be to be removed: longer than any install. */
const ORPHAN_AGE_MS = 60 * 60_000;

/**
 * Removes the download folders of installs that ended without cleaning up (killed mid-download,
 * up to 220 MB each): those whose owner no longer runs, and nameless ones older than an hour.
 */
export function removeStaleDownloads(dir: string, now: number = Date.now()): string[] {
  const removed: string[] = [];
  for (const name of readdirSync(dir)) {
    if (!name.startsWith('.download-')) continue;
    const m = /^\.download-(\d+)-(\d+|x)-/.exec(name);
    const path = join(dir, name);
    const stale = m
      ? !ownerAlive({ pid: Number(m[1]), ...(m[2] !== 'x' ? { start: m[2]! } : {}) })
      : now - (lstatSync(path, { throwIfNoEntry: false })?.mtimeMs ?? now) > ORPHAN_AGE_MS;
    if (stale) {
      rmSync(path, { recursive: true, force: true });
      removed.push(path);
    }
  }
  return removed;
}

/** Default wait for another install of the same major: longer than a whole download may take. */
const LOCK_TIMEOUT_MS = 10 * 60_000;
const POLL_MS = 250;

/** The owner a lock records: `owner` (JSON, pid and start), or an older klw's `pid`. */
function lockOwner(lock: string): Owner | undefined {
  try {
    const owner = JSON.parse(readFileSync(join(lock, 'owner'), 'utf8')) as Owner;
    if (Number.isInteger(owner.pid) && owner.pid > 0) return owner;
  } catch {
    // an older klw's lock, or one being taken
  }
  const pid = Number(existsSync(join(lock, 'pid')) ? readFileSync(join(lock, 'pid'), 'utf8') : Number.NaN);
  return Number.isInteger(pid) && pid > 0 ? { pid } : undefined;
}

/**
 * Takes the install lock of a major (a directory, created atomically, recording its owner's pid
 * and start time); waits while its owner runs, saying once what it waits for, and takes over a
 * lock whose owner is gone, or whose pid now belongs to a process that started later (a pid
 * reused by an unrelated process). Returns the release.
 */
export async function lockInstall(
  lock: string,
  options: {
    timeoutMs?: number;
    pollMs?: number;
    sleep?: (ms: number) => Promise<void>;
    say?: (line: string) => void;
  } = {},
): Promise<() => void> {
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  const timeoutMs = options.timeoutMs ?? LOCK_TIMEOUT_MS;
  const polls = Math.ceil(timeoutMs / (options.pollMs ?? POLL_MS));
  let told = false;
  for (let i = 0; ; i++) {
    try {
      mkdirSync(lock);
      writeFileSync(join(lock, 'owner'), JSON.stringify(self()));
      return () => rmSync(lock, { recursive: true, force: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    const owner = lockOwner(lock);
    // Taken over only when its owner is gone (a lock without an owner yet is being taken: wait).
    if (owner && !ownerAlive(owner)) {
      rmSync(lock, { recursive: true, force: true });
      continue;
    }
    const who = `another klw (pid ${owner?.pid ?? '?'})`;
    if (i >= polls)
      throw new KlwError(
        `${who} is installing Node into ${dirname(lock)} and has not finished in ${Math.round(timeoutMs / 1000)} s; ` +
          `if it no longer runs, remove ${lock} and try again`,
      );
    if (!told && options.say) {
      told = true;
      options.say(
        `klw: waiting for ${who} installing Node into ${dirname(lock)} (lock ${lock}), at most ${Math.round(timeoutMs / 1000)} s`,
      );
    }
    await sleep(options.pollMs ?? POLL_MS);
  }
}

/** The signals that end a klw waiting for an install: its download folder and lock go first. */
const ENDING_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

/**
 * Runs `work` with `cleanup` bound to the signals that would end this process: on one, cleanup
 * runs, then the signal ends the process as it would have (unless others listen for it).
 */
export async function cleanedOnSignals<T>(cleanup: () => void, work: () => Promise<T>): Promise<T> {
  const handler = (signal: NodeJS.Signals) => {
    cleanup();
    for (const s of ENDING_SIGNALS) process.off(s, handler);
    if (process.listenerCount(signal) === 0) process.kill(process.pid, signal);
  };
  for (const s of ENDING_SIGNALS) process.on(s, handler);
  try {
    return await work();
  } finally {
    for (const s of ENDING_SIGNALS) process.off(s, handler);
    cleanup();
  }
}
