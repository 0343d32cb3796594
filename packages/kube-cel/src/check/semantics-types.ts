/**
 * The parts of the engine's checker, evaluator and nodes that cel-go's semantics (semantics.ts)
 * and the map literal (map-literal.ts) use: declared once, in a module that imports nothing.
 */

/** The engine's type of a checked expression (the parts used here). */
export interface CelType {
  name: string;
  unify(registry: unknown, other: CelType): CelType | null;
}
/** The engine's checker and evaluator (the parts used here). */
export interface Engine {
  check(node: unknown, scope: unknown): CelType;
  getType(name: string): CelType;
  run(node: unknown, scope: unknown): unknown;
  createError(code: string, message: string, node: unknown): Error;
  registry: {
    getListType(t: CelType): CelType;
    getMapType(k: CelType, v: CelType): CelType;
    findBinaryOverload(op: string, l: unknown, r: unknown): { handler: Handle } | undefined;
  };
  debugType(v: unknown): unknown;
}
export type Handle = (...args: unknown[]) => unknown;
export type Check = (chk: Engine, node: Node, scope: unknown) => CelType;
/** A node of the parsed expression (the parts used here). */
export interface Node {
  op: string;
  args: unknown;
  handle?: Handle;
  readonly meta: { check: Check; evaluate: (ev: Engine, node: Node, scope: unknown) => unknown };
}
