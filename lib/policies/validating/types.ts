/** ValidatingAdmissionPolicy and its binding as the evaluator reads them (admissionregistration.k8s.io/v1). */
import type { BindingCommon, PolicyCommon } from '../generic/types.ts';

/** The reasons a validation may give a denial; each has its HTTP status code. */
export const VALIDATION_REASONS = ['Unauthorized', 'Forbidden', 'Invalid', 'RequestEntityTooLarge'] as const;

/** One of VALIDATION_REASONS. */
export type ValidationReason = (typeof VALIDATION_REASONS)[number];

/** One CEL validation of a policy. */
export interface Validation {
  /** CEL, `true` to admit. */
  expression: string;
  /** The denial's message; default `failed expression: <expression>`. */
  message?: string;
  /** CEL giving the denial's message (a string); `message` when it fails or gives none. */
  messageExpression?: string;
  /** The denial's reason; default `Invalid` (HTTP 422). */
  reason?: ValidationReason;
}

/** An audit annotation: `<policy name>/<key>` set to the value of a CEL string (null or empty: not set). */
export interface AuditAnnotation {
  key: string;
  valueExpression: string;
}

/** What a binding does with a failed validation. */
export type ValidationAction = 'Deny' | 'Warn' | 'Audit';

/** A ValidatingAdmissionPolicy's spec with its name. */
export interface ValidatingPolicySpec extends PolicyCommon {
  validations?: Validation[];
  auditAnnotations?: AuditAnnotation[];
}

/** A ValidatingAdmissionPolicyBinding's spec with its name. */
export interface ValidatingBindingSpec extends BindingCommon {
  validationActions: ValidationAction[];
}

/** The HTTP status code of a denial's reason (reasonToCode); anything else is 422. */
export function reasonToCode(reason: string): number {
  switch (reason) {
    case 'Forbidden':
      return 403;
    case 'Unauthorized':
      return 401;
    case 'RequestEntityTooLarge':
      return 413;
    default:
      return 422;
  }
}
