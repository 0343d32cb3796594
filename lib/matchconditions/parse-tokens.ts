/**
 * cel-go's lexer, as far as its parser's limits need it (parse-limits.ts): the tokens' kinds and
 * offsets, and the number literals' text; and cel-go's range checks of number literals.
 */

/** A token: its kind (`id`, `lit`, `num`, `eof` or the operator's text). */
export type Kind = string;

const TWO_CHAR = new Set(['==', '!=', '<=', '>=', '&&', '||']);
const ONE_CHAR = new Set([...'<>[]{}().,-!?:+*/%']);
const KEYWORD_LITERALS = new Set(['true', 'false', 'null']);
const IDENT = /[A-Za-z_][A-Za-z0-9_]*/y;
const NUMBER = /(?:0[xX][0-9a-fA-F]+[uU]?|[0-9]+(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?[uU]?|\.[0-9]+(?:[eE][+-]?[0-9]+)?)/y;
const ESCAPED_IDENT = /`[A-Za-z0-9_./\- ]+`/y;
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
  numbers: Map<number, string>;
}

/** The text's tokens as cel-go's lexer reads them (whitespace and comments skipped). */
export function tokenize(text: string): Tokens {
  const kinds: Kind[] = [];
  const offsets: number[] = [];
  const numbers = new Map<number, string>();
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
        if (escaped === undefined) throw NOT_WELL_FORMED;
        i += escaped.length;
        kinds.push('escaped');
      }
    }
  }
  offsets.push(text.length);
  kinds.push('eof');
  return { kinds, offsets, numbers };
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
