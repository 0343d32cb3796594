/**
 * The cel-go extended strings library as Kubernetes enables it (ext.Strings version 2 from 1.29,
 * version 0 before): indexes count code points (Go runes), not UTF-16 units, and the answers and
 * error messages are cel-go's. Every function is linear in its input: searching uses the engine's
 * string search on UTF-16 and converts offsets, where cel-go compares rune by rune.
 */
import { isSingleUnit, SHORT_ESCAPES } from './go.ts';

/** A call cel-go answers with an error; the message is cel-go's. */
export class StringsError extends Error {
  override name = 'StringsError';
}

const outOfRange = (i: bigint | number): StringsError => new StringsError(`index out of range: ${i}`);

/**
 * UTF-16 offset of every code point of the last long string with surrogate pairs that was indexed,
 * so repeated `charAt`/`substring` calls on one large string cost one pass, not one each.
 */
let indexed: { s: string; offsets: Int32Array } | undefined;

/** Passes over whole strings made to index them by code point: what repeated calls on one string cost. */
export const stringIndexingWork = { scans: 0, indexBuilds: 0 };

/** The last string found to have no surrogate pair (comparing the same string object is immediate). */
let lastSingleUnit: string | undefined;

/** Offsets (UTF-16) of each code point of s, plus s.length at the end; undefined when they are the identity. */
function offsetsOf(s: string): Int32Array | undefined {
  if (s.length < 64) return isSingleUnit(s) ? undefined : computeOffsets(s);
  if (lastSingleUnit === s) return undefined;
  if (indexed?.s === s) return indexed.offsets;
  stringIndexingWork.scans++;
  if (isSingleUnit(s)) {
    lastSingleUnit = s;
    return undefined;
  }
  indexed = { s, offsets: computeOffsets(s) };
  return indexed.offsets;
}

function computeOffsets(s: string): Int32Array {
  if (s.length >= 64) stringIndexingWork.indexBuilds++;
  const offsets: number[] = [];
  for (let i = 0; i < s.length; i++) {
    offsets.push(i);
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) i++;
    }
  }
  offsets.push(s.length);
  return Int32Array.from(offsets);
}

/** A view of s by code point: its length, and conversions between code point and UTF-16 indexes. */
class Runes {
  readonly length: number;
  private readonly offsets: Int32Array | undefined;

  constructor(readonly s: string) {
    this.offsets = offsetsOf(s);
    this.length = this.offsets ? this.offsets.length - 1 : s.length;
  }

  /** UTF-16 offset of code point i (0 ≤ i ≤ length). */
  unit(i: number): number {
    return this.offsets ? this.offsets[i]! : i;
  }

  /** Code point index of UTF-16 offset u, which starts a code point. */
  rune(u: number): number {
    if (!this.offsets) return u;
    let lo = 0;
    let hi = this.offsets.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.offsets[mid]! < u) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  slice(start: number, end = this.length): string {
    return this.s.slice(this.unit(start), this.unit(end));
  }
}

const runeLength = (s: string): number => new Runes(s).length;

/** `s.charAt(i)`: the code point at i, '' at the end, an error beyond. */
export function charAt(s: string, i: bigint): string {
  const r = new Runes(s);
  if (i < 0n || i > BigInt(r.length)) throw outOfRange(i);
  const n = Number(i);
  return n === r.length ? '' : r.slice(n, n + 1);
}

/** `s.indexOf(sub)` and `s.indexOf(sub, offset)`: code point index of the first match at or after offset, or -1. */
export function indexOf(s: string, sub: string, offset = 0n): bigint {
  if (sub === '') return offset;
  const r = new Runes(s);
  if (offset < 0n || offset >= BigInt(r.length)) throw outOfRange(offset);
  const found = s.indexOf(sub, r.unit(Number(offset)));
  return BigInt(found < 0 ? -1 : r.rune(found));
}

/** `s.lastIndexOf(sub)`: code point index of the last match, or -1; the length for ''. */
export function lastIndexOf(s: string, sub: string, offset?: bigint): bigint {
  const r = new Runes(s);
  if (offset === undefined) {
    if (sub === '') return BigInt(r.length);
    offset = BigInt(r.length - 1);
  }
  if (sub === '') return offset;
  if (offset < 0n || offset >= BigInt(r.length)) throw outOfRange(offset);
  let off = Number(offset);
  const subLength = runeLength(sub);
  if (off > r.length - subLength) off = r.length - subLength;
  if (off < 0) return -1n;
  const found = s.lastIndexOf(sub, r.unit(off));
  return BigInt(found < 0 ? -1 : r.rune(found));
}

/** `s.lowerAscii()`: A–Z lowered, every other character kept. */
export function lowerAscii(s: string): string {
  return s.replace(/[A-Z]+/g, (m) => m.toLowerCase());
}

/** `s.upperAscii()`: a–z raised, every other character kept. */
export function upperAscii(s: string): string {
  return s.replace(/[a-z]+/g, (m) => m.toUpperCase());
}

/**
 * `s.replace(old, new)` and `s.replace(old, new, n)`: Go's strings.Replace, at most n replacements
 * (all when n < 0); an empty `old` matches before every code point and at the end.
 */
export function replace(s: string, old: string, replacement: string, n = -1n): string {
  if (n === 0n || old === replacement) return s;
  const out: string[] = [];
  let done = 0n;
  const more = (): boolean => n < 0n || done < n;
  if (old === '') {
    for (const c of s) {
      if (!more()) {
        out.push(c);
        continue;
      }
      out.push(replacement, c);
      done++;
    }
    if (more()) out.push(replacement);
    return out.join('');
  }
  let from = 0;
  while (more()) {
    const at = s.indexOf(old, from);
    if (at < 0) break;
    out.push(s.slice(from, at), replacement);
    from = at + old.length;
    done++;
  }
  out.push(s.slice(from));
  return out.join('');
}

/**
 * `s.split(sep)` and `s.split(sep, n)`: Go's strings.SplitN: no pieces for n = 0, at most n pieces
 * (the last holds the rest) for n > 0, all for n < 0; an empty separator splits into code points.
 */
export function split(s: string, sep: string, n = -1n): string[] {
  if (n === 0n) return [];
  const limit = n < 0n ? Infinity : Number(n);
  const out: string[] = [];
  if (sep === '') {
    const r = new Runes(s);
    const count = Math.min(r.length, limit);
    for (let i = 0; i < count; i++) out.push(i === count - 1 ? r.slice(i) : r.slice(i, i + 1));
    return out;
  }
  let from = 0;
  while (out.length < limit - 1) {
    const at = s.indexOf(sep, from);
    if (at < 0) break;
    out.push(s.slice(from, at));
    from = at + sep.length;
  }
  out.push(s.slice(from));
  return out;
}

/** `s.substring(start)` and `s.substring(start, end)`, by code point, with cel-go's errors. */
export function substring(s: string, start: bigint, end?: bigint): string {
  const r = new Runes(s);
  const length = BigInt(r.length);
  if (end === undefined) {
    if (start < 0n || start > length) throw outOfRange(start);
    return r.slice(Number(start));
  }
  if (start > end) throw new StringsError(`invalid substring range. start: ${start}, end: ${end}`);
  if (start < 0n || start > length) throw outOfRange(start);
  if (end < 0n || end > length) throw outOfRange(end);
  return r.slice(Number(start), Number(end));
}

/** Go's unicode.IsSpace: the Unicode White_Space characters (not U+FEFF, which JavaScript trims). */
function isGoSpace(c: number): boolean {
  if (c <= 0xff) return c === 0x20 || (c >= 0x09 && c <= 0x0d) || c === 0x85 || c === 0xa0;
  return (
    c === 0x1680 ||
    (c >= 0x2000 && c <= 0x200a) ||
    c === 0x2028 ||
    c === 0x2029 ||
    c === 0x202f ||
    c === 0x205f ||
    c === 0x3000
  );
}

/** `s.trim()`: Go's strings.TrimSpace. */
export function trim(s: string): string {
  let start = 0;
  let end = s.length;
  while (start < end && isGoSpace(s.charCodeAt(start))) start++;
  while (end > start && isGoSpace(s.charCodeAt(end - 1))) end--;
  return s.slice(start, end);
}

/** `list.join()` and `list.join(sep)`: Go's strings.Join. */
export function join(list: readonly string[], sep = ''): string {
  return list.join(sep);
}

/** `strings.quote(s)`: s in double quotes with CEL's escapes; other characters kept as they are. */
export function quote(s: string): string {
  const out: string[] = ['"'];
  for (const c of s) {
    const short = SHORT_ESCAPES[c];
    const cp = c.codePointAt(0)!;
    out.push(short ?? (cp >= 0xd800 && cp <= 0xdfff ? '\ufffd' : c));
  }
  out.push('"');
  return out.join('');
}

/** The Kubernetes minor version each strings function is available from (ext.Strings 0 before 1.29, 2 since). */
export const STRINGS_FUNCTIONS_SINCE: Readonly<Record<string, number>> = {
  charAt: 0,
  indexOf: 0,
  lastIndexOf: 0,
  lowerAscii: 0,
  upperAscii: 0,
  replace: 0,
  split: 0,
  substring: 0,
  trim: 0,
  join: 0,
  'strings.quote': 29,
  format: 29,
};
