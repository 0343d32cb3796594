/**
 * Number literals cel-go's lexer reads that the engine's does not: a double without digits before
 * its point (`.5`, `-.25e1`). The text is given a `0` before such a point before it is parsed, and
 * offsets in the parsed text are mapped back to the text as written.
 */

/** Characters after which a `.` selects a field or calls a member: not the start of a number. */
const BEFORE_SELECT = /[\w)\]}"'`]/;

/** The end of the string literal that starts at `i` (a quote, single or tripled). */
function stringEnd(text: string, i: number): number {
  const quote = text[i]!;
  const triple = text.startsWith(quote.repeat(3), i);
  const close = triple ? quote.repeat(3) : quote;
  const raw = i > 0 && /[rR]/.test(text[i - 1]!) && !/\w/.test(text[i - 2] ?? '');
  let j = i + close.length;
  while (j < text.length) {
    if (!raw && text[j] === '\\') j += 2;
    else if (text.startsWith(close, j)) return j + close.length;
    else j++;
  }
  return j;
}

/** The text with a `0` before each point that starts a number, and the offsets (as written) given one. */
export function withLeadingZeros(text: string): { text: string; inserted: number[] } {
  const inserted: number[] = [];
  let out = '';
  let copied = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === '"' || c === "'") {
      i = stringEnd(text, i) - 1;
      continue;
    }
    if (c === '.' && /[0-9]/.test(text[i + 1] ?? '') && !BEFORE_SELECT.test(text[i - 1] ?? ' ')) {
      out += `${text.slice(copied, i)}0`;
      copied = i;
      inserted.push(i);
    }
  }
  return inserted.length ? { text: out + text.slice(copied), inserted } : { text, inserted };
}

/** An offset in the rewritten text as an offset in the text as written. */
export function writtenOffset(offset: number, inserted: readonly number[]): number {
  let shift = 0;
  for (const at of inserted) if (at + shift < offset) shift++;
  return offset - shift;
}
