/**
 * Object construction for the mutating-policy environment: `Object{spec: Object.spec{...}}` and
 * `JSONPatch{op: 'add', path: '/x', value: 1}`, which the parser does not read, rewritten before
 * parsing into map literals that carry their type name under OBJECT_TYPE_KEY
 * (`{"\u0000@type": dyn("Object.spec"), "replicas": dyn(1)}`, each value wrapped in dyn() as
 * the fields of a dynamic object hold values of any type). Field access, has() and equality then
 * work on them as on the objects the API server builds; whoever evaluates the expression reads
 * the type names back (and strips them) from the result. `jsonpatch.escapeKey(k)` is rewritten
 * into the two replacements it makes.
 */

/** The key under which a constructed object's type name is kept (a NUL cannot begin a field name). */
export const OBJECT_TYPE_KEY = '\u0000@type';

/** The source of OBJECT_TYPE_KEY as a CEL string literal. */
const TYPE_KEY_LITERAL = '"\\u0000@type"';

const IDENT = /[A-Za-z_][A-Za-z0-9_]*/y;

/** Where the string literal or comment starting at `i` ends, or `i` when none starts there. */
function skipLiteral(text: string, i: number): number {
  if (text.startsWith('//', i)) {
    const end = text.indexOf('\n', i);
    return end < 0 ? text.length : end;
  }
  let j = i;
  let raw = false;
  while (j < i + 2 && /[rRbB]/.test(text[j] ?? '') && !/[A-Za-z0-9_]/.test(text[i - 1] ?? '')) {
    if (/[rR]/.test(text[j] as string)) raw = true;
    j++;
  }
  const quote = text[j];
  if (quote !== '"' && quote !== "'") return i;
  const triple = text.startsWith(quote.repeat(3), j);
  const close = triple ? quote.repeat(3) : quote;
  let k = j + close.length;
  while (k < text.length) {
    if (!raw && text[k] === '\\') k += 2;
    else if (text.startsWith(close, k)) return k + close.length;
    else if (!triple && text[k] === '\n') return k;
    else k++;
  }
  return text.length;
}

/** The index of the bracket closing the one at `open`, or -1. */
function closing(text: string, open: number): number {
  let depth = 0;
  for (let i = open; i < text.length; ) {
    const skipped = skipLiteral(text, i);
    if (skipped !== i) {
      i = skipped;
      continue;
    }
    const c = text[i] as string;
    if ('([{'.includes(c)) depth++;
    else if (')]}'.includes(c) && --depth === 0) return i;
    i++;
  }
  return -1;
}

/** The text split at its top-level commas. */
function topLevelParts(text: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < text.length; ) {
    const skipped = skipLiteral(text, i);
    if (skipped !== i) {
      i = skipped;
      continue;
    }
    const c = text[i] as string;
    if ('([{'.includes(c)) depth++;
    else if (')]}'.includes(c)) depth--;
    else if (c === ',' && depth === 0) {
      parts.push(text.slice(start, i));
      start = i + 1;
    }
    i++;
  }
  const last = text.slice(start);
  if (last.trim() !== '' || parts.length === 0) parts.push(last);
  return parts;
}

/** The qualified name starting at `i` (`Object . spec`), its text end, or undefined. */
function qualifiedName(text: string, i: number): { name: string; end: number } | undefined {
  const names: string[] = [];
  let j = i;
  for (;;) {
    IDENT.lastIndex = j;
    const m = IDENT.exec(text);
    if (!m) return names.length ? { name: names.join('.'), end: j } : undefined;
    names.push(m[0]);
    j = IDENT.lastIndex;
    const dot = /\s*\.\s*/y;
    dot.lastIndex = j;
    if (!dot.exec(text)) return { name: names.join('.'), end: j };
    const after = dot.lastIndex;
    IDENT.lastIndex = after;
    if (!IDENT.exec(text)) return { name: names.join('.'), end: j };
    j = after;
  }
}

const constructible = (name: string) => name === 'JSONPatch' || name === 'Object' || name.startsWith('Object.');

/** The fields of a construction as a map literal, or undefined when a field is not `name: value`. */
function fieldsLiteral(type: string, body: string): string | undefined {
  const entries = [`${TYPE_KEY_LITERAL}: dyn(${JSON.stringify(type)})`];
  for (const part of topLevelParts(body)) {
    if (part.trim() === '') continue;
    const m = /^\s*([A-Za-z_][A-Za-z0-9_]*)\s*:([\s\S]*)$/.exec(part);
    if (!m) return undefined;
    entries.push(`${JSON.stringify(m[1])}: dyn(${rewriteObjectConstruction(m[2] as string)})`);
  }
  return `{${entries.join(', ')}}`;
}

/**
 * The expression with each object construction (`Object...{}` and `JSONPatch{}`) rewritten into a
 * map literal; other text as written. A construction whose fields are not `name: value` is left
 * for the parser to refuse.
 */
export function rewriteObjectConstruction(text: string): string {
  let out = '';
  let i = 0;
  while (i < text.length) {
    const skipped = skipLiteral(text, i);
    if (skipped !== i) {
      out += text.slice(i, skipped);
      i = skipped;
      continue;
    }
    const previous = out.trimEnd().at(-1) ?? '';
    const startsName = /[A-Za-z_]/.test(text[i] as string) && !/[A-Za-z0-9_.]/.test(previous);
    const q = startsName ? qualifiedName(text, i) : undefined;
    if (q?.name === 'jsonpatch.escapeKey') {
      const paren = /\s*\(/y;
      paren.lastIndex = q.end;
      const close = paren.exec(text) ? closing(text, paren.lastIndex - 1) : -1;
      if (close > 0) {
        // jsonpatch.escapeKey(k): `~` as `~0`, then `/` as `~1`, as the API server's library escapes.
        const argument = rewriteObjectConstruction(text.slice(paren.lastIndex, close));
        out += `(${argument}).replace("~", "~0").replace("/", "~1")`;
        i = close + 1;
        continue;
      }
    }
    if (q && constructible(q.name)) {
      const brace = /\s*\{/y;
      brace.lastIndex = q.end;
      if (brace.exec(text)) {
        const open = brace.lastIndex - 1;
        const close = closing(text, open);
        const literal = close > 0 ? fieldsLiteral(q.name, text.slice(open + 1, close)) : undefined;
        if (literal !== undefined) {
          i = close + 1;
          // JSONPatch's op, path and from are strings (the map's values are dyn): typed as such when read,
          // except under has(), which needs the field selection itself.
          const field = q.name === 'JSONPatch' ? /\s*\.\s*(op|path|from)\b/y : undefined;
          if (field) field.lastIndex = i;
          const read = field?.exec(text);
          if (read && !/has\(\s*$/.test(out)) {
            out += `string(${literal}.${read[1]})`;
            i = field!.lastIndex;
          } else out += literal;
          continue;
        }
      }
    }
    if (q) {
      out += text.slice(i, q.end);
      i = q.end;
    } else {
      out += text[i];
      i++;
    }
  }
  return out;
}
