/**
 * Applies an apply configuration to an object as a MutatingAdmissionPolicy's ApplyConfiguration
 * mutation applies it: the configuration read as typed (unknown fields refused), refused when it
 * sets an atomic list, map or struct, merged into the object read as typed (repeated keys
 * accepted), with the API server's error texts.
 */
import { mergeValues } from './merge.ts';
import type { Schema } from './schema.ts';
import { errorsText, findAtomics, type SmdError, validate } from './typed.ts';

/**
 * Merge outputs: read as typed already (both sides were), so the next configuration merged into
 * one need not read it again.
 */
const typedOutputs = new WeakSet<object>();

/** Notes an object as read as typed already (one the API server decoded as its kind). */
export function markTyped(object: object): void {
  typedOutputs.add(object);
}

/** The object after the merge, or the error the API server answers with. */
export type ApplyResult = { object: Record<string, unknown> } | { error: string };

/**
 * Merges `patch` into `object`, both of the named type of `schema`. The patch takes the object's
 * apiVersion and kind, as the API server gives it the matched kind.
 */
export function applyConfiguration(
  schema: Schema,
  typeName: string,
  object: Record<string, unknown>,
  patch: Record<string, unknown>,
): ApplyResult {
  const typedPatch = { ...patch, apiVersion: object.apiVersion, kind: object.kind };
  if (typedPatch.apiVersion === undefined) delete typedPatch.apiVersion;
  if (typedPatch.kind === undefined) delete typedPatch.kind;
  const fail = (what: string, errors: SmdError[]) => ({
    error: `error applying patch: ${what}: ${errorsText(errors)}`,
  });
  const patchErrors = validate(schema, typeName, typedPatch, false);
  if (patchErrors.length) return fail('failed to convert patch object to typed object', patchErrors);
  const atomics = findAtomics(schema, typeName, typedPatch);
  if (atomics.length)
    return {
      error: `error applying patch: invalid ApplyConfiguration: may not mutate atomic arrays, maps or structs: ${atomics.join(', ')}`,
    };
  if (!typedOutputs.has(object)) {
    const liveErrors = validate(schema, typeName, object, true);
    if (liveErrors.length) return fail('failed to convert original object to typed object', liveErrors);
  }
  const errors: SmdError[] = [];
  const merged = (mergeValues(schema, typeName, object, typedPatch, errors) ?? {}) as Record<string, unknown>;
  if (errors.length) return fail('failed to merge patch', errors);
  typedOutputs.add(merged);
  return { object: merged };
}
