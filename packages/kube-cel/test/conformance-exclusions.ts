/**
 * The conformance cases the matchConditions environment does not answer as the specification's
 * reference environment does, each with its reason. Two kinds:
 *
 * - EXCLUDED: cases whose premise the Kubernetes environment does not share (listed in docs/cel.md).
 * - KNOWN: differences of the engine still to be fixed; the conformance test fails when one of them
 *   starts passing, so the list only shrinks.
 */
import type { ASTNode } from '../src/engine.ts';
import type { ConformanceCase } from './conformance-suite.ts';
import { compileExpression, isCompileError } from '../src/compile.ts';
import { optionalEntries } from '../src/evaluate/entries.ts';
import { matchConditionsEnvironment } from '../src/evaluate/environment.ts';
import { escapedFieldAt } from '../src/parse/literals.ts';
import { declarationsOf } from './engines.ts';
import { KUBERNETES_ANSWERS } from './conformance-kubernetes.ts';

/** A reason a case is excluded, with the rule that finds its cases. */
export interface Exclusion {
  reason: string;
  applies(c: ConformanceCase): boolean;
}

const MESSAGE_LITERAL = /(^|[^\w.])([A-Z]\w*|google\.protobuf\.\w+|\.?[a-z_]+(\.[a-z_\d]+)+\.[A-Z]\w*)\s*\{/;

/** A conversion of a single literal: `uint(-1)`, `timestamp('…')`, `string(b'\xff')`. */
const FAILING_LITERAL_CONVERSION =
  /^\s*(u?int|double|bool|string|bytes|timestamp|duration)\(\s*(-?[\d.e]+u?|b?'[^']*'|b?"[^"]*")\s*\)\s*$/;
/** A duration literal in whole seconds: `duration('320000000000s')`. */
const DURATION_SECONDS_LITERAL = /duration\(\s*'(-?\d+)s'\s*\)/g;
/** The most whole seconds a Go duration holds (2^63 - 1 nanoseconds, about 292 years). */
const GO_DURATION_MAX_SECONDS = 9_223_372_036;

/** True when the expression converts a duration literal longer than a Go duration holds, anywhere in it. */
function overlongDurationLiteral(expr: string): boolean {
  return [...expr.matchAll(DURATION_SECONDS_LITERAL)].some((m) => Math.abs(Number(m[1])) > GO_DURATION_MAX_SECONDS);
}

/** Parses only (no declarations, no checking): the literals of an expression, optional entries read. */
let parser: ReturnType<typeof matchConditionsEnvironment> | undefined;

/** What an optional entry holds when written `optional.of(x)` or `optional.ofNonZeroValue(x)`: x. */
function entryContent(node: ASTNode): ASTNode | undefined {
  if (node.op !== 'rcall' || !['of', 'ofNonZeroValue'].includes(node.args[0] as string)) return undefined;
  const receiver = node.args[1] as ASTNode;
  return receiver.op === 'id' && receiver.args === 'optional' ? (node.args[2] as ASTNode[])[0] : undefined;
}

/** The kind of a literal element (its value's class, or the literal or conversion it is); undefined if not known. */
function literalKind(node: ASTNode): string | undefined {
  if (node.op === 'value') {
    const v = node.args as unknown;
    return v === null ? 'null' : typeof v === 'object' ? (v as object).constructor.name : typeof v;
  }
  if (node.op === 'list' || node.op === 'map') return node.op;
  if (node.op === 'call' && ['uint', 'double', 'duration', 'timestamp', 'bytes'].includes(node.args[0] as string))
    return node.args[0] as string;
  return undefined;
}

/** True when a list or map literal of the expression has elements (or keys, or values) of two known kinds. */
function mixedLiteral(node: unknown): boolean {
  if (Array.isArray(node)) return node.some(mixedLiteral);
  if (!node || typeof node !== 'object' || typeof (node as ASTNode).op !== 'string') return false;
  const n = node as ASTNode;
  const entries = optionalEntries(n);
  const kind = (part: ASTNode, i: number) => {
    const content = entries?.has(i) ? entryContent(part) : part;
    return content && literalKind(content);
  };
  const mixed = (parts: ASTNode[], values = true) =>
    new Set(parts.map((p, i) => (values ? kind(p, i) : literalKind(p))).filter((k) => k !== undefined)).size > 1;
  if (n.op === 'list' && mixed(n.args as ASTNode[])) return true;
  if (n.op === 'map') {
    const pairs = n.args as unknown as Array<[ASTNode, ASTNode]>;
    if (
      mixed(
        pairs.map((p) => p[0]),
        false,
      ) ||
      mixed(pairs.map((p) => p[1]))
    )
      return true;
  }
  return mixedLiteral(n.args);
}

function parsesWithMixedLiteral(expr: string): boolean {
  try {
    return mixedLiteral((parser ??= matchConditionsEnvironment()).parse(expr).ast);
  } catch {
    return false;
  }
}

/** Cases excluded by design, in the order they are tried. */
export const EXCLUDED: Exclusion[] = [
  {
    reason:
      "string.format's infinities, NaN and `%e` as Kubernetes' cel-go prints them (strings extension version 2), " +
      'fields of non-map values in optional chains as it resolves them (absent, not an error): the environment ' +
      'gives the answer recorded in conformance-kubernetes.ts, checked there instead',
    applies: (c) => c.path in KUBERNETES_ANSWERS,
  },
  {
    reason:
      'protobuf messages (TestAllTypes, wrappers, Struct, Any, message literals, proto containers): matchConditions ' +
      'variables are JSON objects and the API server declares no message type a condition could build or receive',
    applies: (c) =>
      c.container !== '' ||
      /TestAllTypes|google\.protobuf\.|proto[23]/.test(c.expr) ||
      MESSAGE_LITERAL.test(c.expr) ||
      Object.values(c.bindings).some((v) => 'objectValue' in v) ||
      c.declarations.some((d) => JSON.stringify(d.type).includes('messageType') || 'wrapper' in d.type),
  },
  {
    reason:
      "conversions of a literal that fail (`uint(-1)`, `bool('TrUe')`, `string(b'\\xff')`, a duration past the " +
      "±292 years of Go's durations anywhere in the expression): cel-go folds conversions of constants when the " +
      'API server plans the expression (cel.OptOptimize), so it refuses the configuration when it is created, ' +
      'where the specification expects an evaluation error',
    applies: (c) =>
      c.expect.kind === 'error' && (FAILING_LITERAL_CONVERSION.test(c.expr) || overlongDurationLiteral(c.expr)),
  },
  {
    reason:
      'list and map literals of mixed element types (`[1, "a"]`, `{1: 1.0, 2u: 3u}`): the API server\'s environment ' +
      'declares HomogeneousAggregateLiterals, so it refuses them when the expression is compiled',
    applies: (c) => parsesWithMixedLiteral(c.expr),
  },
  {
    reason:
      'list and map literals with a dyn or null element beside a typed one (`[?x.?y, 1]`, `[optional.of(1), null]`): ' +
      'the literal validator of the ' +
      "API servers from 1.29 (cel-go's HomogeneousAggregateLiterals) requires equivalent types, so it refuses them",
    applies: (c) => {
      let compiled: ReturnType<typeof compileExpression>;
      try {
        compiled = compileExpression(c.expr, { declarations: declarationsOf(c) });
      } catch {
        return false; // declarations of message types the environment has none of
      }
      const first = isCompileError(compiled) ? compiled.message.split('\n')[0]! : '';
      return /expected type '[^']+' but found '[^']+'/.test(first) && /'(dyn|null_type)'/.test(first);
    },
  },
  {
    reason:
      'backtick-quoted field names (a.`b-c`): cel-go reads them only with EnableIdentifierEscapeSyntax, which the API ' +
      "server's environment does not set (through 1.34), so its parser refuses them: unsupported syntax '`'",
    applies: (c) => escapedFieldAt(c.expr) !== undefined,
  },
  {
    reason: 'variables with qualified names (`a.b`): the API server declares none, so no expression resolves one',
    applies: (c) =>
      c.declarations.some((d) => d.name.includes('.')) || Object.keys(c.bindings).some((n) => n.includes('.')),
  },
  {
    reason:
      'functions the case declares (`fn`, `tuple`, `sort` of the type deduction cases): the API server declares no ' +
      'function of its users, so no condition calls one',
    applies: (c) => c.path.startsWith('type_deductions/') && /\b(?:fn|tuple|sort)\(/.test(c.expr),
  },
  {
    reason:
      'cases that skip the type checker on an expression the checker refuses (`1.0 == 1`, `false && 32`): the API ' +
      'server checks every expression, so it never evaluates one of these',
    applies: (c) => c.disableCheck && isCompileError(compileExpression(c.expr, { declarations: declarationsOf(c) })),
  },
];

/** The exclusion of a case, if any. */
export function exclusionOf(c: ConformanceCase): Exclusion | undefined {
  return EXCLUDED.find((e) => e.applies(c));
}
