/**
 * The CEL environment of webhook matchConditions, as the API server declares it: the
 * variables `object`, `oldObject`, `request`, `namespaceObject` and `authorizer`, and the
 * Kubernetes libraries conditions use in practice (lists, extended strings, regex in RE2,
 * URLs, quantity, authorizer), under the API server's cost limit per expression.
 * Imported only by code that evaluates conditions, never by the admission engine itself,
 * so functions that do not enforce conditions carry no CEL in their bundles.
 */
import type { Environment, ParseResult } from './engine.ts';
import { adoptCelGoChecker, checkerEnvironment, inferredTypes } from './check/checker.ts';
import { environmentOf } from './evaluate/declared.ts';
import { needsLibraries } from './libraries/names.ts';
import { balanceLogic } from './parse/logic-balance.ts';
import { expressionTree } from './evaluate/tree.ts';
import { treeCompiled } from './evaluate/tree-compiled.ts';
import { escapedFieldAt, inWrittenText, rewriteLiterals, writtenOffset } from './parse/literals.ts';
import { compileError, compileErrors, internalNames, macroArgument, mentions } from './check/messages.ts';
import type { CompileError } from './check/compile-error.ts';
import { CelError } from './errors.ts';
import { type CompiledExpression, compiledExpression } from './compiled-expression.ts';
import { evaluateMetered } from './cost/evaluation.ts';
import { keepUnoptimized, PER_CALL_COST_LIMIT } from './cost/meter.ts';
import { RECURSION_LIMIT_MESSAGE, readForParse } from './parse/limits.ts';
import { inCelGoWords } from './evaluate/runtime-errors.ts';
import { screen, screenChecked } from './check/screen.ts';
import { adoptCelGoSemantics } from './check/semantics.ts';
import { environmentMinor, type CelKubeVersion, type ExpressionMode } from './versions/versions.ts';
import {
  FORM_VERSION,
  type PrecompiledExpression,
  precompiledFor,
  recording,
  recordPrecompiled,
} from './precompiled.ts';

export type { CompileError } from './check/compile-error.ts';
export {
  type AuthorizationAttributes,
  type AuthorizationDecision,
  type Authorize,
  type FieldSelectorRequirement,
  type LabelSelectorOperator,
  type LabelSelectorRequirement,
  noOpinion,
} from './libraries/authorizer.ts';
export { matchConditionsEnvironment } from './evaluate/environment.ts';
export { CostLimitExceeded, MATCH_CONDITIONS_COST_BUDGET, PER_CALL_COST_LIMIT } from './cost/meter.ts';
export { admissionVariables, toCel } from './admission/variables.ts';

export type { CompiledExpression } from './compiled-expression.ts';

/** Options of compileExpression. */
export interface CompileOptions {
  /** False only parses (no type check). */
  typeCheck?: boolean;
  /** The Kubernetes version whose environment compiles it; the newest modelled by default. */
  kubeVersion?: CelKubeVersion;
  /**
   * `create`: as the API server compiles a configuration being created or updated (its
   * compatibility version's environment, one minor version back); `stored` (the default): as
   * it evaluates expressions already stored (everything its version knows).
   */
  mode?: ExpressionMode;
  /**
   * Further variables, name to CEL type (`list<int>`), declared beside the environment's own:
   * for testing the environment on expressions written for other declarations.
   */
  declarations?: Record<string, string>;
  /**
   * Object types, name to field types (`{ replicas: 'int', spec: 'Deployment.spec' }`), that the
   * declarations may name. With types, `object` and `oldObject` are `dyn` unless declared.
   */
  types?: Record<string, Record<string, string>>;
  /**
   * Compiles with the Kubernetes libraries even when the expression names none of their functions:
   * values of their types (an IP, a quantity) reach it otherwise, as a policy's `variables` computed
   * by expressions that name them; without the libraries the engine knows no such value.
   */
  libraries?: boolean;
}

/**
 * Parses and type-checks an expression in the matchConditions environment. Returns the
 * compiled expression, or the error the API server would report at registration.
 * `typeCheck: false` only parses (in-function enforcement: lint has checked the types, and
 * a cold start should not pay for it again); the type is then `unchecked`.
 */
export function compileExpression(expression: string, options: CompileOptions = {}): CompiledExpression | CompileError {
  return compile(expression, options, true);
}

/**
 * compileExpression in the whole environment even without the type check, where compileExpression
 * builds only the parts the expression names: the same answers (tests hold them equal).
 */
export function compileInWholeEnvironment(
  expression: string,
  options: CompileOptions = {},
): CompiledExpression | CompileError {
  return compile(expression, options, true, true, undefined, true);
}

/**
 * compileExpression as a program built without cel-go's OptOptimize costs: list and map literals of
 * constants, and conversions of constants, charged when evaluated. For restating the cost tests of
 * cel-go and of Kubernetes' libraries, which build their programs so; the API server optimizes.
 */
export function compileUnoptimized(
  expression: string,
  options: CompileOptions = {},
): CompiledExpression | CompileError {
  return compile(expression, options, true, false);
}

/**
 * compileExpression; `fold` false leaves conversions of constants unfolded (how a folded one is
 * evaluated), `optimize` false charges constants as compileUnoptimized.
 */
function compile(
  expression: string,
  options: CompileOptions,
  fold: boolean,
  optimize = true,
  made?: (form: PrecompiledExpression) => void,
  whole = false,
): CompiledExpression | CompileError {
  // Only what in-function evaluation compiles (unchecked, folded, optimized) has precompiled forms.
  const precompilable = fold && optimize && options.typeCheck === false && !options.types;
  const minor = environmentMinor(options.kubeVersion, options.mode);
  if (precompilable && !made) {
    const form = precompiledFor(expression, minor, options.declarations);
    const engine = () => (form && fromForm(form, options, minor)) ?? compileAfresh(expression, options, whole);
    const loaded = form && (treeCompiled(form, engine, PER_CALL_COST_LIMIT) ?? fromForm(form, options, minor));
    if (loaded) return loaded;
  }
  const libraries = options.libraries === true || needsLibraries(expression);
  const env = environmentOf(options, expression, libraries, whole);
  const read = readForParse(expression);
  if (read.refusal && 'errors' in read.refusal) {
    const issues = read.refusal.errors.map((e) => ({ start: e.range.start, message: e.summary }));
    return compileErrors(expression, issues);
  }
  if (read.refusal) return compileError(expression, read.refusal);
  // cel-go reads backtick-quoted fields only with EnableIdentifierEscapeSyntax, which the API server leaves off.
  const escaped = escapedFieldAt(read.text);
  if (escaped !== undefined)
    return compileError(expression, { summary: "unsupported syntax '`'", range: { start: escaped } });
  const source = rewriteLiterals(read.text);
  const written = (err: unknown) => inWrittenText(err, source.edits);
  let parsed: ParseResult;
  let type = 'unchecked';
  try {
    const folding = fold ? (text: string) => foldedError(text, options) : undefined;
    const screened = parseScreened(env, source.text, minor, folding, optimize);
    if ('parseError' in screened) return compileError(expression, macroArgument(written(screened.parseError)));
    if ('refusal' in screened) {
      const { refusal } = screened;
      const error = compileError(expression, written(refusal), false);
      return refusal.program ? { ...error, message: `program instantiation failed: ${refusal.summary}` } : error;
    }
    parsed = screened.parsed;
    if (options.typeCheck !== false) {
      const issues = adoptCelGoChecker(parsed.ast as never, checkerEnvironment(env));
      const checked = parsed.check();
      if (!checked.valid) return compileError(expression, written(checked.error));
      const inferred = issues.length ? undefined : inferredTypes(parsed.ast as never);
      if (inferred) issues.push(...inferred.issues);
      if (issues.length) {
        const at = (start: number) => (source.edits.length ? writtenOffset(start, source.edits) : start);
        // cel-go checks only what its parser accepted: its parser's refusals come alone.
        const parse = issues.filter((i) => i.parse);
        return compileErrors(
          expression,
          (parse.length ? parse : issues).map((i) => ({ start: at(i.start), message: i.message })),
        );
      }
      const typed = screenChecked(parsed.ast, minor, environmentMinor(options.kubeVersion, 'stored'));
      if (typed) return compileError(expression, written(typed), false);
      type = inferred?.type ?? String(checked.type);
    }
  } catch (err) {
    // An expression within cel-go's parser limits that still overflows a walker's stack (never
    // seen: parse-limits.ts refuses nesting first) is refused in the same words, not thrown.
    if (err instanceof RangeError)
      return compileError(expression, { summary: RECURSION_LIMIT_MESSAGE, unplaced: true });
    throw err;
  }
  if (precompilable) {
    const form: PrecompiledExpression = { form: FORM_VERSION, expression, minor, text: source.text, libraries };
    // A tree only for a form kept, and where the engine's own type check, which runs before its first
    // evaluation, passes: where it fails, every evaluation fails.
    const tree = made || recording() ? expressionTree(parsed.ast, options.declarations) : undefined;
    if (tree && typeChecks(env, source.text, minor)) form.tree = tree;
    keepForm(form, options, made);
  }
  return compiled(env, parsed, type, () => compile(expression, options, fold, optimize) as CompiledExpression);
}

/** True when the engine's own type check passes on `text` (a fresh parse: the engine keeps what it checked). */
function typeChecks(env: Environment, text: string, minor: number): boolean {
  try {
    const screened = parseScreened(env, text, minor);
    return 'parsed' in screened && screened.parsed.check().valid;
  } catch {
    return false;
  }
}

/** An expression compiled without its precompiled form (one whose tree the engine is to answer for). */
function compileAfresh(expression: string, options: CompileOptions, whole: boolean): CompiledExpression {
  const compiled = compile(expression, options, true, true, () => {}, whole);
  if (isCompileError(compiled)) throw new CelError(compiled.message);
  return compiled;
}

/** A form made while compiling: recorded (KUBE_CEL_RECORD) and handed to `made`. */
function keepForm(
  form: PrecompiledExpression,
  options: CompileOptions,
  made: ((form: PrecompiledExpression) => void) | undefined,
): void {
  if (options.declarations) form.declarations = options.declarations;
  recordPrecompiled(form);
  made?.(form);
}

/**
 * A precompiled form loaded: parsed from the text it kept and given cel-go's semantics, the parser
 * limits, literal rules and refusals it passed when it was made not read again (the screen's renames
 * of calls are made again). Undefined when the text no longer parses or passes as it did.
 */
function fromForm(form: PrecompiledExpression, options: CompileOptions, minor: number): CompiledExpression | undefined {
  const env = environmentOf(options, form.expression, form.libraries || options.libraries === true);
  let screened: Screened;
  try {
    screened = parseScreened(env, form.text, minor);
  } catch {
    return undefined;
  }
  if (!('parsed' in screened)) return undefined;
  const again = () => (fromForm(form, options, minor) ?? compile(form.expression, options, true)) as CompiledExpression;
  return compiled(env, screened.parsed, 'unchecked', again);
}

/** What parseScreened found: the parsed expression, the engine's refusal to parse it, or the screen's. */
type Screened = { parsed: ParseResult } | { parseError: unknown } | { refusal: NonNullable<ReturnType<typeof screen>> };

/**
 * What compile and fromForm do with the text the engine reads: parsed, its logic balanced as cel-go's
 * parser balances it, screened for what cel-go refuses once parsed (`folding` evaluates constant
 * conversions), constants charged as written unless `optimize`, and given cel-go's semantics. A
 * RangeError (a walker's stack) is thrown.
 */
function parseScreened(
  env: Environment,
  text: string,
  minor: number,
  folding?: (text: string) => string | undefined,
  optimize = true,
): Screened {
  let parsed: ParseResult;
  try {
    parsed = env.parse(text);
    balanceLogic(parsed.ast);
  } catch (err) {
    if (err instanceof RangeError) throw err;
    return { parseError: err };
  }
  const refusal = screen(parsed.ast, minor, folding);
  if (refusal) return { refusal };
  if (!optimize) keepUnoptimized(parsed.ast);
  adoptCelGoSemantics(parsed.ast as never);
  return { parsed };
}

/** A precompiled form loaded as compile loads it (undefined when it cannot be), whatever forms were given. */
export function loadPrecompiled(
  form: PrecompiledExpression,
  options: Omit<CompileOptions, 'typeCheck' | 'types'> = {},
): CompiledExpression | undefined {
  const unchecked = { ...options, typeCheck: false };
  return fromForm(form, unchecked, environmentMinor(options.kubeVersion, options.mode));
}

/**
 * The precompiled form of an expression for in-function evaluation (compiled without its type
 * check, for `options.kubeVersion`, `mode` and `declarations`), or undefined when it does not
 * compile: a bundler keeps the forms (process.env.KUBE_CEL_PRECOMPILED) for compile to load.
 */
export function precompile(
  expression: string,
  options: Omit<CompileOptions, 'typeCheck' | 'types'> = {},
): PrecompiledExpression | undefined {
  let made: PrecompiledExpression | undefined;
  const result = compile(expression, { ...options, typeCheck: false }, true, true, (form) => {
    made = form;
  });
  return isCompileError(result) ? undefined : made;
}

/**
 * The compiled expression of a parsed (and checked) one: runs it under the cost limit. The engine
 * keeps the scopes of a comprehension's variables on the parsed expression, so an evaluation started
 * while one of the same expression is under way (from a function it calls) runs on a copy, compiled
 * again by `again`.
 */
function compiled(
  env: Environment,
  parsed: ParseResult,
  type: string,
  again: () => CompiledExpression,
): CompiledExpression {
  let running = false;
  const failed = (err: unknown) => inCelGoWords(internalNames(err));
  const evaluate = (variables: Record<string, unknown>, limit: number) => {
    if (running) return again().evaluate(variables, limit);
    running = true;
    try {
      return evaluateMetered(env, parsed, variables, limit, failed);
    } finally {
      running = false;
    }
  };
  return compiledExpression(type, mentions(parsed.ast, 'authorizer'), evaluate, PER_CALL_COST_LIMIT);
}

/**
 * The error of a constant conversion (`int('')`) evaluated as cel-go's planner folds it when the
 * API server plans the expression, refusing the configuration; undefined when it folds to a value.
 */
function foldedError(text: string, options: CompileOptions): string | undefined {
  const folded = compile(text, { kubeVersion: options.kubeVersion, mode: options.mode, typeCheck: false }, false);
  if (isCompileError(folded)) return undefined;
  try {
    folded.run({});
    return undefined;
  } catch (err) {
    // A conversion no overload takes (`string([1])`) is the checker's refusal, which cel-go makes first.
    const code = (err as { code?: string }).code;
    if (code === 'no_matching_overload' || code === 'no_such_overload') return undefined;
    return (err as { summary?: string; message?: string }).summary ?? (err as Error).message ?? String(err);
  }
}

/**
 * Loads the CEL engine ahead of use: in a function's bundle it is a chunk of its own (with what
 * compiles expressions), which only this reaches; expressions with precompiled trees need it only
 * when an evaluation is left to it. Elsewhere it is loaded with the package, and this does nothing.
 */
export function loadEngine(): Promise<void> {
  return Promise.resolve();
}

/** True when compiling `expression` needs the engine loaded first (loadEngine); never here, where it is. */
export function needsEngine(_expression: string): boolean {
  return false;
}

/** True when a compile result is an error. */
export function isCompileError(result: CompiledExpression | CompileError): result is CompileError {
  return !('run' in result);
}
