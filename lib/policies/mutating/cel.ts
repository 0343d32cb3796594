/**
 * A mutating policy's CEL: its mutation expressions compiled in the admission environment with
 * `params` and `variables` beside it and object construction (`Object{...}`, `JSONPatch{...}`),
 * and their results read as the API server reads them: an apply configuration (checking each
 * nested object's type name against its field path) or a list of JSON patch operations.
 */
import { celGoTypeName } from '../../../packages/kube-cel/src/index.ts';
import { OBJECT_TYPE_KEY, rewriteObjectConstruction } from '../../matchconditions/object-construction.ts';
import { compilePolicyExpression, type Program } from '../cel.ts';
import type { PolicyEnvironment } from '../generic/composition.ts';
import type { PatchOp } from './json-patch.ts';

/** What a mutation's expression must evaluate to. */
export type MutationKind = 'ApplyConfiguration' | 'JSONPatch';

/** A compiled mutation expression: its program, and how its value is read (throwing the API server's error). */
export interface CompiledMutation {
  kind: MutationKind;
  expression: string;
  program: Program;
  /** False when the text never names `object` (its value is then not read into CEL). */
  readsObject: boolean;
  read(value: unknown): Record<string, unknown> | PatchOp[];
}

/** The expression's type as the API server checks it, where the written text says it (else undefined). */
function staticType(expression: string): string | undefined {
  const text = expression.trim();
  const construction = /^(Object(?:\s*\.\s*[A-Za-z_][A-Za-z0-9_]*)*|JSONPatch)\s*\{[\s\S]*\}$/.exec(text);
  if (construction && rewriteObjectConstruction(text).startsWith('{'))
    return (construction[1] as string).replace(/\s/g, '');
  return undefined;
}

/**
 * Compiles a mutation's expression in the policy's environment (`params` with a paramKind, the
 * variables declared, object construction); a string is the error the API server gives.
 */
export function compileMutation(
  expression: string,
  kind: MutationKind,
  env: PolicyEnvironment & { variables?: readonly string[]; libraryVariables?: readonly string[] } = {
    hasParams: true,
  },
): CompiledMutation | string {
  const compiled = compilePolicyExpression(rewriteObjectConstruction(expression), {
    ...env,
    hasAuthorizer: true,
    variables: env.variables ?? [],
    returns: ['any'],
  });
  if (compiled.error !== undefined) return compiled.error;
  const declared = staticType(expression);
  if (kind === 'ApplyConfiguration' && declared !== undefined && declared !== 'Object')
    return `must evaluate to Object but got ${declared}`;
  const type = compiled.program.type;
  // `unchecked`: compiled without type checking (in-function; lint has checked it): evaluation tells.
  if (type === 'unchecked') return compiledMutation(kind, expression, compiled.program);
  const objectLike = type === 'dyn' || /^map[(<]string, dyn[)>]$/.test(type);
  if (kind === 'ApplyConfiguration' && declared === undefined && !objectLike)
    return `must evaluate to Object but got ${celGoTypeName(type)}`;
  if (kind === 'JSONPatch' && !(type === 'dyn' || type.startsWith('list')))
    return `must evaluate to list(JSONPatch) but got ${celGoTypeName(type)}`;
  return compiledMutation(kind, expression, compiled.program);
}

/** `object` as an identifier (not a field, not `oldObject`, not `Object`). */
const OBJECT_REFERENCE = /(?<![\w.])object(?!\w)/;

const compiledMutation = (kind: MutationKind, expression: string, program: Program): CompiledMutation => ({
  kind,
  expression,
  program,
  readsObject: OBJECT_REFERENCE.test(expression),
  read: (value) => (kind === 'ApplyConfiguration' ? applyConfigurationOf(value) : patchOpsOf(value)),
});

const typeNameOf = (v: unknown) =>
  typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof Map)
    ? (v as Record<string, unknown>)[OBJECT_TYPE_KEY]
    : undefined;

/** The type errors of a constructed object's nested objects, as the API server words them. */
function typeErrors(v: unknown, path: string[], errors: string[]): void {
  const name = typeNameOf(v);
  if (typeof name === 'string') {
    const expected = path.join('.');
    if (name !== expected)
      errors.push(
        `unexpected type name "${name}", expected "${expected}", which matches field name path from root Object type`,
      );
    for (const [key, field] of Object.entries(v as Record<string, unknown>))
      if (key !== OBJECT_TYPE_KEY) typeErrors(field, [...path, key], errors);
    return;
  }
  if (Array.isArray(v)) for (const item of v) typeErrors(item, path, errors);
  else if (v instanceof Map) for (const item of v.values()) typeErrors(item, path, errors);
  else if (typeof v === 'object' && v !== null) for (const item of Object.values(v)) typeErrors(item, path, errors);
}

/** A CEL value as JSON: ints as numbers (exact beyond 2^53 as bigint), maps as objects, type names stripped. */
export function celToJson(v: unknown): unknown {
  if (typeof v === 'bigint') return Number.isSafeInteger(Number(v)) ? Number(v) : v;
  if (Array.isArray(v)) return v.map(celToJson);
  if (v instanceof Map) {
    const out: Record<string, unknown> = {};
    for (const [k, item] of v) out[String(k)] = celToJson(item);
    return out;
  }
  if (v instanceof Uint8Array) return Buffer.from(v).toString('base64');
  if (typeof v === 'object' && v !== null) {
    const json = (v as { toJSON?: () => unknown }).toJSON;
    if (typeof json === 'function') return json.call(v);
    const out: Record<string, unknown> = {};
    for (const [k, item] of Object.entries(v)) if (k !== OBJECT_TYPE_KEY) out[k] = celToJson(item);
    return out;
  }
  return v;
}

function applyConfigurationOf(value: unknown): Record<string, unknown> {
  const name = typeNameOf(value);
  if (typeof name !== 'string')
    throw new Error('unsupported return type from ApplyConfiguration expression: must be an Object');
  if (name !== 'Object') throw new Error(`must evaluate to Object but got ${name}`);
  const errors: string[] = [];
  typeErrors(value, ['Object'], errors);
  if (errors.length) throw new Error(`type mismatch: ${errors.join('\n')}`);
  return celToJson(value) as Record<string, unknown>;
}

function patchOpsOf(value: unknown): PatchOp[] {
  if (!Array.isArray(value)) throw new Error('type mismatch: JSONPatchType.expression should evaluate to array');
  return value.map((item) => {
    if (typeNameOf(item) !== 'JSONPatch')
      throw new Error('type mismatch: JSONPatchType.expression should evaluate to array of JSONPatch');
    const fields = item as Record<string, unknown>;
    const text = (key: string) => (typeof fields[key] === 'string' ? (fields[key] as string) : '');
    const op: PatchOp = { op: text('op'), path: text('path') };
    if (text('from')) op.from = text('from');
    if (fields.value !== undefined) {
      const valueType = typeNameOf(fields.value);
      if (typeof valueType === 'string') {
        const errors: string[] = [];
        typeErrors(fields.value, [valueType], errors);
        if (errors.length) throw new Error(`type mismatch: ${errors.join('\n')}`);
      }
      op.value = celToJson(fields.value);
    }
    return op;
  });
}
