/**
 * Field and label selectors parsed into requirements as apimachinery parses them (fields.ParseSelector,
 * labels.ParseToRequirements), with its error messages word for word: what the API server hands its
 * authorizer for the authorizer library's `fieldSelector(s)` and `labelSelector(s)`. Both parsers
 * are linear scans (plus the sort of the terms), so a hostile selector cannot stall them.
 */
import { goQuote } from './go.ts';
import { goSort } from './gosort.ts';
import { labelValueErrors, qualifiedNameErrors } from './format.ts';

/** A field selector requirement (fields.Requirement): `==` reads as `=`. */
export interface FieldSelectorRequirement {
  /** The field as written before the operator (`spec.nodeName`), never unescaped. */
  field: string;
  /** `=` for `=` and `==`, `!=` for `!=`. */
  operator: '=' | '!=';
  /** The value with its escapes (`\\`, `\,`, `\=`) undone. */
  value: string;
}

/** apimachinery's selection.Operator values a label selector requirement can hold. */
export type LabelSelectorOperator = '=' | '==' | '!=' | 'in' | 'notin' | 'exists' | '!' | 'gt' | 'lt';

/** A label selector requirement (labels.Requirement): `values` sorted and unique, empty for `exists` and `!`. */
export interface LabelSelectorRequirement {
  /** The label key, a qualified name (`app`, `example.com/tier`). */
  key: string;
  /** The operator as written (`=` and `==` kept apart), `exists` for a bare key, `!` for `!key`. */
  operator: LabelSelectorOperator;
  /** The values, one for `=`, `==`, `!=`, `gt` and `lt`. */
  values: string[];
}

/** A parsed selector: its requirements, or the error apimachinery's parser gives. */
export type ParsedSelector<R> = { requirements: R[] } | { error: string };

/**
 * Go's `<` on strings (byte order of their UTF-8): UTF-16 code units reordered so that surrogates
 * (code points above U+FFFF) sort after U+E000–U+FFFF, as their UTF-8 bytes do.
 */
export function goStringCompare(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    let x = a.charCodeAt(i);
    let y = b.charCodeAt(i);
    if (x === y) continue;
    if (x >= 0xd800) x += x <= 0xdfff ? 0x2000 : -0x800;
    if (y >= 0xd800) y += y <= 0xdfff ? 0x2000 : -0x800;
    return x - y;
  }
  return a.length - b.length;
}

/** fields' splitTerms: the terms between commas a backslash does not escape. */
function splitTerms(selector: string): string[] {
  if (selector === '') return [];
  const terms: string[] = [];
  let start = 0;
  let inSlash = false;
  for (let i = 0; i < selector.length; i++) {
    const c = selector.charCodeAt(i);
    if (inSlash) inSlash = false;
    else if (c === 0x5c) inSlash = true;
    else if (c === 0x2c) {
      terms.push(selector.slice(start, i));
      start = i + 1;
    }
  }
  terms.push(selector.slice(start));
  return terms;
}

/** fields' splitTerm: split at the first `!=`, `==` or `=` (the field is never unescaped). */
function splitTerm(term: string): { lhs: string; op: '!=' | '==' | '='; rhs: string } | undefined {
  for (let i = 0; i < term.length; i++) {
    const c = term.charCodeAt(i);
    const next = term.charCodeAt(i + 1);
    if (c === 0x21 && next === 0x3d) return { lhs: term.slice(0, i), op: '!=', rhs: term.slice(i + 2) };
    if (c === 0x3d) {
      const op = next === 0x3d ? '==' : '=';
      return { lhs: term.slice(0, i), op, rhs: term.slice(i + op.length) };
    }
  }
  return undefined;
}

/** fields.UnescapeValue: `\\`, `\,` and `\=` unescaped; any other escape, or a bare `,` or `=`, an error. */
export function unescapeFieldValue(s: string): { value: string } | { error: string } {
  if (!/[\\,=]/.test(s)) return { value: s };
  const out: string[] = [];
  let inSlash = false;
  for (const c of s) {
    if (inSlash) {
      if (c !== '\\' && c !== ',' && c !== '=')
        return { error: `invalid field selector: invalid escape sequence: \\${c}` };
      out.push(c);
      inSlash = false;
    } else if (c === '\\') inSlash = true;
    // Go prints the rune with %v: its number.
    else if (c === ',' || c === '=')
      return { error: `invalid field selector: unescaped character in value: ${c.codePointAt(0)}` };
    else out.push(c);
  }
  if (inSlash) return { error: 'invalid field selector: invalid escape sequence: \\' };
  return { value: out.join('') };
}

/** fields.ParseSelector(selector).Requirements(): the terms sorted, empty ones skipped. */
export function parseFieldSelector(selector: string): ParsedSelector<FieldSelectorRequirement> {
  const parts = splitTerms(selector).sort(goStringCompare);
  const requirements: FieldSelectorRequirement[] = [];
  for (const part of parts) {
    if (part === '') continue;
    const term = splitTerm(part);
    if (!term) return { error: `invalid selector: '${selector}'; can't understand '${part}'` };
    const value = unescapeFieldValue(term.rhs);
    if ('error' in value) return value;
    requirements.push({ field: term.lhs, operator: term.op === '!=' ? '!=' : '=', value: value.value });
  }
  return { requirements };
}

// The label selector lexer's tokens (labels.Token), by their literal where they have one.
const Tok = {
  Error: 0,
  End: 1,
  ClosedPar: 2,
  Comma: 3,
  DoesNotExist: 4,
  DoubleEquals: 5,
  Equals: 6,
  GreaterThan: 7,
  Identifier: 8,
  In: 9,
  LessThan: 10,
  NotEquals: 11,
  NotIn: 12,
  OpenPar: 13,
} as const;
type Tok = (typeof Tok)[keyof typeof Tok];
const LITERAL_TOKENS: ReadonlyMap<string, Tok> = new Map([
  [')', Tok.ClosedPar],
  [',', Tok.Comma],
  ['!', Tok.DoesNotExist],
  ['==', Tok.DoubleEquals],
  ['=', Tok.Equals],
  ['>', Tok.GreaterThan],
  ['in', Tok.In],
  ['<', Tok.LessThan],
  ['!=', Tok.NotEquals],
  ['notin', Tok.NotIn],
  ['(', Tok.OpenPar],
]);

interface Scanned {
  tok: Tok;
  lit: string;
}

const isWhitespace = (c: number): boolean => c === 0x20 || c === 0x09 || c === 0x0d || c === 0x0a;
const isSpecial = (c: number): boolean =>
  c === 0x3d || c === 0x21 || c === 0x28 || c === 0x29 || c === 0x2c || c === 0x3e || c === 0x3c;

/**
 * labels' Lexer over the whole selector: Go reads bytes and takes a 0 for the end, so a NUL in the
 * selector ends a token or the selector as it does there.
 */
function scan(s: string): Scanned[] {
  let pos = 0;
  const read = (): number => (pos < s.length ? s.charCodeAt(pos++) : 0);
  const items: Scanned[] = [];
  for (;;) {
    let ch = read();
    while (isWhitespace(ch)) ch = read();
    if (ch === 0) {
      items.push({ tok: Tok.End, lit: '' });
      return items;
    }
    pos--;
    items.push(isSpecial(ch) ? scanSpecial() : scanIdentifier());
  }

  function scanIdentifier(): Scanned {
    const start = pos;
    // Ends at the end of the selector, before a NUL (consumed), or before a special or blank character.
    while (pos < s.length) {
      const ch = s.charCodeAt(pos);
      if (isSpecial(ch) || isWhitespace(ch)) break;
      pos++;
      if (ch === 0) break;
    }
    const lit = s.slice(start, s.charCodeAt(pos - 1) === 0 && pos > start ? pos - 1 : pos);
    return { tok: LITERAL_TOKENS.get(lit) ?? Tok.Identifier, lit };
  }

  function scanSpecial(): Scanned {
    let buffer = '';
    let last: Scanned | undefined;
    for (;;) {
      const ch = read();
      if (ch === 0) break;
      if (!isSpecial(ch)) {
        pos--;
        break;
      }
      buffer += String.fromCharCode(ch);
      const tok = LITERAL_TOKENS.get(buffer);
      if (tok !== undefined) last = { tok, lit: buffer };
      else if (last) {
        pos--;
        break;
      }
    }
    return last ?? { tok: Tok.Error, lit: `error expected: keyword found '${buffer}'` };
  }
}

/** A label parse failure, its message as Go's error gives it. */
class LabelParseError extends Error {}

/** labels' Parser over the scanned tokens: `in` and `notin` are identifiers where a value is read. */
class LabelParser {
  private position = 0;
  constructor(private readonly items: Scanned[]) {}

  lookahead(values: boolean): Scanned {
    return this.asRead(this.items[this.position]!, values);
  }
  consume(values: boolean): Scanned {
    return this.asRead(this.items[this.position++]!, values);
  }
  private asRead(item: Scanned, values: boolean): Scanned {
    return values && (item.tok === Tok.In || item.tok === Tok.NotIn) ? { tok: Tok.Identifier, lit: item.lit } : item;
  }

  parse(): LabelSelectorRequirement[] {
    const requirements: LabelSelectorRequirement[] = [];
    for (;;) {
      const { tok, lit } = this.lookahead(true);
      if (tok === Tok.End) return requirements;
      if (tok !== Tok.Identifier && tok !== Tok.DoesNotExist)
        throw new LabelParseError(`found '${lit}', expected: !, identifier, or 'end of string'`);
      try {
        requirements.push(this.parseRequirement());
      } catch (err) {
        throw new LabelParseError(`unable to parse requirement: ${(err as Error).message}`);
      }
      const after = this.consume(true);
      if (after.tok === Tok.End) return requirements;
      if (after.tok !== Tok.Comma) throw new LabelParseError(`found '${after.lit}', expected: ',' or 'end of string'`);
      const next = this.lookahead(true);
      if (next.tok !== Tok.Identifier && next.tok !== Tok.DoesNotExist)
        throw new LabelParseError(`found '${next.lit}', expected: identifier after ','`);
    }
  }

  private parseRequirement(): LabelSelectorRequirement {
    let { tok, lit } = this.consume(true);
    let operator: LabelSelectorOperator | undefined;
    if (tok === Tok.DoesNotExist) {
      operator = '!';
      ({ tok, lit } = this.consume(true));
    }
    if (tok !== Tok.Identifier) throw new LabelParseError(`found '${lit}', expected: identifier`);
    const key = lit;
    const keyErrors = qualifiedNameErrors(key);
    // The parser validates the key with no field path: Go prints a nil path as <nil>.
    if (keyErrors.length > 0) throw new LabelParseError(invalid('<nil>', key, keyErrors));
    const next = this.lookahead(true).tok;
    if (operator !== '!' && (next === Tok.End || next === Tok.Comma)) operator = 'exists';
    if (operator !== undefined) return newRequirement(key, operator, []);
    operator = this.parseOperator();
    const values = operator === 'in' || operator === 'notin' ? this.parseValues() : this.parseExactValue();
    return newRequirement(key, operator, [...values].sort(goStringCompare));
  }

  private parseOperator(): LabelSelectorOperator {
    const { tok, lit } = this.consume(false);
    const operator = OPERATORS.get(tok);
    if (operator === undefined) throw new LabelParseError(`found '${lit}', expected: '=', '!=', '==', 'in', notin'`);
    return operator;
  }

  private parseValues(): Set<string> {
    const open = this.consume(true);
    if (open.tok !== Tok.OpenPar) throw new LabelParseError(`found '${open.lit}' expected: '('`);
    const { tok, lit } = this.lookahead(true);
    if (tok === Tok.ClosedPar) {
      this.consume(true);
      return new Set(['']);
    }
    if (tok !== Tok.Identifier && tok !== Tok.Comma)
      throw new LabelParseError(`found '${lit}', expected: ',', ')' or identifier`);
    const values = this.parseIdentifiersList();
    // parseIdentifiersList returns only before a ')'.
    this.consume(true);
    return values;
  }

  private parseIdentifiersList(): Set<string> {
    const values = new Set<string>();
    for (;;) {
      const { tok, lit } = this.consume(true);
      if (tok === Tok.Identifier) {
        values.add(lit);
        const next = this.lookahead(true);
        if (next.tok === Tok.ClosedPar) return values;
        if (next.tok !== Tok.Comma) throw new LabelParseError(`found '${next.lit}', expected: ',' or ')'`);
      } else if (tok === Tok.Comma) {
        if (values.size === 0) values.add('');
        const next = this.lookahead(true).tok;
        if (next === Tok.ClosedPar) {
          values.add('');
          return values;
        }
        if (next === Tok.Comma) {
          this.consume(true);
          values.add('');
        }
      } else throw new LabelParseError(`found '${lit}', expected: ',', or identifier`);
    }
  }

  private parseExactValue(): Set<string> {
    const next = this.lookahead(true).tok;
    if (next === Tok.End || next === Tok.Comma) return new Set(['']);
    const { tok, lit } = this.consume(true);
    if (tok === Tok.Identifier) return new Set([lit]);
    throw new LabelParseError(`found '${lit}', expected: identifier`);
  }
}

const OPERATORS: ReadonlyMap<Tok, LabelSelectorOperator> = new Map([
  [Tok.In, 'in'],
  [Tok.Equals, '='],
  [Tok.DoubleEquals, '=='],
  [Tok.GreaterThan, 'gt'],
  [Tok.LessThan, 'lt'],
  [Tok.NotIn, 'notin'],
  [Tok.NotEquals, '!='],
]);

/** A field.Invalid error's text: `<path>: Invalid value: "<value>": <details joined by "; ">`. */
const invalid = (path: string, value: string, details: string[]): string =>
  `${path}: Invalid value: ${goQuote(value)}: ${details.join('; ')}`;

/** strconv.ParseInt(s, 10, 64) succeeds: an optional sign, decimal digits, within int64. */
function isInt64(s: string): boolean {
  const m = /^([+-]?)0*(\d*)$/.exec(s);
  if (!m || !/\d/.test(s)) return false;
  const digits = m[2]!;
  // More than 19 significant digits is out of range whatever they are; fewer fit a BigInt quickly.
  if (digits.length > 19) return false;
  const n = BigInt(`${m[1]}${digits || '0'}`);
  return n >= -(2n ** 63n) && n < 2n ** 63n;
}

/**
 * labels.NewRequirement's checks, the field paths relative to none (`values[0]`), its errors
 * deduplicated and listed as an aggregate error prints them (`[a, b]` when more than one).
 */
function newRequirement(key: string, operator: LabelSelectorOperator, values: string[]): LabelSelectorRequirement {
  const errors: string[] = [];
  const keyErrors = qualifiedNameErrors(key);
  if (keyErrors.length > 0) errors.push(invalid('key', key, keyErrors));
  if (operator === 'gt' || operator === 'lt')
    values.forEach((v, i) => {
      if (!isInt64(v))
        errors.push(invalid(`values[${i}]`, v, ["for 'Gt', 'Lt' operators, the value must be an integer"]));
    });
  values.forEach((v, i) => {
    const valueErrors = labelValueErrors(v);
    if (valueErrors.length > 0) errors.push(invalid(`values[${i}][${key}]`, v, valueErrors));
  });
  const unique = [...new Set(errors)];
  if (unique.length === 1) throw new LabelParseError(unique[0]);
  if (unique.length > 1) throw new LabelParseError(`[${unique.join(', ')}]`);
  return { key, operator, values };
}

/**
 * labels.ParseToRequirements(selector): the requirements sorted by key as Go's sort.Sort leaves
 * them (requirements of one key in its order, which is not always the written one past 12), or
 * the parser's error.
 */
export function parseLabelSelector(selector: string): ParsedSelector<LabelSelectorRequirement> {
  try {
    const requirements = new LabelParser(scan(selector)).parse();
    return { requirements: goSort(requirements, (a, b) => goStringCompare(a.key, b.key) < 0) };
  } catch (err) {
    if (err instanceof LabelParseError) return { error: err.message };
    throw err;
  }
}
