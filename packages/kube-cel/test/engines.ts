/**
 * Conformance adapters of the CEL engines measured: `@marcbachmann/cel-js` (the engine of the
 * matchConditions environment) and `@bufbuild/cel` (the candidate). Each turns a case's bindings
 * into its own values and its results into the canonical text of conformance-suite.ts.
 */
import { Environment } from '../src/engine.ts';
import { compileExpression, isCompileError } from '../src/compile.ts';
import { celEnv, isCelError, isCelList, isCelMap, isCelType, isCelUint, parse, plan, celUint } from '@bufbuild/cel';
import { strings } from '@bufbuild/cel/ext';
import {
  canonicalBytes,
  canonicalDouble,
  typeName,
  type ConformanceCase,
  type ConformanceEngine,
  type Outcome,
  type ValueJson,
} from './conformance-suite.ts';

type Convert = { int(v: bigint): unknown; uint(v: bigint): unknown; map(entries: Array<[unknown, unknown]>): unknown };

/** A conformance value in an engine's own representation. */
function fromJson(v: ValueJson, c: Convert): unknown {
  if ('int64Value' in v) return c.int(BigInt(v.int64Value as string));
  if ('uint64Value' in v) return c.uint(BigInt(v.uint64Value as string));
  if ('doubleValue' in v) return Number(v.doubleValue);
  if ('stringValue' in v) return v.stringValue;
  if ('bytesValue' in v) return new Uint8Array(Buffer.from(v.bytesValue as string, 'base64'));
  if ('boolValue' in v) return v.boolValue;
  if ('nullValue' in v) return null;
  if ('listValue' in v) return ((v.listValue as { values?: ValueJson[] }).values ?? []).map((x) => fromJson(x, c));
  if ('mapValue' in v) {
    const entries = (v.mapValue as { entries?: Array<{ key: ValueJson; value: ValueJson }> }).entries ?? [];
    return c.map(entries.map((e) => [fromJson(e.key, c), fromJson(e.value, c)]));
  }
  throw new Error(`unsupported binding ${JSON.stringify(v).slice(0, 80)}`);
}

const message = (err: unknown): string => (err instanceof Error ? err.message.split('\n')[0]! : String(err));

// ---- @marcbachmann/cel-js ----

const marcUint = new Environment().parse('0u')({})!.constructor as new (v: bigint) => { value: bigint };

/** A value of the engine as conformance-suite.ts's canonical text. */
export function marcCanonical(v: unknown): string {
  if (typeof v === 'bigint') return `i${v}`;
  if (typeof v === 'number') return canonicalDouble(v);
  if (typeof v === 'string') return JSON.stringify(v);
  if (typeof v === 'boolean') return String(v);
  if (v === null || v === undefined) return 'null';
  if (v instanceof marcUint) return `u${v.value}`;
  if (v instanceof Uint8Array) return canonicalBytes(v);
  if (Array.isArray(v)) return `[${v.map(marcCanonical).join(',')}]`;
  if (v instanceof Map)
    return `{${[...v]
      .map(([k, x]) => `${marcCanonical(k)}:${marcCanonical(x)}`)
      .sort()
      .join(',')}}`;
  const ctor = (v as object).constructor?.name;
  // The engine names the null type `null`; the specification, `null_type`.
  if (ctor === 'Type') return `t${(v as { name: string }).name.replace(/^null$/, 'null_type')}`;
  if (ctor === 'Object' || ctor === undefined) {
    const entries = Object.entries(v as object).map(([k, x]) => `${JSON.stringify(k)}:${marcCanonical(x)}`);
    return `{${entries.sort().join(',')}}`;
  }
  return `?${ctor}`;
}

/** Type names as the engine's checker writes them, in the conformance data's spelling. */
function marcTypeName(t: string): string {
  return t.replace(/\s+/g, ' ').replace(/google\.protobuf\.(Timestamp|Duration)/g, (_, n) => `google.protobuf.${n}`);
}

/** A type name of the engine's checker in the specification's spelling (`optional_type<int>`, `null_type`). */
function specTypeName(t: string): string {
  return marcTypeName(t)
    .replace(/\boptional</g, 'optional_type<')
    .replace(/\bnull\b/g, 'null_type');
}

/** A declared type in the engine's spelling (`null_type` is `null` there). */
function declaredTypeName(t: string): string {
  return marcTypeName(t).replace(/\bnull_type\b/g, 'null');
}

/** Runs a case on an environment of the engine the matchConditions environment is built on. */
function runMarc(c: ConformanceCase, base: () => Environment): Outcome {
  {
    let env = base();
    for (const d of c.declarations) env = env.registerVariable(d.name, marcTypeName(typeName(d.type)));
    let parsed;
    try {
      parsed = env.parse(c.expr);
      if (!c.disableCheck) {
        const checked = parsed.check();
        if (!checked.valid) return { error: message(checked.error), stage: 'compile' };
        if (c.checkOnly) return { type: marcTypeName(String(checked.type)) };
      }
    } catch (err) {
      return { error: message(err), stage: 'compile' };
    }
    const convert: Convert = { int: (v) => v, uint: (v) => new marcUint(v), map: (e) => new Map(e) };
    const bindings: Record<string, unknown> = {};
    for (const [name, v] of Object.entries(c.bindings)) bindings[name] = fromJson(v, convert);
    try {
      return { value: marcCanonical(parsed(bindings)) };
    } catch (err) {
      return { error: message(err), stage: 'eval' };
    }
  }
}

/** The engine alone, with the options the matchConditions environment gives it. */
export const marcbachmann: ConformanceEngine = {
  name: '@marcbachmann/cel-js',
  run: (c) => runMarc(c, () => new Environment({ enableOptionalTypes: true, homogeneousAggregateLiterals: true })),
};

/** The first line of a compile error's message, without the `compilation failed: ERROR: <input>:l:c: ` prefix. */
const compileSummary = (m: string): string =>
  m.split('\n')[0]!.replace(/^compilation failed: ERROR: <input>:\d+:\d+: /, '');

/** A case's declarations in the engine's spelling, as compileExpression takes them. */
export function declarationsOf(c: ConformanceCase): Record<string, string> {
  return Object.fromEntries(c.declarations.map((d) => [d.name, declaredTypeName(typeName(d.type))]));
}

/** A case's bindings as the engine's values; throws for a binding of a kind it has no value for. */
export function valueBindings(c: ConformanceCase): Record<string, unknown> {
  const convert: Convert = { int: (v) => v, uint: (v) => new marcUint(v), map: (e) => new Map(e) };
  const bindings: Record<string, unknown> = {};
  for (const [name, v] of Object.entries(c.bindings)) bindings[name] = fromJson(v, convert);
  return bindings;
}

/**
 * The matchConditions environment itself, as users get it: each case goes through
 * compileExpression (the parse-time screening and the checker) with the case's own declarations.
 */
export const matchConditions: ConformanceEngine = {
  name: 'matchConditions environment',
  run(c: ConformanceCase): Outcome {
    const declarations = declarationsOf(c);
    const compiled = compileExpression(c.expr, { declarations, typeCheck: !c.disableCheck });
    if (isCompileError(compiled)) return { error: compileSummary(compiled.message), stage: 'compile' };
    // A case expecting a type is answered with the checker's type (its value, where given, is not compared).
    if ((c.checkOnly || c.expect.kind === 'type') && !c.disableCheck) return { type: specTypeName(compiled.type) };
    const bindings = valueBindings(c);
    try {
      return { value: marcCanonical(compiled.run(bindings)) };
    } catch (err) {
      return { error: message(err), stage: 'eval' };
    }
  },
};

// ---- @bufbuild/cel ----

function bufCanonical(v: unknown): string {
  if (typeof v === 'bigint') return `i${v}`;
  if (typeof v === 'number') return canonicalDouble(v);
  if (typeof v === 'string') return JSON.stringify(v);
  if (typeof v === 'boolean') return String(v);
  if (v === null || v === undefined) return 'null';
  if (isCelUint(v)) return `u${v.value}`;
  if (v instanceof Uint8Array) return canonicalBytes(v);
  if (isCelList(v)) return `[${[...v].map(bufCanonical).join(',')}]`;
  if (isCelMap(v))
    return `{${[...v]
      .map(([k, x]) => `${bufCanonical(k)}:${bufCanonical(x)}`)
      .sort()
      .join(',')}}`;
  if (isCelType(v)) return `t${v.name}`;
  return `?${(v as object).constructor?.name}`;
}

/** The candidate engine with its strings extension (it has no checker in its public API). */
export const bufbuild: ConformanceEngine = {
  name: '@bufbuild/cel',
  run(c: ConformanceCase): Outcome {
    if (c.checkOnly) return { error: 'no type checker', stage: 'compile' };
    const env = celEnv({ namespace: c.container, funcs: strings });
    let program;
    try {
      program = plan(env, parse(c.expr));
    } catch (err) {
      return { error: message(err), stage: 'compile' };
    }
    const convert: Convert = { int: (v) => v, uint: (v) => celUint(v), map: (e) => new Map(e) };
    const bindings: Record<string, unknown> = {};
    for (const [name, v] of Object.entries(c.bindings)) bindings[name] = fromJson(v, convert);
    const result = program(bindings as never);
    if (isCelError(result)) return { error: result.message, stage: 'eval' };
    return { value: bufCanonical(result) };
  },
};
