/**
 * Depth from which cloneJson stops recursing and copies the rest with an explicit stack:
 * recursion is faster, but the call stack of a Lambda function overflows a few thousand
 * levels down, and the API server accepts objects nested up to 10,000 levels.
 */
const RECURSION_LIMIT = 1000;

/**
 * A deep copy of a JSON value (plain objects, arrays, primitives), several times faster
 * than structuredClone on review-sized data, at any depth. An own `__proto__` key, which
 * JSON.parse can produce, is copied as data and never becomes the copy's prototype.
 */
export function cloneJson<T>(value: T): T {
  return cloneAt(value, 0);
}

function cloneAt<T>(value: T, depth: number): T {
  if (typeof value !== 'object' || value === null) return value;
  if (depth >= RECURSION_LIMIT) return cloneIteratively(value);
  if (Array.isArray(value)) {
    const out = new Array(value.length);
    for (let i = 0; i < value.length; i++) out[i] = cloneAt(value[i], depth + 1);
    keepWholeDoubles(value, out);
    return out as T;
  }
  const out: Record<string, unknown> = {};
  const source = value as Record<string, unknown>;
  for (const key of Object.keys(value)) setMember(out, key, cloneAt(source[key], depth + 1));
  keepWholeDoubles(value, out);
  return out as T;
}

/**
 * Members of parsed objects (and arrays, by index) whose number the JSON text wrote with a fraction
 * or an exponent although it is whole (`1.0`, `1e3`): a double for the API server's decoding, an int
 * for one written `1`. Kept aside so that the values stay plain numbers for the code reading them.
 */
const wholeDoubles = new WeakMap<object, Set<string>>();

/** The keys of `parent` whose whole number the JSON text wrote as a double (`1.0`); undefined if none. */
export function wholeDoubleKeys(parent: object): ReadonlySet<string> | undefined {
  return wholeDoubles.get(parent);
}

/** Gives `copy` the whole doubles of `source`, where `copy` is a copy of it. */
function keepWholeDoubles(source: object, copy: object): void {
  const keys = wholeDoubles.get(source);
  if (keys) wholeDoubles.set(copy, keys);
}

/**
 * `out[key] = v`, except that a `__proto__` key (which JSON allows and the API server keeps)
 * becomes an own member, as JSON.parse makes it, instead of setting the prototype of `out`.
 */
export function setMember(out: Record<string, unknown>, key: string, v: unknown): void {
  if (key === '__proto__')
    Object.defineProperty(out, key, { value: v, enumerable: true, writable: true, configurable: true });
  else out[key] = v;
}

/** An empty container of the same kind as a non-null object. */
function emptyLike(value: object): Record<string, unknown> | unknown[] {
  return Array.isArray(value) ? new Array(value.length) : {};
}

/** cloneJson with an explicit stack instead of recursion, for deeply nested values. */
function cloneIteratively<T extends object>(value: T): T {
  const root = emptyLike(value);
  const stack: Array<[object, Record<string, unknown> | unknown[]]> = [[value, root]];
  while (stack.length > 0) {
    const [source, target] = stack.pop()!;
    keepWholeDoubles(source, target);
    if (Array.isArray(source)) {
      const out = target as unknown[];
      for (let i = 0; i < source.length; i++) {
        const v: unknown = source[i];
        if (typeof v === 'object' && v !== null) {
          const copy = emptyLike(v);
          out[i] = copy;
          stack.push([v, copy]);
        } else out[i] = v;
      }
      continue;
    }
    const out = target as Record<string, unknown>;
    for (const key of Object.keys(source)) {
      const v = (source as Record<string, unknown>)[key];
      if (typeof v === 'object' && v !== null) {
        const copy = emptyLike(v);
        setMember(out, key, copy);
        stack.push([v, copy]);
      } else setMember(out, key, v);
    }
  }
  return root as T;
}

/**
 * How deeply a JSON value nests objects and arrays (a scalar is 0, `{}` is 1), counted with
 * an explicit stack so that any depth can be measured; stops counting past `limit`.
 */
export function nestingDepth(value: unknown, limit = Infinity): number {
  if (typeof value !== 'object' || value === null) return 0;
  let deepest = 0;
  const stack: Array<[object, number]> = [[value, 1]];
  while (stack.length > 0) {
    const [node, depth] = stack.pop()!;
    if (depth > deepest) deepest = depth;
    if (deepest > limit) return deepest;
    for (const v of Array.isArray(node) ? node : Object.values(node)) {
      if (typeof v === 'object' && v !== null) stack.push([v, depth + 1]);
    }
  }
  return deepest;
}

// Markers stand for exact integers in JSON text while JSON.parse or JSON.stringify handle it: a
// NUL (which JSON text escapes), a per-process random nonce, the digits. No string of a review
// carries the nonce.
const NONCE = Math.random().toString(36).slice(2, 10) + Math.random().toString(36).slice(2, 10);
const MARKER_START = `\u0000klw-int:${NONCE}:`;
/** The start of a marker of a whole number written as a double (`1.0`). */
const DOUBLE_MARKER_START = `\u0000klw-dbl:${NONCE}:`;
const MARKER_END = '\u0000';
/** A marker as JSON.stringify writes it (quotes and escaped NULs included). */
const WRITTEN_MARKER = new RegExp(`"\\\\u0000klw-int:${NONCE}:(-?\\d+)\\\\u0000"`, 'g');

/** Digits in a row from which an integer may be beyond ±2^53 (2^53 has 16 digits). */
const LONG_DIGIT_RUN = 16;

const isDigit = (unit: number) => unit >= 48 && unit <= 57;

/**
 * Where a number may need more than JSON.parse: a run of 16 digits (an integer beyond ±2^53) or a
 * digit before a fraction or an exponent (a double that may be whole). Strings match it too (a
 * UUID's `7e4`, a version's `1.2`); needsExactParse passes over those.
 */
// `\d` written out 16 times: V8 scans for it several times faster than for `\d{16}`.
const NUMBER_HINT = new RegExp(`\\d[.eE]|${'\\d'.repeat(LONG_DIGIT_RUN)}`, 'g');
const isBlank = (unit: number) => unit === 32 || unit === 10 || unit === 13 || unit === 9;

/** The index of the last character before `i` that is not a JSON blank (-1 if none). */
function previousSolid(text: string, i: number): number {
  let at = i - 1;
  while (at >= 0 && isBlank(text.charCodeAt(at))) at--;
  return at;
}

/**
 * False when what starts at `start` is inside a string for certain, by what precedes it: outside
 * strings a value follows the start of the text, `[`, `,` or a member's `":`, and a `,` follows
 * the end of a value. True leaves the question to the walk over the strings.
 */
function mayBeValue(text: string, start: number): boolean {
  const before = previousSolid(text, start);
  if (before < 0) return true;
  const unit = text.charCodeAt(before);
  if (unit === 91 /* [ */) return true;
  if (unit === 58 /* : */) return text.charCodeAt(previousSolid(text, before)) === 34; /* " */
  if (unit !== 44 /* , */) return false;
  const end = text.charCodeAt(previousSolid(text, before));
  // `"`, `]`, `}`, a digit, or the last letter of true, false, null.
  return end === 34 || end === 93 || end === 125 || isDigit(end) || end === 101 || end === 108;
}
/** A JSON number literal, read from where it starts. */
const NUMBER_LITERAL = /-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?/y;

/** The index of the quote that closes the string opened at `open` (the text's length if none). */
function stringEnd(text: string, open: number): number {
  let close = open;
  for (;;) {
    close = text.indexOf('"', close + 1);
    if (close === -1) return text.length;
    let slashes = 0;
    while (text.charCodeAt(close - 1 - slashes) === 92 /* \ */) slashes++;
    if (slashes % 2 === 0) return close;
  }
}

/**
 * True when a number of the JSON text, outside its strings, is an integer a double cannot hold
 * (16 digits or more) or a whole number written as a double (`1.0`, `1e3`): the numbers parseJson
 * reads otherwise than JSON.parse. A digit in a string never counts, so a review's `uid` or an
 * image's version costs only the walk over the strings before it.
 */
export function needsExactParse(text: string): boolean {
  // Everything before `outside` is read, and `outside` is not inside a string.
  let outside = 0;
  NUMBER_HINT.lastIndex = 0;
  for (let hint = NUMBER_HINT.exec(text); hint; hint = NUMBER_HINT.exec(text)) {
    // Where the number, if it is one, starts: its first digit, or its minus sign.
    let start = hint.index;
    while (start > 0 && isDigit(text.charCodeAt(start - 1))) start--;
    if (start > 0 && text.charCodeAt(start - 1) === 45 /* - */) start--;
    if (!mayBeValue(text, start)) {
      NUMBER_HINT.lastIndex = hint.index + 1;
      continue;
    }
    let quoted = false;
    for (let open = text.indexOf('"', outside); open !== -1 && open < start; ) {
      outside = stringEnd(text, open) + 1;
      if (outside > start) {
        quoted = true;
        break;
      }
      open = text.indexOf('"', outside);
    }
    if (quoted) {
      NUMBER_HINT.lastIndex = outside;
      continue;
    }
    NUMBER_LITERAL.lastIndex = start;
    const literal = NUMBER_LITERAL.exec(text)?.[0];
    // Not a number JSON allows: JSON.parse words the error on either path.
    if (literal === undefined) return true;
    const number = Number(literal);
    if (/[.eE]/.test(literal) ? Number.isInteger(number) : !Number.isSafeInteger(number)) return true;
    NUMBER_HINT.lastIndex = start + literal.length;
  }
  return false;
}

/**
 * Rewrites the integer literals of a JSON text that a number cannot hold exactly into marker
 * strings; undefined when there are none. Strings are skipped, escapes included; the text is
 * otherwise left as it is (an invalid text stays invalid).
 */
function markUnsafeIntegers(text: string): string | undefined {
  const parts: string[] = [];
  let copied = 0;
  let i = 0;
  const n = text.length;
  while (i < n) {
    const unit = text.charCodeAt(i);
    if (unit === 34 /* " */) {
      for (i++; i < n; i++) {
        const c = text.charCodeAt(i);
        if (c === 92 /* \ */) i++;
        else if (c === 34) break;
      }
      i++;
      continue;
    }
    if (unit !== 45 /* - */ && !isDigit(unit)) {
      i++;
      continue;
    }
    const start = i;
    if (unit === 45) i++;
    while (i < n && isDigit(text.charCodeAt(i))) i++;
    const next = text.charCodeAt(i);
    if (next === 46 /* . */ || next === 101 /* e */ || next === 69 /* E */) {
      // A fraction or an exponent: a float, which float64 reads alike in Go and here; a whole one is
      // marked, so that it is known for a double once parsed.
      while (i < n && /[0-9.eE+-]/.test(text[i]!)) i++;
      const literal = text.slice(start, i);
      if (literal !== '-' && Number.isInteger(Number(literal))) {
        parts.push(text.slice(copied, start), `"\\u0000klw-dbl:${NONCE}:${literal}\\u0000"`);
        copied = i;
      }
      continue;
    }
    const digits = i - start - (unit === 45 ? 1 : 0);
    if (digits < LONG_DIGIT_RUN) continue;
    const literal = text.slice(start, i);
    // A leading zero is invalid JSON: left for JSON.parse to refuse.
    if (literal.charCodeAt(unit === 45 ? 1 : 0) === 48 || Number.isSafeInteger(Number(literal))) continue;
    parts.push(text.slice(copied, start), `"\\u0000klw-int:${NONCE}:${literal}\\u0000"`);
    copied = i;
  }
  if (!parts.length) return undefined;
  parts.push(text.slice(copied));
  return parts.join('');
}

/**
 * Replaces marker strings in a parsed value by bigints (integers) and numbers (whole doubles, noted
 * in wholeDoubles), with an explicit stack (any depth).
 */
function reviveMarkers(root: unknown): unknown {
  const revive = (v: string): unknown => {
    if (!v.endsWith(MARKER_END)) return v;
    if (v.startsWith(MARKER_START)) return BigInt(v.slice(MARKER_START.length, -MARKER_END.length));
    if (v.startsWith(DOUBLE_MARKER_START)) return Number(v.slice(DOUBLE_MARKER_START.length, -MARKER_END.length));
    return v;
  };
  if (typeof root === 'string') return revive(root);
  if (typeof root !== 'object' || root === null) return root;
  const stack: object[] = [root];
  while (stack.length > 0) {
    const node = stack.pop()! as Record<string, unknown>;
    for (const key of Object.keys(node)) {
      const v = node[key];
      if (typeof v === 'object' && v !== null) stack.push(v);
      else if (typeof v === 'string') {
        node[key] = revive(v);
        if (typeof node[key] !== 'number') continue;
        const keys = wholeDoubles.get(node) ?? new Set<string>();
        wholeDoubles.set(node, keys.add(key));
      }
    }
  }
  return root;
}

/**
 * JSON.parse that keeps every digit of integers beyond ±2^53 (Kubernetes' int64 fields): they
 * are read as `bigint`; whole numbers written as doubles (`1.0`) are noted (wholeDoubleKeys). Only
 * a text with such a number outside its strings (needsExactParse) pays for more than JSON.parse.
 */
export function parseJson(text: string): unknown {
  return needsExactParse(text) ? parseJsonExactly(text) : JSON.parse(text);
}

/** parseJson without the look for numbers that need it: every text takes the exact path. */
export function parseJsonExactly(text: string): unknown {
  const marked = markUnsafeIntegers(text);
  if (marked === undefined) return JSON.parse(text);
  let value: unknown;
  try {
    value = JSON.parse(marked);
  } catch {
    // The same error, at the positions of the text as it came.
    return JSON.parse(text);
  }
  return reviveMarkers(value);
}

/** The largest integer a double holds exactly and its neighbours too (2^53 - 1), as a bigint. */
const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

/**
 * An integer beyond ±2^53 (a bigint, or a whole number JSON.stringify writes in digits: below
 * 1e21) as a marker of its digits; a bigint within it as a number; anything else as it is.
 */
function exactIntegerReplacer(_key: string, value: unknown): unknown {
  if (typeof value === 'bigint')
    return value > MAX_SAFE || value < -MAX_SAFE ? `${MARKER_START}${value}${MARKER_END}` : Number(value);
  if (typeof value === 'number' && Number.isInteger(value) && !Number.isSafeInteger(value) && Math.abs(value) < 1e21) {
    return `${MARKER_START}${String(value)}${MARKER_END}`;
  }
  return value;
}

/**
 * A JSON copy of a value in which every integer beyond ±2^53 is a string of its digits that no
 * string of a review equals: two copies are deeply equal exactly when the values' JSON texts
 * (stringifyJson) have the same numbers, as Go's json-patch compares them.
 */
export function exactIntegerCopy<T>(value: T): T {
  return JSON.parse(JSON.stringify(value, exactIntegerReplacer)) as T;
}

/** Writes a bigint as a marker (JSON.stringify refuses bigints; markers become digits after). */
function bigintReplacer(_key: string, value: unknown): unknown {
  return typeof value === 'bigint' ? `${MARKER_START}${value}${MARKER_END}` : value;
}

/**
 * JSON.stringify that writes bigints with their exact digits, as JSON numbers. A value without
 * one costs what JSON.stringify costs; JSON.stringify refusing a bigint is what sends a value
 * down the slower path.
 */
export function stringifyJson(value: unknown): string {
  try {
    return JSON.stringify(value);
  } catch (err) {
    if (!(err instanceof TypeError) || !/BigInt/i.test(err.message)) throw err;
  }
  return JSON.stringify(value, bigintReplacer).replace(WRITTEN_MARKER, '$1');
}
