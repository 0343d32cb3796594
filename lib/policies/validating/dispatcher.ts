/**
 * The API server's answer to a request from its validating admission policies
 * (admission/plugin/policy/validating/dispatcher.go): each policy that matches, each of its
 * bindings that matches, each param; a failed validation denies, warns or audits as the binding's
 * validationActions say; configuration errors and errors of audit annotations follow
 * failurePolicy; the first denial is the answer, in the API server's words and status code.
 */
import type { Authorize } from '../cel.ts';
import { type MatchEnvironment, type MatchResult, matchResources } from '../generic/matching.ts';
import { collectParams, type ParamSources } from '../generic/params.ts';
import type { AdmissionRequest, KubeObject } from '../../review/schemas.ts';
import { reasonToCode, type ValidatingBindingSpec, type ValidationAction } from './types.ts';
import { validate, type CompiledValidatingPolicy, type PolicyDecision } from './validator.ts';

/** A compiled policy and its bindings. */
export interface ValidatingPolicyHook {
  policy: CompiledValidatingPolicy;
  bindings: ValidatingBindingSpec[];
}

/** What dispatching needs from the cluster: namespaces, equivalent resources, params, the authorizer. */
export interface DispatchEnvironment extends MatchEnvironment {
  params?: ParamSources;
  authorize?: Authorize;
}

/** The status of a denial. */
export interface DenialStatus {
  code: number;
  reason: string;
  /** The whole message: `<resource> "<name>" is forbidden: ValidatingAdmissionPolicy '…' …`. */
  message: string;
  /** The message after the API server's `… is forbidden: ` prefix. */
  detail: string;
}

/** One value of the `validation.policy.admission.k8s.io/validation_failure` audit annotation. */
export interface ValidationFailure {
  message: string;
  policy: string;
  binding: string;
  expressionIndex: number;
  validationActions: ValidationAction[];
}

/** The API server's answer from its validating policies. */
export interface PoliciesVerdict {
  allowed: boolean;
  status?: DenialStatus;
  warnings: string[];
  auditAnnotations: Record<string, string>;
}

/** The audit annotation listing the failures of bindings that audit. */
export const VALIDATION_FAILURE_ANNOTATION = 'validation.policy.admission.k8s.io/validation_failure';
/** At most this many failures go in the annotation (about 10 KB). */
const MAX_VALIDATION_FAILURES = 50;
/** An audit annotation's value is cut at 10 KiB. */
const MAX_AUDIT_ANNOTATION_VALUE = 10 * 1024;

interface Denial {
  policy: string;
  binding?: string;
  decision: Pick<PolicyDecision, 'message' | 'reason'>;
}

/** What dispatching collects across policies. */
interface Outcome {
  denials: Denial[];
  failures: ValidationFailure[];
  warnings: string[];
  auditAnnotations: Record<string, string>;
}

/** Records one evaluation: each denied validation as its binding's actions say, each audit annotation. */
function record(
  out: Outcome,
  name: string,
  binding: ValidatingBindingSpec,
  result: ReturnType<typeof validate>,
  collected: Map<string, string[]>,
): void {
  for (const [i, decision] of result.decisions.entries()) {
    if (decision.action !== 'deny') continue;
    for (const action of binding.validationActions) {
      if (action === 'Deny') out.denials.push({ policy: name, binding: binding.name, decision });
      else if (action === 'Audit')
        out.failures.push({
          message: decision.message,
          policy: binding.policyName,
          binding: binding.name,
          expressionIndex: i,
          validationActions: binding.validationActions,
        });
      else if (action === 'Warn')
        out.warnings.push(
          `Validation failed for ValidatingAdmissionPolicy '${name}' with binding '${binding.name}': ${decision.message}`,
        );
    }
  }
  for (const annotation of result.auditAnnotations) {
    if (annotation.action === 'publish') {
      const value = truncateBytes(annotation.value!, MAX_AUDIT_ANNOTATION_VALUE);
      const values = collected.get(annotation.key) ?? [];
      if (!values.includes(value)) values.push(value);
      collected.set(annotation.key, values);
    } else if (annotation.action === 'error') {
      out.denials.push({ policy: name, binding: binding.name, decision: { message: annotation.error! } });
    }
  }
}

/**
 * A value cut at `max` UTF-8 bytes as Go slices a string, a character cut in two then written as
 * the JSON of an audit event writes invalid UTF-8: one U+FFFD for each byte left of it.
 */
export function truncateBytes(value: string, max: number): string {
  const bytes = new TextEncoder().encode(value);
  if (bytes.length <= max) return value;
  let start = max;
  // Back to the first byte of the last character (continuation bytes are 10xxxxxx).
  while (start > 0 && (bytes[start - 1]! & 0xc0) === 0x80) start--;
  const lead = start > 0 ? bytes[start - 1]! : 0;
  const size = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 1;
  const whole = start > 0 && max - (start - 1) >= size ? max : start - 1;
  const kept = new TextDecoder().decode(bytes.subarray(0, Math.max(whole, 0)));
  return kept + '\ufffd'.repeat(max - Math.max(whole, 0));
}

/** Dispatches a request to validating policies; the request is as the API server received it. */
export function dispatchValidating(
  hooks: readonly ValidatingPolicyHook[],
  request: AdmissionRequest,
  env: DispatchEnvironment = {},
): PoliciesVerdict {
  const out: Outcome = { denials: [], failures: [], warnings: [], auditAnnotations: {} };
  const { denials, failures, warnings, auditAnnotations } = out;
  const configError = (policy: CompiledValidatingPolicy, binding: string | undefined, error: string) => {
    if (policy.failurePolicy === 'Ignore') return;
    const what = binding === undefined ? 'policy' : 'binding';
    denials.push({ policy: policy.spec.name, binding, decision: { message: `failed to configure ${what}: ${error}` } });
  };
  for (const { policy, bindings } of hooks) {
    const name = policy.spec.name;
    const defined: MatchResult = policy.spec.matchConstraints
      ? matchResources(request, policy.spec.matchConstraints, env)
      : { matches: false, error: 'policy contained no match constraints, a required field' };
    if (defined.error !== undefined) {
      configError(policy, undefined, defined.error);
      continue;
    }
    if (!defined.matches) continue;
    const paramKind = policy.spec.paramKind;
    if (paramKind && !env.params?.(paramKind)) {
      configError(policy, undefined, `failed to find resource referenced by paramKind: '${kindString(paramKind)}'`);
      continue;
    }
    const collected = new Map<string, string[]>();
    for (const binding of bindings) {
      const bound: MatchResult = binding.matchResources
        ? matchResources(request, binding.matchResources, env)
        : { matches: true, as: defined.as };
      if (bound.error !== undefined) {
        configError(policy, binding.name, bound.error);
        continue;
      }
      if (!bound.matches) continue;
      const found = collectParams(policy.spec.paramKind, binding.paramRef, request.namespace ?? '', env.params);
      if (found.error !== undefined) {
        configError(policy, binding.name, found.error);
        continue;
      }
      const namespace = namespaceOf(request, env);
      for (const param of found.params) {
        const result = validate(policy, {
          request,
          matched: defined.as,
          params: param,
          namespace,
          authorize: env.authorize,
        });
        record(out, name, binding, result, collected);
      }
    }
    for (const [key, values] of collected) auditAnnotations[`${name}/${key}`] = values.join(', ');
  }
  if (failures.length)
    auditAnnotations[VALIDATION_FAILURE_ANNOTATION] = JSON.stringify(failures.slice(0, MAX_VALIDATION_FAILURES));
  if (!denials.length) return { allowed: true, warnings, auditAnnotations };
  return { allowed: false, status: denialStatus(request, denials[0]!), warnings, auditAnnotations };
}

/** A paramKind as Go prints a GroupVersionKind: `example.com/v1, Kind=Widget`. */
function kindString(kind: { apiVersion: string; kind: string }): string {
  const version = kind.apiVersion.includes('/') ? kind.apiVersion : `/${kind.apiVersion}`;
  return `${version}, Kind=${kind.kind}`;
}

/** The request's Namespace object (none for cluster-scoped requests and for Namespaces themselves). */
function namespaceOf(request: AdmissionRequest, env: DispatchEnvironment): KubeObject | null {
  const kind = request.kind;
  const isNamespace = kind?.group === '' && kind?.version === 'v1' && kind?.kind === 'Namespace';
  const name = isNamespace ? '' : (request.namespace ?? '');
  return name ? (env.namespace?.(name) ?? null) : null;
}

/** The status of the first denial, as admission.NewForbidden with the decision's reason and code. */
export function denialStatus(request: AdmissionRequest, denial: Denial): DenialStatus {
  const detail =
    denial.binding === undefined
      ? `ValidatingAdmissionPolicy '${denial.policy}' denied request: ${denial.decision.message}`
      : `ValidatingAdmissionPolicy '${denial.policy}' with binding '${denial.binding}' denied request: ${denial.decision.message}`;
  const reason = denial.decision.reason || 'Invalid';
  return { code: reasonToCode(reason), reason, message: forbiddenMessage(request, detail), detail };
}

/** apierrors.NewForbidden's message for the request's resource and name (`Unknown` when it has none). */
export function forbiddenMessage(request: AdmissionRequest, detail: string): string {
  const { group, resource } = request.resource;
  const groupResource = group ? `${resource}.${group}` : resource;
  const object = request.object as KubeObject | undefined | null;
  const name =
    request.name ||
    object?.metadata?.name ||
    (object?.metadata as { generateName?: string })?.generateName ||
    'Unknown';
  if (!groupResource) return `forbidden: ${detail}`;
  return `${groupResource} ${JSON.stringify(name)} is forbidden: ${detail}`;
}
