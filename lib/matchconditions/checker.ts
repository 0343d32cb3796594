/**
 * The type checker's refusals in cel-go's words and at cel-go's positions. The engine's checker
 * stops at its first error and words it its own way (`no such overload: int + string`); cel-go's
 * goes on past an error (its node typed as an error, which accepts any use) and reports each:
 * `found no matching overload for '_+_' applied to '(int, string)'` at the operator,
 * `undeclared reference to 'x' (in container '')`, `expected type 'bool' but found 'int'`. Each
 * node's check is wrapped here: an error the engine raises is recorded in cel-go's words and the
 * node typed dyn, so checking goes on; and where cel-go's checker refuses what the engine's
 * accepts (an index of a map by a key of another type, of an object by a string, `has()` of a
 * field an object type lacks), the refusal is added.
 */

/** One refusal: the offset cel-go reports it at (in the checked text) and its message. */
export interface CheckIssue {
  start: number;
  message: string;
  /** A refusal of cel-go's parser (a macro's arguments): when there is one, its checker never runs. */
  parse?: boolean;
}

/** The engine's type of a checked expression (the parts used here). */
interface CelType {
  kind: string;
  name: string;
  keyType?: CelType;
  valueType?: CelType;
  unify(registry: unknown, other: CelType): CelType | null;
}
/** The engine's checker (the parts used here). */
interface Checker {
  check(node: unknown, scope: unknown): CelType;
  getType(name: string): CelType;
  registry: unknown;
  objectTypes: Map<string, { fields?: Record<string, unknown> }>;
}
type Check = (chk: Checker, node: Node, scope: unknown) => CelType;
type MacroCheck = (chk: Checker, macro: unknown, scope: unknown) => CelType;
/** A node of the parsed expression (the parts used here). */
interface Node {
  op: string;
  args: unknown;
  start: number;
  end: number;
  input: string;
  checkedType?: CelType;
  argTypes?: CelType[];
  readonly meta: { check: Check; alternate?: Node; macro?: { typeCheck?: MacroCheck }; label?: string };
}
/** An error the engine raises while checking. */
interface EngineError {
  code?: string;
  node?: Node;
  summary?: string;
  message?: string;
}

/** cel-go's names of the operators. */
const OPERATOR_NAMES: Record<string, string> = {
  '+': '_+_',
  '-': '_-_',
  '*': '_*_',
  '/': '_/_',
  '%': '_%_',
  '<': '_<_',
  '<=': '_<=_',
  '>': '_>_',
  '>=': '_>=_',
  '==': '_==_',
  '!=': '_!=_',
  in: '@in',
  '!_': '!_',
  '-_': '-_',
  '[]': '_[_]',
  '[?]': '_[?_]',
};

/** Types cel-go declares opaque (no fields): selecting a field of one is refused as of an int. */
const OPAQUE = /^(?:kubernetes\.(?:Quantity|URL|Semver)|net\.(?:IP|CIDR)|google\.protobuf\.\w+)$/;

/** A type as cel-go prints it: `list(int)`, `map(string, dyn)`, `null_type`; a free parameter is dyn. */
export function celGoType(t: CelType | undefined): string {
  if (!t || t.kind === 'dyn' || t.kind === 'param') return 'dyn';
  if (t.kind === 'list') return `list(${celGoType(t.valueType)})`;
  if (t.kind === 'map') return `map(${celGoType(t.keyType)}, ${celGoType(t.valueType)})`;
  if (t.kind === 'optional') return `optional_type(${celGoType(t.valueType)})`;
  if (t.name === 'null') return 'null_type';
  return t.name;
}

const isNode = (v: unknown): v is Node =>
  !!v && typeof v === 'object' && typeof (v as Node).op === 'string' && 'meta' in (v as object);

/** The offset of the first `token` at or after `from`, comments skipped; `fallback` when none. */
function tokenAt(input: string, from: number, token: string, fallback: number): number {
  for (let i = Math.max(0, from); i < input.length; i++) {
    if (input.startsWith('//', i)) {
      const eol = input.indexOf('\n', i);
      if (eol < 0) break;
      i = eol;
    } else if (input.startsWith(token, i)) return i;
  }
  return fallback;
}

/**
 * Where cel-go's parser places a node: an operator at its token (`+`, `?`, `.`, `[`), a call at its
 * opening parenthesis, a macro's expansion at its call's parenthesis, the rest at their start.
 */
function locationOf(node: Node, generated: WeakMap<object, number>): number {
  const at = generated.get(node);
  if (at !== undefined) return at;
  const args = node.args as Node[];
  const after = (token: string) => tokenAt(node.input, args[0]!.end, token, node.start);
  if (node.op === '?:') return after('?');
  if (node.op === '.' || node.op === '.?') return after('.');
  if (node.op === '[]' || node.op === '[?]') return after('[');
  if (node.op === 'call') return tokenAt(node.input, node.start, '(', node.start);
  if (node.op === 'rcall') {
    const receiver = (node.args as unknown[])[1] as Node;
    return tokenAt(node.input, receiver.end, '(', node.start);
  }
  if (node.op === '&&' || node.op === '||' || (node.op in OPERATOR_NAMES && Array.isArray(node.args)))
    return after(node.op);
  return node.start;
}

/** What the environment's checker needs to know of the environment: the function names it declares. */
export interface CheckerEnvironment {
  functions: ReadonlySet<string>;
}

/**
 * Sets cel-go's checker words on every node of a parsed expression (after the environment's
 * semantics are set, before it is checked). The returned list fills as the expression is checked:
 * empty after the check, the expression is accepted.
 */
export function adoptCelGoChecker(root: Node, env: CheckerEnvironment): CheckIssue[] {
  const issues: CheckIssue[] = [];
  const generated = new WeakMap<object, number>();
  const site = { issues, generated, env };
  for (const node of nodesOf(root)) {
    if (node.meta.alternate && (node.op === 'rcall' || node.op === 'call')) {
      const paren = locationOf(node, generated);
      const expansion = node.meta.alternate as Node & { args: { step?: Node } };
      generated.set(expansion, paren);
      if (expansion.args?.step) generated.set(expansion.args.step, paren);
    }
    if (node.meta.macro) wrapMacro(node, site);
    wrapCheck(node, site);
  }
  return issues;
}

/** Every node of a parsed expression, macro expansions included. */
function nodesOf(root: Node): Node[] {
  const out: Node[] = [];
  const seen = new WeakSet<object>();
  const stack: unknown[] = [root];
  while (stack.length) {
    const item = stack.pop();
    if (!item || typeof item !== 'object' || seen.has(item)) continue;
    seen.add(item);
    if (Array.isArray(item)) stack.push(...item);
    else if (isNode(item)) {
      out.push(item);
      stack.push(item.args, item.meta.alternate, item.meta.macro);
    } else if (Object.getPrototypeOf(item) === Object.prototype) stack.push(...Object.values(item));
  }
  return out;
}

/** What a wrapped check records into. */
interface Site {
  issues: CheckIssue[];
  generated: WeakMap<object, number>;
  env: CheckerEnvironment;
}

/** Wraps a node's check: cel-go's own refusals first, then the engine's, recorded in cel-go's words. */
function wrapCheck(node: Node, site: Site): void {
  const check = node.meta.check;
  node.meta.check = (chk, n, scope) => {
    const before = site.issues.length;
    precheck(chk, n, scope, site);
    if (site.issues.length > before) return chk.getType('dyn');
    try {
      const type = check(chk, n, scope);
      if (n.op === 'rcall' && !memberCallFits(n)) {
        const { name, types } = callTypes(n);
        site.issues.push({ start: locationOf(n, site.generated), message: noOverload(name, types, true) });
        return chk.getType('dyn');
      }
      return n.op === '?:' ? branchesJoined(n, type) : type;
    } catch (err) {
      // Branches the engine cannot unify that cel-go joins: an object or optional and null.
      if ((err as EngineError).code === 'incompatible_ternary_branches') {
        const [l, r] = [args(n)[1]!.checkedType!, args(n)[2]!.checkedType!];
        if (l.name === 'null' && nullable(r)) return r;
        if (r.name === 'null' && nullable(l)) return l;
      }
      return recorded(chk, err, n, site);
    }
  };
}

const args = (n: Node) => n.args as Node[];

/** An empty literal or `optional.none()`: an element type cel-go leaves free for the other branch to bind. */
function free(n: Node): boolean {
  if (n.op === 'list' || n.op === 'map') return (n.args as unknown[]).length === 0;
  if (n.op !== 'rcall') return false;
  const [name, target, rest] = n.args as [unknown, Node | undefined, unknown[] | undefined];
  return name === 'none' && target?.op === 'id' && target.args === 'optional' && !rest?.length;
}

/** A conditional's type as cel-go joins its branches: `true ? [] : [1]` is a list(int), not list(dyn). */
function branchesJoined(n: Node, type: CelType): CelType {
  const [, left, right] = args(n);
  if (free(left!) && !free(right!)) return right!.checkedType ?? type;
  if (free(right!) && !free(left!)) return left!.checkedType ?? type;
  return type;
}

/**
 * Whether a member call on a dyn receiver has an overload its arguments fit: the engine takes any
 * arguments on a dyn receiver (`object.x.startsWith(1)`), cel-go's checker matches them.
 */
function memberCallFits(n: Node): boolean {
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

/** True for the kinds cel-go's checker assigns null to (objects, opaque types, timestamps, optionals). */
const nullable = (t: CelType) => t.kind === 'message' || t.kind === 'optional';

/** Wraps the check of a macro the engine checks itself (`has`, the two-variable comprehensions). */
function wrapMacro(node: Node, site: Site): void {
  const macro = node.meta.macro!;
  const typeCheck = macro.typeCheck;
  if (!typeCheck) return;
  macro.typeCheck = (chk, m, scope) => {
    // cel-go's parser reads `a.?b` as a call of `_?._`, which has() does not take.
    const select = ((node.args as unknown[])[1] as Node[] | undefined)?.[0];
    if ((node.args as unknown[])[0] === 'has' && select?.op === '.?') {
      site.issues.push({ start: locationOf(select, site.generated), message: HAS_ARGUMENT, parse: true });
      return chk.getType('bool');
    }
    try {
      const type = typeCheck(chk, m, scope);
      if ((node.args as unknown[])[0] === 'has') hasField(chk, node, scope, site);
      return type;
    } catch (err) {
      const e = err as EngineError;
      const step = e.code === 'invalid_predicate' ? conditionalStep(chk, macro, e.summary ?? '') : undefined;
      if (step && isNode(e.node)) {
        const types = [e.node.checkedType!, step, step];
        site.issues.push({ start: locationOf(node, site.generated), message: noOverload('_?_:_', types, false) });
        return chk.getType('dyn');
      }
      const optional = optionalMacroIssues(chk, node, scope, e);
      if (optional) {
        const at = locationOf(node, site.generated);
        for (const message of optional) site.issues.push({ start: at, message });
        return chk.getType('dyn');
      }
      return recorded(chk, err, node, site);
    }
  };
}

/**
 * The refusals of the optional macros as cel-go words them: `or` and `orValue` are functions of an
 * optional_type(A) receiver there; `optMap` and `optFlatMap` expand to
 * `_?_:_(x.hasValue(), … x.value() …, optional.none())`, refused call by call.
 */
function optionalMacroIssues(chk: Checker, node: Node, scope: unknown, e: EngineError): string[] | undefined {
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
const HAS_ARGUMENT = 'invalid argument to has() macro';

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
function conditionalStep(chk: Checker, macro: object, summary: string): CelType | undefined {
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

/** Records an error the engine raised (rethrowing what is no checker error) and types the node dyn. */
function recorded(chk: Checker, err: unknown, at: Node, site: Site): CelType {
  const e = err as EngineError;
  if (!(err instanceof Error) || typeof e.code !== 'string') throw err;
  site.issues.push(...[translate(e, isNode(e.node) ? e.node : at, site)].flat());
  return chk.getType('dyn');
}

/** The overload error of a call or operator, as cel-go words it. */
function noOverload(name: string, types: CelType[], member: boolean): string {
  const args = (member ? types.slice(1) : types).map(celGoType).join(', ');
  return `found no matching overload for '${name}' applied to '${member ? `${celGoType(types[0])}.` : ''}(${args})'`;
}

/** The types a call node was checked with: its receiver's first. */
function callTypes(node: Node): { name: string; namespace?: Node; types: CelType[]; member: boolean } {
  const args = node.args as unknown[];
  const name = args[0] as string;
  const argTypes = node.argTypes ?? ((node.op === 'rcall' ? args[2] : args[1]) as Node[]).map((a) => a.checkedType!);
  if (node.op !== 'rcall') return { name, types: argTypes, member: false };
  const receiver = args[1] as Node;
  const type = receiver.checkedType!;
  // `sets.contains(…)` is a function of a qualified name, not a member call.
  if (receiver.op === 'id' && NAMESPACE.test(type?.name ?? ''))
    return { name: `${receiver.args as string}.${name}`, namespace: receiver, types: argTypes, member: false };
  return { name, types: [type, ...argTypes], member: true };
}

/** The engine's types of the library namespaces (`sets.`, `strings.`, `optional.`, …). */
const NAMESPACE = /^kubernetes\.lib\.|Namespace$/;

/**
 * The function names an environment declares, as cel-go names them: a namespace's qualified
 * (`sets.contains`), the others plain; macros (functions of `ast` arguments to the engine) left out.
 */
export function declaredFunctions(functions: ReadonlyArray<{ name: string; signature?: string }>): Set<string> {
  const names = new Set<string>();
  for (const f of functions) {
    const signature = f.signature ?? '';
    if (/\bast\b/.test(signature)) continue;
    const namespace = /^(?:kubernetes\.lib\.(\w+)|(Optional|Cel)Namespace)\./.exec(signature);
    names.add(namespace ? `${namespace[1] ?? namespace[2]!.toLowerCase()}.${f.name}` : f.name);
  }
  return names;
}

/** An undeclared function, as cel-go's checker reports it: a namespace it lacks is undeclared too. */
function undeclaredCall(node: Node, site: Site): CheckIssue[] {
  const { name, namespace } = callTypes(node);
  const at = locationOf(node, site.generated);
  if (!namespace) return [{ start: at, message: `undeclared reference to '${name}' (in container '')` }];
  // cel-go checks `sets.foo(…)` as a member call of `foo` on the identifier `sets`, which it lacks.
  const issues = [
    { start: namespace.start, message: `undeclared reference to '${namespace.args as string}' (in container '')` },
  ];
  const plain = name.slice(name.indexOf('.') + 1);
  if (!site.env.functions.has(plain))
    issues.push({ start: at, message: `undeclared reference to '${plain}' (in container '')` });
  return issues;
}

/** The engine's error in cel-go's words, at cel-go's position. */
function translate(err: EngineError, node: Node, site: Site): CheckIssue | CheckIssue[] {
  const at = (n: Node) => locationOf(n, site.generated);
  const args = node.args as Node[];
  const type = (n: Node | undefined) => n?.checkedType;
  switch (err.code) {
    case 'unknown_variable':
      return { start: node.start, message: `undeclared reference to '${node.args as string}' (in container '')` };
    case 'no_matching_overload': {
      const { name, types, member } = callTypes(node);
      if (!site.env.functions.has(name)) return undeclaredCall(node, site);
      return { start: at(node), message: noOverload(name, types, member) };
    }
    case 'no_such_overload':
      if (node.op === '!_' || node.op === '-_')
        return { start: node.start, message: noOverload(node.op, [type(node.args as Node)!], false) };
      return {
        start: at(node),
        message: noOverload(OPERATOR_NAMES[node.op] ?? node.op, args.map(type) as CelType[], false),
      };
    case 'invalid_index_type':
    case 'cannot_index_type':
      if (node.op === '.' || node.op === '.?')
        return { start: at(node), message: `type '${celGoType(type(args[0]))}' does not support field selection` };
      return {
        start: at(node),
        message: noOverload(OPERATOR_NAMES[node.op]!, [type(args[0])!, type(args[1])!], false),
      };
    case 'no_such_key':
      return { start: at(node), message: `undefined field '${String(args[1])}'` };
    case 'invalid_comprehension_range':
      return {
        start: at(node),
        message: `expression of type '${celGoType(type(node))}' cannot be range of a comprehension (must be list, map, or dynamic)`,
      };
    case 'invalid_macro_argument':
      return { start: at(node), message: HAS_ARGUMENT, parse: true };
    case 'invalid_predicate':
      return { start: at(node), message: `expected type 'bool' but found '${celGoType(type(node))}'` };
    default:
      return { start: at(node), message: err.summary ?? err.message ?? String(err) };
  }
}

/** True when cel-go's checker takes a value of type `b` where `a` is expected. */
function assignable(chk: Checker, a: CelType | undefined, b: CelType | undefined): boolean {
  if (!a || !b) return true;
  return a.unify(chk.registry, b) !== null;
}

const flexible = (t: CelType | undefined) => !t || t.kind === 'dyn' || t.kind === 'param';

/**
 * cel-go's refusals the engine words otherwise or does not make, before the engine checks the
 * node: conditionals as a call of `_?_:_(bool, A, A)`, logical operators taking bools, indexes.
 */
function precheck(chk: Checker, node: Node, scope: unknown, site: Site): void {
  const op = node.op;
  if (op === '&&' || op === '||') logicalOperands(chk, node, scope, site);
  else if (op === '?:') conditional(chk, node, scope, site);
  else if (op === '.' || op === '.?') selection(chk, node, scope, site);
  else if (op === '[]') index(chk, node, scope, site);
}

/** Records an issue at a node's position. */
function addIssue(site: Site, node: Node, message: string): void {
  site.issues.push({ start: locationOf(node, site.generated), message });
}

/** A bool expected where a value of type `t` is. */
function boolMismatch(site: Site, node: Node, t: CelType): void {
  addIssue(site, node, `expected type 'bool' but found '${celGoType(t)}'`);
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
function hasField(chk: Checker, node: Node, scope: unknown, site: Site): void {
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
