/**
 * The package's answers over the CEL conformance cases of the sections Kubernetes enables, as text:
 * for comparing the package with a build of it (a function's bundle) case by case.
 */
import { compileExpression, isCompileError } from '../src/compile.ts';
import { type ConformanceCase, conformanceCases, KUBERNETES_SECTIONS } from './conformance-suite.ts';
import { exclusionOf } from './conformance-exclusions.ts';
import { declarationsOf, marcCanonical, valueBindings } from './engines.ts';

export { loadLibraries } from '../src/libraries/all.ts';
export { loadEngine } from '../src/compile.ts';

let kubernetesCases: ConformanceCase[] | undefined;

/**
 * The cases of the sections Kubernetes enables, less those excluded by design: found once per
 * instance of this module (deciding some exclusions compiles the case), the same for both answers.
 */
function casesAnswered(): ConformanceCase[] {
  const sections = new Set<string>(KUBERNETES_SECTIONS);
  kubernetesCases ??= conformanceCases().filter((c) => sections.has(c.section) && !exclusionOf(c));
  return kubernetesCases;
}

/**
 * Each case's answer, compiled with its declarations `typeCheck`ed or not: the compile error, or the
 * value or evaluation error with the cost spent (cases whose bindings the engine has no value for
 * are answered without bindings).
 */
export function conformanceAnswers(typeCheck: boolean): string[] {
  return casesAnswered().map((c) => {
    const compiled = compileExpression(c.expr, { declarations: declarationsOf(c), typeCheck });
    if (isCompileError(compiled)) return `${c.path}: compile ${compiled.message}`;
    let vars: Record<string, unknown> = {};
    try {
      vars = valueBindings(c);
    } catch {}
    try {
      const { value, cost } = compiled.evaluate(vars);
      return `${c.path}: ${compiled.type} ${marcCanonical(value)} cost ${cost}`;
    } catch (err) {
      const e = err as { message?: string; cost?: number };
      return `${c.path}: error ${e.message} cost ${e.cost}`;
    }
  });
}
