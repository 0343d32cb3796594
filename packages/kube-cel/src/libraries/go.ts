/**
 * Small pieces of Go's standard library that Kubernetes' CEL libraries show in their answers
 * and messages: `%q` quoting (strconv.Quote) and string walks by code point (Go's runes).
 */

/**
 * Go's unicode.IsPrint for one code point: letters, marks, numbers, punctuation, symbols and ASCII
 * space. Built on first use: V8 reads a regular expression literal's character classes when it parses
 * the module, and these Unicode properties (thousands of ranges) cost milliseconds of every cold
 * start of a bundle carrying this module, which most never quote anything.
 */
let printable: RegExp | undefined;
function isPrintable(c: string): boolean {
  // Joined when first used: a literal (or a constant pattern, which linters and minifiers write as
  // one) would be read with the module.
  printable ??= new RegExp(['^[', '\\p{L}\\p{M}\\p{N}\\p{P}\\p{S} ', ']$'].join(''), 'u');
  return printable.test(c);
}

/** The characters Go's strconv.Quote (and CEL's strings.quote) write as a backslash escape. */
export const SHORT_ESCAPES: Readonly<Record<string, string>> = {
  '\x07': '\\a',
  '\b': '\\b',
  '\f': '\\f',
  '\n': '\\n',
  '\r': '\\r',
  '\t': '\\t',
  '\v': '\\v',
  '\\': '\\\\',
  '"': '\\"',
};

/** One code point as Go's strconv.Quote writes it (the characters it leaves as they are included). */
function quoteCodePoint(c: string): string {
  const short = SHORT_ESCAPES[c];
  if (short !== undefined) return short;
  const cp = c.codePointAt(0)!;
  // A lone surrogate is not valid UTF-8 once Go sees it: the replacement character.
  if (cp >= 0xd800 && cp <= 0xdfff) return '\\ufffd';
  if (isPrintable(c)) return c;
  if (cp < 0x80) return `\\x${cp.toString(16).padStart(2, '0')}`;
  if (cp <= 0xffff) return `\\u${cp.toString(16).padStart(4, '0')}`;
  return `\\U${cp.toString(16).padStart(8, '0')}`;
}

/**
 * Go's strconv.Quote (the `%q` verb on a string): double quotes, Go escapes, linear in the input.
 * Runs of printable ASCII other than `"` and `\` are copied as they are (messages quote values of
 * up to megabytes); every other code point goes through quoteCodePoint.
 */
export function goQuote(s: string): string {
  let out = '"';
  let run = 0;
  for (let i = 0; i < s.length; i++) {
    const u = s.charCodeAt(i);
    if (u >= 0x20 && u < 0x7f && u !== 0x22 && u !== 0x5c) continue;
    if (run < i) out += s.slice(run, i);
    // A high surrogate followed by a low one is one code point; a lone one stands alone.
    const pair = u >= 0xd800 && u <= 0xdbff && i + 1 < s.length && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00;
    out += quoteCodePoint(pair ? s.slice(i, i + 2) : s[i]!);
    if (pair) i++;
    run = i + 1;
  }
  if (run < s.length) out += s.slice(run);
  return `${out}"`;
}

/** True when s has no surrogate pair, so UTF-16 indexes are code point indexes. */
export function isSingleUnit(s: string): boolean {
  return !/[\ud800-\udfff]/.test(s);
}

/** Number of code points in s (cel-go's string size), in one pass. */
export function codePointLength(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) i++;
    }
    n++;
  }
  return n;
}

/** Length of s in UTF-8 bytes (Go's len(s)), in one pass; a lone surrogate counts as U+FFFD (3 bytes). */
export function utf8Length(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if (
      c >= 0xd800 &&
      c <= 0xdbff &&
      i + 1 < s.length &&
      s.charCodeAt(i + 1) >= 0xdc00 &&
      s.charCodeAt(i + 1) <= 0xdfff
    ) {
      n += 4;
      i++;
    } else n += 3;
  }
  return n;
}

/** Shortest round-trip digits of a finite non-zero |x| and the decimal point position (Go's digs.d, digs.dp). */
function shortestDigits(x: number): { digits: string; dp: number } {
  const [mantissa, exponent] = Math.abs(x).toExponential().split('e');
  const digits = mantissa!.replace('.', '');
  return { digits, dp: Number(exponent) + 1 };
}

/**
 * Go's strconv.FormatFloat(x, 'g', -1, 64), cel-go's string(double): shortest digits, exponent form
 * below 1e-4 or from 1e6.
 */
export function goFormatFloat(x: number): string {
  if (Number.isNaN(x)) return 'NaN';
  if (x === Infinity) return '+Inf';
  if (x === -Infinity) return '-Inf';
  const sign = x < 0 || Object.is(x, -0) ? '-' : '';
  if (x === 0) return `${sign}0`;
  const { digits, dp } = shortestDigits(x);
  const exp = dp - 1;
  // With the shortest digits Go decides by precision 6: 1e+06 and 1.23456789e+08, but 123456.
  if (exp < -4 || exp >= 6) {
    const mantissa = digits.length > 1 ? `${digits[0]}.${digits.slice(1)}` : digits;
    const e = Math.abs(exp);
    return `${sign}${mantissa}e${exp < 0 ? '-' : '+'}${e < 10 ? `0${e}` : e}`;
  }
  if (dp <= 0) return `${sign}0.${'0'.repeat(-dp)}${digits}`;
  if (dp >= digits.length) return `${sign}${digits}${'0'.repeat(dp - digits.length)}`;
  return `${sign}${digits.slice(0, dp)}.${digits.slice(dp)}`;
}
