/**
 * Literals cel-go's lexer reads that the engine's does not, rewritten before the text is parsed: a
 * double without digits before its point (`.5`, `-.25e1`) is given a `0`; a bytes literal is given
 * its bytes as `\x` escapes where the engine would read them otherwise (raw bytes, `br'\d'`, and
 * characters beyond ASCII, which are their UTF-8 bytes). Offsets in the parsed text are mapped back
 * to the text as written.
 */

/** Characters after which a `.` selects a field or calls a member: not the start of a number. */
const BEFORE_SELECT = /[\w)\]}"'`]/;
const UTF8 = new TextEncoder();

/** One rewrite: `length` characters of the text as written at `at`, replaced by `by`. */
export interface Edit {
  at: number;
  length: number;
  by: string;
}

/** The string literal at `i` (its opening quote): its prefix (`r`, `b`, `br`…), end and content. */
function stringAt(
  text: string,
  i: number,
): { prefix: string; quotes: string; start: number; end: number; content: string } {
  let start = i;
  while (start > 0 && i - start < 2 && /[bBrR]/.test(text[start - 1]!)) start--;
  // A prefix is one only when it is not the tail of an identifier (`attr'…'` is no literal anyway).
  if (start > 0 && /\w/.test(text[start - 1]!)) start = i;
  const prefix = text.slice(start, i).toLowerCase();
  const quote = text[i]!;
  const close = text.startsWith(quote.repeat(3), i) ? quote.repeat(3) : quote;
  const raw = prefix.includes('r');
  let j = i + close.length;
  while (j < text.length && !text.startsWith(close, j)) j += !raw && text[j] === '\\' ? 2 : 1;
  const end = Math.min(j + close.length, text.length);
  return { prefix, quotes: close, start, end, content: text.slice(i + close.length, j) };
}

const hex = (bytes: Uint8Array): string => [...bytes].map((b) => `\\x${b.toString(16).padStart(2, '0')}`).join('');

/** The rewrite of a bytes literal the engine would read otherwise, if any. */
function bytesEdit(literal: ReturnType<typeof stringAt>): Edit | undefined {
  if (!literal.prefix.includes('b')) return undefined;
  const length = literal.end - literal.start;
  if (literal.prefix.includes('r')) return { at: literal.start, length, by: `b"${hex(UTF8.encode(literal.content))}"` };
  if (/^[\u0000-\u007f]*$/.test(literal.content)) return undefined;
  const body = literal.content.replace(/[^\u0000-\u007f]+/gu, (chars) => hex(UTF8.encode(chars)));
  return { at: literal.start, length, by: `b${literal.quotes}${body}${literal.quotes}` };
}

/** The text with its literals rewritten for the engine, and the edits made (in order). */
export function rewriteLiterals(text: string): { text: string; edits: Edit[] } {
  const edits: Edit[] = [];
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === '"' || c === "'") {
      const literal = stringAt(text, i);
      const edit = bytesEdit(literal);
      if (edit) edits.push(edit);
      i = literal.end - 1;
    } else if (c === '.' && /[0-9]/.test(text[i + 1] ?? '') && !BEFORE_SELECT.test(text[i - 1] ?? ' ')) {
      edits.push({ at: i, length: 0, by: '0' });
    }
  }
  if (!edits.length) return { text, edits };
  let out = '';
  let copied = 0;
  for (const e of edits) {
    out += text.slice(copied, e.at) + e.by;
    copied = e.at + e.length;
  }
  return { text: out + text.slice(copied), edits };
}

/** An offset in the rewritten text as an offset in the text as written (a rewrite's start inside it). */
export function writtenOffset(offset: number, edits: readonly Edit[]): number {
  let shift = 0;
  for (const e of edits) {
    const start = e.at + shift;
    if (offset < start) break;
    if (offset < start + e.by.length) return e.at;
    shift += e.by.length - e.length;
  }
  return offset - shift;
}

/** cel-go's ESC_IDENTIFIER token: a backtick-quoted field name (ASCII letters, digits, `_.-/`, spaces). */
const ESCAPED_FIELD = /`[A-Za-z0-9_./\- ]+`/y;

/** True when a field selection (`.` or `.?`, whitespace between) ends just before offset `i`. */
function afterSelect(text: string, i: number): boolean {
  let j = i - 1;
  while (j >= 0 && /\s/.test(text[j]!)) j--;
  if (text[j] === '?') j--;
  while (j >= 0 && /\s/.test(text[j]!)) j--;
  return text[j] === '.';
}

/** The offset of the first backtick-quoted field selection (a.`b-c`) outside string literals, if any. */
export function escapedFieldAt(text: string): number | undefined {
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === '"' || c === "'") i = stringAt(text, i).end - 1;
    else if (c === '`' && afterSelect(text, i)) {
      ESCAPED_FIELD.lastIndex = i;
      if (ESCAPED_FIELD.test(text)) return i;
    }
  }
  return undefined;
}

/** An error whose position is in the rewritten text, with its position in the text as written. */
export function inWrittenText(err: unknown, edits: readonly Edit[]): unknown {
  const e = err as { summary?: string; message?: string; range?: { start: number } } | undefined;
  if (!edits.length || !e?.range) return err;
  return { summary: e.summary ?? e.message ?? String(err), range: { start: writtenOffset(e.range.start, edits) } };
}
