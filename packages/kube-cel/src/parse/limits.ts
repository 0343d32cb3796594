/**
 * The limits cel-go's parser puts on an expression, with its words, found before the engine parses
 * it. cel-go (default parser options, which the API server keeps) refuses:
 * - an expression of more than 100,000 code points;
 * - one where the ANTLR parse nests a grammar rule more than 250 deep: a parse listener counts, per
 *   rule, the rule's invocations under way. Chains of operators, selections and indexes are loops in
 *   the generated parser (a left-recursive rule leaves and re-enters itself at each step), so only
 *   nesting counts: parentheses, list and map literals, call arguments, indexes, the right branch of
 *   `?:`, and a higher-precedence operand (`a + b * (…)` nests `calc` three deep per level);
 * - one whose parse tree its visitor walks more than 250 deep, counting only `?:`, the relations
 *   (`==`, `<`, `in`…), the arithmetic operators, field selections, member calls and indexes:
 *   so 251 `+` in a chain, or 251 selections in a row, are refused; `&&` and `||` chains are not
 *   (the parser balances them), nor runs of `!` or `-`.
 * Both recursion refusals have no position (`<input>:-1:0`). Expressions that are not well formed
 * are left to the engine's parser, which reports the syntax error.
 */

import {
  codePoints,
  EXPRESSION_SIZE_CODE_POINT_LIMIT,
  NOT_WELL_FORMED,
  type PlacedError,
  RECURSION_LIMIT_MESSAGE,
  type Tokens,
  tokenize,
  VISIT_DEPTH_MESSAGE,
} from './tokens.ts';
import { DepthWalk, ListenerLimit, SYNTAX_STOP } from './walk.ts';

export {
  EXPRESSION_SIZE_CODE_POINT_LIMIT,
  MAX_RECURSION_DEPTH,
  RECURSION_LIMIT_MESSAGE,
  VISIT_DEPTH_MESSAGE,
} from './tokens.ts';

/** A refusal of cel-go's parser: without a position (its limits), at an offset, or syntax errors. */
export type ParseRefusal = { summary: string; unplaced: true } | PlacedError | { errors: PlacedError[] };

/** cel-go stops reporting syntax errors past this many (its parser's errorReportingLimit). */
const ERROR_REPORTING_LIMIT = 100;

/** Token kinds that end an operand: a `-` after one is a subtraction, not a negation. */
const OPERAND_ENDS = new Set(['id', 'lit', 'num', 'escaped', ')', ']', '}']);

/**
 * The text with runs of `!` and of unary `-` folded as cel-go's parser folds them (a loop in its
 * grammar): an even run is dropped, an odd one kept as its first sign. The signs dropped become spaces,
 * so every offset stays where it was; the engine's parser, which reads each sign by recursion,
 * never sees a run.
 */
function foldSignRuns(text: string, tokens: Tokens): string {
  // UTF-16 units, as the offsets count them; a sign is one unit, replaced by one space.
  const units = text.split('');
  let folded = false;
  const { kinds, offsets } = tokens;
  for (let i = 0; i < kinds.length; i++) {
    const sign = kinds[i];
    if (sign !== '!' && sign !== '-') continue;
    let start = i;
    if (sign === '-' && i > 0 && OPERAND_ENDS.has(kinds[i - 1]!)) start++;
    let end = i + 1;
    while (kinds[end] === sign) end++;
    const run = end - start;
    if (run < 2) continue;
    // An odd run keeps its first sign, where cel-go places the operation.
    for (let j = start + (run % 2); j < end; j++) {
      units[offsets[j]!] = ' ';
      folded = true;
    }
    i = end - 1;
  }
  return folded ? units.join('') : text;
}

/**
 * Reads the expression as cel-go's parser would before the engine parses it: its refusal for
 * the expression's size, its nesting, a number literal out of range, if it refuses it; otherwise
 * the text for the engine, runs of signs folded (see foldSignRuns). A text that is not well formed
 * is handed on as it is: the engine's parser reports the syntax error.
 */
export function readForParse(text: string): { refusal?: ParseRefusal; text: string } {
  if (text.length > EXPRESSION_SIZE_CODE_POINT_LIMIT) {
    const size = codePoints(text);
    if (size > EXPRESSION_SIZE_CODE_POINT_LIMIT) {
      const summary = `expression code point size exceeds limit: size: ${size}, limit ${EXPRESSION_SIZE_CODE_POINT_LIMIT}`;
      return { refusal: { summary, unplaced: true }, text };
    }
  }
  let tokens: Tokens | undefined;
  let walk: DepthWalk | undefined;
  try {
    tokens = tokenize(text);
    walk = new DepthWalk(tokens);
    walk.start();
    if (walk.syntax.length || tokens.unknown.length) return syntaxRefusal(text, walk.syntax, tokens.unknown);
    const refusal = walk.visitTooDeep ? { summary: VISIT_DEPTH_MESSAGE, unplaced: true as const } : walk.problem;
    return refusal ? { refusal, text } : { text: foldSignRuns(text, tokens) };
  } catch (err) {
    if (err instanceof ListenerLimit) return { refusal: { summary: RECURSION_LIMIT_MESSAGE, unplaced: true }, text };
    if (err === SYNTAX_STOP) return syntaxRefusal(text, walk!.syntax, tokens!.unknown);
    if (err === NOT_WELL_FORMED) return { text };
    throw err;
  }
}

/** Syntax errors sorted by position as cel-go prints them; past its reporting limit, left to the engine. */
function syntaxRefusal(text: string, syntax: PlacedError[], unknown: PlacedError[]): ReturnType<typeof readForParse> {
  const errors = [...unknown, ...syntax].sort((a, b) => a.range.start - b.range.start);
  return errors.length > ERROR_REPORTING_LIMIT ? { text } : { refusal: { errors }, text };
}
