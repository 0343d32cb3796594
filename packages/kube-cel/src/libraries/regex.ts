/**
 * Regular expressions of CEL conditions, in RE2 as the API server runs them (Go's regexp):
 * linear in the input, no lookaround, no backreferences. `re2js` is a JavaScript port of
 * RE2; JavaScript's own RegExp backtracks, and a pattern such as `^([a-z0-9]+-?)+$` takes
 * it exponential time on a short input, synchronously, where no deadline can stop it.
 */
import { createRequire } from 'node:module';
import type { RE2JS } from 're2js';
import { CelError } from '../errors.ts';
import { pendingWhileRecording } from '../precompiled.ts';

/** A compiled RE2 pattern. */
type Regex = ReturnType<typeof RE2JS.compile>;

/**
 * The RE2 engine (about 150 KB, most of it Unicode tables), loaded when a pattern is first
 * compiled, not with the environment: an expression without regular expressions never loads it.
 * Set once, then read only.
 */
let engine: typeof RE2JS | undefined;

/**
 * Loads the RE2 engine ahead of use. A bundle (a Lambda function) has it in a chunk of its own,
 * which only this dynamic import reaches: await it before compiling or evaluating expressions that
 * use regular expressions (usesRegex tells). Elsewhere it is loaded on first use without it.
 */
export function loadRegexEngine(): Promise<void> {
  return pendingWhileRecording(
    engine
      ? Promise.resolve()
      : import('re2js').then((m) => {
          engine ??= m.RE2JS;
        }),
  );
}

/** The RE2 engine: loaded already, or now from node_modules (tools and tests, which run unbundled). */
function re2(): typeof RE2JS {
  if (engine) return engine;
  try {
    engine = (createRequire(import.meta.url)('re2js') as typeof import('re2js')).RE2JS;
  } catch (err) {
    throw new CelError(
      `regular expressions need the RE2 engine, which is not loaded: await loadRegexEngine() before compiling (${(err as Error).message})`,
    );
  }
  return engine;
}

/** The functions whose arguments are regular expressions (the standard `matches`, the regex library). */
const REGEX_FUNCTIONS = /\b(?:matches|find|findAll)\b/;

/**
 * True when an expression may use regular expressions: it names one of their functions. A name in
 * a string literal counts too, which only loads the engine for nothing.
 */
export function usesRegex(expression: string): boolean {
  return REGEX_FUNCTIONS.test(expression);
}

/**
 * Most compiled patterns kept. Conditions use a handful of literal patterns; a pattern
 * built from request data could otherwise grow the cache without end. A compile of a
 * typical pattern costs tens of microseconds, so missing the cache is cheap.
 */
export const REGEX_CACHE_SIZE = 64;

// Least recently used first: a Map iterates in insertion order and a hit is re-inserted.
const cache = new Map<string, Regex>();

/** An RE2 syntax error, with Go's message (`error parsing regexp: ...`). */
export class RegexSyntaxError extends Error {
  override name = 'RegexSyntaxError';
}

/** Compiles a pattern as Go's regexp.Compile does, from the bounded cache. */
export function compileRegex(pattern: string): Regex {
  let re = cache.get(pattern);
  if (re) {
    cache.delete(pattern);
    cache.set(pattern, re);
    return re;
  }
  const compiler = re2();
  try {
    re = compiler.compile(pattern);
  } catch (err) {
    throw new RegexSyntaxError(err instanceof Error ? err.message : String(err));
  }
  cache.set(pattern, re);
  if (cache.size > REGEX_CACHE_SIZE) cache.delete(cache.keys().next().value!);
  return re;
}

/** How many compiled patterns the cache holds now. */
export function regexCacheSize(): number {
  return cache.size;
}

/** Why RE2 refuses a pattern, or undefined when it compiles. */
export function regexProblem(pattern: string): string | undefined {
  try {
    compileRegex(pattern);
    return undefined;
  } catch (err) {
    return (err as Error).message;
  }
}

/** `s.matches(pattern)`: true when the pattern matches anywhere in s (RE2 MatchString). */
export function regexMatches(s: string, pattern: string): boolean {
  return compileRegex(pattern).matcher(s).find();
}

/** `s.find(pattern)`: the leftmost match, or '' (Go's FindString). */
export function regexFind(s: string, pattern: string): string {
  const m = compileRegex(pattern).matcher(s);
  return m.find() ? (m.group() ?? '') : '';
}

/**
 * `s.findAll(pattern, n)`: successive non-overlapping matches, at most n when n ≥ 0 (Go's
 * FindAllString). As in Go, an empty match right after the previous match is skipped.
 */
export function regexFindAll(s: string, pattern: string, n = -1): string[] {
  const out: string[] = [];
  if (n === 0) return out;
  const m = compileRegex(pattern).matcher(s);
  let pos = 0;
  let previousEnd = -1;
  while (pos <= s.length && (n < 0 || out.length < n)) {
    if (!m.find(pos)) break;
    const start = m.start();
    const end = m.end();
    let accept = true;
    if (end === start) {
      // An empty match: none right after the previous match, and move on by one code point.
      if (start === previousEnd) accept = false;
      pos = start + ((s.codePointAt(start) ?? 0) > 0xffff ? 2 : 1);
    } else {
      pos = end;
    }
    previousEnd = end;
    if (accept) out.push(s.slice(start, end));
  }
  return out;
}
