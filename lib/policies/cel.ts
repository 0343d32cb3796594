/**
 * The CEL of admission policies: the one module of lib/policies/ that reaches the CEL engine. It
 * compiles a policy's expressions in the environment the API server gives policies (the
 * matchConditions environment plus `params` when the policy has a paramKind and `variables`), runs
 * them under the per-call cost limit, and builds the variables of one evaluation.
 */
import {
  admissionVariables,
  type Authorize,
  CelCompileError,
  check,
  compile,
  CelEngineNotLoaded,
  CostLimitExceeded,
  kubeVersionFromText,
  MATCH_CONDITIONS_COST_BUDGET,
  needsLibraries,
  noOpinion,
  PER_CALL_COST_LIMIT,
  type Program,
  toCel,
} from '../../packages/kube-cel/src/index.ts';
import { wholeDoubleKeys } from '../json.ts';
import { decideMatch, type ConditionEvaluation, type MatchOutcome } from '../matchconditions/matcher.ts';
import { chunkLoader } from '../matchconditions/regex-loader.ts';
import type { AdmissionRequest } from '../review/schemas.ts';

/**
 * Loads what a policy's expressions need before it is compiled in a bundle: the RE2 engine when
 * one uses a regular expression, the Kubernetes libraries when one names their functions. Every
 * string of the spec is read as an expression, so a message naming `matches(` loads RE2 too;
 * `checked` (a type-checked compile, in the whole environment) always loads the libraries.
 */
export function policyChunkLoader(spec: unknown, checked = false): () => Promise<void> | undefined {
  return chunkLoader(stringsOf(spec), checked, expressionsOf(spec));
}

/** The fields of a policy's spec that hold CEL expressions, at any depth. */
const EXPRESSION_FIELDS = new Set(['expression', 'messageExpression', 'valueExpression']);

/** The expressions of a policy's spec (the strings of its expression fields), at any depth. */
function expressionsOf(value: unknown, into: string[] = []): string[] {
  if (Array.isArray(value)) for (const v of value) expressionsOf(v, into);
  else if (value && typeof value === 'object')
    for (const [key, v] of Object.entries(value)) {
      if (typeof v === 'string' && EXPRESSION_FIELDS.has(key)) into.push(v);
      else expressionsOf(v, into);
    }
  return into;
}

/** The strings of a value, at any depth. */
function stringsOf(value: unknown, into: string[] = []): string[] {
  if (typeof value === 'string') into.push(value);
  else if (value && typeof value === 'object') for (const v of Object.values(value)) stringsOf(v, into);
  return into;
}

export {
  CelEngineNotLoaded,
  CostLimitExceeded,
  decideMatch,
  MATCH_CONDITIONS_COST_BUDGET,
  needsLibraries,
  noOpinion,
  PER_CALL_COST_LIMIT,
  toCel,
};
export type { Authorize, ConditionEvaluation, MatchOutcome, Program };

/**
 * The cost budget of one filter's expressions for one request, the API server's
 * RuntimeCELCostBudget (apiserver/pkg/apis/cel/config.go): validations, then messageExpressions
 * with what is left, and auditAnnotations anew.
 */
export const RUNTIME_CEL_COST_BUDGET = 10_000_000;

/** The longest message a messageExpression may give (MaxEvaluatedMessageExpressionSizeBytes). */
export const MAX_MESSAGE_EXPRESSION_BYTES = 5 * 1024;

/** The CEL types an expression may return, as cel-go names them. */
export type ReturnType = 'bool' | 'string' | 'null_type' | 'any';

/** What an expression is compiled with. */
export interface PolicyCompileOptions {
  /** Declares `params` (the policy has a paramKind). */
  hasParams: boolean;
  /** Declares `authorizer` (every expression but messageExpressions). */
  hasAuthorizer: boolean;
  /** The names of the variables declared before this expression (in order). */
  variables: readonly string[];
  /** What it must return; `any` for variables. */
  returns: readonly ReturnType[];
  /** The Kubernetes version ("1.30") whose environment compiles it; the newest by default. */
  kubernetesVersion?: string;
  /** False only parses (in-function: lint has type-checked it). */
  typeCheck?: boolean;
  /**
   * The variables (of `variables`) whose values may be of the Kubernetes libraries' types (an IP,
   * a quantity): an expression reading one compiles with the libraries though it names none.
   */
  libraryVariables?: readonly string[];
  /** The CEL types of `variables` (as the checker gave them; `dyn` where unknown), checking types. */
  variableTypes?: readonly string[];
  /**
   * Object types the declarations name, and the types of `object`, `oldObject` and `params`: the
   * schemas of a kind, for checking types as the API server's type checking does (never run).
   */
  schemaTypes?: { types: Record<string, Record<string, string>>; object?: string; params?: string };
}

/** A compiled policy expression, or why it does not compile (in the API server's words). */
export type PolicyProgram =
  | { program: Program; error?: undefined; type?: string }
  | { error: string; program?: undefined; type?: undefined };

/** The type of `variables` while checking: an object whose fields are the variables declared so far. */
const VARIABLES_TYPE = 'kubernetes.variables';

/** `variables.<name>` references (a field select on the `variables` identifier). */
const VARIABLE_REFERENCE = /(?<![\w.])variables\s*\.\s*([A-Za-z_][A-Za-z0-9_]*)/g;
/** `variables` read otherwise than by `variables.<name>` (`variables['a']`, the whole map). */
const VARIABLES_READ_WHOLE = /(?<![\w.])variables(?!\w|\s*\.\s*[A-Za-z_])/;

/**
 * True when `expression` may read one of the variables `names`: by `variables.<name>`, or by
 * reading `variables` otherwise. A name in a string literal or a comment counts too.
 */
export function readsVariables(expression: string, names: readonly string[]): boolean {
  if (!names.length) return false;
  for (const found of expression.matchAll(VARIABLE_REFERENCE)) if (names.includes(found[1]!)) return true;
  return VARIABLES_READ_WHOLE.test(expression);
}

/** `params`/`authorizer` read as identifiers, not as fields of something else. */
const identifier = (name: string) => new RegExp(`(?<![\\w.])${name}(?![\\w])`);

/**
 * Compiles a policy expression as the API server's CompileCELExpression: `compilation failed: <issues>`
 * when it does not compile, `must evaluate to <type> but got <type>` when its type is not one it
 * may return.
 */
export function compilePolicyExpression(expression: string, options: PolicyCompileOptions): PolicyProgram {
  const declarations: Record<string, string> = { variables: 'map<string, dyn>' };
  if (options.hasParams) declarations.params = 'dyn';
  const checking = options.typeCheck !== false;
  const kubeVersion = kubeVersionFromText(options.kubernetesVersion);
  let program: Program;
  let type: string | undefined;
  try {
    // Checked with the variables' own types (as the composited compiler declares them), run untyped.
    if (checking && (options.variables.length || options.schemaTypes)) type = checkTyped(expression, options);
    else if (!checking) {
      const undeclared = undeclaredReference(expression, options);
      if (undeclared) return { error: `compilation failed: ${undeclared}` };
    }
    const libraries = readsVariables(expression, options.libraryVariables ?? []);
    program = compile(expression, {
      declarations,
      typeCheck: checking && type === undefined,
      kubeVersion,
      ...(libraries ? { libraries } : {}),
    });
  } catch (err) {
    // A type error's message already says it (the checker words it as the API server does).
    if (err instanceof CelCompileError)
      return {
        error: err.message.startsWith('compilation failed: ') ? err.message : `compilation failed: ${err.message}`,
      };
    throw err;
  }
  if (checking) {
    const undeclared = undeclaredReference(expression, options);
    if (undeclared) return { error: `compilation failed: ${undeclared}` };
  }
  type ??= program.type;
  if (checking && !options.returns.includes('any')) {
    type = type === 'null' ? 'null_type' : type;
    if (!(options.returns as readonly string[]).includes(type)) {
      const want = options.returns.length === 1 ? options.returns[0] : `one of [${options.returns.join(' ')}]`;
      return { error: `must evaluate to ${want} but got ${type}` };
    }
  }
  return { program, type };
}

/**
 * Type-checks an expression with `variables` an object of the variables' types and the schema
 * types given; its type, or throws CelCompileError.
 */
function checkTyped(expression: string, options: PolicyCompileOptions): string {
  const fields: Record<string, string> = {};
  options.variables.forEach((name, i) => {
    fields[name] = options.variableTypes?.[i] ?? 'dyn';
  });
  const schema = options.schemaTypes;
  const declarations: Record<string, string> = { variables: VARIABLES_TYPE };
  if (schema?.object) Object.assign(declarations, { object: schema.object, oldObject: schema.object });
  if (options.hasParams) declarations.params = schema?.params ?? 'dyn';
  const checked = check(expression, {
    types: { ...schema?.types, [VARIABLES_TYPE]: fields },
    declarations,
    kubeVersion: kubeVersionFromText(options.kubernetesVersion),
  });
  if (!checked.valid) throw checked.error;
  return checked.type;
}

/** A reference to a name the expression's environment does not declare, in cel-go's words and place. */
function undeclaredReference(expression: string, options: PolicyCompileOptions): string | undefined {
  for (const name of ['params', 'authorizer'] as const) {
    if (name === 'params' ? options.hasParams : options.hasAuthorizer) continue;
    const found = identifier(name).exec(expression);
    if (found) return celGoError(expression, found.index, `undeclared reference to '${name}' (in container '')`);
  }
  for (const found of expression.matchAll(VARIABLE_REFERENCE))
    if (!options.variables.includes(found[1]!))
      // cel-go places a field selection at its dot.
      return celGoError(expression, found.index + found[0].indexOf('.'), `undefined field '${found[1]}'`);
  return undefined;
}

/** One error as cel-go displays it: `ERROR: <input>:line:column: message`, the line, dots to a caret. */
function celGoError(expression: string, offset: number, message: string): string {
  const lines = expression.slice(0, offset).split('\n');
  const line = lines.length;
  const column = [...lines.at(-1)!].length + 1;
  const text = [...(expression.split('\n')[line - 1] ?? '').replaceAll('\t', ' ')];
  // cel-go marks a character of more than one UTF-8 byte with a full-width dot.
  const dots = text
    .slice(0, column - 1)
    .map((c) => (c.codePointAt(0)! > 0x7f ? '\uff0e' : '.'))
    .join('');
  return `ERROR: <input>:${line}:${column}: ${message}\n | ${text.join('')}\n | ${dots}^`;
}

/** One run of a program: its value or its error (in cel-go's words), and the cost it spent. */
export interface Run {
  value?: unknown;
  error?: string;
  /** True when the run stopped at the per-call cost limit. */
  costLimited?: boolean;
  cost: number;
}

/**
 * Runs a program under the per-call limit. Each evaluation has its own meter: a lazily evaluated
 * variable runs inside the expression that reads it without sharing its cost.
 */
export function runProgram(program: Program, activation: Record<string, unknown>): Run {
  try {
    const { value, cost } = program.evaluate(activation, { costLimit: PER_CALL_COST_LIMIT });
    return { value, cost };
  } catch (err) {
    // Left to the engine before its chunk is loaded: the dispatch runs again once it is (afterChunks).
    if (err instanceof CelEngineNotLoaded) throw err;
    const cost = (err as { cost?: number }).cost ?? 0;
    const message = err instanceof Error ? err.message : String(err);
    return { error: message, costLimited: err instanceof CostLimitExceeded, cost };
  }
}

/** The request's group, version and kind or resource as the policy matched them. */
export interface Matched {
  resource: { group: string; version: string; resource: string };
  kind: { group: string; version: string; kind: string };
}

/** What one evaluation of a policy reads. */
export interface ActivationInput {
  request: AdmissionRequest;
  /** The kind and resource the policy matched (an equivalent of the request's own under Equivalent). */
  matched: Matched;
  /** The param object, or null. */
  params?: unknown;
  /** The request's Namespace object, or null (cluster-scoped objects, Namespace requests). */
  namespace?: unknown;
  /** Answers `authorizer` checks; none when the expression has no authorizer. */
  authorize?: Authorize;
  /** Leaves `authorizer` out (messageExpressions). */
  withoutAuthorizer?: boolean;
  /** `request.kind` only is the matched one (matchConditions: resource is the request's own). */
  kindOnly?: boolean;
}

/**
 * The variables of an evaluation but `variables`: object, oldObject, request (kind and resource as
 * matched, requestKind and requestResource the request's own, as CreateAdmissionRequest),
 * params, namespaceObject (CreateNamespaceObject: the metadata fields it copies, spec, status),
 * authorizer.
 */
export function policyActivation(input: ActivationInput): Record<string, unknown> {
  const base = admissionVariables(input.request, {
    authorize: input.authorize ?? noOpinion,
    namespaceObject: (input.namespace as Record<string, unknown> | null | undefined) ?? null,
    params: input.params ?? null,
    wholeDoubles: wholeDoubleKeys,
  });
  const request = base.request as Record<string, unknown>;
  const ordered: Record<string, unknown> = {
    kind: { ...input.matched.kind },
    resource: input.kindOnly ? request.resource : { ...input.matched.resource },
  };
  // The request's own members (fixed names: none is `__proto__`), after kind and resource.
  for (const key in request) if (key !== 'kind' && key !== 'resource') ordered[key] = request[key];
  // base is this evaluation's own object: its request is replaced in place, at the same position.
  base.request = ordered;
  if (input.withoutAuthorizer) delete base.authorizer;
  return base;
}

/** The type of a CEL value as cel-go's Type() prints it. */
export function celTypeName(value: unknown): string {
  if (value === null || value === undefined) return 'null_type';
  if (typeof value === 'boolean') return 'bool';
  if (typeof value === 'string') return 'string';
  if (typeof value === 'bigint') return 'int';
  if (typeof value === 'number') return 'double';
  if (Array.isArray(value)) return 'list';
  if (value instanceof Uint8Array) return 'bytes';
  if (value instanceof Date) return 'google.protobuf.Timestamp';
  const name = (value as { constructor?: { name?: string } }).constructor?.name;
  if (name === 'UnsignedInt' || name === 'Uint') return 'uint';
  if (name === 'Duration') return 'google.protobuf.Duration';
  return 'map';
}
