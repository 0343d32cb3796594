import type { Operation as PatchOperation } from 'fast-json-patch';

const DECISION = Symbol.for('kube-lambda-webhooks.decision');

/** `metav1.Status` of a denial. */
export interface DecisionStatus {
  code: number;
  message: string;
  reason: string;
}

/** An admission decision. Build it with `allow`, `deny`, `errored` or `patched`; never by hand. */
export interface Decision {
  readonly [DECISION]: true;
  readonly allowed: boolean;
  readonly status?: DecisionStatus;
  /** JSONPatch operations to return; only from `patched` (mutating webhooks). */
  readonly patch?: readonly PatchOperation[];
  readonly warnings: readonly string[];
  readonly auditAnnotations?: Readonly<Record<string, string>>;
  /** A copy of this decision with more warnings. */
  withWarnings(...warnings: string[]): Decision;
  /** A copy of this decision with audit annotations (keys are prefixed by the API server with the webhook name). */
  withAuditAnnotations(annotations: Record<string, string>): Decision;
}

type DecisionFields = Omit<Decision, typeof DECISION | 'withWarnings' | 'withAuditAnnotations'>;

function make(fields: DecisionFields): Decision {
  const decision: Decision = {
    [DECISION]: true,
    ...fields,
    withWarnings: (...more: string[]) => make({ ...fields, warnings: [...fields.warnings, ...more] }),
    withAuditAnnotations: (annotations: Record<string, string>) =>
      make({ ...fields, auditAnnotations: { ...fields.auditAnnotations, ...annotations } }),
  };
  return Object.freeze(decision);
}

/** True for values built by the decision constructors. */
export function isDecision(value: unknown): value is Decision {
  return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[DECISION] === true;
}

/** Admit the request, optionally with warnings shown to the user. */
export function allow(...warnings: string[]): Decision {
  return make({ allowed: true, warnings });
}

/** Options of a denial. */
export interface DenyOptions {
  /** HTTP status code shown to the user; the API server turns codes below 400 into 400. Default 403. */
  code?: number;
  /** Machine-readable reason (`metav1.StatusReason`). Default `Forbidden`. */
  reason?: string;
}

/** Reject the request; the user sees `admission webhook "<name>" denied the request: <message>`. */
export function deny(message: string, options: DenyOptions = {}): Decision {
  const code = options.code ?? 403;
  return make({ allowed: false, status: { code, message, reason: options.reason ?? reasonFor(code) }, warnings: [] });
}

/** Reject the request because the webhook itself failed (controller-runtime's `Errored`). */
export function errored(code: number, message: string): Decision {
  return make({ allowed: false, status: { code, message, reason: reasonFor(code) }, warnings: [] });
}

/** Admit the request with these JSONPatch operations (checked against the object before they are sent). */
export function patched(operations: readonly PatchOperation[], ...warnings: string[]): Decision {
  return make({ allowed: true, patch: operations, warnings });
}

const REASONS: Record<number, string> = {
  400: 'BadRequest',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'NotFound',
  409: 'Conflict',
  422: 'Invalid',
  429: 'TooManyRequests',
  500: 'InternalError',
  503: 'ServiceUnavailable',
  504: 'Timeout',
};

function reasonFor(code: number): string {
  return REASONS[code] ?? (code >= 500 ? 'InternalError' : 'BadRequest');
}

/**
 * The API server's limits on warnings (k8s.io/apiserver endpoints/filters/warning.go):
 * once all warnings of a response add up to more than 4096 characters, each is cut to
 * 256 characters, and those that still do not fit are dropped.
 */
export const WARNINGS_TOTAL_LIMIT = 4096;
/** Length each warning is cut to once the total limit is passed. */
export const WARNING_ITEM_LIMIT = 256;

// Control characters (C0, DEL, C1) cannot travel in a `Warning:` header.
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/g;

/**
 * Cleans warnings as the API server would, so what the webhook logs is what users see:
 * control characters removed, blanks and repeats dropped, and the 4096/256 limits applied.
 */
export function sanitizeWarnings(warnings: readonly string[]): string[] {
  const cleaned: string[] = [];
  for (const w of warnings) {
    const text = w.replace(CONTROL, '').trim();
    if (text && !cleaned.includes(text)) cleaned.push(text);
  }
  const total = cleaned.reduce((n, w) => n + [...w].length, 0);
  if (total <= WARNINGS_TOTAL_LIMIT) return cleaned;
  const out: string[] = [];
  let written = 0;
  for (const w of cleaned) {
    const chars = [...w];
    const cut = chars.length > WARNING_ITEM_LIMIT ? chars.slice(0, WARNING_ITEM_LIMIT - 3).join('') + '...' : w;
    const length = [...cut].length;
    if (written + length > WARNINGS_TOTAL_LIMIT) break;
    out.push(cut);
    written += length;
  }
  return out;
}
