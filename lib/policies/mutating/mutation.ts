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

/** An error the API server answers with a status of its own (not a policy error: failurePolicy does not apply). */
export interface MutationStatus {
  code: number;
  reason: string;
  message: string;
}

/** The object after a mutation, or the policy error, or the status error the API server answers with. */
export type MutationResult = { object: Record<string, unknown> } | { error: string } | { status: MutationStatus };

/** apierrors.NewInternalError: code 500, reason InternalError. */
const internalError = (detail: string): { status: MutationStatus } => ({
  status: { code: 500, reason: 'InternalError', message: `Internal error occurred: ${detail}` },
});

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

/** The kind of an object as Go prints a GroupVersionKind (`apps/v1, Kind=Deployment`). */
function kindLabel(object: Record<string, unknown>): string {
  const apiVersion = String(object.apiVersion ?? '');
  return `${apiVersion.includes('/') ? apiVersion : `/${apiVersion}`}, Kind=${String(object.kind ?? '')}`;
}

/** Applies the value a mutation's expression gave (an apply configuration or JSON patch operations). */
export function applyMutationValue(
  kind: CompiledMutation['kind'],
  value: Record<string, unknown> | PatchOp[],
  object: Record<string, unknown>,
  kindSchema: KindSchema | undefined,
): MutationResult {
  if (kind === 'ApplyConfiguration') {
    if (!kindSchema)
      return {
        status: {
          code: 503,
          reason: 'ServiceUnavailable',
          message: `Resource kind ${kindLabel(object)} not found: give its CRD's openAPIV3Schema in the policy's schemas`,
        },
      };
    return applyConfiguration(kindSchema.schema, kindSchema.typeName, object, value as Record<string, unknown>);
  }
  const patched = applyJsonPatch(object, value as PatchOp[]);
  if ('error' in patched) return patched;
  if (!patched.tested) return { object };
  if (!isMap(patched.document)) return internalError('the patched object is not an object');
  if (kindSchema?.builtin) {
    const unknown = unknownField(kindSchema.schema, kindSchema.typeName, patched.document, '');
    if (unknown) return internalError(`strict decoding error: unknown field "${unknown}"`);
  }
  return { object: patched.document };
}
