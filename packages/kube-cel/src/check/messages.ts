/** Compile and evaluation errors in cel-go's words, with the environment's internal names given back. */
import type { CompileError } from './compile-error.ts';
import { RECURSION_LIMIT_MESSAGE } from '../parse/tokens.ts';

/**
 * The name member calls of `matches` are given before checking, so they reach the RE2
 * overload (the engine refuses a second `string.matches`); never written by users.
 */
export const RE2_MATCHES = 'matches__re2';
/** The suffix of the environment's own overloads of names the engine also declares (its UTF-16 strings). */
export const RENAMED = '__k8s';

/**
 * The suffix of an internal name in a message: the name the user wrote is before it. Matched
 * from the suffix (a `(\w+)` before it would rescan every long word of a message: quadratic).
 */
const INTERNAL_NAME = /(?<=\w)__(?:re2|k8s)\b/g;
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
  return said.replace(INTERNAL_NAME, '').replace(NAMESPACE_TYPE, '$1');
}

/** 1-based line and column of `offset` in the expression, the column in code points as cel-go counts. */
function position(expression: string, offset: number): { line: number; column: number } {
  const before = expression.slice(0, Math.max(0, offset));
  const lines = before.split('\n');
  return { line: lines.length, column: [...lines.at(-1)!].length + 1 };
}

/** A UTF-16 surrogate without its pair. */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/** One error as cel-go displays it: `ERROR: <input>:line:column: message`, the line, dots to a caret. */
function display(expression: string, line: number, column: number, message: string): string {
  if (line < 1) return `ERROR: <input>:${line}:${column}: ${message}`;
  // cel-go shows a tab of the line as a space.
  // A lone surrogate is U+FFFD to the API server, which reads the expression from JSON as UTF-8.
  const text = [...(expression.split('\n')[line - 1] ?? '').replaceAll('\t', ' ').replace(LONE_SURROGATE, '\ufffd')];
  // cel-go marks a character of more than one UTF-8 byte with a full-width dot (and caret).
  const wide = (c: string | undefined) => c !== undefined && c.codePointAt(0)! > 0x7f;
  const dots = text
    .slice(0, column - 1)
    .map((c) => (wide(c) ? '\uff0e' : '.'))
    .join('');
  const caret = wide(text[column - 1]) ? '\uff3e' : '^';
  return `ERROR: <input>:${line}:${column}: ${message}\n | ${text.join('')}\n | ${dots}${caret}`;
}

/**
 * A compile error as cel-go words it: `ERROR: <input>:line:column: message`, the line, a caret;
 * `renamed` gives the environment's internal names back as the user wrote them.
 */
export function compileError(expression: string, err: unknown, renamed = true): CompileError {
  const e = err as { summary?: string; message?: string; range?: { start: number }; unplaced?: boolean };
  const said = (e.summary ?? e.message ?? String(err))
    .replace(/^Exceeded maxDepth \(\d+\)/, RECURSION_LIMIT_MESSAGE)
    // cel-go's parser words a reserved word used as an identifier in lower case.
    .replace(/^Reserved identifier: /, 'reserved identifier: ');
  // The checker names the RE2 overload of `matches`, which the user wrote as `matches`.
  return compileErrors(expression, [{ start: e.range?.start ?? 0, message: said, unplaced: e.unplaced }], renamed);
}

/** cel-go lists the first 100 errors it finds, then how many more there were (common/errors.go). */
const MAX_ERRORS = 100;

/**
 * Compile errors as cel-go lists them: each displayed, in the order of their positions, one a line;
 * the internal names of the environment's overloads given back as the user wrote them.
 */
export function compileErrors(
  expression: string,
  issues: ReadonlyArray<{ start: number; message: string; unplaced?: boolean }>,
  renamed = true,
): CompileError {
  const placed = issues
    .slice(0, MAX_ERRORS)
    .map((issue) => ({
      // An error without a position (the parser's limits) is cel-go's line -1, column 0.
      ...(issue.unplaced ? { line: -1, column: 0 } : position(expression, issue.start)),
      message: renamed ? userNames(issue.message) : issue.message,
    }))
    .sort((a, b) => a.line - b.line || a.column - b.column);
  const first = placed[0] ?? { line: 1, column: 1 };
  return {
    message: `compilation failed: ${[
      ...placed.map((p) => display(expression, p.line, p.column, p.message)),
      ...(issues.length > MAX_ERRORS ? [`${issues.length - MAX_ERRORS} more errors were truncated`] : []),
    ].join('\n')}`,
    line: first.line,
    column: first.column,
  };
}

/** cel-go's words for an expression past its recursion limit. */
export { RECURSION_LIMIT_MESSAGE } from '../parse/tokens.ts';

/** The engine's refusals of a macro's variable (`[1].map(1, x)`), in cel-go's parser's words. */
export function macroArgument(err: unknown): unknown {
  const e = err as { code?: string; summary?: string; range?: { start: number } } | undefined;
  if (e?.code !== 'invalid_macro_argument' || !/variable/.test(e.summary ?? '')) return err;
  return { summary: 'argument must be a simple name', range: e.range };
}

/** True when the parsed expression reads the variable `name`. */
export function mentions(node: unknown, name: string): boolean {
  if (!node || typeof node !== 'object') return false;
  if (Array.isArray(node)) return node.some((n) => mentions(n, name));
  const ast = node as { op: string; args: unknown };
  if (ast.op === 'id') return ast.args === name;
  return mentions(ast.args, name);
}
