/**
 * The walk of parse-limits.ts: the tokens parsed as cel-go's ANTLR grammar parses them, each
 * rule's invocations under way counted as its parse listener counts them, the depth its visitor
 * reaches computed, and the syntax errors ANTLR reports in its words where its recovery is simple.
 */
import {
  EXPECTING_EXPRESSION,
  EXPRESSION_START,
  type Kind,
  MAX_RECURSION_DEPTH,
  NOT_WELL_FORMED,
  numberProblem,
  type PlacedError,
  type Tokens,
} from './parse-tokens.ts';

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
/** Thrown after a syntax error ANTLR recovers from in ways not followed here: the errors so far are reported. */
export const SYNTAX_STOP = Symbol('syntax error');
/** Refused by the listener: thrown out of the walk at once, as cel-go's listener panics. */
export class ListenerLimit extends Error {}

/**
 * Walks the tokens as cel-go's ANTLR parser would parse them, counting each rule's invocations
 * under way as its parse listener does, and computing the depth its visitor would reach. Each
 * method answers the visitor depth of what it parsed.
 */
export class DepthWalk {
  private pos = 0;
  private readonly depth = new Array<number>(Rule.Count).fill(0);
  private readonly kinds: readonly Kind[];
  /** True once the visitor's depth passed the limit somewhere. */
  visitTooDeep = false;
  /** The first refusal of the visitor at a position (a number literal out of range), if any. */
  problem: PlacedError | undefined;
  /** Syntax errors, in ANTLR's words. */
  readonly syntax: PlacedError[] = [];
  /** Constructs open around the walk, each waiting for its closing token. */
  private open = 0;

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
    if (this.peek() !== 'eof') {
      // ANTLR deletes one token when the end follows it, and otherwise skips to the end.
      const words = this.peek(1) === 'eof' ? 'extraneous' : 'mismatched';
      this.syntaxError(`${words} input ${this.display(this.pos)} expecting <EOF>`);
    }
    this.exit(Rule.Start);
  }

  /** A token as ANTLR shows it in its messages. */
  private display(index: number): string {
    if (this.kinds[index] === 'eof') return "'<EOF>'";
    const text = this.tokens.texts(index);
    return `'${text.replace(/\n/g, '\\n').replace(/\r/g, '\\r').replace(/\t/g, '\\t')}'`;
  }

  private syntaxError(message: string): void {
    this.syntax.push({ summary: `Syntax error: ${message}`, range: { start: this.tokens.offsets[this.pos]! } });
  }

  /**
   * The closer of an open construct (`)`, `]`, a `:`), or ANTLR's error: `extraneous input` (the next
   * token closes it), `missing` (what is there can follow the closer), else `mismatched input`.
   */
  private close(closer: string): void {
    this.open--;
    if (this.peek() === closer) {
      this.next();
      return;
    }
    const at = this.display(this.pos);
    if (this.peek(1) === closer) {
      this.syntaxError(`extraneous input ${at} expecting '${closer}'`);
      this.pos += 2;
    } else if (closer === ':' ? EXPRESSION_START.has(this.peek()) : this.peek() === 'eof' && this.open === 0) {
      this.syntaxError(`missing '${closer}' at ${at}`);
    } else {
      this.syntaxError(`mismatched input ${at} expecting '${closer}'`);
      throw SYNTAX_STOP;
    }
  }

  /** The bracket closing a list or map literal, where ANTLR expects it or a trailing `,`. */
  private closeEntries(closer: string): void {
    this.open--;
    if (this.peek() === closer) {
      this.next();
      return;
    }
    if (this.peek(1) === ',') throw NOT_WELL_FORMED;
    const extraneous = this.peek(1) === closer;
    const words = extraneous ? 'extraneous' : 'mismatched';
    this.syntaxError(`${words} input ${this.display(this.pos)} expecting {',', '${closer}'}`);
    if (!extraneous) throw SYNTAX_STOP;
    this.pos += 2;
  }

  /** Where an expression must start: a token that cannot is deleted when the next can, else mismatched. */
  private expressionStart(): void {
    if (EXPRESSION_START.has(this.peek())) return;
    const extraneous = EXPRESSION_START.has(this.peek(1));
    this.syntaxError(
      `${extraneous ? 'extraneous' : 'mismatched'} input ${this.display(this.pos)} expecting ${EXPECTING_EXPRESSION}`,
    );
    if (!extraneous) throw SYNTAX_STOP;
    this.pos++;
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
