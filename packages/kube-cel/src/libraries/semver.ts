/**
 * Kubernetes' semver CEL library (from 1.33, with the `normalize` overloads of its version 1), on
 * blang/semver v4 as the library calls it: its parser, its messages, its precedence (build metadata
 * ignored), and the library's own normalization (a leading `v`, missing minor and patch, leading zeros).
 */
import { split } from './strings.ts';

/** A string the parser refuses, with blang/semver's (or strconv's) message. */
export class SemverError extends Error {
  override name = 'SemverError';
}

/** One dot-separated prerelease identifier: numeric or alphanumeric. */
type PreRelease = { num: bigint; str: string; isNum: boolean };

const NUMBERS = /^[0-9]*$/;
const ALPHANUM = /^[0-9A-Za-z-]*$/;
const UINT64_MAX = 2n ** 64n - 1n;
const quoteGo = (s: string): string => JSON.stringify(s);

const leadingZero = (s: string): boolean => s.length > 1 && s[0] === '0';

/** strconv.ParseUint(s, 10, 64) for a string of digits. */
function parseUint(s: string): bigint {
  if (s === '') throw new SemverError(`strconv.ParseUint: parsing ${quoteGo(s)}: invalid syntax`);
  const v = BigInt(s);
  if (v > UINT64_MAX) throw new SemverError(`strconv.ParseUint: parsing ${quoteGo(s)}: value out of range`);
  return v;
}

/** A version as blang/semver holds it. */
export class Semver {
  constructor(
    readonly majorValue: bigint,
    readonly minorValue: bigint,
    readonly patchValue: bigint,
    readonly pre: readonly PreRelease[],
    readonly build: readonly string[],
  ) {}

  /** `major()`: an int64 as Go converts the uint64 (wrapping above 2^63 - 1). */
  major(): bigint {
    return BigInt.asIntN(64, this.majorValue);
  }

  /** `minor()`. */
  minor(): bigint {
    return BigInt.asIntN(64, this.minorValue);
  }

  /** `patch()`. */
  patch(): bigint {
    return BigInt.asIntN(64, this.patchValue);
  }

  /** `compareTo()`: -1, 0 or 1 by semver precedence (isLessThan, isGreaterThan and `==` follow it). */
  compareTo(o: Semver): number {
    const cmp = (a: bigint, b: bigint): number => (a > b ? 1 : a < b ? -1 : 0);
    const core =
      cmp(this.majorValue, o.majorValue) || cmp(this.minorValue, o.minorValue) || cmp(this.patchValue, o.patchValue);
    if (core !== 0) return core;
    if (this.pre.length === 0 || o.pre.length === 0)
      return this.pre.length === o.pre.length ? 0 : this.pre.length === 0 ? 1 : -1;
    const n = Math.min(this.pre.length, o.pre.length);
    for (let i = 0; i < n; i++) {
      const a = this.pre[i]!;
      const b = o.pre[i]!;
      let c: number;
      if (a.isNum !== b.isNum) c = a.isNum ? -1 : 1;
      else if (a.isNum) c = cmp(a.num, b.num);
      else c = a.str === b.str ? 0 : a.str > b.str ? 1 : -1;
      if (c !== 0) return c;
    }
    return this.pre.length === o.pre.length ? 0 : this.pre.length < o.pre.length ? -1 : 1;
  }

  /** Equality by precedence, as the library's type compares. */
  equals(o: Semver): boolean {
    return this.compareTo(o) === 0;
  }

  /** blang/semver's String(). */
  toString(): string {
    let s = `${this.majorValue}.${this.minorValue}.${this.patchValue}`;
    if (this.pre.length) s += `-${this.pre.map((p) => (p.isNum ? String(p.num) : p.str)).join('.')}`;
    if (this.build.length) s += `+${this.build.join('.')}`;
    return s;
  }
}

function prerelease(s: string): PreRelease {
  if (s === '') throw new SemverError('Prerelease is empty');
  if (NUMBERS.test(s)) {
    if (leadingZero(s))
      throw new SemverError(`Numeric PreRelease version must not contain leading zeroes ${quoteGo(s)}`);
    return { num: parseUint(s), str: '', isNum: true };
  }
  if (ALPHANUM.test(s)) return { num: 0n, str: s, isNum: false };
  throw new SemverError(`Invalid character(s) found in prerelease ${quoteGo(s)}`);
}

/** blang/semver's Parse. */
export function parseSemver(s: string): Semver {
  if (s === '') throw new SemverError('Version string empty');
  const parts = split(s, '.', 3n);
  if (parts.length !== 3) throw new SemverError('No Major.Minor.Patch elements found');
  const number = (text: string, name: string): bigint => {
    if (!NUMBERS.test(text))
      throw new SemverError(`Invalid character(s) found in ${name.toLowerCase()} number ${quoteGo(text)}`);
    if (leadingZero(text)) throw new SemverError(`${name} number must not contain leading zeroes ${quoteGo(text)}`);
    return parseUint(text);
  };
  const major = number(parts[0]!, 'Major');
  const minor = number(parts[1]!, 'Minor');
  let patchText = parts[2]!;
  let build: string[] = [];
  let pre: string[] = [];
  const plus = patchText.indexOf('+');
  if (plus !== -1) {
    build = patchText.slice(plus + 1).split('.');
    patchText = patchText.slice(0, plus);
  }
  const dash = patchText.indexOf('-');
  if (dash !== -1) {
    pre = patchText.slice(dash + 1).split('.');
    patchText = patchText.slice(0, dash);
  }
  const patch = number(patchText, 'Patch');
  const parsedPre = pre.map(prerelease);
  for (const b of build) {
    if (b === '') throw new SemverError('Build meta data is empty');
    if (!ALPHANUM.test(b)) throw new SemverError(`Invalid character(s) found in build meta data ${quoteGo(b)}`);
  }
  return new Semver(major, minor, patch, parsedPre, build);
}

/** The library's normalizeAndParse: no leading `v`, zeros filled in, leading zeros dropped. */
function normalizeAndParse(s: string): Semver {
  const parts = split(s.startsWith('v') ? s.slice(1) : s, '.', 3n).map((p) => {
    if (p.length <= 1) return p;
    const trimmed = p.replace(/^0+/, '');
    return trimmed === '' || !/^[0-9]/.test(trimmed) ? `0${trimmed}` : trimmed;
  });
  if (parts.length < 3) {
    if (/[+-]/.test(parts[parts.length - 1]!))
      throw new SemverError('short version cannot contain PreRelease/Build meta data');
    while (parts.length < 3) parts.push('0');
  }
  return parseSemver(parts.join('.'));
}

/** `semver(s)` and `semver(s, normalize)`: the version, or SemverError with the parser's message. */
export function semver(s: string, normalize = false): Semver {
  return normalize ? normalizeAndParse(s) : parseSemver(s);
}

/** `isSemver(s)` and `isSemver(s, normalize)`. */
export function isSemver(s: string, normalize = false): boolean {
  try {
    semver(s, normalize);
    return true;
  } catch (err) {
    if (err instanceof SemverError) return false;
    throw err;
  }
}

/** The Kubernetes minor version each semver overload arrives in. */
export const SEMVER_FUNCTIONS_SINCE: Readonly<Record<string, number>> = {
  semver: 33,
  isSemver: 33,
  'semver(string, bool)': 33,
  'isSemver(string, bool)': 33,
  major: 33,
  minor: 33,
  patch: 33,
  isLessThan: 33,
  isGreaterThan: 33,
  compareTo: 33,
};
