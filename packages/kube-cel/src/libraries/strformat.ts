/**
 * `string.format(list)` of cel-go's extended strings library (version 1 and later, Kubernetes 1.29+):
 * the clause parser (`%s %d %f %e %b %x %X %o`, `%.Nf`, `%%`) and the formatting of each CEL value
 * type, with cel-go's messages. The engine hands each argument over as a FormatArg. `%f` and `%e`
 * go through golang.org/x/text's en-US printer there: thousands grouped, `2.718280 × 10⁰⁰`.
 */
import { goFormatFloat, goQuote } from './go.ts';

/** A CEL value as the formatter sees it. */
export type FormatArg =
  | { type: 'int' | 'uint'; value: bigint }
  | { type: 'double'; value: number }
  | { type: 'bool'; value: boolean }
  | { type: 'string'; value: string }
  | { type: 'bytes'; value: Uint8Array }
  | { type: 'null' }
  /** `text` is the value's CEL string() conversion. */
  | { type: 'timestamp' | 'duration'; text: string }
  | { type: 'type'; name: string }
  | { type: 'list'; items: readonly FormatArg[] }
  | { type: 'map'; entries: ReadonlyArray<readonly [FormatArg, FormatArg]> }
  /** Any other value (an object, an optional…): `typeName` as cel-go names its type. */
  | { type: 'other'; typeName: string };

/** A format call cel-go answers with an error. */
export class FormatError extends Error {
  override name = 'FormatError';
}

/** fmt's default precision for %f and %e. */
const DEFAULT_PRECISION = 6;
/** Go's fmt refuses precisions above a million; so does this formatter instead of building a huge string. */
const MAX_PRECISION = 1_000_000;

const TYPE_NAMES: Record<string, string> = {
  int: 'int',
  uint: 'uint',
  double: 'double',
  bool: 'bool',
  string: 'string',
  bytes: 'bytes',
  null: 'null_type',
  timestamp: 'google.protobuf.Timestamp',
  duration: 'google.protobuf.Duration',
  type: 'type',
  list: 'list',
  map: 'map',
};
const typeName = (a: FormatArg): string => (a.type === 'other' ? a.typeName : TYPE_NAMES[a.type]!);

const bytesText = (b: Uint8Array): string => new TextDecoder().decode(b);

/** The exact value of a finite double as `num / 2^shift` (num an integer). */
function exactBinary(x: number): { num: bigint; shift: bigint } {
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, x);
  const bits = view.getBigUint64(0);
  const negative = bits >> 63n === 1n;
  const exponent = Number((bits >> 52n) & 0x7ffn);
  let mantissa = bits & ((1n << 52n) - 1n);
  let e: number;
  if (exponent === 0) e = -1074;
  else {
    mantissa |= 1n << 52n;
    e = exponent - 1075;
  }
  const num = negative ? -mantissa : mantissa;
  return e >= 0 ? { num: num << BigInt(e), shift: 0n } : { num, shift: BigInt(-e) };
}

/** round(|num| / den) half to even. */
function roundHalfEven(num: bigint, den: bigint): bigint {
  const q = num / den;
  const r2 = (num % den) * 2n;
  return r2 > den || (r2 === den && q % 2n === 1n) ? q + 1n : q;
}

/** Go's %.Nf of a finite double: exact decimal expansion, rounded half to even. */
function fixed(x: number, precision: number): string {
  const { num, shift } = exactBinary(x);
  const negative = num < 0n || Object.is(x, -0);
  const scaled = roundHalfEven((num < 0n ? -num : num) * 10n ** BigInt(precision), 1n << shift);
  let digits = scaled.toString().padStart(precision + 1, '0');
  if (precision > 0) digits = `${digits.slice(0, -precision)}.${digits.slice(-precision)}`;
  return `${negative ? '-' : ''}${digits}`;
}

/** Go's %e (six decimals) of a finite double. */
function scientific(x: number): string {
  const negative = x < 0 || Object.is(x, -0);
  if (x === 0) return `${negative ? '-' : ''}0.000000e+00`;
  const { num, shift } = exactBinary(Math.abs(x));
  // Find e with 10^e ≤ |x| < 10^(e+1), then round |x| / 10^(e-6) to seven digits.
  let e = Math.floor(Math.log10(Math.abs(x)));
  const digitsAt = (exp: number): bigint => {
    const n = exp - DEFAULT_PRECISION;
    return n >= 0
      ? roundHalfEven(num, (1n << shift) * 10n ** BigInt(n))
      : roundHalfEven(num * 10n ** BigInt(-n), 1n << shift);
  };
  let d = digitsAt(e);
  if (d >= 10n ** 7n) d = digitsAt(++e);
  else if (d < 10n ** 6n) d = digitsAt(--e);
  if (d >= 10n ** 7n) d = digitsAt(++e);
  const text = d.toString();
  const ae = String(Math.abs(e)).padStart(2, '0');
  // The en-US printer writes the exponent as "× 10" and superscript digits (narrow no-break spaces).
  const superscript = [...ae].map((d) => SUPERSCRIPT_DIGITS[Number(d)]).join('');
  return `${negative ? '-' : ''}${text[0]}.${text.slice(1)}\u202f×\u202f10${e < 0 ? '\u207b' : ''}${superscript}`;
}

const SUPERSCRIPT_DIGITS = [
  '\u2070',
  '\u00b9',
  '\u00b2',
  '\u00b3',
  '\u2074',
  '\u2075',
  '\u2076',
  '\u2077',
  '\u2078',
  '\u2079',
];

/** x/text's en-US number printing: the integer part grouped by thousands. */
function groupThousands(text: string): string {
  const m = /^(-?)(\d+)(.*)$/.exec(text);
  if (!m) return text;
  return `${m[1]}${m[2]!.replace(/\B(?=(\d{3})+(?!\d))/g, ',')}${m[3]}`;
}

/** %s of a non-finite double, as Go's FormatFloat writes it. */
function nonFinite(x: number): string | undefined {
  if (Number.isNaN(x)) return 'NaN';
  if (x === Infinity) return '+Inf';
  if (x === -Infinity) return '-Inf';
  return undefined;
}

/** %f and %e of a non-finite double, as the en-US printer writes it. */
function printedNonFinite(x: number): string | undefined {
  if (Number.isNaN(x)) return 'NaN';
  if (x === Infinity) return '∞';
  if (x === -Infinity) return '-∞';
  return undefined;
}

/** The string form of %s (cel-go's FormatString). */
function formatString(a: FormatArg): string {
  switch (a.type) {
    case 'list':
      return formatList(a.items);
    case 'map':
      return formatMap(a.entries);
    case 'int':
    case 'uint':
      return a.value.toString();
    case 'double':
      return goFormatFloat(a.value);
    case 'bool':
      return String(a.value);
    case 'string':
      return a.value;
    case 'bytes':
      return bytesText(a.value);
    case 'timestamp':
    case 'duration':
      return a.text;
    case 'type':
      return a.name;
    case 'null':
      return 'null';
    default:
      throw new FormatError(
        `string clause can only be used on strings, bools, bytes, ints, doubles, maps, lists, types, ` +
          `durations, and timestamps, was given ${typeName(a)}`,
      );
  }
}

/** A list or map member: formatted by its type, then quoted as a CEL literal. */
function formatMember(a: FormatArg): string {
  switch (a.type) {
    case 'int':
    case 'uint':
      return a.value.toString();
    case 'string':
      return goQuote(a.value);
    case 'bytes':
      return `b${goQuote(bytesText(a.value))}`;
    case 'bool':
    case 'null':
    case 'type':
      return formatString(a);
    case 'timestamp':
      return `timestamp(${goQuote(a.text)})`;
    case 'duration':
      return `duration(${goQuote(a.text)})`;
    case 'list':
      return formatList(a.items);
    case 'map':
      return formatMap(a.entries);
    case 'double': {
      const special = nonFinite(a.value);
      return special ? goQuote(special) : fixed(a.value, DEFAULT_PRECISION);
    }
    default:
      throw new FormatError(`no formatting function for ${typeName(a)}`);
  }
}

function formatList(items: readonly FormatArg[]): string {
  return `[${items.map(formatMember).join(', ')}]`;
}

function formatMap(entries: ReadonlyArray<readonly [FormatArg, FormatArg]>): string {
  const pairs = entries.map(([k, v]) => {
    let key: string;
    if (k.type === 'string') key = goQuote(k.value);
    else if (k.type === 'bool') key = String(k.value);
    else if (k.type === 'int' || k.type === 'uint') key = k.value.toString();
    else throw new FormatError(`no formatting function for map key of type ${typeName(k)}`);
    return { key, value: formatMember(v) };
  });
  // Go's sort.SliceStable on the key strings (byte order, as UTF-16 order for these keys).
  pairs.sort((x, y) => (x.key < y.key ? -1 : x.key > y.key ? 1 : 0));
  return `{${pairs.map((p) => `${p.key}:${p.value}`).join(', ')}}`;
}

const floatArg = (a: FormatArg, clause: string): number => {
  if (a.type === 'double') return a.value;
  if (a.type === 'string' && (a.value === 'NaN' || a.value === 'Infinity' || a.value === '-Infinity'))
    return Number(a.value);
  throw new FormatError(`${clause} clause can only be used on doubles, was given ${typeName(a)}`);
};

const signedRadix = (v: bigint, radix: number): string => (v < 0n ? `-${(-v).toString(radix)}` : v.toString(radix));

type Clause = (a: FormatArg) => string;

/** Reads the optional `.N` precision at `at`: where the verb is, and the precision if any. */
function parsePrecision(s: string, at: number): { verbAt: number; precision?: number } {
  if (s[at] !== '.') return { verbAt: at };
  let i = at + 1;
  for (;;) {
    if (i >= s.length) {
      throw new FormatError(
        'could not parse formatting clause: error while parsing precision: could not find end of precision specifier',
      );
    }
    if (!(s[i]! >= '0' && s[i]! <= '9')) break;
    i++;
  }
  const digits = s.slice(at + 1, i);
  if (digits === '' || digits.length > 18) {
    const reason = digits === '' ? 'invalid syntax' : 'value out of range';
    throw new FormatError(
      `could not parse formatting clause: error while parsing precision: error while converting precision to ` +
        `integer: strconv.Atoi: parsing ${goQuote(digits)}: ${reason}`,
    );
  }
  return { verbAt: i, precision: Number(digits) };
}

/** `%x` and `%X`: integers in base 16, strings and bytes byte by byte. */
function hexClause(upper: boolean): Clause {
  return (a) => {
    let hex: string;
    if (a.type === 'int' || a.type === 'uint') hex = signedRadix(a.value, 16);
    else if (a.type === 'string' || a.type === 'bytes') {
      const bytes = a.type === 'string' ? new TextEncoder().encode(a.value) : a.value;
      hex = Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
    } else
      throw new FormatError(
        `only integers, byte buffers, and strings can be formatted as hex, was given ${typeName(a)}`,
      );
    return upper ? hex.toUpperCase() : hex;
  };
}

/** The formatter of a verb with its precision; refuses an unknown verb or too large a precision. */
function clauseFor(verb: string, precision: number | undefined): Clause {
  switch (verb) {
    case 's':
      return formatString;
    case 'd':
      return (a) => {
        if (a.type === 'int' || a.type === 'uint') return a.value.toString();
        throw new FormatError(`decimal clause can only be used on integers, was given ${typeName(a)}`);
      };
    case 'f': {
      const p = precision ?? DEFAULT_PRECISION;
      if (p > MAX_PRECISION)
        throw new FormatError(`could not parse formatting clause: precision ${p} is above ${MAX_PRECISION}`);
      return (a) => {
        const x = floatArg(a, 'fixed-point');
        return printedNonFinite(x) ?? groupThousands(fixed(x, p));
      };
    }
    case 'e': {
      // cel-go writes the precision as a width (`%6e`): the digits stay six.
      const width = precision ?? DEFAULT_PRECISION;
      return (a) => {
        const x = floatArg(a, 'scientific');
        return (printedNonFinite(x) ?? scientific(x)).padStart(Math.min(width, MAX_PRECISION));
      };
    }
    case 'b':
      return (a) => {
        if (a.type === 'int' || a.type === 'uint') return signedRadix(a.value, 2);
        if (a.type === 'bool') return a.value ? '1' : '0';
        throw new FormatError(`only integers and bools can be formatted as binary, was given ${typeName(a)}`);
      };
    case 'x':
    case 'X':
      return hexClause(verb === 'X');
    case 'o':
      return (a) => {
        if (a.type === 'int' || a.type === 'uint') return signedRadix(a.value, 8);
        throw new FormatError(`octal clause can only be used on integers, was given ${typeName(a)}`);
      };
    default:
      throw new FormatError(unknownVerb(verb));
  }
}

/** A clause after '%': its verb (`s`, `d`, …), its precision if any, and how many characters it takes. */
export interface ClauseText {
  verb: string;
  precision?: number;
  read: number;
}

/** Reads the clause after '%' at `at` (FormatError when its precision does not parse). */
export function readClause(s: string, at: number): ClauseText {
  const { verbAt: i, precision } = parsePrecision(s, at);
  // cel-go reads one byte as the verb: a multi-byte character shows as its first byte.
  const code = s.charCodeAt(i);
  const verb =
    code < 0x80 ? s[i]! : String.fromCharCode(new TextEncoder().encode(String.fromCodePoint(s.codePointAt(i)!))[0]!);
  return { verb, precision, read: i + 1 - at };
}

/** The verbs string.format knows. */
export const FORMAT_VERBS = new Set(['s', 'd', 'f', 'e', 'b', 'x', 'X', 'o']);

/** The message of a clause whose verb string.format does not know. */
export const unknownVerb = (verb: string): string =>
  `could not parse formatting clause: unrecognized formatting clause "${verb}"`;

/** Parses the clause after '%' at `at`: how many characters it takes and its formatter. */
function parseClause(s: string, at: number): { read: number; format: Clause } {
  const { verb, precision, read } = readClause(s, at);
  const clause = clauseFor(verb, precision);
  const format: Clause = (a) => {
    try {
      return clause(a);
    } catch (err) {
      if (err instanceof FormatError) throw new FormatError(`error during formatting: ${err.message}`);
      throw err;
    }
  };
  return { read, format };
}

/** `s.format(args)`: cel-go's string.format, one pass over the format string. */
export function stringFormat(s: string, args: readonly FormatArg[]): string {
  const out: string[] = [];
  let argIndex = 0;
  let literalStart = 0;
  let i = 0;
  while (i < s.length) {
    if (s[i] !== '%') {
      i++;
      continue;
    }
    out.push(s.slice(literalStart, i));
    if (s[i + 1] === '%') {
      out.push('%');
      i += 2;
      literalStart = i;
      continue;
    }
    if (argIndex >= args.length) throw new FormatError(`index ${argIndex} out of range`);
    if (i + 1 >= s.length) throw new FormatError('unexpected end of string');
    const { read, format } = parseClause(s, i + 1);
    out.push(format(args[argIndex]!));
    argIndex++;
    i += 1 + read;
    literalStart = i;
  }
  out.push(s.slice(literalStart));
  return out.join('');
}
