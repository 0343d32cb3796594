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

import type { Environment } from '../engine.ts';
import { hasEmptyLiteral, type Inferred, typeParameters } from './inference.ts';
import {
  branchesJoined,
  conditionalStep,
  HAS_ARGUMENT,
  hasField,
  memberCallFits,
  optionalMacroIssues,
  precheck,
} from './refusals.ts';
import {
  args,
  type CelType,
  type Checker,
  type CheckerEnvironment,
  type CheckIssue,
  type EngineError,
  isNode,
  locationOf,
  type Node,
  noOverload,
  nullable,
  OPERATOR_NAMES,
  type Site,
  celGoType,
} from './words.ts';

export { celGoType, type CheckerEnvironment, type CheckIssue } from './words.ts';

/**
 * Sets cel-go's checker words on every node of a parsed expression (after the environment's
 * semantics are set, before it is checked). The returned list fills as the expression is checked:
 * empty after the check, the expression is accepted.
 */
export function adoptCelGoChecker(root: Node, env: CheckerEnvironment): CheckIssue[] {
  const issues: CheckIssue[] = [];
  const generated = new WeakMap<object, number>();
  const site: Site = { issues, generated, env };
  sites.set(root, site);
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

const sites = new WeakMap<Node, Site>();

/**
 * cel-go's refusals and type of an expression the engine's checker accepted (run after its check)
 * that come from the element types of its empty literals (see inference.ts); undefined without one.
 */
export function inferredTypes(root: Node): Inferred | undefined {
  const site = sites.get(root);
  if (!site?.checker || !hasEmptyLiteral(root)) return undefined;
  return typeParameters(root, site.checker, site.generated);
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

/** Wraps a node's check: cel-go's own refusals first, then the engine's, recorded in cel-go's words. */
function wrapCheck(node: Node, site: Site): void {
  const check = node.meta.check;
  node.meta.check = (chk, n, scope) => {
    site.checker = chk;
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

/** Records an error the engine raised (rethrowing what is no checker error) and types the node dyn. */
function recorded(chk: Checker, err: unknown, at: Node, site: Site): CelType {
  const e = err as EngineError;
  if (!(err instanceof Error) || typeof e.code !== 'string') throw err;
  site.issues.push(...[translate(e, isNode(e.node) ? e.node : at, site)].flat());
  return chk.getType('dyn');
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

const checkerEnvironments = new WeakMap<Environment, CheckerEnvironment>();

/** What the checker needs to know of an environment (the names of its functions), worked out once. */
export function checkerEnvironment(env: Environment): CheckerEnvironment {
  let known = checkerEnvironments.get(env);
  if (!known) {
    const { functions } = env.getDefinitions() as { functions: Array<{ name: string; signature?: string }> };
    known = { functions: declaredFunctions(functions) };
    checkerEnvironments.set(env, known);
  }
  return known;
}
