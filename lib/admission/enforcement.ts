import type { AdmissionRegistration, Enforcement } from '../registration.ts';
import { ENFORCEMENT_MODES } from '../registration.ts';
import { isQualifiedNamePart } from '../k8s/names.ts';
import type { Caller } from '../handler/types.ts';

/** Environment variable overriding the enforcement of every webhook in the environment. */
export const ENFORCEMENT_ENV = 'KLW_ENFORCEMENT';

/**
 * Environment variable overriding one webhook's enforcement: `KLW_ENFORCEMENT_<NAME>`, the
 * function name upper-cased with `-` as `_` (`pod-policy` → `KLW_ENFORCEMENT_POD_POLICY`).
 */
export function enforcementEnvFor(name: string): string {
  let variable = enforcementVariables.get(name);
  if (variable === undefined) {
    variable = `${ENFORCEMENT_ENV}_${name.toUpperCase().replace(/-/g, '_')}`;
    // A function serves one webhook or a few: the names stay few (a bound keeps any caller safe).
    if (enforcementVariables.size >= 64) enforcementVariables.clear();
    enforcementVariables.set(name, variable);
  }
  return variable;
}

/** The variables of the webhook names asked so far: resolving an enforcement is on every request's way. */
const enforcementVariables = new Map<string, string>();

/** The enforcement in effect, where it came from, and a bad override that was refused. */
export interface ResolvedEnforcement {
  mode: Enforcement;
  /** `registration`, or the environment variable that set it. */
  source: string;
  /** Set when an override held a value that is not a mode: it is refused and `Deny` applies. */
  problem?: string;
}

/**
 * The enforcement of a webhook: `KLW_ENFORCEMENT_<NAME>`, else `KLW_ENFORCEMENT`, else the
 * registration's `enforcement`, else `Deny`. An override naming no mode is a misconfiguration;
 * the webhook then denies (`Deny`), never admits what it should not.
 */
export function resolveEnforcement(
  reg: Pick<AdmissionRegistration, 'name' | 'enforcement'>,
  env: NodeJS.ProcessEnv,
): ResolvedEnforcement {
  for (const variable of [enforcementEnvFor(reg.name), ENFORCEMENT_ENV]) {
    const raw = env[variable]?.trim();
    if (!raw) continue;
    if ((ENFORCEMENT_MODES as readonly string[]).includes(raw)) return { mode: raw as Enforcement, source: variable };
    return {
      mode: 'Deny',
      source: variable,
      problem: `${variable}=${JSON.stringify(raw)} is not one of ${ENFORCEMENT_MODES.join(', ')}; denying as with Deny`,
    };
  }
  return { mode: reg.enforcement ?? 'Deny', source: 'registration' };
}

/**
 * A webhook's enforcement for one caller: the calling cluster's as its fleet sets it, else as
 * without a fleet (KLW_ENFORCEMENT_<NAME>, KLW_ENFORCEMENT, the registration, `Deny`).
 */
export function callerEnforcement(
  reg: Pick<AdmissionRegistration, 'name' | 'enforcement'>,
  caller: Pick<Caller, 'cluster' | 'enforcement'>,
  env: NodeJS.ProcessEnv,
): ResolvedEnforcement {
  // A bundle built without the fleet code (infra/build.ts) has no caller with a cluster's enforcement.
  if (process.env.KLW_BUNDLE_NO_FLEET !== '1' && caller.enforcement)
    return { mode: caller.enforcement, source: `KLW_FLEET (cluster ${caller.cluster})` };
  return resolveEnforcement(reg, env);
}

/**
 * Key of the audit annotation carrying a denial in `Audit` mode. The API server stores it as
 * `<webhookName>/would-deny`, a qualified name (the webhook name is its DNS-subdomain prefix).
 */
export const WOULD_DENY_ANNOTATION = 'would-deny';

/** The warning a denial becomes in `Warn` mode, worded like the API server's denial message. */
export function wouldDenyWarning(webhookName: string, message: string): string {
  // A warning with a control character is dropped by the API server: line breaks become spaces.
  return `${wouldDenyPrefix(webhookName)}${message.replace(/[\u0000-\u001f\u007f-\u009f]+/g, ' ')}`;
}

function wouldDenyPrefix(webhookName: string): string {
  return `admission webhook "${webhookName}" would deny the request: `;
}

/** The denial message an answer carries in `Warn` or `Audit` mode, if any. */
export function readWouldDeny(
  webhookName: string,
  response: {
    warnings?: readonly string[] | undefined;
    auditAnnotations?: Readonly<Record<string, string>> | undefined;
  },
): string | undefined {
  const annotated = response.auditAnnotations?.[WOULD_DENY_ANNOTATION];
  if (annotated !== undefined) return annotated;
  const prefix = wouldDenyPrefix(webhookName);
  const warning = response.warnings?.find((w) => w.startsWith(prefix));
  return warning === undefined ? undefined : warning.slice(prefix.length);
}

/**
 * True when the API server keeps an audit annotation with this key: it prefixes the key with
 * `<webhookName>/` and refuses (logs and drops) a result that is not a qualified name, so the
 * key itself must be a name part: at most 63 letters, digits, `-`, `_`, `.`, alphanumeric at
 * both ends, no `/`.
 */
export function isAuditAnnotationKey(key: string): boolean {
  return isQualifiedNamePart(key);
}
