/**
 * A precompiled form's tree as a compiled expression: evaluated by the tree evaluator, and by the
 * engine (compiled from the form on first need) wherever the tree evaluator leaves the answer to it.
 * A bundle whose expressions all have trees, and whose evaluations all stay on them, never builds
 * the engine's environment.
 */
import { type CompiledExpression, compiledExpression } from '../compiled-expression.ts';
import type { PrecompiledExpression } from '../precompiled.ts';
import { isTree } from './tree.ts';
import { runTree } from './tree-run.ts';

/** Declared types under which a tree evaluates as without them: the checker's alone, unchecked. */
const UNTYPED = new Set(['dyn', 'map<string, dyn>']);

/**
 * The compiled expression of a form's tree, or undefined when it has none (or not one of a tree's
 * shape, or declarations other than dyn ones). `engine` compiles the same expression with the
 * engine; `defaultLimit` is the cost limit of an evaluation given none.
 */
export function treeCompiled(
  form: PrecompiledExpression,
  engine: () => CompiledExpression,
  defaultLimit: number,
): CompiledExpression | undefined {
  const { tree, declarations } = form;
  if (!isTree(tree)) return undefined;
  if (declarations && !Object.values(declarations).every((t) => UNTYPED.has(t))) return undefined;
  let slow: CompiledExpression | undefined;
  const evaluate = (variables: Record<string, unknown>, limit: number) => {
    const answered = runTree(tree, variables, limit);
    if (answered) return answered;
    slow ??= engine();
    return slow.evaluate(variables, limit);
  };
  return compiledExpression('unchecked', false, evaluate, defaultLimit);
}
