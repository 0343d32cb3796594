/**
 * A validating policy's objects for one cluster: ValidatingAdmissionPolicy and its binding where
 * the cluster's API server evaluates policies (admissionregistration.k8s.io/v1 from 1.30; v1beta1 on
 * 1.28 and 1.29 where the cluster turns the ValidatingAdmissionPolicy feature gate on), else the
 * same policy served from Lambda as a validating webhook. Every object is checked field by field:
 * a field the API does not know is refused, as kubectl's strict field validation refuses it.
 */
import { KlwError } from '../errors.ts';
import type { KubeTarget } from '../kube-versions.ts';
import type { DefinedValidatingPolicy } from '../../lib/policies/index.ts';

/** The first minor serving admissionregistration.k8s.io/v1 ValidatingAdmissionPolicy (GA, on by default). */
export const VAP_V1_SINCE = 30;
/** The first minor serving v1beta1 (off by default: the API and the feature gate must be turned on). */
export const VAP_V1BETA1_SINCE = 28;
/** The feature gate that turns policies on before 1.30. */
export const VAP_FEATURE_GATE = 'ValidatingAdmissionPolicy';

/** How a cluster gets a policy. */
export type PolicyServing = { native: 'v1' | 'v1beta1' } | { webhook: true };

/**
 * How a cluster of `target` gets the policy: natively where its API server can evaluate it (and
 * `serve` allows), else as a webhook. `serve: 'native'` on a cluster that cannot is an error.
 */
export function policyServing(
  policy: Pick<DefinedValidatingPolicy, 'serve' | 'spec'>,
  target: KubeTarget | undefined,
  cluster = 'the cluster',
): PolicyServing {
  const minor = target?.version.major === 1 ? target.version.minor : target ? Number.POSITIVE_INFINITY : undefined;
  let native: 'v1' | 'v1beta1' | undefined;
  if (minor === undefined || minor >= VAP_V1_SINCE) native = 'v1';
  else if (minor >= VAP_V1BETA1_SINCE && target?.featureGates?.[VAP_FEATURE_GATE]) native = 'v1beta1';
  if (policy.serve === 'webhook') return { webhook: true };
  if (native) return { native };
  if (policy.serve === 'native') {
    const v = target ? `${target.version.major}.${target.version.minor}` : '?';
    throw new KlwError(
      `policy ${policy.spec.name}: serve is 'native', but ${cluster} (Kubernetes ${v}) has no ValidatingAdmissionPolicy ` +
        `(v1 from 1.${VAP_V1_SINCE}; v1beta1 on 1.${VAP_V1BETA1_SINCE}-1.29 with featureGates: { ${VAP_FEATURE_GATE}: true } in clusters.yaml). ` +
        "Use serve: 'auto' to serve it from Lambda there",
    );
  }
  return { webhook: true };
}

/** The ValidatingAdmissionPolicy and ValidatingAdmissionPolicyBinding of a policy, in `version`. */
export function policyObjects(policy: DefinedValidatingPolicy, version: 'v1' | 'v1beta1'): Record<string, unknown>[] {
  const apiVersion = `admissionregistration.k8s.io/${version}`;
  const { name, ...spec } = policy.spec;
  const { name: bindingName, ...bindingSpec } = policy.binding;
  const objects = [
    { apiVersion, kind: 'ValidatingAdmissionPolicy', metadata: { name }, spec: plain(spec) },
    { apiVersion, kind: 'ValidatingAdmissionPolicyBinding', metadata: { name: bindingName }, spec: plain(bindingSpec) },
  ];
  for (const object of objects) {
    const unknown = unknownFields(object, OBJECT_FIELDS[object.kind]!);
    if (unknown.length)
      throw new KlwError(`policy ${name}: ${object.kind} has fields the API does not know: ${unknown.join(', ')}`);
  }
  return objects;
}

/** A copy without undefined members, as JSON writes it. */
function plain<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}

/** A field tree: a field's own tree, `true` for a leaf (any value), `[tree]` for a list of objects. */
type Fields = { [field: string]: Fields | true | [Fields] };

const selector: Fields = { matchLabels: true, matchExpressions: [{ key: true, operator: true, values: true }] };
const rule: Fields = {
  operations: true,
  apiGroups: true,
  apiVersions: true,
  resources: true,
  scope: true,
  resourceNames: true,
};
const matchResources: Fields = {
  namespaceSelector: selector,
  objectSelector: selector,
  resourceRules: [rule],
  excludeResourceRules: [rule],
  matchPolicy: true,
};
const metadata: Fields = { name: true, labels: true, annotations: true };

/** The fields of ValidatingAdmissionPolicy and its binding (admissionregistration v1 and v1beta1 alike). */
export const OBJECT_FIELDS: Record<string, Fields> = {
  ValidatingAdmissionPolicy: {
    apiVersion: true,
    kind: true,
    metadata,
    spec: {
      paramKind: { apiVersion: true, kind: true },
      matchConstraints: matchResources,
      validations: [{ expression: true, message: true, reason: true, messageExpression: true }],
      failurePolicy: true,
      auditAnnotations: [{ key: true, valueExpression: true }],
      matchConditions: [{ name: true, expression: true }],
      variables: [{ name: true, expression: true }],
    },
  },
  ValidatingAdmissionPolicyBinding: {
    apiVersion: true,
    kind: true,
    metadata,
    spec: {
      policyName: true,
      paramRef: { name: true, namespace: true, selector, parameterNotFoundAction: true },
      matchResources,
      validationActions: true,
    },
  },
};

/** The paths of the fields of `value` that `fields` does not know (strict field validation). */
export function unknownFields(value: unknown, fields: Fields, path = ''): string[] {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return [];
  const out: string[] = [];
  for (const [key, member] of Object.entries(value)) {
    const at = path ? `${path}.${key}` : key;
    const known = fields[key];
    if (known === undefined) out.push(at);
    else if (Array.isArray(known)) {
      if (Array.isArray(member))
        for (const [i, item] of member.entries()) out.push(...unknownFields(item, known[0], `${at}[${i}]`));
    } else if (known !== true) out.push(...unknownFields(member, known, at));
  }
  return out;
}
