/**
 * Optional types as cel-go has them (the Kubernetes environment enables them from 1.28) where the
 * engine's lack a part: `optMap` and `optFlatMap`, `optional.ofNonZeroValue`, equality of optionals,
 * and `has()` of a field of any expression (`has({'a': 1}.a)`, `has(x.?y.z)`), not only of a variable.
 */
import {
  type CelType,
  type Checker,
  type Environment,
  type Evaluator,
  type Node,
  Optional,
  type Scope,
} from '../engine.ts';
import { isZeroTime } from '../libraries/time.ts';

/** One use of `optMap` or `optFlatMap`. */
interface OptionalMap {
  flat: boolean;
  receiver: Node;
  name: string;
  body: Node;
  scope?: Scope;
}

function optionalType(chk: Checker, node: Node, scope: unknown, what: string): CelType {
  const type = chk.check(node, scope);
  if (type.kind === 'optional' || type.kind === 'dyn') return type;
  throw chk.createError('optional_expected', `${what} must be optional, got '${type.name}'`, node);
}

function checkOptionalMap(chk: Checker, use: OptionalMap, scope: Scope): CelType {
  const receiver = optionalType(chk, use.receiver, scope, `${use.flat ? 'optFlatMap' : 'optMap'}() receiver`);
  use.scope = scope.forkWithVariable(use.name, receiver.valueType ?? chk.getType('dyn'));
  if (use.flat) return optionalType(chk, use.body, use.scope, 'optFlatMap() result');
  return chk.registry.getOptionalType(chk.check(use.body, use.scope));
}

function evaluateOptionalMap(ev: Evaluator, use: OptionalMap, scope: unknown): unknown {
  const receiver = ev.run(use.receiver, scope);
  if (!(receiver instanceof Optional))
    throw ev.createError('optional_expected', 'optMap() receiver must be optional', use.receiver);
  if (!receiver.hasValue()) return Optional.none();
  const inner = use.scope!.reuse(scope).setIterValue(receiver.value(), ev);
  const out = ev.run(use.body, inner);
  if (!use.flat) return Optional.of(out);
  if (out instanceof Optional) return out;
  throw ev.createError('optional_expected', 'optFlatMap() result must be optional', use.body);
}

/** True for the zero value of its type, as cel-go's IsZeroValue. */
function isZero(v: unknown): boolean {
  if (v === null || v === false || v === '' || v === 0 || v === 0n) return true;
  if (Array.isArray(v) || v instanceof Uint8Array) return v.length === 0;
  if (v instanceof Map) return v.size === 0;
  const time = isZeroTime(v);
  if (time !== undefined) return time;
  if (typeof v === 'object' && (v.constructor === Object || v.constructor === undefined)) return !Object.keys(v).length;
  const n = (v as { valueOf(): unknown }).valueOf();
  return n === 0n || n === 0;
}

/** cel-go's name of the type of optionals, the value `type()` gives one. */
export const OPTIONAL_TYPE = 'optional_type';

/** Registers optMap, optFlatMap, ofNonZeroValue, the equality of optionals and their type. */
export function registerOptionals(env: Environment): void {
  const e = env as unknown as {
    registerFunction(signature: string, handler: unknown): unknown;
    registerOperator(signature: string, handler: unknown): unknown;
  };
  // The engine's class of type values: `type(optional.of(1)) == optional_type`.
  const TypeValue = (env.evaluate('type(1)') as object).constructor as new (name: string) => object;
  const optionalType = new TypeValue(OPTIONAL_TYPE);
  e.registerFunction('type(optional<dyn>): type', () => optionalType);
  env.registerConstant(OPTIONAL_TYPE, 'type', optionalType);
  const macro =
    (flat: boolean) =>
    ({ args, receiver, ast }: { args: Node[]; receiver: Node; ast: Node }) => {
      const variable = args[0]!;
      if (variable.op !== 'id' || typeof variable.args !== 'string')
        throw Object.assign(
          new Error(`${flat ? 'optFlatMap' : 'optMap'}() variable name must be a simple identifier`),
          {
            range: { start: ast.start ?? 0 },
          },
        );
      const use: OptionalMap = { flat, receiver, name: variable.args, body: args[1]! };
      return {
        async: false,
        typeCheck: (chk: Checker, _m: unknown, scope: Scope) => checkOptionalMap(chk, use, scope),
        evaluate: (ev: Evaluator, _m: unknown, scope: unknown) => evaluateOptionalMap(ev, use, scope),
      };
    };
  e.registerFunction('optional.optMap(ast, ast): optional<dyn>', macro(false));
  e.registerFunction('optional.optFlatMap(ast, ast): optional<dyn>', macro(true));
  e.registerFunction('OptionalNamespace.ofNonZeroValue(A): optional<A>', (_: unknown, v: unknown) =>
    isZero(v) ? Optional.none() : Optional.of(v),
  );
  // The handles of == and != are cel-go's equality (semantics.ts), which compares optionals' values.
  e.registerOperator('optional<A> == optional<A>', (a: Optional, b: Optional) => a === b);
}

/**
 * has() of a field of any operand, as cel-go: the operand is evaluated (its errors are the answer's),
 * an optional operand without a value has no field, and the field is looked up as `.` would.
 */
export function adoptHas(node: Node & { meta: { macro?: Record<string, unknown> } }): void {
  const macro = node.meta.macro;
  if (!macro || node.op !== 'call' || (node.args as unknown[])[0] !== 'has') return;
  const typeCheck = macro.typeCheck as (chk: Checker, m: unknown, scope: unknown) => CelType;
  const evaluate = macro.evaluate as (ev: Evaluator, m: unknown, scope: unknown) => unknown;
  const select = ((node.args as unknown[])[1] as Node[])[0]!;
  let own = false;
  macro.typeCheck = (chk: Checker, m: unknown, scope: unknown) => {
    try {
      return typeCheck(chk, m, scope);
    } catch (err) {
      // The engine's has() takes a chain of fields from a variable only: others are checked here.
      if (select.op !== '.' && select.op !== '.?') throw err;
      chk.check((select.args as Node[])[0], scope);
      own = true;
      return chk.getType('bool');
    }
  };
  macro.evaluate = (ev: Evaluator, m: unknown, scope: unknown) => {
    if (!own) return evaluate(ev, m, scope);
    let operand = ev.run((select.args as Node[])[0], scope);
    if (operand instanceof Optional) {
      if (!operand.hasValue()) return false;
      operand = operand.value();
    }
    return ev.debugType(operand).fieldLazy(operand, (select.args as unknown[])[1], select, ev) !== undefined;
  };
}

/** A parsed node as the predicates below read it. */
type AnyNode = { op?: string; args?: unknown } | undefined;

/** True for `optional.none()`, whose value type is free (cel-go's `optional_type(T)`). */
export function isOptionalNone(node: unknown): boolean {
  const n = node as AnyNode;
  if (n?.op !== 'rcall') return false;
  const [name, target, args] = n.args as [unknown, AnyNode, unknown[] | undefined];
  return name === 'none' && target?.op === 'id' && target.args === 'optional' && !args?.length;
}

/** An empty list or map literal, or `optional.none()`: a type cel-go leaves free for the others to bind. */
export function hasFreeType(node: unknown): boolean {
  const n = node as AnyNode;
  if (n?.op === 'list' || n?.op === 'map') return (n.args as unknown[]).length === 0;
  return isOptionalNone(n);
}
