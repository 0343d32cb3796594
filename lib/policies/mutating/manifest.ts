/**
 * A mutating policy as the API server takes it natively: MutatingAdmissionPolicy and its
 * binding, `admissionregistration.k8s.io/v1` from Kubernetes 1.36 and `v1beta1` on 1.34 and
 * 1.35 where the cluster enables the beta API; elsewhere the policy is served as a webhook.
 */
import type { KubeObject } from '../../review/schemas.ts';
import type { MutatingPolicyDefinition, PolicyMatchResources } from './define.ts';

/** The first minor (1.x) serving MutatingAdmissionPolicy as v1 (GA, on by default). */
const GA_MINOR = 36;
/** The first minor serving v1beta1 (off by default: the feature gate and the API must be enabled). */
const BETA_MINOR = 34;

/** What a cluster says of itself (clusters.yaml): its version and the feature gates it turns on. */
export interface ClusterTraits {
  kubeVersion: string;
  featureGates?: Record<string, boolean>;
}

/**
 * The API version in which the cluster runs MutatingAdmissionPolicy natively, or undefined when
 * the policy must be served as a webhook there. `v1beta1` needs the cluster to say it enables the
 * `MutatingAdmissionPolicy` feature gate (which also needs the v1beta1 API turned on).
 */
export function nativeMutatingPolicyVersion(cluster: ClusterTraits): 'v1' | 'v1beta1' | undefined {
  const m = /^v?1\.(\d+)/.exec(cluster.kubeVersion);
  if (!m) return undefined;
  const minor = Number(m[1]);
  if (minor >= GA_MINOR) return cluster.featureGates?.MutatingAdmissionPolicy === false ? undefined : 'v1';
  if (minor >= BETA_MINOR && cluster.featureGates?.MutatingAdmissionPolicy === true) return 'v1beta1';
  return undefined;
}

/** Rules as JSON (typed rules carry a type-only marker). */
const plainRules = (rules: readonly object[] | undefined) =>
  (rules ?? []).map((rule) => JSON.parse(JSON.stringify(rule)) as Record<string, unknown>);

function matchResources(m: Partial<PolicyMatchResources>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (m.resourceRules) out.resourceRules = plainRules(m.resourceRules);
  if (m.excludeResourceRules?.length) out.excludeResourceRules = plainRules(m.excludeResourceRules);
  if (m.namespaceSelector) out.namespaceSelector = m.namespaceSelector;
  if (m.objectSelector) out.objectSelector = m.objectSelector;
  if (m.matchPolicy) out.matchPolicy = m.matchPolicy;
  return out;
}

/** The MutatingAdmissionPolicy and its binding for a definition, in `apiVersion` (v1 or v1beta1). */
export function mutatingPolicyManifests(
  definition: MutatingPolicyDefinition<KubeObject>,
  apiVersion: 'v1' | 'v1beta1' = 'v1',
): [KubeObject, KubeObject] {
  const group = `admissionregistration.k8s.io/${apiVersion}`;
  const spec: Record<string, unknown> = {
    matchConstraints: { matchPolicy: 'Equivalent', ...matchResources(definition.matchConstraints) },
    failurePolicy: definition.failurePolicy ?? 'Fail',
    reinvocationPolicy: definition.reinvocationPolicy ?? 'Never',
    mutations: definition.mutations,
  };
  if (definition.paramKind) spec.paramKind = definition.paramKind;
  if (definition.matchConditions?.length) spec.matchConditions = definition.matchConditions;
  if (definition.variables?.length) spec.variables = definition.variables;
  const bindingSpec: Record<string, unknown> = { policyName: definition.name };
  const binding = definition.binding ?? {};
  if (binding.paramRef) bindingSpec.paramRef = binding.paramRef;
  if (binding.matchResources) bindingSpec.matchResources = matchResources(binding.matchResources);
  return [
    { apiVersion: group, kind: 'MutatingAdmissionPolicy', metadata: { name: definition.name }, spec },
    {
      apiVersion: group,
      kind: 'MutatingAdmissionPolicyBinding',
      metadata: { name: binding.name ?? `${definition.name}-binding` },
      spec: bindingSpec,
    },
  ];
}
