import { randomBytes } from 'node:crypto';
import {
  closeSync,
  constants,
  fchmodSync,
  fstatSync,
  linkSync,
  lstatSync,
  mkdirSync,
  openSync,
  readFileSync,
  readSync,
  renameSync,
  statSync,
  unlinkSync,
  writeSync,
  type Stats,
} from 'node:fs';
import { dirname, resolve } from 'node:path';

/** Owner read and write only: the mode of every file that holds a secret (keys, tokens, URLs with a path secret). */
export const PRIVATE_MODE = 0o600;

/** Readable by all, writable by the owner: public files written with an exact mode (certificates). */
export const PUBLIC_MODE = 0o644;

/** Owner only: folders the toolkit creates to hold secrets (the local state directory). */
export const PRIVATE_DIR_MODE = 0o700;

/** How a file is written by writeFileSafely. */
export interface WriteOptions {
  /** The file holds a secret: mode 0600 exactly, whatever the umask or the mode of the file it replaces. */
  secret?: boolean;
  /** An exact mode instead (e.g. PUBLIC_MODE); by default 0666 narrowed by the umask, as any new file. */
  mode?: number;
  /** Refuse when anything is at the path already (a file, or a link, dangling or not) instead of replacing it. */
  exclusive?: boolean;
  /** Create the folder (and its parents) when missing: 0700 for a secret, else as the umask allows. */
  parents?: boolean;
}

/** What is at `file` itself (a symbolic link is not followed), or undefined when nothing is. */
function entryAt(file: string): Stats | undefined {
  try {
    return lstatSync(file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

/** True when anything is at `file`, a dangling symbolic link included (existsSync follows links and misses those). */
export function pathTaken(file: string): boolean {
  return entryAt(file) !== undefined;
}

/**
 * Throws unless `file` is missing or a regular file: a symbolic link there (to anything, or
 * dangling) is refused rather than followed, and so is a folder, socket or device.
 */
export function refuseLink(file: string, what = 'a file'): void {
  const stat = entryAt(file);
  if (!stat) return;
  if (stat.isSymbolicLink()) throw new Error(`${file} is a symbolic link; refusing to follow it (remove it)`);
  if (!stat.isFile()) throw new Error(`${file} is not a regular file; refusing to use it for ${what}`);
}

/**
 * Creates a folder and its parents when missing, with `mode` (the umask applies) or, `secret`,
 * 0700. Each missing folder is made on its own, top down: Node's recursive mkdirSync never
 * returns where the system answers ENOENT for a folder whose parent exists (under /proc, say).
 */
export function makeDir(dir: string, options: { secret?: boolean; mode?: number } = {}): void {
  const mode = options.secret ? { mode: PRIVATE_DIR_MODE } : options.mode === undefined ? {} : { mode: options.mode };
  const missing: string[] = [];
  for (let at = resolve(dir); !entryAt(at) && dirname(at) !== at; at = dirname(at)) missing.push(at);
  for (const folder of missing.reverse()) {
    try {
      mkdirSync(folder, mode);
    } catch (err) {
      // Made meanwhile by another process: as good as made here.
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST' || !statSync(folder).isDirectory()) throw err;
    }
  }
  if (!statSync(dir).isDirectory())
    throw Object.assign(new Error(`EEXIST: file already exists, mkdir '${dir}'`), { code: 'EEXIST' });
}

/** The error of an exclusive write to a path that is taken: code EEXIST, as the system's. */
function alreadyExists(target: string): Error {
  return Object.assign(new Error(`${target} already exists`), { code: 'EEXIST' });
}

/** Closes a descriptor that may already be closed and removes a temp file that may already be gone. */
function discard(fd: number | undefined, temp: string): void {
  if (fd !== undefined) {
    try {
      closeSync(fd);
    } catch {
      // already closed
    }
  }
  try {
    unlinkSync(temp);
  } catch {
    // renamed, linked and removed, or never made
  }
}

/**
 * The one way the toolkit writes a file. The text goes to a new temp file in the same folder,
 * opened with O_CREAT|O_EXCL|O_NOFOLLOW and its final mode (so it is never readable by others,
 * not for a moment, and nothing planted under its name is followed), then takes the target's
 * place in one rename: readers see the old file or the new one, never half of one. A symbolic
 * link at the target is refused, never followed; a file there is replaced, so an existing 0644
 * file that now holds a secret becomes 0600. With `exclusive`, the file is linked into place
 * instead, which fails when anything is there already.
 */
export function writeFileSafely(file: string, data: string | Uint8Array, options: WriteOptions = {}): void {
  const target = resolve(file);
  if (options.parents) makeDir(dirname(target), { secret: options.secret === true });
  if (options.exclusive && pathTaken(target)) throw alreadyExists(target);
  refuseLink(target);
  const exact = options.secret ? PRIVATE_MODE : options.mode;
  const temp = `${target}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
  let fd: number | undefined;
  try {
    const flags = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW;
    fd = openSync(temp, flags, exact ?? 0o666);
    if (exact !== undefined) fchmodSync(fd, exact); // a umask can only have narrowed it; make it exact
    const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
    for (let at = 0; at < bytes.length; ) at += writeSync(fd, bytes, at, bytes.length - at);
    closeSync(fd);
    fd = undefined;
    if (options.exclusive) {
      linkSync(temp, target); // EEXIST when anything, even a dangling link, took the name meanwhile
      unlinkSync(temp);
    } else {
      renameSync(temp, target);
    }
  } catch (err) {
    discard(fd, temp);
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EEXIST' && options.exclusive) throw alreadyExists(target);
    throw err;
  }
}

/**
 * Appends text to a log file, creating it when missing; a symbolic link there (to a file or
 * dangling) is refused rather than followed (O_NOFOLLOW), and so is anything but a regular file.
 */
export function appendFileSafely(file: string, text: string): void {
  refuseLink(file, 'a log'); // names the problem; O_NOFOLLOW covers a link planted after this look
  let fd: number;
  try {
    fd = openSync(file, constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_NOFOLLOW, 0o666);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ELOOP') {
      throw new Error(`${file} is a symbolic link; refusing to follow it (remove it)`);
    }
    throw err;
  }
  try {
    if (!fstatSync(fd).isFile()) throw new Error(`${file} is not a regular file; refusing to append to it`);
    const bytes = Buffer.from(text, 'utf8');
    for (let at = 0; at < bytes.length; ) at += writeSync(fd, bytes, at, bytes.length - at);
  } finally {
    closeSync(fd);
  }
}

/**
 * Flags of every read of a file the user or a planted entry controls: a symbolic link is not
 * followed, and a named pipe (FIFO) is opened without waiting for a writer (O_NONBLOCK), so the
 * "not a regular file" check that follows answers at once instead of hanging the command.
 */
const READ_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;

/** Why readRegularFile refused a file: ENOENT (nothing there), ELOOP (a link), ENOTREG, EFBIG. */
export type ReadRefusal = 'ENOENT' | 'ELOOP' | 'ENOTREG' | 'EFBIG';

function refusal(code: ReadRefusal, message: string, size?: number): Error {
  return Object.assign(new Error(message), { code, ...(size === undefined ? {} : { size }) });
}

/**
 * The text of a regular file, read through one descriptor: a symbolic link refused (not
 * followed), a named pipe, socket, device or folder refused before anything is read from it
 * (opened with O_NONBLOCK, so a pipe with no writer cannot stall the command), and a file over
 * `maxBytes` refused by its size. The error's `code` is a ReadRefusal (a missing file is ENOENT; EFBIG carries the `size`).
 */
export function readRegularFile(file: string, maxBytes = Number.POSITIVE_INFINITY): string {
  let fd: number;
  try {
    fd = openSync(file, READ_FLAGS);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ELOOP') throw refusal('ELOOP', `${file} is a symbolic link; refusing to follow it (remove it)`);
    if (code === 'ENOENT') throw refusal('ENOENT', `${file} does not exist`);
    throw err;
  }
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) throw refusal('ENOTREG', `${file} is not a regular file; write a file there instead`);
    if (stat.size > maxBytes) throw refusal('EFBIG', `${file} is ${stat.size} bytes; at most ${maxBytes}`, stat.size);
    // Read to the size fstat gave (a file growing meanwhile is cut there, never read past the bound).
    const buffer = Buffer.alloc(stat.size);
    let read = 0;
    while (read < stat.size) {
      const n = readSync(fd, buffer, read, stat.size - read, read);
      if (!n) break;
      read += n;
    }
    return buffer.subarray(0, read).toString('utf8');
  } finally {
    closeSync(fd);
  }
}

/**
 * Reads a file that holds a secret without following a symbolic link; one readable by group or
 * others is narrowed to 0600 (and `onLoose` told), one owned by another user refused.
 */
export function readPrivate(
  file: string,
  onLoose: (message: string) => void = () => {},
  what = 'a private key',
): string {
  refuseLink(file, what);
  const fd = openSync(file, READ_FLAGS);
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) throw new Error(`${file} is not a regular file; refusing to use it for ${what}`);
    if (typeof process.getuid === 'function' && stat.uid !== process.getuid()) {
      throw new Error(`${file} belongs to another user (uid ${stat.uid}); refusing to use it for ${what}`);
    }
    if (stat.mode & 0o077) {
      fchmodSync(fd, PRIVATE_MODE);
      onLoose(`${file} was readable by others (mode ${(stat.mode & 0o777).toString(8)}); narrowed to 600.`);
    }
    return readFileSync(fd, 'utf8');
  } finally {
    closeSync(fd);
  }
}
