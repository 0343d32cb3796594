/**
 * What the API server refuses that the engine's parser and checker let through, found by walking the
 * parsed expression before it is checked: features of a later Kubernetes version, functions the
 * environment lacks, regex literals RE2 rejects, conversions of literals that fail when folded;
 * and the calls given the names of the environment's own overloads (RE2 `matches`, strings by code point).
 */
import type { ASTNode } from '@marcbachmann/cel-js';
import { matchConditionsEnvironment } from './environment.ts';
import { RE2_MATCHES, RENAMED } from './messages.ts';
import { METER_PROBE } from './meter.ts';
import { regexProblem } from './regex.ts';
import { missingFeature } from './versions.ts';

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
export function screen(node: ASTNode, minor: number): Refusal | undefined {
  return featureRefusal(node, minor, 'operator') ?? featureRefusal(node, minor, 'function') ?? screenNode(node, minor);
}

/** The child nodes of a parsed node. */
function childrenOf(node: ASTNode): ASTNode[] {
  const children: unknown[] = Array.isArray(node.args) ? node.args : [node.args];
  return children
    .flat()
    .filter((c): c is ASTNode => !!c && typeof c === 'object' && typeof (c as ASTNode).op === 'string');
}

/**
 * The first use, innermost first as cel-go reports it, of a feature the environment of
 * `minor` lacks: optional syntax (the parser's error, reported before any checker's), or a
 * function of a library it does not have yet.
 */
function featureRefusal(node: ASTNode, minor: number, kind: 'operator' | 'function'): Refusal | undefined {
  if (node.op === 'value') return undefined;
  for (const child of childrenOf(node)) {
    const refusal = featureRefusal(child, minor, kind);
    if (refusal) return refusal;
  }
  if (kind === 'operator') {
    if ((node.op === '.?' || node.op === '[?]') && missingFeature('operator', node.op, minor)) {
      return { summary: `unsupported syntax '${node.op === '.?' ? '.?' : '[?'}'`, range: { start: node.start } };
    }
    return undefined;
  }
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

/** Conversions whose literal argument the API server checks when a configuration is created. */
const CONVERSIONS = new Set(['int', 'uint', 'timestamp', 'duration']);
/** The minor version whose environment validates timestamp and duration literals (cel.ASTValidators). */
const LITERAL_VALIDATORS_SINCE = 29;
/** What literal() answers for a node that is not a literal. */
const NOT_LITERAL = Symbol('not a literal');
/** 2^63 as a double: the first double int() refuses (Go's math.MaxInt64 converts to it). */
const TWO_TO_63 = 2 ** 63;

/** Unix seconds of 0001-01-01T00:00:00Z and 9999-12-31T23:59:59Z, the range of a CEL timestamp. */
const MIN_UNIX_SECONDS = -62135596800n;
const MAX_UNIX_SECONDS = 253402300799n;

/** The value of a literal node, a negated number literal included; NOT_LITERAL otherwise. */
function literal(node: ASTNode): unknown {
  if (node.op === 'value') return node.args;
  if (node.op === '-_' && (node.args as ASTNode).op === 'value') {
    const v = (node.args as ASTNode).args;
    if (typeof v === 'number' || typeof v === 'bigint') return -v;
  }
  return NOT_LITERAL;
}

/**
 * Why a conversion of a literal fails, as the API server refuses it when a configuration is
 * created (the literal validators of 1.29 for timestamp and duration; the range of int and uint).
 */
function foldingProblem(name: string, value: unknown, minor: number): string | undefined {
  if (name === 'int' && typeof value === 'number' && !(value > -TWO_TO_63 && value < TWO_TO_63))
    return 'range error converting double to int';
  if (
    name === 'uint' &&
    (typeof value === 'number' || typeof value === 'bigint') &&
    (value < 0 || (typeof value === 'number' && !(value < 2 * TWO_TO_63)))
  ) {
    return `range error converting ${typeof value === 'number' ? 'double' : 'int'} to uint`;
  }
  // The validator refuses a number of seconds outside the years 1 to 9999 too (`timestamp(-62135596801)`).
  if (
    name === 'timestamp' &&
    typeof value === 'bigint' &&
    minor >= LITERAL_VALIDATORS_SINCE &&
    (value < MIN_UNIX_SECONDS || value > MAX_UNIX_SECONDS)
  )
    return 'invalid timestamp argument';
  if ((name === 'timestamp' || name === 'duration') && typeof value === 'string' && minor >= LITERAL_VALIDATORS_SINCE) {
    try {
      matchConditionsEnvironment().evaluate(`${name}(${JSON.stringify(value)})`);
    } catch {
      return `invalid ${name} argument`;
    }
  }
  return undefined;
}

/** A run of an even number of `!` or `-` before an operand, which cel-go's parser drops. */
function collapsed(node: ASTNode): ASTNode {
  let n = node;
  while ((n.op === '!_' || n.op === '-_') && (n.args as ASTNode).op === n.op) n = (n.args as ASTNode).args as ASTNode;
  return n;
}

function screenNode(node: ASTNode, minor: number): Refusal | undefined {
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
    if (name === METER_PROBE || name.endsWith(RENAMED) || name.endsWith('__re2')) return undeclared(name, node);
    if (member) {
      const receiver = node.args[1] as ASTNode;
      if (name === 'bind' && receiver.op === 'id' && receiver.args === 'cel') return undeclared('cel', receiver);
      if (NOT_IN_KUBERNETES.has(name)) return undeclared(name, node);
    }
    if (!member && CONVERSIONS.has(name) && args.length === 1 && literal(args[0]!) !== NOT_LITERAL) {
      const problem = foldingProblem(name, literal(args[0]!), minor);
      // The literal validators point at the argument, as cel-go's do.
      const at = name === 'timestamp' || name === 'duration' ? args[0]! : node;
      if (problem) return { summary: problem, range: { start: at.start } };
    }
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
      const refusal = screenNode(child as ASTNode, minor);
      if (refusal) return refusal;
    }
  }
  return undefined;
}
