import fastJsonPatch, { type Operation as PatchOperation } from 'fast-json-patch';

const { compare, validate } = fastJsonPatch;

export type { PatchOperation };

/** The JSONPatch that turns `original` into `mutated` (empty when nothing changed). */
export function diffPatch(original: object, mutated: object): PatchOperation[] {
  return compare(original, mutated);
}

/**
 * Checks that operations are a well-formed JSONPatch that applies to `original`;
 * returns a one-line reason when they are not. The API server fails the whole request
 * on a patch that does not apply, so it is checked here first.
 */
export function checkPatch(original: object, operations: unknown): string | undefined {
  if (!Array.isArray(operations)) return 'patch must be an array of JSONPatch operations';
  const error = validate(operations as PatchOperation[], original);
  if (!error) return undefined;
  return `invalid patch operation ${error.index ?? '?'} (${error.name}): ${error.message.split('\n', 1)[0]}`;
}

/** Base64 of the JSON text of a patch, as `AdmissionResponse.patch` carries it. */
export function encodePatch(operations: readonly PatchOperation[]): string {
  return Buffer.from(JSON.stringify(operations), 'utf8').toString('base64');
}
