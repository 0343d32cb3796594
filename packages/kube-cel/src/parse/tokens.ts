/**
 * cel-go's lexer, as far as parse-limits.ts needs it: the tokens' kinds and offsets, and the
 * number literals' text; cel-go's range checks of number literals; its parser's limits and words.
 */

/** cel-go's default parser recursion limit (parser.MaxRecursionDepth). */
export const MAX_RECURSION_DEPTH = 250;
/** cel-go's default limit on an expression's size in code points (parser.ExpressionSizeCodePointLimit). */
export const EXPRESSION_SIZE_CODE_POINT_LIMIT = 100_000;
/** cel-go's words for an expression nested past its parse listener's limit. */
export const RECURSION_LIMIT_MESSAGE = `expression recursion limit exceeded: ${MAX_RECURSION_DEPTH}`;
/** cel-go's words for a parse tree deeper than its visitor walks. */
export const VISIT_DEPTH_MESSAGE = 'max recursion depth exceeded';

/** What can start an expression, as ANTLR lists the tokens it expected instead. */
export const EXPRESSION_START = new Set(['[', '{', '(', '.', '-', '!', 'lit', 'num', 'id']);
export const EXPECTING_EXPRESSION =
  "{'[', '{', '(', '.', '-', '!', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}";
/** A refusal at an offset of the expression. */
export type PlacedError = { summary: string; range: { start: number } };

/** A token: its kind (`id`, `lit`, `num`, `eof` or the operator's text). */
export type Kind = string;

const TWO_CHAR = new Set(['==', '!=', '<=', '>=', '&&', '||']);
const ONE_CHAR = new Set([...'<>[]{}().,-!?:+*/%']);
const KEYWORD_LITERALS = new Set(['true', 'false', 'null']);
const IDENT = /[A-Za-z_][A-Za-z0-9_]*/y;
const NUMBER = /(?:0[xX][0-9a-fA-F]+[uU]?|[0-9]+(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?[uU]?|\.[0-9]+(?:[eE][+-]?[0-9]+)?)/y;
const ESCAPED_IDENT = /`[A-Za-z0-9_./\- ]+`/y;
/**
 * Characters that start no token and no longer one: cel-go's lexer reports each alone (`&`, `|`,
 * `=`, quotes and backticks start longer tokens, whose errors are worded otherwise).
 */
const LONE = /[^&|="'`\s\w\\]/u;
const STRING_PREFIX = /(?:[bB][rR]?|[rR])?(?:"""|'''|"|')/y;

/** Thrown when the text is not well formed: the engine's parser reports it. */
export const NOT_WELL_FORMED = Symbol('not well formed');

/** The end of the string literal (prefix included) starting at `i`, which STRING_PREFIX matched. */
function stringEnd(text: string, i: number, opening: string): number {
  const raw = /[rR]/.test(opening);
  const close = opening.replace(/^[bBrR]+/, '');
  let j = i + opening.length;
  while (j < text.length) {
    if (text.startsWith(close, j)) return j + close.length;
    const c = text[j]!;
    if (close.length === 1 && (c === '\n' || c === '\r')) break;
    j += !raw && c === '\\' ? 2 : 1;
  }
  throw NOT_WELL_FORMED;
}

/** The tokens of a text: their kinds, offsets, and the text of number literals. */
export interface Tokens {
  kinds: Kind[];
  offsets: number[];
  /** Where each token ends. */
  ends: number[];
  numbers: Map<number, string>;
  /** The text of the token at an index. */
  texts(index: number): string;
  /** The text read. */
  source: string;
  /** cel-go's lexer errors: characters it skipped. */
  unknown: Array<{ summary: string; range: { start: number } }>;
}

/** The text's tokens as cel-go's lexer reads them (whitespace and comments skipped). */
export function tokenize(text: string): Tokens {
  const kinds: Kind[] = [];
  const offsets: number[] = [];
  const ends: number[] = [];
  const numbers = new Map<number, string>();
  const unknown: Tokens['unknown'] = [];
  let i = 0;
  const at = (re: RegExp): string | undefined => {
    re.lastIndex = i;
    return re.exec(text)?.[0];
  };
  while (i < text.length) {
    const c = text[i]!;
    if (c === ' ' || c === '\t' || c === '\n' || c === '\r' || c === '\f') i++;
    else if (text.startsWith('//', i)) {
      const end = text.indexOf('\n', i);
      i = end < 0 ? text.length : end;
    } else {
      offsets.push(i);
      const opening = at(STRING_PREFIX);
      const word = opening === undefined ? at(IDENT) : undefined;
      const number = opening === undefined && word === undefined ? at(NUMBER) : undefined;
      if (opening !== undefined) {
        i = stringEnd(text, i, opening);
        kinds.push('lit');
      } else if (word !== undefined) {
        i += word.length;
        kinds.push(KEYWORD_LITERALS.has(word) ? 'lit' : word === 'in' ? 'in' : 'id');
      } else if (number !== undefined) {
        numbers.set(kinds.length, number);
        i += number.length;
        kinds.push('num');
      } else if (TWO_CHAR.has(text.slice(i, i + 2))) {
        kinds.push(text.slice(i, i + 2));
        i += 2;
      } else if (ONE_CHAR.has(c)) {
        kinds.push(c);
        i++;
      } else {
        const escaped = at(ESCAPED_IDENT);
        if (escaped !== undefined) {
          i += escaped.length;
          kinds.push('escaped');
        } else {
          // A character no token starts with: cel-go's lexer reports it and goes on after it.
          if (!LONE.test(c)) throw NOT_WELL_FORMED;
          offsets.pop();
          const char = String.fromCodePoint(text.codePointAt(i)!);
          // A lone surrogate is U+FFFD to the API server, which decodes the expression as UTF-8.
          const shown = /^[\ud800-\udfff]$/.test(char) ? '\ufffd' : char;
          unknown.push({ summary: `Syntax error: token recognition error at: '${shown}'`, range: { start: i } });
          i += char.length;
        }
      }
      if (ends.length < kinds.length) ends.push(i);
    }
  }
  offsets.push(text.length);
  ends.push(text.length);
  kinds.push('eof');
  const texts = (index: number) => text.slice(offsets[index], ends[index]);
  return { kinds, offsets, ends, numbers, unknown, texts, source: text };
}

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;
const UINT64_MAX = 2n ** 64n - 1n;

/** cel-go's refusal of a number literal (with its sign, if any) it cannot hold, if it cannot. */
export function numberProblem(written: string, negative: boolean): string | undefined {
  const hex = /^0[xX]/.test(written);
  if (/[uU]$/.test(written)) return BigInt(written.slice(0, -1)) > UINT64_MAX ? 'invalid uint literal' : undefined;
  if (!hex && /[.eE]/.test(written)) return Number.isFinite(Number(written)) ? undefined : 'invalid double literal';
  const value = negative ? -BigInt(written) : BigInt(written);
  return value < INT64_MIN || value > INT64_MAX ? 'invalid int literal' : undefined;
}

/** The number of code points of a text (a lone surrogate counts as one, as Go reads it: U+FFFD). */
export function codePoints(text: string): number {
  let n = 0;
  for (const _ of text) n++;
  return n;
}
