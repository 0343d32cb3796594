/**
 * Expression trees: the parsed form of an expression kept as data in a precompiled form, for the
 * expressions made only of what typical conditions and validations use (variables, fields, `has`,
 * `!`, `&&`, `||`, equality, `in`, int comparisons, string `+`, `startsWith`/`endsWith`, `string()`
 * and the `all`/`exists` macros). A bundle evaluates such a tree (tree-run.ts) without building the
 * engine's environment or parsing the expression; anything outside those parts keeps no tree.
 * Made at build time from the engine's parsed expression (engine.ts's node shapes: `op`, `args`).
 */
import type { ASTNode } from '../engine.ts';

/** A node of an expression tree: its kind first, then its operands. JSON: ints are decimal strings. */
export type Tree =
  /** A string, bool or null literal. */
  | ['lit', string | boolean | null]
  /** An int literal, as its decimal digits. */
  | ['int', string]
  /** A variable: one of the admission variables, or a macro's own. */
  | ['id', string]
  /** A field of a map. */
  | ['.', Tree, string]
  /** `has(operand.field)`. */
  | ['has', Tree, string]
  | ['!', Tree]
  | [BinaryKind, Tree, Tree]
  /** `range.all(name, predicate)` and `range.exists(name, predicate)`. */
  | ['all' | 'exists', Tree, string, Tree]
  /** `receiver.startsWith(arg)`, `receiver.endsWith(arg)`. */
  | ['startsWith' | 'endsWith', Tree, Tree]
  /** `string(arg)`. */
  | ['string', Tree];

/** The operators of two operands a tree holds. */
export type BinaryKind = '&&' | '||' | '==' | '!=' | '<' | '<=' | '>' | '>=' | 'in' | '+';
const BINARY = new Set<string>(['&&', '||', '==', '!=', '<', '<=', '>', '>=', 'in', '+']);

/**
 * The variables a tree may read: those of every admission expression, and `params` where declared
 * (a policy's). `variables` (a policy's, whose values are computed on first read), `authorizer`
 * (calls out) and other declared ones keep no tree.
 */
export const TREE_VARIABLES: ReadonlySet<string> = new Set(['object', 'oldObject', 'request', 'namespaceObject']);
/** The declared variable a tree may read. */
const PARAMS = 'params';

/** The largest and smallest int64: an int literal outside them keeps no tree. */
const INT64_MAX = 2n ** 63n - 1n;
const INT64_MIN = -(2n ** 63n);

/** A simple identifier: a macro's variable. */
const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * The tree of a parsed expression (the engine's nodes) compiled with `declarations`, or undefined
 * when any node is outside what trees hold.
 */
export function expressionTree(node: ASTNode, declarations: Record<string, string> | undefined): Tree | undefined {
  return treeOf(node, declarations && Object.hasOwn(declarations, PARAMS) ? [PARAMS] : []);
}

/**
 * The tree of a parsed expression, or undefined when any node is outside what trees hold. `bound`
 * are the variables it may read beside TREE_VARIABLES: declared ones, a macro's.
 */
export function treeOf(node: ASTNode, bound: readonly string[] = []): Tree | undefined {
  const op = node.op as string;
  const args = node.args as unknown;
  if (op === 'value') {
    if (typeof args === 'string' || typeof args === 'boolean' || args === null) return ['lit', args];
    if (typeof args === 'bigint' && args >= INT64_MIN && args <= INT64_MAX) return ['int', args.toString()];
    return undefined;
  }
  if (op === 'id')
    return typeof args === 'string' && (bound.includes(args) || TREE_VARIABLES.has(args)) ? ['id', args] : undefined;
  if (op === '.') {
    const [operand, field] = args as [ASTNode, unknown];
    const of = typeof field === 'string' ? treeOf(operand, bound) : undefined;
    return of && ['.', of, field as string];
  }
  if (op === '!_') {
    const of = treeOf(args as ASTNode, bound);
    return of && ['!', of];
  }
  if (BINARY.has(op)) {
    const [l, r] = args as [ASTNode, ASTNode];
    const left = treeOf(l, bound);
    const right = left && treeOf(r, bound);
    return right && [op as BinaryKind, left!, right];
  }
  if (op === 'call') return callTree(args as [string, ASTNode[]], bound);
  if (op === 'rcall') return receiverCallTree(args as [string, ASTNode, ASTNode[]], bound);
  return undefined;
}

/** The tree of a global call: `has(x.f)` and `string(x)` of an operand that is no literal. */
function callTree([name, params]: [string, ASTNode[]], bound: readonly string[]): Tree | undefined {
  if (!Array.isArray(params) || params.length !== 1) return undefined;
  const [arg] = params as [ASTNode];
  if (name === 'has') {
    if (arg.op !== '.') return undefined;
    const [operand, field] = arg.args as unknown as [ASTNode, unknown];
    const of = typeof field === 'string' ? treeOf(operand, bound) : undefined;
    return of && ['has', of, field as string];
  }
  // A conversion of a constant is folded at compile time and charged nothing: kept by the engine.
  // The environment's `string` is `string__k8s` (Go's formatting) once screened.
  if ((name === 'string' || name === 'string__k8s') && arg.op !== 'value' && arg.op !== '-_') {
    const of = treeOf(arg, bound);
    return of && ['string', of];
  }
  return undefined;
}

/** The tree of a method call: `startsWith`, `endsWith`, and the macros `all` and `exists`. */
function receiverCallTree(
  [name, receiver, params]: [string, ASTNode, ASTNode[]],
  bound: readonly string[],
): Tree | undefined {
  if (!Array.isArray(params)) return undefined;
  if ((name === 'startsWith' || name === 'endsWith') && params.length === 1) {
    const of = treeOf(receiver, bound);
    const arg = of && treeOf(params[0]!, bound);
    return arg && [name, of!, arg];
  }
  if ((name === 'all' || name === 'exists') && params.length === 2) {
    const [variable, predicate] = params as [ASTNode, ASTNode];
    const v = variable.op === 'id' ? (variable.args as unknown) : undefined;
    if (typeof v !== 'string' || !NAME.test(v) || TREE_VARIABLES.has(v) || bound.includes(v)) return undefined;
    const range = treeOf(receiver, bound);
    const body = range && treeOf(predicate, [...bound, v]);
    return body && [name, range!, v, body];
  }
  return undefined;
}

/** True when `t` has a tree's shape (a form from elsewhere is checked before it is trusted). */
export function isTree(t: unknown, depth = 0): t is Tree {
  if (!Array.isArray(t) || depth > 250) return false;
  const [kind, a, b, c] = t as unknown[];
  const sub = (x: unknown) => isTree(x, depth + 1);
  switch (kind) {
    case 'lit':
      return t.length === 2 && (typeof a === 'string' || typeof a === 'boolean' || a === null);
    case 'int':
      return t.length === 2 && typeof a === 'string' && /^-?\d{1,19}$/.test(a);
    case 'id':
      return t.length === 2 && typeof a === 'string';
    case '.':
    case 'has':
      return t.length === 3 && sub(a) && typeof b === 'string';
    case '!':
    case 'string':
      return t.length === 2 && sub(a);
    case 'all':
    case 'exists':
      return t.length === 4 && sub(a) && typeof b === 'string' && sub(c);
    case 'startsWith':
    case 'endsWith':
      return t.length === 3 && sub(a) && sub(b);
    default:
      return typeof kind === 'string' && BINARY.has(kind) && t.length === 3 && sub(a) && sub(b);
  }
}
