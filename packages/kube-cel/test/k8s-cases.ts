/**
 * Table tests of the Kubernetes CEL libraries at the expression level: each case is an expression,
 * optional variables, and the API server's answer (cel-go with Kubernetes' libraries): a value, an
 * evaluation error (its message as the user reads it), a compile error, or a cost in units.
 */
import assert from 'node:assert/strict';
import { Optional } from '../src/engine.ts';
import { compileExpression, compileUnoptimized, isCompileError, type CompileOptions } from '../src/compile.ts';

/** The answer expected of a case. */
export type Expected =
  | { value: unknown }
  /** The expression equals the value of this other expression (opaque values: ip, cidr, quantity). */
  | { same: string }
  /** Any value (the case asserts its cost). */
  | { any: true }
  /** An optional without a value. */
  | { none: true }
  /** An optional holding this value. */
  | { some: unknown }
  /** An evaluation error whose message is exactly this string, or matches this pattern. */
  | { error: string | RegExp }
  /** A compile error whose message (after the position) matches. */
  | { compile: RegExp };

/** One case: the expression, its expected answer, and optionally variables, version and cost. */
export interface Case {
  expr: string;
  expect: Expected;
  /** Variables of the evaluation, in CEL values (bigint ints, Maps or objects). */
  vars?: Record<string, unknown>;
  /** Further declarations (name → CEL type) for the variables. */
  declarations?: Record<string, string>;
  /** The Kubernetes minor version whose stored-expressions environment compiles it. */
  minor?: number;
  /** The runtime cost cel-go reports for the evaluation. */
  cost?: number;
  /** False: the cost of a program built without OptOptimize, as the library's own cost tests build it. */
  optimize?: false;
}

/** The outcome of a case in this environment. */
type Outcome = { value: unknown; cost: number } | { error: string; cost: number } | { compile: string };

function outcome(c: Case): Outcome {
  const options: CompileOptions = {};
  if (c.minor !== undefined) options.kubeVersion = { major: 1, minor: c.minor };
  if (c.declarations) options.declarations = c.declarations;
  const compiled = (c.optimize === false ? compileUnoptimized : compileExpression)(c.expr, options);
  if (isCompileError(compiled)) return { compile: compiled.message.split('\n')[0]! };
  try {
    const value = compiled.run(c.vars ?? {});
    return { value, cost: compiled.lastCost };
  } catch (err) {
    return { error: err instanceof Error ? err.message : String(err), cost: compiled.lastCost };
  }
}

const show = (x: unknown): string =>
  JSON.stringify(x, (_, v) =>
    typeof v === 'bigint' ? `${v}n` : v instanceof Map ? Object.fromEntries(v) : v instanceof RegExp ? `${v}` : v,
  );

/** A CEL value as plain data for deepEqual: Maps as objects. */
function plain(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(plain);
  if (v instanceof Map) return Object.fromEntries([...v].map(([k, x]) => [String(k), plain(x)]));
  return v;
}

/** Asserts one case; the message names the expression. */
export function check(c: Case): void {
  const got = outcome(c);
  const where = `${c.expr}${c.minor === undefined ? '' : ` (1.${c.minor})`}: got ${show(got)}`;
  const e = c.expect;
  if ('compile' in e) {
    assert.ok('compile' in got, where);
    assert.match(got.compile, e.compile, where);
    return;
  }
  assert.ok(!('compile' in got), where);
  if ('error' in e) {
    assert.ok('error' in got, where);
    if (typeof e.error === 'string') assert.equal(got.error, e.error, where);
    else assert.match(got.error, e.error, where);
  } else {
    assert.ok('value' in got, where);
    if ('any' in e) {
      // any value will do
    } else if ('value' in e) assert.deepEqual(plain(got.value), plain(e.value), where);
    else if ('none' in e) assert.ok(got.value instanceof Optional && !got.value.hasValue(), where);
    else if ('some' in e) {
      assert.ok(got.value instanceof Optional && got.value.hasValue(), where);
      assert.deepEqual(plain(got.value.value()), plain(e.some), where);
    } else {
      const same = outcome({ ...c, expr: `(${c.expr}) == (${e.same})`, expect: { value: true } });
      assert.deepEqual('value' in same ? same.value : same, true, `${where}; == ${e.same}: ${show(same)}`);
    }
  }
  if (c.cost !== undefined) assert.equal(got.cost, c.cost, `${where}: cost`);
}

/** Asserts every case, reporting all that differ at once. */
export function checkAll(cases: Case[]): void {
  const failures: string[] = [];
  for (const c of cases) {
    try {
      check(c);
    } catch (err) {
      failures.push((err as Error).message.split('\n')[0]!);
    }
  }
  assert.deepEqual(failures, [], `${failures.length} of ${cases.length} cases differ`);
}

/** Shorthands for expectations. */
export const value = (v: unknown): Expected => ({ value: v });
export const same = (expr: string): Expected => ({ same: expr });
export const error = (message: string | RegExp): Expected => ({ error: message });
export const compile = (pattern: RegExp): Expected => ({ compile: pattern });
export const anyValue: Expected = { any: true };
export const none: Expected = { none: true };
export const some = (v: unknown): Expected => ({ some: v });
