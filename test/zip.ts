// Reads the zips klw build writes, for the tests that list or unpack them, in this process (a
// python3 zipfile run costs a process start each): the central directory of a zip without ZIP64
// or encryption, entries stored or deflated, each checked against its CRC-32 when read.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, isAbsolute, join } from 'node:path';
import { crc32, inflateRawSync } from 'node:zlib';

/** One entry of a zip, in the order of its central directory. */
export interface ZipEntry {
  name: string;
  /** The DOS time stamp as python's zipfile gives it: [year, month, day, hour, minute, second]. */
  modified: [number, number, number, number, number, number];
  /** The entry's bytes, inflated and checked against its CRC-32. */
  data(): Buffer;
}

/** Signatures of the end of central directory record and of central and local file headers. */
const END = 0x06054b50;
const CENTRAL = 0x02014b50;
const LOCAL = 0x04034b50;
/** The end record is 22 bytes and a comment of at most 65535. */
const END_SEARCH = 22 + 0xffff;

/** The entries of the zip at `path`; throws on what this reader does not read (ZIP64, encryption, other methods). */
export function readZip(path: string): ZipEntry[] {
  const zip = readFileSync(path);
  let end = -1;
  for (let i = zip.length - 22; i >= Math.max(0, zip.length - END_SEARCH); i--)
    if (zip.readUInt32LE(i) === END) {
      end = i;
      break;
    }
  if (end < 0) throw new Error(`${path}: no end of central directory: not a zip`);
  const count = zip.readUInt16LE(end + 10);
  let at = zip.readUInt32LE(end + 16);
  const entries: ZipEntry[] = [];
  for (let n = 0; n < count; n++) {
    if (zip.readUInt32LE(at) !== CENTRAL) throw new Error(`${path}: central directory entry ${n} is damaged`);
    const flags = zip.readUInt16LE(at + 8);
    const method = zip.readUInt16LE(at + 10);
    const time = zip.readUInt16LE(at + 12);
    const date = zip.readUInt16LE(at + 14);
    const crc = zip.readUInt32LE(at + 16);
    const packed = zip.readUInt32LE(at + 20);
    const size = zip.readUInt32LE(at + 24);
    const nameLength = zip.readUInt16LE(at + 28);
    const local = zip.readUInt32LE(at + 42);
    const name = zip.toString('utf8', at + 46, at + 46 + nameLength);
    if (flags & 1) throw new Error(`${path}: ${name} is encrypted`);
    if (packed === 0xffffffff || size === 0xffffffff || local === 0xffffffff) throw new Error(`${path}: ZIP64`);
    if (method !== 0 && method !== 8) throw new Error(`${path}: ${name}: compression method ${method}`);
    const data = () => {
      if (zip.readUInt32LE(local) !== LOCAL) throw new Error(`${path}: ${name}: local header is damaged`);
      const start = local + 30 + zip.readUInt16LE(local + 26) + zip.readUInt16LE(local + 28);
      const raw = zip.subarray(start, start + packed);
      const bytes = method === 8 ? inflateRawSync(raw) : Buffer.from(raw);
      if (bytes.length !== size || crc32(bytes) !== crc) throw new Error(`${path}: ${name}: bad CRC-32 or size`);
      return bytes;
    };
    const modified: ZipEntry['modified'] = [
      1980 + (date >> 9),
      (date >> 5) & 15,
      date & 31,
      time >> 11,
      (time >> 5) & 63,
      (time & 31) * 2,
    ];
    entries.push({ name, modified, data });
    at += 46 + nameLength + zip.readUInt16LE(at + 30) + zip.readUInt16LE(at + 32);
  }
  return entries;
}

/** Unpacks the zip at `path` into `dir`; an entry naming a path outside of `dir` is refused. */
export function extractZip(path: string, dir: string): void {
  for (const entry of readZip(path)) {
    if (isAbsolute(entry.name) || entry.name.split(/[\\/]/).includes('..'))
      throw new Error(`${path}: ${entry.name} points outside of the folder`);
    const target = join(dir, entry.name);
    if (entry.name.endsWith('/')) {
      mkdirSync(target, { recursive: true });
      continue;
    }
    mkdirSync(dirname(target), { recursive: true });
    writeFileSync(target, entry.data());
  }
}
