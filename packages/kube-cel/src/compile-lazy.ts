/**
 * compile.ts as a function's bundle has it (infra/build-cel-engine.ts puts this module in its place):
 * the engine, and all that compiles expressions with it, in a chunk of its own that only loadEngine
 * loads. An expression with a precompiled tree compiles without it, and evaluates without it unless
 * its tree leaves an evaluation to the engine: that evaluation then throws CelEngineNotLoaded, to be
 * done again once loadEngine has loaded it (evaluations are pure). A bundle whose expressions all
 * have trees, and whose evaluations stay on them, never loads the engine.
 */
import type * as Compile from './compile.ts';
import type { CompiledExpression, CompileError, CompileOptions } from './compile.ts';
import { PER_CALL_COST_LIMIT } from './cost/limits.ts';
import { CelEngineNotLoaded } from './errors.ts';
import { treeCompiled } from './evaluate/tree-compiled.ts';
import { chunk, precompiledFor, treesOnly } from './precompiled.ts';
import { environmentMinor } from './versions/versions.ts';

export type { CompiledExpression, CompileError, CompileOptions } from './compile.ts';

/** The engine's chunk: compile.ts. */
const compiler = chunk((): Promise<typeof Compile> => import('./compile.ts'));

/** compile.ts, or CelEngineNotLoaded. */
function engine(): typeof Compile {
  const loaded = compiler.module;
  if (!loaded) throw new CelEngineNotLoaded();
  return loaded;
}

/** Loads the engine's chunk (once). */
export function loadEngine(): Promise<void> {
  return compiler.load();
}

/** True when compiling `expression` needs the engine loaded first: it has no precompiled trees. */
export function needsEngine(expression: string): boolean {
  return !compiler.module && !treesOnly(expression);
}

/**
 * compile.ts's compileExpression: from the precompiled tree while the engine is not loaded (and
 * the expression has one for this Kubernetes version and declarations), else by the engine.
 */
export function compileExpression(expression: string, options: CompileOptions = {}): CompiledExpression | CompileError {
  if (!compiler.module && options.typeCheck === false && !options.types) {
    const minor = environmentMinor(options.kubeVersion, options.mode);
    const form = precompiledFor(expression, minor, options.declarations);
    const compiled =
      form &&
      treeCompiled(
        form,
        () => {
          const byEngine = engine().compileExpression(expression, options);
          if (engine().isCompileError(byEngine)) throw new Error(byEngine.message);
          return byEngine;
        },
        PER_CALL_COST_LIMIT,
      );
    if (compiled) return compiled;
  }
  return engine().compileExpression(expression, options);
}

/** True when a compile result is an error. */
export function isCompileError(result: CompiledExpression | CompileError): result is CompileError {
  return !('run' in result);
}

/** compile.ts's precompile; needs the engine loaded. */
export function precompile(
  expression: string,
  options: Omit<CompileOptions, 'typeCheck' | 'types'> = {},
): ReturnType<typeof Compile.precompile> {
  return engine().precompile(expression, options);
}
