/**
 * cel-go's string format validator (strings extension version 1 and later, Kubernetes 1.29+): a
 * `format` call on a string literal with a list literal argument is checked when the expression is
 * compiled, each clause against the checked type of its argument (a dyn argument passes), and an
 * argument no clause uses refused.
 */
import { FORMAT_VERBS, FormatError, readClause, unknownVerb } from './strformat.ts';

/** An argument of the format call: its checked type (`int`, `list<int>`, `dyn`) and, when it is a literal list or map, its parts. */
export interface FormatCheckArg {
  type: string;
  /** The elements of a list literal, or the keys and values of a map literal. */
  parts?: FormatCheckArg[];
}

/** The kind of a checked type as cel-go compares kinds, named as its TypeName(). */
function kindOf(type: string): string {
  if (type.startsWith('list')) return 'list';
  if (type.startsWith('map')) return 'map';
  if (type.startsWith('optional')) return 'optional_type';
  if (type === 'null' || type === 'null_type') return 'null_type';
  if (type.startsWith('type')) return 'type';
  return type;
}

const STRING_KINDS = [
  'list',
  'map',
  'int',
  'uint',
  'double',
  'bool',
  'string',
  'google.protobuf.Timestamp',
  'bytes',
  'google.protobuf.Duration',
  'type',
  'null_type',
];
/** The kinds each clause takes, and the words of its refusal. */
const CLAUSES: Record<string, { kinds: string[]; refusal: string }> = {
  d: { kinds: ['int', 'uint'], refusal: 'decimal clause can only be used on integers' },
  f: { kinds: ['double', 'string'], refusal: 'fixed-point clause can only be used on doubles' },
  e: { kinds: ['double', 'string'], refusal: 'scientific clause can only be used on doubles' },
  b: { kinds: ['int', 'uint', 'bool'], refusal: 'only integers and bools can be formatted as binary' },
  x: {
    kinds: ['int', 'uint', 'string', 'bytes'],
    refusal: 'only integers, byte buffers, and strings can be formatted as hex',
  },
  o: { kinds: ['int', 'uint'], refusal: 'octal clause can only be used on integers' },
};
CLAUSES.X = CLAUSES.x!;
const STRING_REFUSAL =
  'string clause can only be used on strings, bools, bytes, ints, doubles, maps, lists, types, durations, and timestamps';

/** The kind `%s` refuses in `arg` (looking into list and map literals), if any. */
function badForString(arg: FormatCheckArg): string | undefined {
  const kind = kindOf(arg.type);
  if (kind !== 'dyn' && !STRING_KINDS.includes(kind)) return kind;
  for (const part of arg.parts ?? []) {
    const bad = badForString(part);
    if (bad) return bad;
  }
  return undefined;
}

/** Why the clause `verb` refuses `arg`, if it does. */
function clauseProblem(verb: string, arg: FormatCheckArg): string | undefined {
  if (verb === 's') {
    const bad = badForString(arg);
    return bad === undefined ? undefined : `${STRING_REFUSAL}, was given ${bad}`;
  }
  const kind = kindOf(arg.type);
  const clause = CLAUSES[verb]!;
  return kind === 'dyn' || clause.kinds.includes(kind) ? undefined : `${clause.refusal}, was given ${kind}`;
}

/**
 * The error cel-go's validator reports for `format.format(args)`, in its words; undefined when the
 * call passes.
 */
export function formatCallProblem(format: string, args: readonly FormatCheckArg[]): string | undefined {
  let requested = 0;
  let argIndex = 0;
  let i = 0;
  while (i < format.length) {
    if (format[i] !== '%') {
      i++;
      continue;
    }
    if (format[i + 1] === '%') {
      i += 2;
      continue;
    }
    requested++;
    if (i + 1 >= format.length) return 'unexpected end of string';
    if (argIndex >= args.length) return `index ${argIndex} out of range`;
    let clause: ReturnType<typeof readClause>;
    try {
      clause = readClause(format, i + 1);
    } catch (err) {
      if (err instanceof FormatError) return err.message;
      throw err;
    }
    if (!FORMAT_VERBS.has(clause.verb)) return unknownVerb(clause.verb);
    const problem = clauseProblem(clause.verb, args[argIndex]!);
    if (problem) return `error during formatting: ${problem}`;
    argIndex++;
    i += 1 + clause.read;
  }
  return args.length > requested
    ? `too many arguments supplied to string.format (expected ${requested}, got ${args.length})`
    : undefined;
}
