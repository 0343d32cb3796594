/**
 * The element types of empty literals, inferred as cel-go's checker infers them (checker.go,
 * types.go). cel-go gives `[]` a list of a free type variable and `{}` a map of two; the first use
 * binds them: an overload resolved for the operands (the first of a function's overloads, in the
 * order cel-go declares them, that the operands fit), a comprehension's predicate over the
 * elements. A later use must agree with the binding, or is refused:
 * `[].filter(n, n == -1.5) + [3]` is `_+_` on `(list(double), list(int))`, and `[][1] + object.x`
 * binds the element type to bytes (`_+_`'s first overload), which `'s'.indexOf(…)` does not take.
 * The engine types such a literal dyn; this pass runs after its check, over the expressions that
 * have an empty literal, and reports what cel-go refuses.
 */
import { type CheckIssue, type Checker, type Node, isNode, locationOf } from './words.ts';
import {
  assignList,
  DYN,
  exact,
  formatTy,
  list,
  map,
  type Mapping,
  mostGeneral,
  opt,
  prim,
  substitute,
  type Ty,
  TypeVars,
} from './unify.ts';
import { CEL_GO_NAMES, OPERATORS } from './operator-overloads.ts';

/** One overload: its parameter types (a member function's receiver first) and result. */
interface Signature {
  params: Ty[];
  result: Ty;
}

/** The types with no fields to select. */
const BASIC = new Set(['bool', 'bytes', 'double', 'int', 'string', 'uint']);

/** The macros over one variable whose step binds their range's element type. */
const MACROS = new Set(['all', 'exists', 'exists_one', 'filter', 'map']);

interface Typed {
  t: Ty;
  /** True when the type comes from an empty literal's variables (its node is checked here). */
  dep: boolean;
}

/** The state of one pass: the checker (for the engine's types and overloads), variables, mapping, issues. */
class Inference {
  m: Mapping = new Map();
  vars = new TypeVars();
  issues: CheckIssue[] = [];
  constructor(
    readonly chk: Checker,
    readonly generated: WeakMap<object, number>,
  ) {}

  /** A type written in a signature (`list<A>`), its parameters bound in `params`. */
  parse(text: string, params: Map<string, Ty>): Ty {
    const generic = /^(list|map)<(.*)>$/.exec(text);
    if (generic) {
      const parts = generic[2]!.split(',').map((p) => this.parse(p.trim(), params));
      return generic[1] === 'list' ? list(parts[0]!) : map(parts[0]!, parts[1]!);
    }
    if (/^[A-Z]$/.test(text)) {
      if (!params.has(text)) params.set(text, this.vars.fresh());
      return params.get(text)!;
    }
    return text === 'dyn' ? DYN : prim(text);
  }

  /** The engine's type in these terms; its type parameters fresh variables (bound per `params`) or dyn. */
  engine(t: EngineType | undefined, params?: Map<string, Ty>): Ty {
    if (!t || t.kind === 'dyn') return DYN;
    if (t.kind === 'param') {
      if (!params) return DYN;
      if (!params.has(t.name)) params.set(t.name, this.vars.fresh());
      return params.get(t.name)!;
    }
    if (t.kind === 'list') return list(this.engine(t.valueType, params));
    if (t.kind === 'map') return map(this.engine(t.keyType, params), this.engine(t.valueType, params));
    if (t.kind === 'optional') return opt(this.engine(t.valueType, params));
    return prim(t.name);
  }

  /**
   * The result of the first overload the arguments fit, binding the mapping as it matched; dyn when
   * several fit with different results; undefined when none does (the refusal recorded).
   */
  resolve(node: Node, name: string, overloads: Array<() => Signature>, argTypes: Ty[], member: boolean): Ty {
    let result: Ty | undefined;
    for (const instantiate of overloads) {
      const sig = instantiate();
      const bound = assignList(this.m, argTypes, sig.params);
      if (!bound) continue;
      this.m = bound;
      const r = substitute(this.m, sig.result, false);
      if (!result) result = r;
      else if (result.k !== 'dyn' && !exact(r, result)) result = DYN;
    }
    if (result) return result;
    const shown = argTypes.map((t) => formatTy(substitute(this.m, t, true)));
    const applied = member ? `${shown[0]}.(${shown.slice(1).join(', ')})` : `(${shown.join(', ')})`;
    this.issues.push({
      start: locationOf(node, this.generated),
      message: `found no matching overload for '${name}' applied to '${applied}'`,
    });
    return DYN;
  }

  operator(node: Node, op: string, argTypes: Ty[]): Ty {
    const overloads = OPERATORS[op]!.map((words) => () => {
      const params = new Map<string, Ty>();
      const types = words.map((w) => this.parse(w, params));
      return { params: types.slice(0, -1), result: types.at(-1)! };
    });
    return this.resolve(node, CEL_GO_NAMES[op] ?? op, overloads, argTypes, false);
  }

  /** A function's overloads as the engine declares them (empty for one it lacks: its own type stands). */
  functionOverloads(member: boolean, name: string, argc: number): Array<() => Signature> {
    const registry = this.chk.registry as unknown as Registry;
    const decls = registry.functionCandidates(member, name, argc).declarations.filter((d) => !d.macro);
    return decls.map((d) => () => {
      const params = new Map<string, Ty>();
      const types = [...(d.receiverType ? [d.receiverType] : []), ...d.argTypes].map((t) => this.engine(t, params));
      return { params: types, result: this.engine(d.returnType, params) };
    });
  }
}

/** The engine's type of a node (the parts read here). */
interface EngineType {
  kind: string;
  name: string;
  keyType?: EngineType;
  valueType?: EngineType;
}

/** The engine's registry of functions (the parts read here). */
interface Registry {
  functionCandidates(
    member: boolean,
    name: string,
    argc: number,
  ): {
    declarations: Array<{
      macro: boolean;
      receiverType: EngineType | null;
      argTypes: EngineType[];
      returnType: EngineType;
    }>;
  };
}

/** True when an expression has an empty list or map literal (the only free type variables written). */
export function hasEmptyLiteral(root: unknown): boolean {
  const stack = [root];
  const seen = new WeakSet<object>();
  while (stack.length) {
    const item = stack.pop();
    if (!item || typeof item !== 'object' || seen.has(item)) continue;
    seen.add(item);
    if (Array.isArray(item)) stack.push(...item);
    else if (isNode(item)) {
      if ((item.op === 'list' || item.op === 'map') && (item.args as unknown[]).length === 0) return true;
      stack.push(item.args);
    }
  }
  return false;
}

/** What the pass found: cel-go's refusals, and the expression's type in the engine's words (`list<int>`). */
export interface Inferred {
  issues: CheckIssue[];
  type: string;
}

/**
 * cel-go's refusals of an expression the engine accepted, from the element types of its empty
 * literals, and its type with them (`[] + [1]` is a `list<int>`; what nothing bound is dyn).
 */
export function typeParameters(root: Node, chk: Checker, generated: WeakMap<object, number>): Inferred {
  const inference = new Inference(chk, generated);
  const { t } = typeOf(inference, root, new Map());
  const name = engineName(substitute(inference.m, t, true));
  let type = String(root.checkedType);
  try {
    // The engine names a list and a map of dyn `list` and `map`.
    type = chk
      .getType(name)
      .name.replace(/^list<dyn>$/, 'list')
      .replace(/^map<dyn, dyn>$/, 'map');
  } catch {
    // A type the engine does not name (an object type in a list): its own name stands.
  }
  return { issues: inference.issues, type };
}

/** A type as the engine names it: `list<int>`, `map<string, dyn>`, `optional<int>`. */
function engineName(t: Ty): string {
  if (t.k === 'list') return `list<${engineName(t.p[0]!)}>`;
  if (t.k === 'map') return `map<${engineName(t.p[0]!)}, ${engineName(t.p[1]!)}>`;
  if (t.k === 'opt') return `optional<${engineName(t.p[0]!)}>`;
  return t.name;
}

type Scope = Map<string, Ty>;

/** The node's type in cel-go's terms; nodes outside an empty literal's reach keep the engine's. */
function typeOf(inf: Inference, node: Node, scope: Scope): Typed {
  const own = (): Typed => ({ t: inf.engine(node.checkedType as EngineType | undefined), dep: false });
  const args = node.args as unknown[];
  switch (node.op) {
    case 'list':
      return listLiteral(inf, node, scope);
    case 'map':
      return args.length ? children(inf, node, scope, own) : { t: map(inf.vars.fresh(), inf.vars.fresh()), dep: true };
    case 'id': {
      const bound = scope.get(args as unknown as string);
      return bound ? { t: bound, dep: true } : own();
    }
    case '.': {
      const operand = typeOf(inf, args[0] as Node, scope);
      if (!operand.dep) return own();
      const t = substitute(inf.m, operand.t, false);
      if (t.k === 'var') {
        assignDyn(inf, t);
        return { t: DYN, dep: true };
      }
      if (t.k === 'list' || (t.k === 'prim' && BASIC.has(t.name))) {
        const at = locationOf(node, inf.generated);
        inf.issues.push({ start: at, message: `type '${formatTy(t)}' does not support field selection` });
        return { t: DYN, dep: true };
      }
      return { t: t.k === 'map' ? t.p[1]! : own().t, dep: true };
    }
    case 'rcall':
    case 'call':
      return call(inf, node, scope, own);
    case '&&':
    case '||':
      for (const a of args) typeOf(inf, a as Node, scope);
      return { t: prim('bool'), dep: false };
    default:
      if (node.op in OPERATORS) {
        const operands = (Array.isArray(args) ? args : [args]) as Node[];
        const typed = operands.map((a) => typeOf(inf, a, scope));
        if (!typed.some((t) => t.dep)) return own();
        return {
          t: inf.operator(
            node,
            node.op,
            typed.map((t) => t.t),
          ),
          dep: true,
        };
      }
      return children(inf, node, scope, own);
  }
}

/** An empty list a fresh variable's list; another the join of its elements (dyn where they differ). */
function listLiteral(inf: Inference, node: Node, scope: Scope): Typed {
  const elements = node.args as Node[];
  if (!elements.length) return { t: list(inf.vars.fresh()), dep: true };
  const typed = elements.map((e) => (isNode(e) ? typeOf(inf, e, scope) : { t: DYN, dep: false }));
  if (!typed.some((t) => t.dep)) return { t: inf.engine(node.checkedType as EngineType | undefined), dep: false };
  let joined = typed[0]!.t;
  for (const { t } of typed.slice(1)) {
    const bound = assignList(inf.m, [joined], [t]);
    if (bound) {
      inf.m = bound;
      joined = mostGeneral(joined, t);
      continue;
    }
    // HomogeneousAggregateLiterals: the elements must join.
    const [was, found] = [joined, t].map((x) => formatTy(substitute(inf.m, x, false)));
    const at = locationOf(elements[typed.findIndex((x) => x.t === t)]!, inf.generated);
    inf.issues.push({ start: at, message: `expected type '${was}' but found '${found}'` });
    joined = DYN;
  }
  return { t: list(joined), dep: true };
}

/** A type variable a field is selected from: cel-go binds it to dyn. */
function assignDyn(inf: Inference, t: Ty): void {
  inf.m = assignList(inf.m, [DYN], [t]) ?? inf.m;
}

/** Any other node: its children checked here (their bindings count), its type the engine's. */
function children(inf: Inference, node: Node, scope: Scope, own: () => Typed): Typed {
  const stack: unknown[] = [node.args];
  while (stack.length) {
    const item = stack.pop();
    if (isNode(item)) typeOf(inf, item, scope);
    else if (Array.isArray(item)) stack.push(...item);
  }
  return own();
}

/** A call: a comprehension macro over an empty literal's elements, or a function's overloads. */
function call(inf: Inference, node: Node, scope: Scope, own: () => Typed): Typed {
  const args = node.args as unknown[];
  const name = args[0] as string;
  const member = node.op === 'rcall';
  const params = (member ? args[2] : args[1]) as Node[];
  if (member && node.meta.alternate && MACROS.has(name) && (params.length === 2 || name === 'map'))
    return comprehension(inf, node, scope, own);
  const receiver = member ? [typeOf(inf, args[1] as Node, scope)] : [];
  const typed = [...receiver, ...params.map((p) => (isNode(p) ? typeOf(inf, p, scope) : { t: DYN, dep: false }))];
  if (!typed.some((t) => t.dep)) return own();
  const overloads = inf.functionOverloads(member, name, params.length);
  if (!overloads.length) return own();
  // The engine declares a library's overloads in an order of its own, not cel-go's: an argument
  // that is still a free variable is taken as dyn rather than bound by the engine's first overload.
  const free = (t: Ty) => substitute(inf.m, t, false).k === 'var';
  const argTypes = typed.map(({ t }) => (free(t) ? DYN : t));
  return { t: inf.resolve(node, name, overloads, argTypes, member), dep: true };
}

/**
 * `all`, `exists`, `exists_one`, `filter`, `map` over a list or map: the variable has the range's
 * element (or key) type, the predicate must be a bool, and `filter` and `map` give a list of the
 * element's or the transform's type (cel-go's expansion appends to an empty list).
 */
function comprehension(inf: Inference, node: Node, scope: Scope, own: () => Typed): Typed {
  const [name, receiver, params] = node.args as [string, Node, Node[]];
  const range = typeOf(inf, receiver, scope);
  const variable = params[0]!.args as string;
  let element: Ty = DYN;
  const t = substitute(inf.m, range.t, false);
  if (t.k === 'list' || t.k === 'map') element = t.p[0]!;
  else if (t.k === 'var') assignDyn(inf, t);
  const inner = new Map(scope);
  if (range.dep) inner.set(variable, element);
  else inner.delete(variable);
  const predicates = name === 'map' ? params.slice(1, -1) : params.slice(1);
  for (const p of predicates) {
    const typed = typeOf(inf, p, inner);
    if (typed.dep) inf.m = assignList(inf.m, [typed.t], [prim('bool')]) ?? inf.m;
  }
  if (name === 'filter') return range.dep ? { t: list(element), dep: true } : own();
  if (name !== 'map') return { t: prim('bool'), dep: false };
  const transform = typeOf(inf, params.at(-1)!, inner);
  return transform.dep ? { t: list(transform.t), dep: true } : own();
}
