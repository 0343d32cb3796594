/**
 * One mutation applied to an object as the API server's mutating-policy dispatcher applies it:
 * an ApplyConfiguration merged by structured-merge-diff under the kind's schema, a JSONPatch
 * applied (a failed `test` leaving the object as it was) and the result read back as the typed
 * object (a field the kind does not declare refused as the strict decoder refuses it).
 */
import type { CompiledMutation } from './cel.ts';
import { applyJsonPatch, type PatchOp } from './json-patch.ts';
import { applyConfiguration } from './smd/apply.ts';
import { resolve, type Schema, type TypeRef } from './smd/schema.ts';

/** The merge schema of the matched kind: the built-in table or a CRD's, and the kind's type name in it. */
export interface KindSchema {
  schema: Schema;
  typeName: string;
  /** True for a built-in kind (decoded into its Go type, so unknown fields are refused). */
  builtin: boolean;
}

/** The object after a mutation, or the error the API server answers with. */
export type MutationResult = { object: Record<string, unknown> } | { error: string };

const isMap = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The first field a typed decoding does not know, as `spec.template.spec.containers[1].x`, or undefined. */
function unknownField(schema: Schema, ref: TypeRef, v: unknown, path: string): string | undefined {
  const atom = resolve(schema, ref);
  if (!atom) return undefined;
  if (isMap(v) && atom.m) {
    for (const key of Object.keys(v)) {
      const type = atom.m.f?.[key] ?? atom.m.e;
      const at = path ? `${path}.${key}` : key;
      if (!type) return at;
      const inner = unknownField(schema, type, v[key], at);
      if (inner) return inner;
    }
  } else if (Array.isArray(v) && atom.l) {
    for (const [i, item] of v.entries()) {
      const inner = unknownField(schema, atom.l.e, item, `${path}[${i}]`);
      if (inner) return inner;
    }
  }
  return undefined;
}

/** Applies the value a mutation's expression gave (an apply configuration or JSON patch operations). */
export function applyMutationValue(
  kind: CompiledMutation['kind'],
  value: Record<string, unknown> | PatchOp[],
  object: Record<string, unknown>,
  kindSchema: KindSchema | undefined,
): MutationResult {
  if (kind === 'ApplyConfiguration') {
    if (!kindSchema) return { error: 'type converter must not be nil' };
    return applyConfiguration(kindSchema.schema, kindSchema.typeName, object, value as Record<string, unknown>);
  }
  const patched = applyJsonPatch(object, value as PatchOp[]);
  if ('error' in patched) return patched;
  if (!patched.tested) return { object };
  if (!isMap(patched.document)) return { error: 'Internal error occurred: the patched object is not an object' };
  if (kindSchema?.builtin) {
    const unknown = unknownField(kindSchema.schema, kindSchema.typeName, patched.document, '');
    if (unknown) return { error: `Internal error occurred: strict decoding error: unknown field "${unknown}"` };
  }
  return { object: patched.document };
}
