/**
 * A mutating policy as the API server takes it natively: MutatingAdmissionPolicy and its
 * binding, `admissionregistration.k8s.io/v1` from Kubernetes 1.36 and `v1beta1` on 1.34 and
 * 1.35 where the cluster enables the beta API; elsewhere the policy is served as a webhook.
 */
import type { KubeObject } from '../../review/schemas.ts';
import type { MatchResources } from '../generic/types.ts';
import type { DefinedMutatingPolicy } from './define.ts';

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

/** A MatchResources as the API takes it: typed rules made plain JSON, empty parts left out. */
function plainMatch(m: MatchResources): Record<string, unknown> {
  const out = JSON.parse(JSON.stringify(m)) as Record<string, unknown>;
  for (const key of ['excludeResourceRules', 'resourceRules'])
    if (Array.isArray(out[key]) && !(out[key] as unknown[]).length) delete out[key];
  if (out.objectSelector && !Object.keys(out.objectSelector).length) delete out.objectSelector;
  return out;
}

/** The MutatingAdmissionPolicy and its binding for a defined policy, in `apiVersion` (v1 or v1beta1). */
export function mutatingPolicyManifests(
  policy: DefinedMutatingPolicy,
  apiVersion: 'v1' | 'v1beta1' = 'v1',
): [KubeObject, KubeObject] {
  const group = `admissionregistration.k8s.io/${apiVersion}`;
  const { name, ...spec } = policy.spec;
  if (spec.matchConstraints) spec.matchConstraints = plainMatch(spec.matchConstraints);
  const { name: bindingName, ...bindingSpec } = policy.binding;
  if (bindingSpec.matchResources) bindingSpec.matchResources = plainMatch(bindingSpec.matchResources);
  return [
    { apiVersion: group, kind: 'MutatingAdmissionPolicy', metadata: { name }, spec: JSON.parse(JSON.stringify(spec)) },
    {
      apiVersion: group,
      kind: 'MutatingAdmissionPolicyBinding',
      metadata: { name: bindingName },
      spec: JSON.parse(JSON.stringify(bindingSpec)),
    },
  ];
}
