/**
 * Optional entries of list and map literals, as cel-go reads them with optional syntax (1.28):
 * `[?x, y]` holds x's value only when the optional x has one, `{?'k': v}` holds the key only when
 * the optional v has a value. The engine's parser lacks them: a probe macro hands over an
 * environment's parser, whose list and map parsing is extended to read the `?` before an element
 * or a key, and to record which entries carry it (with the offset of their `?`).
 */
import { type Environment, Optional } from '../engine.ts';

/** The macro installOptionalEntries calls once to reach an environment's parser; never written by users. */
export const PARSER_PROBE = 'parser__probe';

/** A node of the parsed expression (the parts used here). */
interface Node {
  op: string;
  args: unknown;
}
/** The engine's parser (the parts used here: its public methods, which it calls through `this`). */
interface EngineParser {
  input: string;
  pos: number;
  type: number;
  consume(type: number): number;
  parse(input: string): Node;
  parseExpression(): Node;
  parseList(): Node;
  parseMap(): Node;
  parseProperty(): [Node, Node];
}
/** The engine's type of a checked expression (the parts used here). */
interface CelType {
  kind: string;
  name: string;
  valueType?: CelType;
}
/** The engine's checker and evaluator (the parts used here). */
interface Engine {
  createError(code: string, message: string, node: unknown): Error;
}

/** A list or map literal being parsed. */
interface Literal {
  /** How many parseExpression calls were under way when it started: its entries start at this level. */
  level: number;
  list: boolean;
  /** True between a map entry's start and its key's start (the value may not carry `?`). */
  keyNext: boolean;
  count: number;
  /** Index of each optional entry → offset of its `?`. */
  entries: Map<number, number>;
}

/** The optional entries of each parsed list and map literal that has some. */
const ENTRIES = new WeakMap<object, ReadonlyMap<number, number>>();

/** The optional entries of a list or map literal (entry index → offset of its `?`), if it has some. */
export function optionalEntries(node: object): ReadonlyMap<number, number> | undefined {
  return ENTRIES.get(node);
}

/** Parsers already extended. */
const extended = new WeakSet<object>();

/** Extends the parser's list and map parsing with optional entries. */
function extendParser(parser: EngineParser): void {
  if (extended.has(parser)) return;
  extended.add(parser);
  const { parse, parseExpression, parseList, parseMap, parseProperty } = Object.getPrototypeOf(parser) as EngineParser;
  const literals: Literal[] = [];
  let level = 0;
  parser.parse = function (input) {
    level = 0;
    literals.length = 0;
    return parse.call(this, input);
  };
  const literal = (list: boolean) =>
    function (this: EngineParser): Node {
      const open: Literal = { level, list, keyNext: false, count: 0, entries: new Map() };
      literals.push(open);
      try {
        const node = (list ? parseList : parseMap).call(this);
        if (open.entries.size) ENTRIES.set(node, open.entries);
        return node;
      } finally {
        literals.pop();
      }
    };
  parser.parseList = literal(true);
  parser.parseMap = literal(false);
  parser.parseProperty = function () {
    literals.at(-1)!.keyNext = true;
    return parseProperty.call(this);
  };
  parser.parseExpression = function () {
    const open = literals.at(-1);
    // An element or a key the literal itself parses, not an expression nested in one.
    const entry = open?.level === level && (open.list || open.keyNext) ? open : undefined;
    let question: number | undefined;
    if (entry) {
      entry.keyNext = false;
      // The token at `pos` is `?` exactly when its first character is.
      if (this.input[this.pos] === '?') question = this.consume(this.type);
    }
    const index = entry ? entry.count++ : 0;
    level++;
    try {
      return parseExpression.call(this);
    } finally {
      level--;
      if (entry && question !== undefined) entry.entries.set(index, question);
    }
  };
}

/** The parser the probe macro last handed over. */
let probed: EngineParser | undefined;

/** Registers the probe installOptionalEntries calls to reach an environment's parser. */
export function registerParserProbe(env: Environment): void {
  (env as unknown as { registerFunction(signature: string, handler: unknown): void }).registerFunction(
    `${PARSER_PROBE}(ast): bool`,
    ({ parser }: { parser: EngineParser }) => {
      probed = parser;
      return { typeCheck: (chk: { getType(n: string): CelType }) => chk.getType('bool'), evaluate: () => true };
    },
  );
}

/** Gives an environment's parser (each environment, a clone too, has its own) the optional entries. */
export function installOptionalEntries(env: Environment): void {
  probed = undefined;
  env.parse(`${PARSER_PROBE}(0)`);
  const parser = probed as EngineParser | undefined;
  if (!parser) throw new Error('the CEL engine did not hand over its parser');
  extendParser(parser);
}

/** A type as cel-go's checker names it in messages: `list(int)`, `optional_type(string)`, `timestamp`. */
function celGoTypeName(name: string): string {
  return name
    .replace(/google\.protobuf\.Timestamp/g, 'timestamp')
    .replace(/google\.protobuf\.Duration/g, 'duration')
    .replace(/\boptional</g, 'optional_type<')
    .replace(/</g, '(')
    .replace(/>/g, ')');
}

/**
 * The type an optional entry gives its literal: the value type of its optional, dyn for dyn; a value
 * not optional is refused in cel-go's words.
 */
export function entryType(chk: Engine, type: CelType, node: unknown): CelType {
  if (type.kind === 'optional' && type.valueType) return type.valueType;
  if (type.kind === 'dyn') return type;
  const found = celGoTypeName(type.name);
  throw chk.createError('optional_expected', `expected type 'optional_type(${found})' but found '${found}'`, node);
}

/** What entryValue answers for an optional without a value: the entry is left out. */
export const ABSENT = Symbol('absent optional entry');

/** A value as cel-go's `%v` prints it in its errors (scalars; lists by their elements). */
function printed(v: unknown): string {
  return Array.isArray(v) ? `[${v.map(printed).join(' ')}]` : String(v);
}

/**
 * The value an optional entry puts in its literal (ABSENT when its optional has none); a value
 * that is not an optional (a dyn one) is cel-go's evaluation error. `key` is a map entry's key.
 */
export function entryValue(ev: Engine, value: unknown, node: unknown, key?: { k: unknown }): unknown {
  if (value instanceof Optional) return value.hasValue() ? value.value() : ABSENT;
  const message = key
    ? `cannot initialize optional entry '${printed(key.k)}' from non-optional value ${printed(value)}`
    : `cannot initialize optional list element from non-optional value ${printed(value)}`;
  throw ev.createError('optional_expected', message, node);
}

/** Evaluates a list literal with optional entries, leaving out those without a value. */
export function listWithEntries(
  ev: Engine & { run(node: unknown, scope: unknown): unknown },
  node: Node,
  scope: unknown,
): unknown[] {
  const entries = ENTRIES.get(node);
  const out: unknown[] = [];
  (node.args as Node[]).forEach((element, i) => {
    const value = ev.run(element, scope);
    const kept = entries?.has(i) ? entryValue(ev, value, element) : value;
    if (kept !== ABSENT) out.push(kept);
  });
  return out;
}
