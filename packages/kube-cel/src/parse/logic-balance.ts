/**
 * `&&` and `||` chains balanced as cel-go's parser balances them: the engine's parser builds a chain
 * of n terms as a tree n deep, which its checker and evaluator walk by recursion, so a chain of a
 * few thousand terms (which cel-go accepts) would overflow their stack; balanced, it is log2(n) deep.
 * Both operators are commutative in CEL (an error or a false term decides alike wherever it is), so
 * the value is the same.
 */

/** A node of the parsed expression (the parts rebalanced here). */
interface Node {
  op: string;
  args: unknown;
  start: number;
  end: number;
  pos: number;
}

/**
 * Chains shorter than this are left as the engine builds them: short chains nest no deeper than any
 * other expression, and their errors keep the positions the checker gives them.
 */
const MIN_BALANCED_OPERATORS = 16;

const isNode = (v: unknown): v is Node => !!v && typeof v === 'object' && typeof (v as Node).op === 'string';

/** The terms of the chain `top` heads (left to right) and its operator nodes, top first. */
function chainOf(top: Node): { terms: Node[]; ops: Node[] } {
  const ops: Node[] = [];
  const rights: Node[] = [];
  let node = top;
  while (node.op === top.op && Array.isArray(node.args) && node.args.length === 2) {
    ops.push(node);
    rights.push(node.args[1] as Node);
    node = node.args[0] as Node;
  }
  return { terms: [node, ...rights.reverse()], ops };
}

/** Rebuilds a chain as a balanced tree of its own nodes, `top` staying its root. */
function balance(top: Node, terms: Node[], ops: Node[]): void {
  const pool = ops.slice(1);
  // Operators lo..hi join terms lo..hi+1; the middle one is the subtree's root.
  const build = (lo: number, hi: number, root?: Node): Node => {
    if (lo > hi) return terms[lo]!;
    const mid = (lo + hi + 1) >> 1;
    const left = build(lo, mid - 1);
    const right = build(mid + 1, hi);
    const node = root ?? pool.pop()!;
    node.args = [left, right];
    node.start = left.start;
    node.pos = left.start;
    node.end = right.end;
    return node;
  };
  build(0, ops.length - 1, top);
}

/** Balances every long `&&` and `||` chain of the parsed expression, in place. */
export function balanceLogic(root: unknown): void {
  const stack: unknown[] = [root];
  while (stack.length) {
    const node = stack.pop();
    if (!isNode(node) || node.op === 'value') continue;
    if (node.op === '&&' || node.op === '||') {
      const { terms, ops } = chainOf(node);
      if (ops.length >= MIN_BALANCED_OPERATORS) balance(node, terms, ops);
      stack.push(...terms);
      continue;
    }
    const children: unknown[] = Array.isArray(node.args) ? node.args : [node.args];
    for (const child of children.flat()) if (isNode(child)) stack.push(child);
  }
}
