/**
 * Strict field validation of the policy objects klw writes, against their version's schema: the
 * built-in types' schema generated from Kubernetes' OpenAPI (lib/policies/mutating/smd, made by
 * infra/gen/smd-schemas.ts), which holds admissionregistration v1, v1beta1 and v1alpha1. A field
 * the type does not declare is refused, as kubectl's strict field validation refuses it, and so is
 * a value of the wrong type, a duplicate key of a keyed list, in the API server's words.
 */
import { builtinTypesSchema as builtinSchema, validateTyped as validate } from '../../lib/internal.ts';

/** The schema type of an admissionregistration kind in `version` (`v1`, `v1beta1`), or undefined when it has none. */
export function admissionTypeName(version: string, kind: string): string | undefined {
  const name = `io.k8s.api.admissionregistration.${version}.${kind}`;
  return builtinSchema()[name] ? name : undefined;
}

/** What is wrong with `value` as the named type: each problem with its path (`.spec.validations[0].severity`). */
export function schemaProblems(value: unknown, typeName: string): string[] {
  return validate(builtinSchema(), typeName, value, false).map((e) => `${e.path || '(top)'}: ${e.message}`);
}
