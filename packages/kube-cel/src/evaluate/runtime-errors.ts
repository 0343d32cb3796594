/**
 * Evaluation errors in cel-go's words (v0.26, the version Kubernetes 1.34 pins): the engine's
 * messages for the same situations said as cel-go's interpreter and common/types say them, so the
 * message a failing condition carries is the one the API server reports.
 */

/** The runtime types cel-go's standard receivers are: String, Timestamp and Duration (traits.Receiver). */
const RECEIVERS = new Set(['string', 'google.protobuf.Timestamp', 'google.protobuf.Duration']);

/**
 * The operator traits of each runtime type (common/types/*.go): `+` Adder, `-` Subtractor, `*`
 * Multiplier, `/` Divider, `%` Modder, `<` Comparer, `neg` Negater.
 */
const TRAITS: Record<string, readonly string[]> = {
  int: ['+', '-', '*', '/', '%', '<', 'neg'],
  uint: ['+', '-', '*', '/', '%', '<'],
  double: ['+', '-', '*', '/', '<', 'neg'],
  string: ['+', '<'],
  bytes: ['+', '<'],
  bool: ['<', 'neg'],
  list: ['+'],
  'google.protobuf.Timestamp': ['+', '-', '<'],
  'google.protobuf.Duration': ['+', '-', '<', 'neg'],
};

/** The trait an operator's singleton binding asks of its first operand. */
const TRAIT_OF: Record<string, string> = {
  '+': '+',
  '-': '-',
  '*': '*',
  '/': '/',
  '%': '%',
  '<': '<',
  '<=': '<',
  '>': '<',
  '>=': '<',
};

/** Go's `%T` of a cel-go value of each runtime type, as `got '%T', expected iterable type` prints it. */
const GO_TYPES: Record<string, string> = {
  int: 'types.Int',
  uint: 'types.Uint',
  double: 'types.Double',
  string: 'types.String',
  bool: 'types.Bool',
  bytes: 'types.Bytes',
  null: 'types.Null',
  'google.protobuf.Timestamp': 'types.Timestamp',
  'google.protobuf.Duration': 'types.Duration',
  type: '*types.Type',
  optional: '*types.Optional',
};

/** Function namespaces of the environment: `sets.contains(…)` is a function name, not a receiver call. */
const NAMESPACES = new Set(['sets', 'strings', 'lists', 'optional', 'format', 'math', 'base64']);

/** The runtime type under the engine's `dyn<…>` and without its parameters: `dyn<list<int>>` is `list`. */
function runtimeType(engineType: string): string {
  let t = engineType.trim();
  while (t.startsWith('dyn<') && t.endsWith('>')) t = t.slice(4, -1);
  const open = t.indexOf('<');
  return open < 0 ? t : t.slice(0, open);
}

/** A runtime type's name as cel-go's `Type().TypeName()` gives it. */
export function celGoTypeName(engineType: string): string {
  const t = runtimeType(engineType);
  if (t === 'null') return 'null_type';
  if (t === 'optional') return 'optional_type';
  return t;
}

/** Go's `%T` of a value of the engine's runtime type (`types.Int`). */
export function goTypeOf(engineType: string): string {
  const t = runtimeType(engineType);
  return GO_TYPES[t] ?? `types.${t}`;
}

/**
 * An operator the operands' runtime types have no overload of. cel-go calls the operator's singleton
 * when the left operand has its trait (whose method answers `no such overload` for a right operand of
 * another type), asks a receiver type to receive it (`no such overload` again), and otherwise names the
 * operator: `no such overload: _+_`.
 */
function operatorMessage(op: string, left: string): string {
  if (op === '!' || op === 'in' || op === '==' || op === '!=') return 'no such overload';
  const type = runtimeType(left);
  const trait = op === '-_' ? 'neg' : TRAIT_OF[op];
  if (trait === undefined) return 'no such overload';
  if (TRAITS[type]?.includes(trait) || RECEIVERS.has(type)) return 'no such overload';
  return `no such overload: ${op === '-_' ? '-_' : `_${op}_`}`;
}

/** Splits `a, map<b, c>, d` at its top-level commas. */
function splitTypes(list: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < list.length; i++) {
    const ch = list[i];
    if (ch === '<') depth++;
    else if (ch === '>') depth--;
    else if (ch === ',' && depth === 0) {
      out.push(list.slice(start, i));
      start = i + 1;
    }
  }
  const last = list.slice(start);
  if (last.trim()) out.push(last);
  return out.map((s) => s.trim());
}

/**
 * A call whose runtime argument types no overload takes, as cel-go answers it: `size` and `matches`
 * are singletons asking a trait of their first argument (`no such overload: size`, or `no such
 * overload` from a type that has it or receives the call); `contains`, `startsWith` and `endsWith` run
 * unguarded and answer `no such overload`; every other function is guarded, its dispatch naming the
 * function and the runtime types: `no such overload: lowerAscii(int)`.
 */
function callMessage(signature: string): string | undefined {
  const open = signature.indexOf('(');
  if (open < 0 || !signature.endsWith(')')) return undefined;
  const head = signature.slice(0, open);
  const args = splitTypes(signature.slice(open + 1, -1));
  const dot = head.lastIndexOf('.');
  let name = head;
  if (dot > 0 && !NAMESPACES.has(head.slice(0, dot))) {
    name = head.slice(dot + 1);
    args.unshift(head.slice(0, dot));
  }
  const first = runtimeType(args[0] ?? '');
  if (name === 'contains' || name === 'startsWith' || name === 'endsWith') return 'no such overload';
  if (name === 'size') {
    const sizer = ['string', 'bytes', 'list', 'map'].includes(first) || RECEIVERS.has(first);
    return sizer ? 'no such overload' : 'no such overload: size';
  }
  if (name === 'matches') return RECEIVERS.has(first) ? 'no such overload' : 'no such overload: matches';
  return `no such overload: ${name}(${args.map(celGoTypeName).join(', ')})`;
}

/** Operators as the engine names them in `no such overload: <left> <op> <right>`. */
const BINARY = /^no such overload: (.+?) (<=|>=|==|!=|<|>|\+|-|\*|\/|%|in) (.+)$/;
const UNARY = /^no such overload: ([-!])(.+)$/;
const NO_MATCHING = /^found no matching overload for '(.*)'$/;
const RANGE = /^Expression of type '(.*)' cannot be range of a comprehension/;
const INDEX_OUT_OF_BOUNDS = /^No such key: index out of bounds, index (-?[\d.e+]+) /;
const CONVERSION = /^(int|uint|double)\(\) type error: cannot convert to (?:int|uint|double)$/;

/** The engine's words for an evaluation error → cel-go's; undefined when they are already cel-go's. */
export function celGoWords(said: string): string | undefined {
  let m: RegExpExecArray | null;
  if (said === 'modulo by zero') return 'modulus by zero';
  if (said.startsWith('integer overflow: ') || said === 'int() type error: integer overflow') return 'integer overflow';
  if (said === 'Unsigned integer overflow' || said === 'uint() type error: unsigned integer overflow')
    return 'unsigned integer overflow';
  if (said === 'Optional value is not present') return 'optional.none() dereference';
  if ((m = CONVERSION.exec(said))) return `type conversion error from 'string' to '${m[1]}'`;
  if (said.startsWith('bool() conversion error: ')) return "type conversion error from 'string' to 'bool'";
  if ((m = INDEX_OUT_OF_BOUNDS.exec(said))) return `index out of bounds: ${m[1]}`;
  // Non-bool operands of `&&`, `||` and `?:` (and so of the macros built on them).
  if (
    /^Logical operator requires bool operands, got /.test(said) ||
    / must (?:be|return) bool, got '[^']*'$/.test(said)
  )
    return 'no such overload';
  if ((m = RANGE.exec(said))) return `got '${goTypeOf(m[1]!)}', expected iterable type`;
  if ((m = NO_MATCHING.exec(said))) return callMessage(m[1]!);
  if ((m = UNARY.exec(said))) return operatorMessage(m[1] === '-' ? '-_' : '!', m[2]!);
  if ((m = BINARY.exec(said))) return operatorMessage(m[2]!, m[1]!);
  return undefined;
}

/** An evaluation error with its words made cel-go's (its `summary`, and the same words in its `message`). */
export function inCelGoWords(err: unknown): unknown {
  if (!err || typeof err !== 'object') return err;
  const e = err as { summary?: unknown; message?: unknown };
  const said = typeof e.summary === 'string' ? e.summary : typeof e.message === 'string' ? e.message : undefined;
  if (said === undefined) return err;
  const words = celGoWords(said);
  if (words === undefined) return err;
  const message = typeof e.message === 'string' ? e.message.replace(said, words) : words;
  // The engine's `summary` is a getter: the words are defined over it.
  Object.defineProperty(err, 'summary', { value: words, configurable: true, writable: true });
  Object.defineProperty(err, 'message', { value: message, configurable: true, writable: true });
  return err;
}
