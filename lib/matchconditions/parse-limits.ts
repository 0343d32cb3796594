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

import { codePoints, type Kind, NOT_WELL_FORMED, numberProblem, type Tokens, tokenize } from './parse-tokens.ts';

/** cel-go's default parser recursion limit (parser.MaxRecursionDepth). */
export const MAX_RECURSION_DEPTH = 250;
/** cel-go's default limit on an expression's size in code points (parser.ExpressionSizeCodePointLimit). */
export const EXPRESSION_SIZE_CODE_POINT_LIMIT = 100_000;
/** cel-go's words for an expression nested past its parse listener's limit. */
export const RECURSION_LIMIT_MESSAGE = `expression recursion limit exceeded: ${MAX_RECURSION_DEPTH}`;
/** cel-go's words for a parse tree deeper than its visitor walks. */
export const VISIT_DEPTH_MESSAGE = 'max recursion depth exceeded';

/** The grammar's rules whose invocations the listener counts (one counter each). */
enum Rule {
  Start,
  Expr,
  Or,
  And,
  Relation,
  Calc,
  Unary,
  Member,
  Primary,
  ExprList,
  ListInit,
  FieldInit,
  OptField,
  MapInit,
  EscapeIdent,
  OptExpr,
  Literal,
  Count,
}

const RELATIONS = new Set(['<', '<=', '>=', '>', '==', '!=', 'in']);
const MULTIPLICATIVE = new Set(['*', '/', '%']);
const ADDITIVE = new Set(['+', '-']);

/** Refused by the listener: thrown out of the walk at once, as cel-go's listener panics. */
class ListenerLimit extends Error {}

/**
 * Walks the tokens as cel-go's ANTLR parser would parse them, counting each rule's invocations
 * under way as its parse listener does, and computing the depth its visitor would reach. Each
 * method answers the visitor depth of what it parsed.
 */
class DepthWalk {
  private pos = 0;
  private readonly depth = new Array<number>(Rule.Count).fill(0);
  private readonly kinds: readonly Kind[];
  /** True once the visitor's depth passed the limit somewhere. */
  visitTooDeep = false;
  /** The first refusal of the visitor at a position (a number literal out of range), if any. */
  problem: { summary: string; range: { start: number } } | undefined;

  constructor(private readonly tokens: Tokens) {
    this.kinds = tokens.kinds;
  }

  private peek(ahead = 0): Kind {
    return this.kinds[Math.min(this.pos + ahead, this.kinds.length - 1)]!;
  }
  private next(): Kind {
    return this.kinds[this.pos++]!;
  }
  private expect(kind: Kind): void {
    if (this.next() !== kind) throw NOT_WELL_FORMED;
  }
  private enter(rule: Rule): void {
    if (++this.depth[rule]! > MAX_RECURSION_DEPTH) throw new ListenerLimit();
  }
  private exit(rule: Rule): void {
    if (this.depth[rule]! > 0) this.depth[rule]!--;
  }
  /** A left-recursive rule's next step: it leaves and re-enters its context. */
  private step(rule: Rule): void {
    this.exit(rule);
    this.enter(rule);
  }
  /** The depth of a node the visitor counts, over its deepest child. */
  private counted(...children: number[]): number {
    const d = 1 + Math.max(...children);
    if (d > MAX_RECURSION_DEPTH) this.visitTooDeep = true;
    return d;
  }

  start(): void {
    this.enter(Rule.Start);
    this.expr();
    this.expect('eof');
    this.exit(Rule.Start);
  }

  private expr(): number {
    this.enter(Rule.Expr);
    let d = this.or();
    if (this.peek() === '?') {
      this.next();
      const then = this.or();
      this.expect(':');
      d = this.counted(d, then, this.expr());
    }
    this.exit(Rule.Expr);
    return d;
  }

  private or(): number {
    this.enter(Rule.Or);
    let d = this.and();
    while (this.peek() === '||') {
      this.next();
      d = Math.max(d, this.and());
    }
    this.exit(Rule.Or);
    return d;
  }

  private and(): number {
    this.enter(Rule.And);
    let d = this.relation(0);
    while (this.peek() === '&&') {
      this.next();
      d = Math.max(d, this.relation(0));
    }
    this.exit(Rule.And);
    return d;
  }

  /** relation[p]: its one binary alternative has precedence 1, its right operand is relation[2]. */
  private relation(p: number): number {
    this.enter(Rule.Relation);
    let d = this.calc(0);
    while (RELATIONS.has(this.peek()) && p <= 1) {
      this.step(Rule.Relation);
      this.next();
      d = this.counted(d, this.relation(2));
    }
    this.exit(Rule.Relation);
    return d;
  }

  /** calc[p]: `*` `/` `%` have precedence 2 (right operand calc[3]), `+` `-` precedence 1 (calc[2]). */
  private calc(p: number): number {
    this.enter(Rule.Calc);
    let d = this.unary();
    for (;;) {
      const op = this.peek();
      const precedence = MULTIPLICATIVE.has(op) ? 2 : ADDITIVE.has(op) ? 1 : 0;
      if (precedence === 0 || precedence < p) break;
      this.step(Rule.Calc);
      this.next();
      d = this.counted(d, this.calc(precedence + 1));
    }
    this.exit(Rule.Calc);
    return d;
  }

  private unary(): number {
    this.enter(Rule.Unary);
    const op = this.peek();
    // `-1` is a literal with its sign (the grammar's first alternative): the same rules either way.
    if (op === '!' || (op === '-' && this.peek(1) !== 'num')) while (this.peek() === op) this.next();
    const d = this.member();
    this.exit(Rule.Unary);
    return d;
  }

  private member(): number {
    this.enter(Rule.Member);
    let d = this.primary();
    for (;;) {
      const op = this.peek();
      if (op === '.') {
        this.step(Rule.Member);
        this.next();
        if (this.peek() === 'id' && this.peek(1) === '(') {
          this.pos += 2;
          d = this.counted(d, this.peek() === ')' ? 0 : this.exprList());
          this.expect(')');
        } else {
          if (this.peek() === '?') this.next();
          this.escapeIdent();
          d = this.counted(d);
        }
      } else if (op === '[') {
        this.step(Rule.Member);
        this.next();
        if (this.peek() === '?') this.next();
        d = this.counted(d, this.expr());
        this.expect(']');
      } else break;
    }
    this.exit(Rule.Member);
    return d;
  }

  private escapeIdent(): void {
    this.enter(Rule.EscapeIdent);
    const kind = this.next();
    if (kind !== 'id' && kind !== 'escaped') throw NOT_WELL_FORMED;
    this.exit(Rule.EscapeIdent);
  }

  private primary(): number {
    this.enter(Rule.Primary);
    let d = 0;
    const kind = this.peek();
    if (kind === '(') {
      this.next();
      d = this.expr();
      this.expect(')');
    } else if (kind === '[') {
      this.next();
      if (this.peek() !== ']' && this.peek() !== ',') d = this.entries(Rule.ListInit, false);
      if (this.peek() === ',') this.next();
      this.expect(']');
    } else if (kind === '{') {
      this.next();
      if (this.peek() !== '}' && this.peek() !== ',') d = this.entries(Rule.MapInit, true);
      if (this.peek() === ',') this.next();
      this.expect('}');
    } else if (kind === 'id' || (kind === '.' && this.peek(1) === 'id')) d = this.named();
    else this.literal();
    this.exit(Rule.Primary);
    return d;
  }

  /** An identifier, a global call, or a message literal (`a.b{f: 1}`), a leading `.` aside. */
  private named(): number {
    if (this.peek() === '.') this.next();
    let ahead = 1;
    while (this.peek(ahead) === '.' && this.peek(ahead + 1) === 'id') ahead += 2;
    if (this.peek(ahead) === '{') {
      this.pos += ahead + 1;
      let d = 0;
      if (this.peek() !== '}' && this.peek() !== ',') d = this.fields();
      if (this.peek() === ',') this.next();
      this.expect('}');
      return d;
    }
    this.next();
    if (this.peek() !== '(') return 0;
    this.next();
    const d = this.peek() === ')' ? 0 : this.exprList();
    this.expect(')');
    return d;
  }

  private literal(): void {
    this.enter(Rule.Literal);
    const start = this.tokens.offsets[this.pos]!;
    const negative = this.peek() === '-';
    if (negative) this.next();
    const kind = this.next();
    if (kind !== 'lit' && kind !== 'num') throw NOT_WELL_FORMED;
    const written = this.tokens.numbers.get(this.pos - 1);
    const summary = written === undefined ? undefined : numberProblem(written, negative);
    if (summary && !this.problem) this.problem = { summary, range: { start } };
    this.exit(Rule.Literal);
  }

  private exprList(): number {
    this.enter(Rule.ExprList);
    let d = this.expr();
    while (this.peek() === ',') {
      this.next();
      d = Math.max(d, this.expr());
    }
    this.exit(Rule.ExprList);
    return d;
  }

  private optExpr(): number {
    this.enter(Rule.OptExpr);
    if (this.peek() === '?') this.next();
    const d = this.expr();
    this.exit(Rule.OptExpr);
    return d;
  }

  /** listInit or mapInitializerList: entries until a `,` before the closing bracket. */
  private entries(rule: Rule, map: boolean): number {
    const close = map ? '}' : ']';
    this.enter(rule);
    let d = 0;
    let first = true;
    do {
      if (!first) this.next();
      first = false;
      d = Math.max(d, this.optExpr());
      if (map) {
        this.expect(':');
        d = Math.max(d, this.expr());
      }
    } while (this.peek() === ',' && this.peek(1) !== close);
    this.exit(rule);
    return d;
  }

  /** fieldInitializerList of a message literal. */
  private fields(): number {
    this.enter(Rule.FieldInit);
    let d = 0;
    let first = true;
    do {
      if (!first) this.next();
      first = false;
      this.enter(Rule.OptField);
      if (this.peek() === '?') this.next();
      this.escapeIdent();
      this.exit(Rule.OptField);
      this.expect(':');
      d = Math.max(d, this.expr());
    } while (this.peek() === ',' && this.peek(1) !== '}');
    this.exit(Rule.FieldInit);
    return d;
  }
}

/** A refusal of cel-go's parser: without a position (its limits), or at an offset. */
export type ParseRefusal = { summary: string; unplaced: true } | { summary: string; range: { start: number } };

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
  try {
    const tokens = tokenize(text);
    const walk = new DepthWalk(tokens);
    walk.start();
    const refusal = walk.visitTooDeep ? { summary: VISIT_DEPTH_MESSAGE, unplaced: true as const } : walk.problem;
    return refusal ? { refusal, text } : { text: foldSignRuns(text, tokens) };
  } catch (err) {
    if (err instanceof ListenerLimit) return { refusal: { summary: RECURSION_LIMIT_MESSAGE, unplaced: true }, text };
    if (err === NOT_WELL_FORMED) return { text };
    throw err;
  }
}
