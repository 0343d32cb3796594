/**
 * The walk of parse-limits.ts: the tokens parsed as cel-go's ANTLR grammar parses them, each
 * rule's invocations under way counted as its parse listener counts them, the depth its visitor
 * reaches computed, and the syntax errors ANTLR reports in its words where its recovery is simple.
 */
import { type Kind, MAX_RECURSION_DEPTH, NOT_WELL_FORMED, numberProblem, type PlacedError } from './tokens.ts';
import { SyntaxWalk } from './syntax.ts';

export { SYNTAX_STOP } from './syntax.ts';

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
export class ListenerLimit extends Error {}

/**
 * Walks the tokens as cel-go's ANTLR parser would parse them, counting each rule's invocations
 * under way as its parse listener does, and computing the depth its visitor would reach. Each
 * method answers the visitor depth of what it parsed.
 */
export class DepthWalk extends SyntaxWalk {
  private readonly depth = new Array<number>(Rule.Count).fill(0);
  /** True once the visitor's depth passed the limit somewhere. */
  visitTooDeep = false;
  /** The first refusal of the visitor at a position (a number literal out of range), if any. */
  problem: PlacedError | undefined;

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
    if (this.peek() !== 'eof') {
      // ANTLR deletes one token when the end follows it, and otherwise skips to the end.
      const words = this.peek(1) === 'eof' ? 'extraneous' : 'mismatched';
      this.syntaxError(`${words} input ${this.display(this.pos)} expecting <EOF>`);
    }
    this.exit(Rule.Start);
  }

  private expr(): number {
    this.enter(Rule.Expr);
    let d = this.or();
    if (this.peek() === '?') {
      this.next();
      this.open++;
      const then = this.or();
      this.close(':');
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
    this.expressionStart();
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
        this.afterDot(this.pos - 1);
        if (this.peek() === 'id' && this.peek(1) === '(') {
          this.pos += 2;
          this.open++;
          d = this.counted(d, this.peek() === ')' ? 0 : this.exprList());
          this.close(')');
        } else {
          if (this.peek() === '?') this.next();
          this.escapeIdent();
          d = this.counted(d);
        }
      } else if (op === '[') {
        this.step(Rule.Member);
        this.next();
        if (this.peek() === '?') this.next();
        this.open++;
        d = this.counted(d, this.expr());
        this.close(']');
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
      this.open++;
      d = this.expr();
      this.close(')');
    } else if (kind === '[') {
      this.next();
      this.open++;
      if (this.peek() !== ']' && this.peek() !== ',') d = this.entries(Rule.ListInit, false);
      if (this.peek() === ',') this.next();
      this.closeEntries(']');
    } else if (kind === '{') {
      this.next();
      this.open++;
      if (this.peek() !== '}' && this.peek() !== ',') d = this.entries(Rule.MapInit, true);
      if (this.peek() === ',') this.next();
      this.closeEntries('}');
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
    this.open++;
    const d = this.peek() === ')' ? 0 : this.exprList();
    this.close(')');
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
        this.open++;
        this.close(':');
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
