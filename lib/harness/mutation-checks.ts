import type { AdmissionRequest, KubeObject } from '../review/schemas.ts';

/** The parts of an object's metadata the API server holds a mutated object to. */
function meta(object: KubeObject | null | undefined): { name?: unknown; namespace?: unknown; uid?: unknown } {
  const metadata = object?.metadata;
  return typeof metadata === 'object' && metadata !== null ? (metadata as Record<string, unknown>) : {};
}

/** A value as Go's `%q` of a string shows it (JSON's quoting is the same for what names hold). */
const quoted = (value: unknown) => JSON.stringify(typeof value === 'string' ? value : String(value ?? ''));

/** A string field as the API server reads it: absent, null and "" are all empty. */
const text = (value: unknown) => (typeof value === 'string' ? value : '');

/**
 * Why the API server refuses the object a mutating webhook's patch made, in its own words,
 * or undefined when it takes it. Restated from k8s.io/apiserver and its dependencies:
 *
 * - `kind` or `apiVersion` changed: a custom resource fails its type check
 *   (apiextensions-apiserver pkg/registry/customresource/validator.go, ValidateTypeMeta:
 *   `kind: Invalid value: "X": must be Y`); a built-in object is decoded into its own Go type
 *   (webhook/mutating/dispatcher.go), which the new kind is not, and the request fails.
 * - `metadata.namespace` set to another namespace than the request's, on CREATE or UPDATE
 *   (pkg/registry/rest/meta.go, EnsureObjectNamespaceMatchesRequestNamespace, run by
 *   BeforeCreate and BeforeUpdate): "the namespace of the provided object does not match the
 *   namespace sent on the request". An empty namespace is filled in, and a cluster-scoped
 *   object's is cleared: neither is refused. The same words since 1.20 (ValidNamespace then).
 * - on UPDATE, `metadata.name` or `metadata.uid` changed (apimachinery
 *   pkg/api/validation/objectmeta.go, ValidateObjectMetaAccessorUpdate, run by BeforeUpdate):
 *   `metadata.name: Invalid value: "new": field is immutable`. An empty uid takes the stored
 *   one (BeforeUpdate), so only another uid is refused. On CREATE the object is stored under
 *   the name it has after admission, and the API server gives it a uid of its own.
 */
export function refusedMutation(request: AdmissionRequest, patched: KubeObject | null): string | undefined {
  const before = request.object;
  if (!before || !patched) return undefined;
  const errors: string[] = [];
  if (patched.kind !== before.kind)
    errors.push(`kind: Invalid value: ${quoted(patched.kind)}: must be ${text(before.kind)}`);
  if (patched.apiVersion !== before.apiVersion)
    errors.push(`apiVersion: Invalid value: ${quoted(patched.apiVersion)}: must be ${text(before.apiVersion)}`);
  if (errors.length) return errors.join(', ');
  const was = meta(before);
  const now = meta(patched);
  const requestNamespace = text(request.namespace);
  if (
    (request.operation === 'CREATE' || request.operation === 'UPDATE') &&
    requestNamespace &&
    text(now.namespace) &&
    text(now.namespace) !== requestNamespace
  ) {
    return 'the namespace of the provided object does not match the namespace sent on the request';
  }
  if (request.operation !== 'UPDATE') return undefined;
  if (text(now.name) !== text(was.name))
    errors.push(`metadata.name: Invalid value: ${quoted(now.name)}: field is immutable`);
  if (text(now.uid) && text(now.uid) !== text(was.uid))
    errors.push(`metadata.uid: Invalid value: ${quoted(now.uid)}: field is immutable`);
  return errors.length ? errors.join(', ') : undefined;
}
