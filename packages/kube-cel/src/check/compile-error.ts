/** What compiling an expression refuses it with: in a module of its own, which imports nothing. */

/** A compile error: the checker's message, with the expression and the position. */
export interface CompileError {
  message: string;
  /** 1-based line and column (in code points) of the error in the expression; -1 and 0 when it has none. */
  line: number;
  column: number;
}
