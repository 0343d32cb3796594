/**
 * What cel-go's checker refuses that the engine's accepts or refuses in other terms, checked
 * around the engine's own check of a node: conditionals as `_?_:_(bool, A, A)` (null joining an
 * object type), logical operands as bools, indexes as `_[_]`, fields of opaque types and `.?` of
 * fields an object type lacks, `has()` of them, member calls on a dyn receiver by their
 * arguments, and the macros' refusals as cel-go's expansions of them refuse.
 */
import {
  addIssue,
  args,
  assignable,
  boolMismatch,
  type CelType,
  type Checker,
  celGoType,
  type EngineError,
  flexible,
  isNode,
  locationOf,
  type Node,
  noOverload,
  nullable,
  OPAQUE,
  type Site,
} from './words.ts';
import { hasFreeType } from '../evaluate/optionals.ts';

/** A conditional's type as cel-go joins its branches: `true ? [] : [1]` is a list(int), not list(dyn). */
export function branchesJoined(n: Node, type: CelType): CelType {
  const [, left, right] = args(n);
  if (hasFreeType(left) && !hasFreeType(right)) return right!.checkedType ?? type;
  if (hasFreeType(right) && !hasFreeType(left)) return left!.checkedType ?? type;
  return type;
}

/**
 * Whether a member call on a dyn receiver has an overload its arguments fit: the engine takes any
 * arguments on a dyn receiver (`object.x.startsWith(1)`), cel-go's checker matches them.
 */
export function memberCallFits(n: Node): boolean {
  const receiver = args(n)[1]!.checkedType;
  const call = n as Node & { candidates?: Candidates };
  if (receiver?.kind !== 'dyn' || !call.candidates || !n.argTypes) return true;
  // The engine's search over a dyn receiver is slow (tens of µs): answers are kept per overload set.
  let known = fits.get(call.candidates);
  if (!known) fits.set(call.candidates, (known = new Map()));
  const key = n.argTypes.map((t) => t.name).join(',');
  let answer = known.get(key);
  if (answer === undefined) known.set(key, (answer = !!call.candidates.findFunction(n.argTypes, receiver)));
  return answer;
}

/** The overloads of one name and arity, as the engine keeps them. */
interface Candidates {
  findFunction(args: CelType[], receiver: CelType): unknown;
}

const fits = new WeakMap<Candidates, Map<string, boolean>>();

/**
 * The refusals of the optional macros as cel-go words them: `or` and `orValue` are functions of an
 * optional_type(A) receiver there; `optMap` and `optFlatMap` expand to
 * `_?_:_(x.hasValue(), … x.value() …, optional.none())`, refused call by call.
 */
export function optionalMacroIssues(chk: Checker, node: Node, scope: unknown, e: EngineError): string[] | undefined {
  if (e.code !== 'optional_expected' && e.code !== 'incompatible_argument_type') return undefined;
  if (node.op !== 'rcall') return undefined;
  const [name, receiver, rest] = node.args as [string, Node, Node[]];
  if (name === 'or' || name === 'orValue') {
    const types = [receiver, ...rest].map((n) => chk.check(n, scope));
    return [noOverload(name, types, true)];
  }
  if (name !== 'optMap' && name !== 'optFlatMap') return undefined;
  if (e.summary?.includes('receiver')) {
    const target = [chk.check(receiver, scope)];
    return [noOverload('hasValue', target, true), noOverload('value', target, true)];
  }
  // optFlatMap's result is not optional: the conditional's branches do not join.
  const optional = (chk.registry as { getOptionalType(t: CelType): CelType }).getOptionalType(chk.getType('dyn'));
  const body = isNode(e.node) ? e.node.checkedType : undefined;
  return [noOverload('_?_:_', [chk.getType('bool'), body ?? chk.getType('dyn'), optional], false)];
}

/** cel-go's parser's words for a has() of something other than a field selection. */
export const HAS_ARGUMENT = 'invalid argument to has() macro';

/** A use of a two-variable comprehension (the parts used here). */
interface TwoVariableUse {
  receiver: Node;
  body: Node;
  inner?: unknown;
}

/**
 * The accumulator's type in the `_?_:_(predicate, step, accu)` a two-variable comprehension steps
 * with, as cel-go's checker has bound it when it refuses the predicate: undefined for `all` and
 * `exists`, which join their steps with `_&&_` and `_||_`.
 */
export function conditionalStep(chk: Checker, macro: object, summary: string): CelType | undefined {
  const use = (macro as { use?: TwoVariableUse }).use;
  const kind = /^(\w+)\(/.exec(summary)?.[1];
  if (kind === 'existsOne') return chk.getType('int');
  if (!use || !kind?.startsWith('transform')) return undefined;
  const registry = chk.registry as { getListType(t: CelType): CelType; getMapType(k: CelType, v: CelType): CelType };
  const body = chk.check(use.body, use.inner);
  const dyn = chk.getType('dyn');
  if (kind === 'transformList') return registry.getListType(body);
  if (kind === 'transformMapEntry') return body.kind === 'map' ? body : registry.getMapType(dyn, dyn);
  const range = use.receiver.checkedType;
  const key = range?.kind === 'list' ? chk.getType('int') : range?.kind === 'map' ? range.keyType! : dyn;
  return registry.getMapType(key, body);
}

/**
 * cel-go's refusals the engine words otherwise or does not make, before the engine checks the
 * node: conditionals as a call of `_?_:_(bool, A, A)`, logical operators taking bools, indexes.
 */
export function precheck(chk: Checker, node: Node, scope: unknown, site: Site): void {
  const op = node.op;
  if (op === '&&' || op === '||') logicalOperands(chk, node, scope, site);
  else if (op === '?:') conditional(chk, node, scope, site);
  else if (op === '.' || op === '.?') selection(chk, node, scope, site);
  else if (op === '[]') index(chk, node, scope, site);
}

/** The operands of `&&` and `||`: each a bool (or dyn). */
function logicalOperands(chk: Checker, node: Node, scope: unknown, site: Site): void {
  for (const operand of node.args as Node[]) {
    const t = chk.check(operand, scope);
    if (!flexible(t) && t.name !== 'bool') boolMismatch(site, operand, t);
  }
}

/** A conditional as cel-go's `_?_:_(bool, A, A)`, and the macro steps made of one. */
function conditional(chk: Checker, node: Node, scope: unknown, site: Site): void {
  const [cond, left, right] = node.args as [Node, Node, Node];
  const c = chk.check(cond, scope);
  const l = chk.check(left, scope);
  const r = chk.check(right, scope);
  const boolean = flexible(c) || c.name === 'bool';
  const joined = l.unify(chk.registry, r) || (l.name === 'null' && nullable(r)) || (r.name === 'null' && nullable(l));
  if (boolean && joined) return;
  const label = cond.meta.label;
  // all() and exists() join their steps with `_&&_` and `_||_`; the other macros with `_?_:_`.
  if (label && /^(?:all|exists)\(/.test(label)) boolMismatch(site, cond, c);
  else {
    // exists_one() counts in an int (the engine's count is a double).
    const step = label?.startsWith('exists_one(') ? chk.getType('int') : l;
    addIssue(site, node, noOverload('_?_:_', [c, step, label ? step : r], false));
  }
}

/** A field of an opaque type, and `.?` of a field an object type lacks (the engine gives it as an optional dyn). */
function selection(chk: Checker, node: Node, scope: unknown, site: Site): void {
  const [operand, field] = node.args as [Node, string];
  let target = chk.check(operand, scope);
  if (target.kind === 'optional' && target.valueType) target = target.valueType;
  if (target.kind !== 'message') return;
  if (OPAQUE.test(target.name)) addIssue(site, node, `type '${celGoType(target)}' does not support field selection`);
  else if (node.op === '.?') {
    const fields = chk.objectTypes.get(target.name)?.fields;
    if (fields && !(String(field) in fields)) addIssue(site, node, `undefined field '${String(field)}'`);
  }
}

/** An index as cel-go's `_[_]`: a list by an int, a map by its key type, nothing else. */
function index(chk: Checker, node: Node, scope: unknown, site: Site): void {
  const [left, right] = node.args as [Node, Node];
  const target = chk.check(left, scope);
  const key = chk.check(right, scope);
  const refused =
    (target.kind === 'map' && !assignable(chk, target.keyType, key)) ||
    (target.kind === 'list' && !flexible(key) && key.name !== 'int') ||
    !INDEXABLE.has(target.kind);
  if (refused) addIssue(site, node, noOverload('_[_]', [target, key], false));
}

/** The kinds `_[_]` takes (an optional is indexed through its value). */
const INDEXABLE = new Set(['map', 'list', 'dyn', 'param', 'optional']);

/** `has()` of a field: refused as cel-go refuses selecting it (an object type lacking it, a scalar). */
export function hasField(chk: Checker, node: Node, scope: unknown, site: Site): void {
  const select = ((node.args as unknown[])[1] as Node[])[0];
  if (!select || (select.op !== '.' && select.op !== '.?')) return;
  const [operand, field] = select.args as [Node, string];
  let type = chk.check(operand, scope);
  if (type.kind === 'optional' && type.valueType) type = type.valueType;
  const at = locationOf(node, site.generated);
  const fields = chk.objectTypes.get(type.name)?.fields;
  if (type.kind === 'message' && !OPAQUE.test(type.name)) {
    if (fields && !(field in fields)) site.issues.push({ start: at, message: `undefined field '${field}'` });
  } else if (!['map', 'dyn', 'param'].includes(type.kind))
    site.issues.push({ start: at, message: `type '${celGoType(type)}' does not support field selection` });
}
