/**
 * The variables of matchConditions for one review, as the API server builds them
 * (admissionVariables), with numbers read as this package's JSON reader marks them: a whole number
 * the review wrote as a double (`1.0`) stays a double.
 */
import { admissionVariables, type Authorize, toCel as celValue } from '../../packages/kube-cel/src/index.ts';
import { wholeDoubleKeys } from '../json.ts';
import type { AdmissionRequest } from '../review/schemas.ts';

/** The variables of one evaluation of a webhook's conditions; `authorizer` decides with `authorize`. */
export function variablesFor(request: AdmissionRequest, authorize?: Authorize): Record<string, unknown> {
  return admissionVariables(request, { authorize, wholeDoubles: wholeDoubleKeys });
}

/** A JSON value parsed by parseJson as CEL sees it (ints as bigint, whole doubles kept doubles). */
export function toCel(value: unknown): unknown {
  return celValue(value, wholeDoubleKeys);
}
