/**
 * The syntax errors of the parse walk (parse-walk.ts), in ANTLR's words at ANTLR's places, where
 * its error strategy's recovery is simple enough to follow.
 */
import {
  EXPECTING_EXPRESSION,
  EXPRESSION_START,
  type Kind,
  NOT_WELL_FORMED,
  type PlacedError,
  type Tokens,
} from './tokens.ts';

/** Thrown after a syntax error ANTLR recovers from in ways not followed here: the errors so far are reported. */
export const SYNTAX_STOP = Symbol('syntax error');

/** The tokens walked, and the syntax errors found on the way. */
export class SyntaxWalk {
  protected pos = 0;
  protected readonly kinds: readonly Kind[];
  /** Syntax errors, in ANTLR's words. */
  readonly syntax: PlacedError[] = [];
  /** Constructs open around the walk, each waiting for its closing token. */
  protected open = 0;

  constructor(protected readonly tokens: Tokens) {
    this.kinds = tokens.kinds;
  }

  protected peek(ahead = 0): Kind {
    return this.kinds[Math.min(this.pos + ahead, this.kinds.length - 1)]!;
  }
  protected next(): Kind {
    return this.kinds[this.pos++]!;
  }

  /** A token as ANTLR shows it in its messages. */
  protected display(index: number): string {
    if (this.kinds[index] === 'eof') return "'<EOF>'";
    const text = this.tokens.texts(index);
    return `'${text.replace(/\n/g, '\\n').replace(/\r/g, '\\r').replace(/\t/g, '\\t')}'`;
  }

  protected syntaxError(message: string): void {
    this.syntax.push({ summary: `Syntax error: ${message}`, range: { start: this.tokens.offsets[this.pos]! } });
  }

  /**
   * The closer of an open construct (`)`, `]`, a `:`), or ANTLR's error: `extraneous input` (the next
   * token closes it), `missing` (what is there can follow the closer), else `mismatched input`.
   */
  protected close(closer: string): void {
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
  protected closeEntries(closer: string): void {
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

  /**
   * After the `.` of a selection, what ANTLR's prediction needs (a field, `?` and a field): else
   * `no viable alternative at input` from the `.` on, which cel-go words `mismatched input 'true'
   * expecting IDENTIFIER` for `.true`, `.false`, `.null`.
   */
  protected afterDot(dot: number): void {
    const named = (k: Kind) => k === 'id' || k === 'escaped';
    if (named(this.peek()) || (this.peek() === '?' && named(this.peek(1)))) return;
    if (this.peek() === '?') this.pos++;
    const { offsets, ends, source } = this.tokens;
    const last = this.kinds[this.pos] === 'eof' ? offsets[this.pos]! : ends[this.pos]!;
    const input = source.slice(offsets[dot], last);
    const reserved = /^\.(true|false|null)$/.exec(input);
    this.syntaxError(
      reserved ? `mismatched input '${reserved[1]}' expecting IDENTIFIER` : `no viable alternative at input '${input}'`,
    );
    throw SYNTAX_STOP;
  }

  /** Where an expression must start: a token that cannot is deleted when the next can, else mismatched. */
  protected expressionStart(): void {
    if (EXPRESSION_START.has(this.peek())) return;
    const extraneous = EXPRESSION_START.has(this.peek(1));
    this.syntaxError(
      `${extraneous ? 'extraneous' : 'mismatched'} input ${this.display(this.pos)} expecting ${EXPECTING_EXPRESSION}`,
    );
    if (!extraneous) throw SYNTAX_STOP;
    this.pos++;
  }
}
