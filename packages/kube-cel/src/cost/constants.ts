/**
 * What the API server's optimized programs hold as constants (cel-go's OptOptimize): list and map
 * literals of constants, conversions of a constant, and `in` over a list of primitive constants (a
 * set lookup). Evaluating them costs nothing; programs built without the optimizer charge them.
 */
import type { ASTNode } from '../engine.ts';
import { isUint } from '../evaluate/equality.ts';

/** cel-go's type conversion functions (overloads.IsTypeConversionFunction), `string` by its environment name. */
const CONVERSIONS = new Set([
  'bool',
  'bytes',
  'double',
  'duration',
  'dyn',
  'int',
  // `string` before the environment points it at its own overload (screen.ts), and after.
  'string',
  'string__k8s',
  'timestamp',
  'type',
  'uint',
]);
/** Whether a node is a constant of the program the API server builds, by node. */
const constants = new WeakMap<object, boolean>();

/**
 * Whether a node is a constant once the API server has built the program: its environment
 * optimizes programs (cel-go's OptOptimize), which folds list and map literals of constants and
 * conversions of a constant into constants, so that evaluating them costs nothing.
 */
export function isConstant(ast: ASTNode): boolean {
  const known = constants.get(ast);
  if (known !== undefined) return known;
  let constant = false;
  if (ast.op === 'value') constant = true;
  // A negative number literal (one constant to cel-go's parser); `-'a'` is no literal.
  else if (ast.op === '-_')
    constant = (ast.args as ASTNode).op === 'value' && typeof (ast.args as ASTNode).args !== 'string';
  else if (ast.op === 'list') constant = (ast.args as ASTNode[]).every(isConstant);
  else if (ast.op === 'map')
    constant = (ast.args as Array<[ASTNode, ASTNode]>).every(([k, v]) => isConstant(k) && isConstant(v));
  else if (ast.op === 'call') {
    const [name, args] = ast.args as [string, ASTNode[]];
    constant = CONVERSIONS.has(name) && args.length === 1 && isConstant(args[0]!);
  }
  constants.set(ast, constant);
  return constant;
}

/** The nodes of programs built without OptOptimize (keepUnoptimized). */
const unoptimized = new WeakSet<object>();

/** True for a node of a program built without OptOptimize. */
export function isUnoptimized(ast: object): boolean {
  return unoptimized.has(ast);
}

/**
 * Marks every node of a parsed expression as no constant: its cost is then what cel-go charges for a
 * program built without OptOptimize (cel-go's and Kubernetes' own cost tests build theirs so).
 */
export function keepUnoptimized(root: ASTNode): void {
  const stack: unknown[] = [root];
  const seen = new WeakSet<object>();
  while (stack.length) {
    const item = stack.pop();
    if (!item || typeof item !== 'object' || seen.has(item)) continue;
    seen.add(item);
    if (Array.isArray(item)) stack.push(...item);
    else if (typeof (item as ASTNode).op === 'string') {
      constants.set(item, false);
      unoptimized.add(item);
      // A macro's expansion too: its accumulator starts as an empty list literal.
      stack.push((item as ASTNode).args, (item as { meta?: { alternate?: unknown } }).meta?.alternate);
    } else if (Object.getPrototypeOf(item) === Object.prototype) stack.push(...Object.values(item));
  }
}

/** Conversions whose result is a primitive value (a set membership test can hold it). */
const PRIMITIVE_CONVERSIONS = new Set(['bool', 'double', 'int', 'string__k8s', 'uint']);

/** Whether a constant element is of a primitive type other than bytes. */
function isPrimitive(ast: ASTNode): boolean {
  if (ast.op === '-_') return true;
  if (ast.op === 'call') return PRIMITIVE_CONVERSIONS.has((ast.args as unknown[])[0] as string);
  const v = ast.args as unknown;
  return ast.op === 'value' && ((v !== null && typeof v !== 'object') || isUint(v));
}

/**
 * Whether an `in` is a set membership test once the program is built: a list of constants of
 * primitive types, which OptOptimize makes a set looked up at no cost.
 */
export function isSetMembership(ast: ASTNode): boolean {
  if (ast.op !== 'in') return false;
  const list = (ast.args as ASTNode[])[1];
  return (
    !!list &&
    list.op === 'list' &&
    (list.args as ASTNode[]).length > 0 &&
    isConstant(list) &&
    (list.args as ASTNode[]).every(isPrimitive)
  );
}
