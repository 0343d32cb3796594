/**
 * `klw lint` of policies: what the API server refuses when the policy or its binding is created
 * (k8s.io/kubernetes pkg/apis/admissionregistration/validation: required fields, supported values,
 * names, duplicates, Deny with Warn, paramRef's name or selector), and every CEL expression
 * compiled in the environment of each Kubernetes version that runs it (a fleet cluster's, else
 * --kube-version, else the policy's own kubernetesVersion, else the newest).
 */
import { relative, resolve } from 'node:path';
import {
  compileConditions,
  compileMutation,
  compileValidatingPolicy,
  compileVariables,
  type Registration,
  VALIDATION_REASONS,
} from '../../lib/internal.ts';
import { loadFleet } from '../fleet/file.ts';
import type { KubeTarget } from '../kube-versions.ts';
import { policyOf, type PolicyRegistration } from '../policies/registration.ts';
import type { Finding } from './finding.ts';

/** The most auditAnnotations a policy may have (maxAuditAnnotations in the API's validation). */
const MAX_AUDIT_ANNOTATIONS = 20;
/** The longest valueExpression of an auditAnnotation (maxAuditAnnotationValueExpressionLength). */
const MAX_VALUE_EXPRESSION_BYTES = 5 * 1024;
/** The most matchConditions of a policy. */
const MAX_MATCH_CONDITIONS = 64;
/** A CEL identifier that is not a reserved word (isCELIdentifier). */
const CEL_IDENTIFIER = /^[_a-zA-Z][_a-zA-Z0-9]*$/;
const CEL_RESERVED = new Set(
  'true false null in as break const continue else for function if import let loop package namespace return var void while'.split(
    ' ',
  ),
);
/** A qualified name: an optional DNS subdomain prefix and `/`, then at most 63 characters. */
const QUALIFIED_NAME =
  /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/;

/** Rule of what the API server refuses of a policy or binding. */
export const POLICY_FIELD_RULE = 'policy-field';
/** Rule of an expression that does not compile for a Kubernetes version. */
export const POLICY_CEL_RULE = 'policy-cel';

/** An entry of a policy's lists (a condition, variable, validation, audit annotation or mutation) as written. */
interface EntryView {
  name?: unknown;
  expression?: unknown;
  message?: unknown;
  messageExpression?: unknown;
  reason?: unknown;
  key?: unknown;
  valueExpression?: unknown;
  patchType?: unknown;
  applyConfiguration?: { expression?: unknown } | null;
  jsonPatch?: { expression?: unknown } | null;
}

/** A policy's spec as registered, read with care: lint checks each value it reads. */
interface SpecView {
  failurePolicy?: unknown;
  paramKind?: { apiVersion?: unknown; kind?: unknown } | null;
  matchConstraints?: { resourceRules?: unknown[] | null; matchPolicy?: unknown } | null;
  matchConditions?: EntryView[];
  variables?: EntryView[];
  validations?: EntryView[];
  auditAnnotations?: EntryView[];
  mutations?: EntryView[];
  reinvocationPolicy?: unknown;
}

/** A binding's spec as registered, read with care. */
interface BindingView {
  policyName?: unknown;
  validationActions?: unknown[];
  paramRef?: { name?: unknown; selector?: unknown; parameterNotFoundAction?: unknown } | null;
}

/** Whether `value` is one of `list` (a value of any type, as read). */
const oneOf = (list: readonly string[], value: unknown): boolean => (list as readonly unknown[]).includes(value);

/** What the API server refuses of a policy (not its CEL), each as `field: problem; fix`. */
function specProblems(policy: PolicyRegistration): string[] {
  const spec: SpecView = policy.policy.spec;
  const out: string[] = [];
  if (!oneOf(['Fail', 'Ignore'], spec.failurePolicy))
    out.push(`spec.failurePolicy: ${JSON.stringify(spec.failurePolicy)} is not supported; write Fail or Ignore`);
  if (spec.paramKind && (!spec.paramKind.apiVersion || !spec.paramKind.kind))
    out.push('spec.paramKind: apiVersion and kind are required; write { apiVersion: "v1", kind: "ConfigMap" }');
  const mc = spec.matchConstraints ?? {};
  if (!mc.resourceRules?.length)
    out.push('spec.matchConstraints.resourceRules: required; give at least one rule, such as on(Deployment).create()');
  if (mc.matchPolicy !== undefined && !oneOf(['Exact', 'Equivalent'], mc.matchPolicy))
    out.push(
      `spec.matchConstraints.matchPolicy: ${JSON.stringify(mc.matchPolicy)} is not supported; write Exact or Equivalent`,
    );
  out.push(...conditionProblems(spec.matchConditions ?? []), ...variableProblems(spec.variables ?? []));
  if (policy.kind === 'ValidatingAdmissionPolicy') out.push(...validationProblems(spec, policy.policy.metadata.name));
  else out.push(...mutationProblems(spec));
  return out;
}

function conditionProblems(conditions: EntryView[]): string[] {
  const out: string[] = [];
  if (conditions.length > MAX_MATCH_CONDITIONS)
    out.push(`spec.matchConditions: ${conditions.length} conditions, at most ${MAX_MATCH_CONDITIONS}; merge some`);
  const names = new Set<string>();
  for (const [i, c] of conditions.entries()) {
    const at = `spec.matchConditions[${i}]`;
    if (!String(c.expression ?? '').trim()) out.push(`${at}.expression: required; write a CEL expression`);
    if (!c.name) out.push(`${at}.name: required; name the condition`);
    else if (!QUALIFIED_NAME.test(String(c.name)))
      out.push(`${at}.name: ${JSON.stringify(c.name)} is not a qualified name; use letters, digits, '-', '_', '.'`);
    else if (names.has(c.name as string)) out.push(`${at}.name: ${JSON.stringify(c.name)} is a duplicate; rename one`);
    names.add(c.name as string);
  }
  return out;
}

function variableProblems(variables: EntryView[]): string[] {
  const out: string[] = [];
  for (const [i, v] of variables.entries()) {
    const at = `spec.variables[${i}]`;
    if (!String(v.name ?? '').trim()) out.push(`${at}.name: name is not specified; name the variable`);
    else if (!CEL_IDENTIFIER.test(String(v.name)) || CEL_RESERVED.has(v.name as string))
      out.push(`${at}.name: ${JSON.stringify(v.name)} is not a valid CEL identifier; use letters, digits and '_'`);
    if (!String(v.expression ?? '').trim()) out.push(`${at}.expression: expression is not specified; write one`);
  }
  return out;
}

/** A repeated variable name: the API server takes it, and later expressions read the last one. */
function duplicateVariables(variables: EntryView[]): string[] {
  const seen = new Map<unknown, number>();
  const out: string[] = [];
  for (const [i, v] of variables.entries()) {
    const first = seen.get(v.name);
    if (first !== undefined)
      out.push(
        `spec.variables[${i}].name: ${JSON.stringify(v.name)} repeats variables[${first}]; the API server accepts it and ` +
          `variables.${String(v.name)} is the last one's value: rename one`,
      );
    else seen.set(v.name, i);
  }
  return out;
}

function validationProblems(spec: SpecView, name: string): string[] {
  const out: string[] = [];
  const validations = spec.validations ?? [];
  const annotations = spec.auditAnnotations ?? [];
  if (!validations.length && !annotations.length)
    out.push('spec.validations: validations or auditAnnotations must contain at least one item; add a validation');
  for (const [i, v] of validations.entries()) {
    const at = `spec.validations[${i}]`;
    if (!String(v.expression ?? '').trim()) out.push(`${at}.expression: expression is not specified; write one`);
    if (v.messageExpression !== undefined && !String(v.messageExpression).trim())
      out.push(`${at}.messageExpression: must be non-empty if specified; remove it or write one`);
    if (v.message !== undefined && !String(v.message).trim())
      out.push(`${at}.message: message must be non-empty if specified; remove it or write one`);
    else if (/[\n\r]/.test(String(v.message ?? '').trim()))
      out.push(`${at}.message: message must not contain line breaks; write it on one line`);
    if (v.reason !== undefined && !oneOf(VALIDATION_REASONS, v.reason))
      out.push(
        `${at}.reason: ${JSON.stringify(v.reason)} is not supported; write one of ${VALIDATION_REASONS.join(', ')}`,
      );
  }
  if (annotations.length > MAX_AUDIT_ANNOTATIONS)
    out.push(`spec.auditAnnotations: must not have more than ${MAX_AUDIT_ANNOTATIONS} auditAnnotations; merge some`);
  const keys = new Set<unknown>();
  for (const [i, a] of annotations.entries()) {
    const at = `spec.auditAnnotations[${i}]`;
    const key = `${name}/${String(a.key)}`;
    if (!QUALIFIED_NAME.test(key))
      out.push(
        `${at}.key: ${JSON.stringify(key)} is not a qualified name (at most 63 characters after the '/'); shorten the key`,
      );
    if (keys.has(a.key)) out.push(`${at}.key: ${JSON.stringify(a.key)} is a duplicate; rename one`);
    keys.add(a.key);
    const value = String(a.valueExpression ?? '').trim();
    if (!value) out.push(`${at}.valueExpression: valueExpression is not specified; write one`);
    else if (Buffer.byteLength(value) > MAX_VALUE_EXPRESSION_BYTES)
      out.push(`${at}.valueExpression: must not exceed ${MAX_VALUE_EXPRESSION_BYTES} bytes in length; shorten it`);
  }
  return out;
}

function mutationProblems(spec: SpecView): string[] {
  const out: string[] = [];
  const mutations = spec.mutations ?? [];
  if (!mutations.length) out.push('spec.mutations: required; give at least one mutation');
  for (const [i, m] of mutations.entries()) {
    const at = `spec.mutations[${i}]`;
    const field =
      m.patchType === 'ApplyConfiguration'
        ? 'applyConfiguration'
        : m.patchType === 'JSONPatch'
          ? 'jsonPatch'
          : undefined;
    if (!field)
      out.push(
        `${at}.patchType: ${JSON.stringify(m.patchType)} is not supported; write ApplyConfiguration or JSONPatch`,
      );
    else if (!String(m[field]?.expression ?? '').trim())
      out.push(`${at}.${field}.expression: required for patchType ${String(m.patchType)}; write one`);
  }
  if (spec.reinvocationPolicy !== undefined && !oneOf(['Never', 'IfNeeded'], spec.reinvocationPolicy))
    out.push(
      `spec.reinvocationPolicy: ${JSON.stringify(spec.reinvocationPolicy)} is not supported; write Never or IfNeeded`,
    );
  return out;
}

/** What the API server refuses of a binding, given its policy's paramKind. */
function bindingProblems(policy: PolicyRegistration): string[] {
  const spec: BindingView = policy.binding.spec;
  const out: string[] = [];
  if (!spec.policyName) out.push('binding spec.policyName: required');
  if (policy.kind === 'ValidatingAdmissionPolicy') {
    const actions: unknown[] = spec.validationActions ?? [];
    if (!actions.length)
      out.push('binding spec.validationActions: at least one validation action is required; write [Deny]');
    for (const [i, a] of actions.entries()) {
      if (!oneOf(['Deny', 'Warn', 'Audit'], a))
        out.push(
          `binding spec.validationActions[${i}]: ${JSON.stringify(a)} is not supported; write Deny, Warn or Audit`,
        );
      if (actions.indexOf(a) !== i)
        out.push(`binding spec.validationActions[${i}]: ${JSON.stringify(a)} is a duplicate; remove it`);
    }
    if (actions.includes('Deny') && actions.includes('Warn'))
      out.push(
        'binding spec.validationActions: must not contain both Deny and Warn; write [Deny, Audit] or [Warn, Audit]',
      );
  }
  const ref = spec.paramRef;
  if (ref) {
    if (!policy.policy.spec.paramKind)
      out.push(
        "binding spec.paramRef: the policy has no paramKind, so no expression can read params; add the policy's paramKind or remove paramRef",
      );
    if (ref.name && ref.selector) out.push('binding spec.paramRef: name and selector are mutually exclusive; keep one');
    if (!ref.name && !ref.selector) out.push('binding spec.paramRef: one of name or selector must be specified');
    if (!oneOf(['Allow', 'Deny'], ref.parameterNotFoundAction))
      out.push(
        `binding spec.paramRef.parameterNotFoundAction: ${JSON.stringify(ref.parameterNotFoundAction)} is not supported; write Deny or Allow`,
      );
  }
  return out;
}

/** Every CEL expression of a policy that does not compile for `kubernetesVersion` (the newest when undefined). */
function celProblems(policy: PolicyRegistration, kubernetesVersion: string | undefined): string[] {
  // Compiled only once specProblems found every entry complete: the lists as the compilers take them.
  const spec = policy.policy.spec as SpecView & {
    variables?: Parameters<typeof compileVariables>[0];
    matchConditions?: Parameters<typeof compileConditions>[0];
  };
  const env = { kubernetesVersion, typeCheck: true, hasParams: spec.paramKind !== undefined };
  const out: string[] = [];
  /** The errors of compiled programs, against the list they were compiled from. */
  const report = (
    programs: Array<{ error?: string } | undefined>,
    list: readonly object[] | undefined,
    at: string,
    key: string,
  ) => {
    for (const [i, p] of programs.entries())
      if (p?.error)
        out.push(
          `spec.${at}[${i}].${key}: ${JSON.stringify((list?.[i] as Record<string, unknown> | undefined)?.[key])}: ${p.error}`,
        );
  };
  const variables = compileVariables(spec.variables ?? [], env);
  report(variables.programs, spec.variables, 'variables', 'expression');
  report(
    compileConditions(spec.matchConditions ?? [], variables, env).programs,
    spec.matchConditions,
    'matchConditions',
    'expression',
  );
  if (policy.kind === 'ValidatingAdmissionPolicy') {
    const compiled = compileValidatingPolicy(spec as never, { kubernetesVersion, typeCheck: true });
    report(compiled.validations, spec.validations, 'validations', 'expression');
    report(compiled.messages, spec.validations, 'validations', 'messageExpression');
    report(compiled.auditAnnotations, spec.auditAnnotations, 'auditAnnotations', 'valueExpression');
    return out;
  }
  for (const [i, m] of (spec.mutations ?? []).entries()) {
    const field = m.patchType === 'JSONPatch' ? 'jsonPatch' : 'applyConfiguration';
    // In the version's environment, with the policy's params and the variables declared before it.
    const kind = m.patchType as Parameters<typeof compileMutation>[1];
    const compiled = compileMutation(String(m[field]?.expression), kind, { ...env, variables: variables.names });
    if (typeof compiled === 'string')
      out.push(`spec.mutations[${i}].${field}.expression: ${JSON.stringify(m[field]?.expression)}: ${compiled}`);
  }
  return out;
}

/** Where a policy is linted for: the clusters (or the one target) that run one Kubernetes version. */
export interface PolicyLintTarget {
  /** `1.29`; undefined for the newest. */
  kubernetesVersion?: string;
  /** `cluster east, cluster west`, or `Kubernetes 1.29`. */
  label: string;
}

/**
 * The findings of one policy: what the API server refuses when it is created (once), and the
 * expressions that do not compile for each target's Kubernetes version. Each names the file,
 * the field and the fix.
 */
export function lintPolicy(
  name: string,
  file: string,
  policy: PolicyRegistration,
  targets: PolicyLintTarget[],
): Finding[] {
  const error = (rule: string, message: string): Finding => ({
    level: 'error',
    rule,
    subject: name,
    message: `${file}: ${message}`,
  });
  const findings = [...specProblems(policy), ...bindingProblems(policy)].map((m) => error(POLICY_FIELD_RULE, m));
  findings.push(
    ...duplicateVariables((policy.policy.spec as SpecView).variables ?? []).map((m) => ({
      ...error(POLICY_FIELD_RULE, m),
      level: 'warning' as const,
    })),
  );
  // Expressions that are missing are reported above; compiling them adds nothing.
  if (findings.some((f) => f.level === 'error')) return findings;
  const seen = new Map<string, string[]>();
  for (const target of targets.length ? targets : [{ label: 'the newest Kubernetes' }]) {
    for (const problem of celProblems(policy, target.kubernetesVersion)) {
      const labels = seen.get(problem) ?? [];
      labels.push(target.label);
      seen.set(problem, labels);
    }
  }
  for (const [problem, labels] of seen)
    findings.push(
      error(
        POLICY_CEL_RULE,
        `${problem} (for ${labels.join(', ')}); write the expression with what that Kubernetes version's CEL has, or raise the version`,
      ),
    );
  return findings;
}

/** A function as policy lint needs it. */
export interface LintedFunction {
  name: string;
  entry: string;
  registration: Registration;
}

/**
 * The findings of every policy of the project, for each Kubernetes version that runs it: each
 * fleet cluster's (clusters.yaml), else `target` (--kube-version), else the policy's own
 * kubernetesVersion, else the newest.
 */
export function lintProjectPolicies(root: string, functions: LintedFunction[], target?: KubeTarget): Finding[] {
  const fleet = loadFleet(
    root,
    functions.map((f) => f.registration),
  );
  const findings: Finding[] = [];
  for (const fn of functions) {
    const policy = policyOf(fn.registration);
    if (!policy) continue;
    const own = fn.registration.type === 'conversion' ? undefined : fn.registration.kubernetesVersion;
    const fallback = target ? `${target.version.major}.${target.version.minor}` : own;
    const byVersion = new Map<string | undefined, string[]>();
    const add = (version: string | undefined, label: string) =>
      byVersion.set(version, [...(byVersion.get(version) ?? []), label]);
    for (const cluster of fleet?.clusters ?? []) add(cluster.kubeVersion?.text ?? fallback, `cluster ${cluster.name}`);
    if (!fleet) add(fallback, fallback ? `Kubernetes ${fallback}` : 'the newest Kubernetes');
    const targets = [...byVersion].map(([kubernetesVersion, labels]) => ({
      ...(kubernetesVersion ? { kubernetesVersion } : {}),
      label: labels.join(', '),
    }));
    const file = relative(resolve(root), fn.entry).split('\\').join('/');
    findings.push(...lintPolicy(fn.name, file, policy, targets));
  }
  return findings;
}
