/** Compile and evaluation errors in cel-go's words, with the environment's internal names given back. */
import type { CompileError } from './cel.ts';

/**
 * The name member calls of `matches` are given before checking, so they reach the RE2
 * overload (the engine refuses a second `string.matches`); never written by users.
 */
export const RE2_MATCHES = 'matches__re2';
/** The suffix of the environment's own overloads of names the engine also declares (its UTF-16 strings). */
export const RENAMED = '__k8s';

/** Internal names in messages: the name the user wrote is before the suffix. */
const INTERNAL_NAME = /(\w+)__(?:re2|k8s)\b/g;
/** Namespace types in messages: `kubernetes.lib.strings.quote` is `strings.quote`. */
const NAMESPACE_TYPE = /\bkubernetes\.lib\.(\w+)\b/g;

/** cel-go's words for a key or field a map lacks, which the engine capitalizes. */
const NO_SUCH_KEY = /^No such key: /;

/**
 * An evaluation error in cel-go's words: the internal name of `matches` given back its own,
 * and a missing key as `no such key: <name>`.
 */
export function internalNames(err: unknown): unknown {
  if (!err || typeof err !== 'object') return err;
  for (const key of ['message', 'summary'] as const) {
    const said = (err as Record<string, unknown>)[key];
    if (typeof said !== 'string') continue;
    const words = userNames(said).replace(NO_SUCH_KEY, 'no such key: ');
    // The engine's `summary` is a getter: the corrected words are defined over it.
    if (words !== said) Object.defineProperty(err, key, { value: words, configurable: true, writable: true });
  }
  return err;
}

/** A message with the environment's internal names given back as the user wrote them. */
function userNames(said: string): string {
  return said.replace(INTERNAL_NAME, '$1').replace(NAMESPACE_TYPE, '$1');
}

/** 1-based line and 0-based column, in code points as cel-go counts them, of `offset` in the expression. */
function position(expression: string, offset: number): { line: number; column: number } {
  const lines = expression.slice(0, Math.max(0, offset)).split('\n');
  return { line: lines.length, column: [...lines.at(-1)!].length };
}

/** cel-go's marks under a source line: a dot per character before the column, wide for one beyond ASCII. */
function caretLine(source: string, column: number): string {
  const chars = [...source];
  const wide = (c: string | undefined) => c !== undefined && c.codePointAt(0)! > 0x7f;
  const dots = chars.slice(0, column).map((c) => (wide(c) ? '\uff0e' : '.'));
  return `${dots.join('')}${wide(chars[column]) ? '\uff3e' : '^'}`;
}

/** An error cel-go reports without a position (the parser's limits): `<input>:-1:0`, no source line. */
export interface UnplacedError {
  summary: string;
  unplaced: true;
}

/**
 * A compile error as cel-go's issues print it: `ERROR: <input>:line:column: message`, then the
 * source line (tabs as spaces) and a caret under the column (`<input>:-1:0` and neither for an
 * UnplacedError).
 */
export function compileError(expression: string, err: unknown, renamed = true): CompileError {
  const e = err as { summary?: string; message?: string; range?: { start: number }; unplaced?: boolean };
  // cel-go's parser words a reserved word used as an identifier in lower case.
  const said = (e.summary ?? e.message ?? String(err)).replace(/^Reserved identifier: /, 'reserved identifier: ');
  // The checker names the RE2 overload of `matches`, which the user wrote as `matches`.
  const summary = renamed ? userNames(said) : said;
  if (e.unplaced) return { message: `compilation failed: ERROR: <input>:-1:0: ${summary}`, line: -1, column: 0 };
  const { line, column } = position(expression, e.range?.start ?? 0);
  const source = (expression.split('\n')[line - 1] ?? '').replace(/\t/g, ' ');
  return {
    message: `compilation failed: ERROR: <input>:${line}:${column + 1}: ${summary}\n | ${source}\n | ${caretLine(source, column)}`,
    line,
    column: column + 1,
  };
}

/** Several compile errors, one after the other as cel-go prints them; the first one's position. */
export function compileErrors(expression: string, errs: readonly unknown[]): CompileError {
  const [first, ...rest] = errs.map((err) => compileError(expression, err));
  const more = rest.map((e) => `\n${e.message.replace(/^compilation failed: /, '')}`);
  return { ...first!, message: first!.message + more.join('') };
}
