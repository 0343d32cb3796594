/**
 * The adapter to the CEL engine underneath (@marcbachmann/cel-js): the only module that imports
 * it (a test holds every other file to that). What the rest of the package uses of the engine is
 * here: its classes, and the shapes of its internals (nodes, scopes, checker, evaluator) that the
 * environment extends, declared once.
 */
export { Environment, Optional } from '@marcbachmann/cel-js';
export type { ASTNode, ParseResult } from '@marcbachmann/cel-js';
export { Duration, UnsignedInt } from '@marcbachmann/cel-js/evaluator';

/** The engine's type of a checked expression (the parts used here). */
export interface CelType {
  kind: string;
  name: string;
  keyType?: CelType;
  valueType?: CelType;
}

/** The engine's scope of variables: a comprehension forks it with its own. */
export interface Scope {
  forkWithVariable(name: string, type: CelType): Scope;
  reuse(parent: unknown): Scope;
  setIterValue(value: unknown, ev: unknown): Scope;
}

/** The engine's checker (the parts used here). */
export interface Checker {
  check(node: unknown, scope: unknown): CelType;
  createError(code: string, message: string, node: unknown): Error;
  getType(name: string): CelType;
  registry: {
    getListType(t: CelType): CelType;
    getMapType(k: CelType, v: CelType): CelType;
    getOptionalType(t: CelType): CelType;
  };
}

/** The engine's evaluator (the parts used here); one per evaluation, see evaluation.ts. */
export interface Evaluator {
  run(node: unknown, scope: unknown): unknown;
  tryEval(node: unknown, scope: unknown): unknown;
  createError(code: string, message: string, node: unknown): Error;
  debugType(v: unknown): CelType & { fieldLazy(obj: unknown, field: unknown, node: unknown, ev: unknown): unknown };
}

/** A node of the parsed expression (the parts used here). */
export interface Node {
  op: string;
  args: unknown;
  start?: number;
}
