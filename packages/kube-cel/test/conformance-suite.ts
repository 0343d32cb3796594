/**
 * The CEL specification's conformance tests (the `@bufbuild/cel-spec` package's data), flattened to
 * cases an engine adapter can run: the expression, its declarations and bindings, and the expected
 * answer in a canonical text form both sides are reduced to before comparing.
 */
import { tests as conformance } from '@bufbuild/cel-spec/testdata/conformance.js';

/** A declared variable type, as the conformance data writes it (cel.expr.Type in JSON form). */
export type TypeJson = Record<string, unknown>;
/** A value, as the conformance data writes it (cel.expr.Value in JSON form). */
export type ValueJson = Record<string, unknown>;

/** One conformance case. */
export interface ConformanceCase {
  /** `section/suite/name`, the key of the exclusion lists. */
  path: string;
  section: string;
  expr: string;
  container: string;
  disableCheck: boolean;
  checkOnly: boolean;
  disableMacros: boolean;
  /** Variables the case declares, with their types. */
  declarations: Array<{ name: string; type: TypeJson }>;
  /** Variables the case binds, with their values. */
  bindings: Record<string, ValueJson>;
  /** The expected answer. */
  expect:
    | { kind: 'value'; value: ValueJson; canonical: string }
    | { kind: 'error'; message: string }
    | { kind: 'type'; type: string; value?: string }
    | { kind: 'unknown' };
}

/**
 * The sections the Kubernetes CEL environment has the features of, by the library that brings
 * them: the standard definitions, optional types (1.28), strings v2 (1.29), two-variable
 * comprehensions (1.32, `macros2`).
 */
export const KUBERNETES_SECTIONS = [
  'basic',
  'comparisons',
  'conversions',
  'dynamic',
  'fields',
  'fp_math',
  'integer_math',
  'lists',
  'logic',
  'macros',
  'macros2',
  'namespace',
  'optionals',
  'parse',
  'plumbing',
  'string',
  'string_ext',
  'timestamps',
  'type_deductions',
] as const;

interface RawTest {
  original: Record<string, unknown> & { name?: string; expr: string };
}
interface RawSuite {
  name: string;
  suites?: RawSuite[];
  tests?: RawTest[];
}

/** Every case of the conformance data, section by section. */
export function conformanceCases(): ConformanceCase[] {
  const out: ConformanceCase[] = [];
  for (const section of (conformance as RawSuite).suites ?? []) {
    for (const suite of section.suites ?? []) {
      for (const test of suite.tests ?? []) out.push(toCase(section.name, suite.name, test.original));
    }
    for (const test of section.tests ?? []) out.push(toCase(section.name, '', test.original));
  }
  return out;
}

function toCase(section: string, suite: string, o: RawTest['original']): ConformanceCase {
  const declarations: ConformanceCase['declarations'] = [];
  for (const d of (o.typeEnv as Array<{ name: string; ident?: { type: TypeJson } }> | undefined) ?? []) {
    if (d.ident) declarations.push({ name: d.name, type: d.ident.type });
  }
  const bindings: Record<string, ValueJson> = {};
  for (const [name, v] of Object.entries((o.bindings as Record<string, { value?: ValueJson }> | undefined) ?? {})) {
    if (v.value) bindings[name] = v.value;
  }
  let expect: ConformanceCase['expect'];
  if (o.evalError || o.anyEvalErrors) {
    const errors = (o.evalError as { errors?: Array<{ message?: string }> } | undefined)?.errors ?? [];
    expect = { kind: 'error', message: errors[0]?.message ?? '' };
  } else if (o.typedResult) {
    const t = o.typedResult as { result?: ValueJson; deducedType: TypeJson };
    expect = { kind: 'type', type: typeName(t.deducedType), ...(t.result ? { value: canonicalValue(t.result) } : {}) };
  } else if (o.unknown) {
    expect = { kind: 'unknown' };
  } else {
    // No expectation means `true`, as the conformance runner reads it.
    const value = (o.value as ValueJson | undefined) ?? { boolValue: true };
    expect = { kind: 'value', value, canonical: canonicalValue(value) };
  }
  return {
    path: [section, suite, o.name ?? o.expr].filter(Boolean).join('/'),
    section,
    expr: o.expr,
    container: (o.container as string | undefined) ?? '',
    disableCheck: o.disableCheck === true,
    checkOnly: o.checkOnly === true,
    disableMacros: o.disableMacros === true,
    declarations,
    bindings,
    expect,
  };
}

const PRIMITIVES: Record<string, string> = {
  BOOL: 'bool',
  INT64: 'int',
  UINT64: 'uint',
  DOUBLE: 'double',
  STRING: 'string',
  BYTES: 'bytes',
};
const WELL_KNOWN: Record<string, string> = {
  TIMESTAMP: 'google.protobuf.Timestamp',
  DURATION: 'google.protobuf.Duration',
  ANY: 'any',
};

/** A declared type as CEL writes it: `int`, `list<string>`, `map<string, dyn>`. */
export function typeName(t: TypeJson): string {
  if ('primitive' in t) return PRIMITIVES[t.primitive as string] ?? String(t.primitive);
  if ('wellKnown' in t) return WELL_KNOWN[t.wellKnown as string] ?? String(t.wellKnown);
  if ('listType' in t) return `list<${typeName(((t.listType as TypeJson).elemType as TypeJson) ?? { dyn: {} })}>`;
  if ('mapType' in t) {
    const m = t.mapType as { keyType: TypeJson; valueType: TypeJson };
    return `map<${typeName(m.keyType)}, ${typeName(m.valueType)}>`;
  }
  if ('messageType' in t) return String(t.messageType);
  if ('wrapper' in t) return `wrapper(${PRIMITIVES[t.wrapper as string]})`;
  if ('null' in t) return 'null_type';
  if ('type' in t) return `type(${typeName(t.type as TypeJson)})`;
  if ('abstractType' in t) {
    const a = t.abstractType as { name: string; parameterTypes?: TypeJson[] };
    return a.parameterTypes?.length ? `${a.name}<${a.parameterTypes.map(typeName).join(', ')}>` : a.name;
  }
  if ('typeParam' in t) return String(t.typeParam);
  return 'dyn';
}

/**
 * The canonical text of an expected value: `i5`, `u5`, `d1.5`, `"s"`, `b<hex>`, `true`, `null`,
 * `t<type name>`, `[a,b]`, `{k:v,…}` with entries sorted. Engines reduce their results to the same.
 */
export function canonicalValue(v: ValueJson): string {
  if ('int64Value' in v) return `i${BigInt(v.int64Value as string)}`;
  if ('uint64Value' in v) return `u${BigInt(v.uint64Value as string)}`;
  if ('doubleValue' in v) return canonicalDouble(Number(v.doubleValue));
  if ('stringValue' in v) return JSON.stringify(v.stringValue);
  if ('bytesValue' in v) return `b${Buffer.from(v.bytesValue as string, 'base64').toString('hex')}`;
  if ('boolValue' in v) return String(v.boolValue);
  if ('nullValue' in v) return 'null';
  if ('typeValue' in v) return `t${v.typeValue}`;
  if ('listValue' in v) {
    const values = ((v.listValue as { values?: ValueJson[] }).values ?? []).map(canonicalValue);
    return `[${values.join(',')}]`;
  }
  if ('mapValue' in v) {
    const entries = ((v.mapValue as { entries?: Array<{ key: ValueJson; value: ValueJson }> }).entries ?? []).map(
      (e) => `${canonicalValue(e.key)}:${canonicalValue(e.value)}`,
    );
    return `{${entries.sort().join(',')}}`;
  }
  if ('enumValue' in v) return `i${(v.enumValue as { value?: number }).value ?? 0}`;
  if ('objectValue' in v) return `o${JSON.stringify(v.objectValue)}`;
  return `?${JSON.stringify(v)}`;
}

/** The canonical text of a double. */
export function canonicalDouble(n: number): string {
  return `d${Object.is(n, -0) ? '-0' : String(n)}`;
}

/** Bytes as canonical text. */
export function canonicalBytes(b: Uint8Array): string {
  return `b${Buffer.from(b).toString('hex')}`;
}

/** A case's outcome on an engine. */
export type Outcome = { value: string } | { error: string; stage: 'compile' | 'eval' } | { type: string };

/** Whether an outcome is the answer the case expects. */
export function passes(c: ConformanceCase, outcome: Outcome): boolean {
  switch (c.expect.kind) {
    case 'value':
      return 'value' in outcome && outcome.value === c.expect.canonical;
    case 'error':
      // An expected evaluation error may be found by the checker where the case declares no types.
      return 'error' in outcome && (outcome.stage === 'eval' || c.disableCheck);
    case 'type':
      return 'type' in outcome && outcome.type === c.expect.type;
    case 'unknown':
      return false;
  }
}

/** An engine under test: runs one case and reports its outcome. */
export interface ConformanceEngine {
  name: string;
  run(c: ConformanceCase): Outcome;
}

/** Pass counts per section, and the paths that failed. */
export function runConformance(
  engine: ConformanceEngine,
  cases: ConformanceCase[],
): { sections: Map<string, { passed: number; total: number }>; failed: Map<string, Outcome> } {
  const sections = new Map<string, { passed: number; total: number }>();
  const failed = new Map<string, Outcome>();
  for (const c of cases) {
    const s = sections.get(c.section) ?? { passed: 0, total: 0 };
    sections.set(c.section, s);
    s.total++;
    let outcome: Outcome;
    try {
      outcome = engine.run(c);
    } catch (err) {
      outcome = { error: `adapter: ${err instanceof Error ? err.message : String(err)}`, stage: 'eval' };
    }
    if (passes(c, outcome)) s.passed++;
    else failed.set(c.path, outcome);
  }
  return { sections, failed };
}
