/**
 * What the API server refuses that the engine's parser and checker let through, found by walking the
 * parsed expression before it is checked: features of a later Kubernetes version, functions the
 * environment lacks, regex literals RE2 rejects, conversions of literals that fail when folded;
 * and the calls given the names of the environment's own overloads (RE2 `matches`, strings by code point).
 */
import type { ASTNode } from '../engine.ts';
import { optionalEntries, PARSER_PROBE } from '../evaluate/entries.ts';
import { RE2_MATCHES, RENAMED } from './messages.ts';
import { OPTIONAL_TYPE } from '../evaluate/optionals.ts';
import { METER_PROBE } from '../cost/meter.ts';
import { isConstant } from '../cost/constants.ts';
import { regexProblem } from '../libraries/regex.ts';
import { isFormatCall, literalRefusal, STRICT_LITERALS_SINCE } from './literal-validator.ts';
import { type FormatCheckArg, formatCallProblem } from '../libraries/strformat-check.ts';
import { missingFeature } from '../versions/versions.ts';

/** Member functions whose calls go to the `__k8s` overloads. */
const MEMBER_RENAMES = new Set(['indexOf', 'lastIndexOf', 'lowerAscii', 'upperAscii', 'trim', 'substring', 'split']);
MEMBER_RENAMES.add('join');
/** Global functions whose calls go to the `__k8s` overloads. */
const GLOBAL_RENAMES = new Set(['string']);
/**
 * Member functions the engine provides that the API server's environment has not (byte
 * helpers): an expression calling them is refused as the API server refuses it.
 */
const NOT_IN_KUBERNETES = new Set(['json', 'hex', 'base64', 'string', 'at']);
/** Functions whose pattern argument, when a literal, RE2 must accept at compile time. */
const REGEX_FUNCTIONS = new Set(['matches', 'find', 'findAll']);

/** A refusal found in the parsed expression: the message and where it is. */
export interface Refusal {
  summary: string;
  range: { start: number };
  /** Refused when the program is built, not by the checker or a validator: no position in the message. */
  program?: true;
}

const undeclared = (name: string, node: ASTNode): Refusal => ({
  summary: `undeclared reference to '${name}' (in container '')`,
  range: { start: node.start },
});

/**
 * Walks the parsed expression before checking: refuses what the API server's environment
 * lacks (`cel.bind`, the engine's byte helpers, the internal names) and regex literals RE2
 * rejects (the API server validates them at compile time), and points member calls of
 * `matches` at the RE2 overload.
 */
export function screen(node: ASTNode, minor: number, fold?: Fold): Refusal | undefined {
  return syntaxRefusal(node, minor) ?? featureRefusal(node, minor) ?? screenNode(node, minor, fold);
}

/** The child nodes of a parsed node. */
function childrenOf(node: ASTNode): ASTNode[] {
  const children: unknown[] = Array.isArray(node.args) ? node.args : [node.args];
  return children
    .flat()
    .filter((c): c is ASTNode => !!c && typeof c === 'object' && typeof (c as ASTNode).op === 'string');
}

/**
 * Where the optional syntax of a node starts (the `.` of `.?`, the `[` of `[?`, the `?` of each
 * optional entry), with cel-go's word for it.
 */
function optionalSyntax(node: ASTNode): Array<{ syntax: string; at: number }> {
  if (node.op === '.?' || node.op === '[?]') {
    // The engine keeps where the field or index starts: its operator is just before, spaces aside.
    const text = node.input;
    let i = node.op === '.?' ? node.pos - 1 : (node.args as ASTNode[])[1]!.start - 1;
    const skip = (chars: RegExp) => {
      while (i > 0 && chars.test(text[i]!)) i--;
    };
    skip(node.op === '.?' ? /\s/ : /[\s(]/);
    if (text[i] === '?') i--;
    skip(/\s/);
    return [
      { syntax: node.op === '.?' ? '.?' : '[?', at: text[i] === (node.op === '.?' ? '.' : '[') ? i : node.start },
    ];
  }
  return [...(optionalEntries(node)?.values() ?? [])].map((at) => ({ syntax: '?', at }));
}

/**
 * Optional syntax in an environment before optional types: the parser's error, reported before
 * any checker's, at the first use (cel-go sorts its errors by position).
 */
function syntaxRefusal(root: ASTNode, minor: number): Refusal | undefined {
  if (!missingFeature('operator', '?', minor)) return undefined;
  let first: { syntax: string; at: number } | undefined;
  const stack = [root];
  while (stack.length) {
    const node = stack.pop()!;
    if (node.op === 'value') continue;
    for (const use of optionalSyntax(node)) if (!first || use.at < first.at) first = use;
    stack.push(...childrenOf(node));
  }
  return first && { summary: `unsupported syntax '${first.syntax}'`, range: { start: first.at } };
}

/**
 * The first use, innermost first as cel-go reports it, of a function of a library the
 * environment of `minor` does not have yet.
 */
function featureRefusal(node: ASTNode, minor: number): Refusal | undefined {
  if (node.op === 'value') return undefined;
  for (const child of childrenOf(node)) {
    const refusal = featureRefusal(child, minor);
    if (refusal) return refusal;
  }
  if (node.op === 'id' && node.args === OPTIONAL_TYPE && missingFeature('global', OPTIONAL_TYPE, minor))
    return undeclared(OPTIONAL_TYPE, node);
  if (node.op === 'rcall') {
    const receiver = node.args[1] as ASTNode;
    const name = node.args[0] as string;
    if (receiver.op === 'id' && missingFeature('global', receiver.args as string, minor))
      return undeclared(receiver.args as string, receiver);
    // `all` and `exists` with two variables are the two-variable comprehensions' (as `existsOne`).
    const twoVariables = (name === 'all' || name === 'exists') && (node.args[2] as ASTNode[]).length === 3;
    if (missingFeature('member', twoVariables ? 'existsOne' : name, minor)) return undeclared(name, node);
  } else if (node.op === 'call' && missingFeature('global', node.args[0] as string, minor))
    return undeclared(node.args[0] as string, node);
  return undefined;
}

/**
 * cel-go's type conversions, which its planner folds when their argument is a constant (the API
 * server plans with cel.OptOptimize): one that fails refuses the configuration when it is created,
 * in every version (`int('')`, `uint(-1)`, `duration('1d')`), however deep in the expression.
 */
const CONVERSIONS = new Set(['int', 'uint', 'double', 'string', 'bytes', 'bool', 'timestamp', 'duration']);
/** The engine's name of a conversion the environment renames (`string` by Go's rules). */
const conversionName = (name: string): string => (name.endsWith(RENAMED) ? name.slice(0, -RENAMED.length) : name);

/**
 * Evaluates a constant expression (its text) as the API server's planner would fold it: the
 * error message when it fails, undefined when it succeeds.
 */
export type Fold = (text: string) => string | undefined;

/** The refusal of a conversion of a constant that fails when folded, if `node` is one. */
function foldingRefusal(node: ASTNode, fold: Fold | undefined): Refusal | undefined {
  if (!fold || node.op !== 'call') return undefined;
  const name = conversionName(node.args[0] as string);
  const args = node.args[1] as ASTNode[];
  if (!CONVERSIONS.has(name) || args.length !== 1 || !isConstant(args[0]!)) return undefined;
  const problem = fold(node.input.slice(node.range.start, node.range.end));
  if (problem === undefined) return undefined;
  // A timestamp or duration literal that does not convert (`-5` is a literal to cel-go's parser): the
  // literal validators' words (1.29+), at the literal.
  const arg = args[0]!;
  const literal = arg.op === 'value' || (arg.op === '-_' && (arg.args as ASTNode).op === 'value');
  if ((name === 'timestamp' || name === 'duration') && literal)
    return { summary: `invalid ${name} argument`, range: { start: arg.start } };
  return { summary: problem, range: { start: node.start } };
}

/** The minor version whose environment validates regex literals (cel.ASTValidators). */
const LITERAL_VALIDATORS_SINCE = 29;

/**
 * True when `inner`'s operator follows `outer`'s with only blanks or comments between: one run of
 * operators in cel-go's grammar (`--x`, `- -x`), where a parenthesized operand (`-(-x)`) is an
 * operator applied to an expression.
 */
function oneRun(outer: ASTNode, inner: ASTNode): boolean {
  const text = (outer as { input?: string }).input;
  return text === undefined || /^(?:\s|\/\/[^\n]*)*$/.test(text.slice(outer.start + 1, inner.start));
}

/**
 * A run of an even number of `!` or `-` before an operand, which cel-go's parser drops (VisitNegate,
 * VisitLogicalNot); parentheses end a run, so `-(-x)` negates twice.
 */
function collapsed(node: ASTNode): ASTNode {
  let n = node;
  for (;;) {
    const inner = n.args as ASTNode;
    if ((n.op !== '!_' && n.op !== '-_') || inner.op !== n.op || !oneRun(n, inner)) return n;
    n = inner.args as ASTNode;
  }
}

function screenNode(node: ASTNode, minor: number, fold: Fold | undefined): Refusal | undefined {
  if (node.op === 'value') return undefined;
  // cel-go's parser reads `!!x` and `--x` as `x` (an even run cancels out): children are
  // replaced by what they collapse to, so the checker sees what cel-go's sees.
  if (Array.isArray(node.args)) {
    const args = node.args as unknown[];
    for (let i = 0; i < args.length; i++) {
      const child = args[i] as ASTNode | undefined;
      if (child && typeof child === 'object' && (child.op === '!_' || child.op === '-_')) args[i] = collapsed(child);
    }
  } else if (
    node.args &&
    typeof node.args === 'object' &&
    ((node.args as ASTNode).op === '!_' || (node.args as ASTNode).op === '-_')
  ) {
    (node as unknown as { args: ASTNode }).args = collapsed(node.args as ASTNode);
  }
  if (node.op === 'rcall' || node.op === 'call') {
    const member = node.op === 'rcall';
    const name = node.args[0] as string;
    const args = (member ? node.args[2] : node.args[1]) as ASTNode[];
    if (name === METER_PROBE || name === PARSER_PROBE || name.endsWith(RENAMED) || name.endsWith('__re2'))
      return undeclared(name, node);
    if (member) {
      const receiver = node.args[1] as ASTNode;
      if (name === 'bind' && receiver.op === 'id' && receiver.args === 'cel') return undeclared('cel', receiver);
      if (NOT_IN_KUBERNETES.has(name)) return undeclared(name, node);
    }
    const folded = member ? undefined : foldingRefusal(node, fold);
    if (folded) return folded;
    if (REGEX_FUNCTIONS.has(name)) {
      const pattern = args[member ? 0 : 1];
      if (pattern?.op === 'value' && typeof pattern.args === 'string') {
        const problem = regexProblem(pattern.args);
        // cel-go's regex literal validator (1.29) checks the pattern of a member `matches`; the
        // others fail when the program compiles its constant patterns (OptimizeRegex).
        const validated = name === 'matches' && member && minor >= LITERAL_VALIDATORS_SINCE;
        if (problem && validated) return { summary: 'invalid matches argument', range: { start: pattern.start } };
        if (problem) return { summary: problem, range: { start: pattern.start }, program: true };
      }
    }
    if (member && name === 'matches' && args.length === 1) (node.args as unknown as unknown[])[0] = RE2_MATCHES;
    else if (member ? MEMBER_RENAMES.has(name) : GLOBAL_RENAMES.has(name)) {
      (node.args as unknown as unknown[])[0] = name + RENAMED;
    }
  }
  const children: unknown[] = Array.isArray(node.args) ? node.args : [node.args];
  for (const child of children.flat()) {
    if (child && typeof child === 'object' && typeof (child as ASTNode).op === 'string') {
      const refusal = screenNode(child as ASTNode, minor, fold);
      if (refusal) return refusal;
    }
  }
  return undefined;
}

/** The minor version from which the environment declares comparisons across int, uint and double. */
const CROSS_TYPE_COMPARISONS_SINCE = 28;
const NUMERIC = new Set(['int', 'uint', 'double']);
const ORDERINGS = new Set(['<', '<=', '>', '>=']);

/** The minor version from which string.format's validator checks literal calls (strings version 2). */
const FORMAT_VALIDATOR_SINCE = 29;

const typeOf = (node: ASTNode): string => String((node as { checkedType?: unknown }).checkedType);

/** A checked argument of a format call as the validator sees it: its type, and a literal's parts. */
function formatArg(node: ASTNode): FormatCheckArg {
  if (node.op === 'list') return { type: typeOf(node), parts: (node.args as ASTNode[]).map(formatArg) };
  if (node.op === 'map') {
    const entries = node.args as unknown as Array<[ASTNode, ASTNode]>;
    return { type: typeOf(node), parts: entries.flatMap(([k, v]) => [formatArg(k), formatArg(v)]) };
  }
  return { type: typeOf(node) };
}

/** What the API server refuses in one checked node (see screenChecked), if anything. */
function checkedNodeRefusal(n: ASTNode, minor: number): Refusal | undefined {
  if (minor < CROSS_TYPE_COMPARISONS_SINCE && ORDERINGS.has(n.op)) {
    const [l, r] = (n.args as ASTNode[]).map(typeOf);
    if (l !== r && NUMERIC.has(l!) && NUMERIC.has(r!))
      return {
        summary: `found no matching overload for '_${n.op}_' applied to '(${l}, ${r})'`,
        range: { start: n.start },
      };
  }
  if (minor >= FORMAT_VALIDATOR_SINCE && n.op === 'rcall' && n.args[0] === 'format') {
    const receiver = n.args[1] as ASTNode;
    const args = n.args[2] as ASTNode[];
    if (receiver.op === 'value' && typeof receiver.args === 'string' && args.length === 1 && args[0]!.op === 'list') {
      const problem = formatCallProblem(receiver.args, (args[0]!.args as ASTNode[]).map(formatArg));
      if (problem) return { summary: problem, range: { start: n.start } };
    }
  }
  return undefined;
}

/**
 * What the API server's checker and validators refuse that the engine's checker accepts, found by
 * walking the checked expression: before 1.28 (cel.CrossTypeNumericComparisons) `<`, `<=`, `>` and
 * `>=` between an int, a uint and a double of known types have no overload (a dyn operand still
 * compares); from 1.29 string.format's validator checks a literal format string against a list
 * literal of arguments (`'%d'.format(['a'])`, `'%s %s'.format([x])`); API servers from 1.29
 * (`serverMinor`) refuse list and map literals whose parts are not of one type (literal-validator.ts).
 */
export function screenChecked(node: ASTNode, minor: number, serverMinor = minor): Refusal | undefined {
  const strict = serverMinor >= STRICT_LITERALS_SINCE;
  const stack: Array<[ASTNode, boolean]> = [[node, false]];
  while (stack.length > 0) {
    const [n, inFormat] = stack.pop()!;
    if (n.op === 'value') continue;
    const refusal = checkedNodeRefusal(n, minor) ?? (strict && !inFormat ? literalRefusal(n) : undefined);
    if (refusal) return refusal;
    const format = inFormat || isFormatCall(n);
    for (const child of childrenOf(n)) stack.push([child, format]);
  }
  return undefined;
}
