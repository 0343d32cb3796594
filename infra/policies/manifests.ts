/**
 * A policy's objects for one cluster. A validating policy is ValidatingAdmissionPolicy and its
 * binding where the cluster's API server evaluates policies (admissionregistration.k8s.io/v1 from
 * 1.30; v1beta1 on 1.28 and 1.29 where the cluster turns the ValidatingAdmissionPolicy feature gate
 * on); a mutating policy is MutatingAdmissionPolicy and its binding (v1 from 1.36; v1beta1 on 1.34
 * and 1.35 with the MutatingAdmissionPolicy gate). Elsewhere the same policy is served from Lambda
 * as a webhook. Every object is checked against its version's schema, unknown fields refused.
 */
import { type Enforcement, nativeMutatingPolicyVersion } from '../../lib/internal.ts';
import { KlwError } from '../errors.ts';
import type { KubeTarget } from '../kube-versions.ts';
import type { PolicyObject, PolicyRegistration } from './registration.ts';
import { admissionTypeName, schemaProblems } from './schema.ts';

/** The first minor serving admissionregistration.k8s.io/v1 ValidatingAdmissionPolicy (GA, on by default). */
export const VAP_V1_SINCE = 30;
/** The first minor serving v1beta1 (off by default: the API and the feature gate must be turned on). */
export const VAP_V1BETA1_SINCE = 28;
/** The feature gate that turns validating policies on before 1.30. */
export const VAP_FEATURE_GATE = 'ValidatingAdmissionPolicy';
/** The first minor serving MutatingAdmissionPolicy v1 (GA, on by default). */
export const MAP_V1_SINCE = 36;
/** The first minor serving MutatingAdmissionPolicy v1beta1 (off by default). */
export const MAP_V1BETA1_SINCE = 34;
/** The feature gate that turns mutating policies on before 1.36. */
export const MAP_FEATURE_GATE = 'MutatingAdmissionPolicy';

/** How a cluster gets a policy. */
export type PolicyServing = { native: 'v1' | 'v1beta1' } | { webhook: true };

/** The admissionregistration version in which a cluster of `target` evaluates the kind natively, if any. */
export function nativeVersion(kind: PolicyRegistration['kind'], target: KubeTarget): 'v1' | 'v1beta1' | undefined {
  const minor = target.version.major === 1 ? target.version.minor : Number.POSITIVE_INFINITY;
  if (kind === 'MutatingAdmissionPolicy') {
    const text = Number.isFinite(minor) ? `1.${minor}` : '1.999';
    return nativeMutatingPolicyVersion({ kubeVersion: text, featureGates: target.featureGates ?? {} });
  }
  if (minor >= VAP_V1_SINCE) return 'v1';
  if (minor >= VAP_V1BETA1_SINCE && target.featureGates?.[VAP_FEATURE_GATE]) return 'v1beta1';
  return undefined;
}

/** Where a policy's error points: its function's file and the policy's name. */
export interface PolicySubject {
  /** `functions/<name>/index.ts`, as errors name it. */
  file: string;
  /** The cluster, as messages name it: `cluster east`, `the cluster`. */
  cluster?: string;
}

/**
 * How a cluster of `target` gets the policy: natively where its API server can evaluate it (and
 * `serve` allows), else as a webhook. Without a known version (no kubeVersion in clusters.yaml,
 * no --kube-version) `auto` serves it as a webhook, which every cluster takes; `serve: 'native'`
 * writes v1 there. `serve: 'native'` on a cluster that cannot is an error naming the fix.
 */
export function policyServing(
  policy: Pick<PolicyRegistration, 'kind' | 'serve'>,
  target: KubeTarget | undefined,
  where: PolicySubject,
): PolicyServing {
  if (policy.serve === 'webhook') return { webhook: true };
  if (!target) return policy.serve === 'native' ? { native: 'v1' } : { webhook: true };
  const native = nativeVersion(policy.kind, target);
  if (native) return { native };
  if (policy.serve === 'native') {
    const mutating = policy.kind === 'MutatingAdmissionPolicy';
    const [v1, beta, gate] = mutating
      ? [MAP_V1_SINCE, MAP_V1BETA1_SINCE, MAP_FEATURE_GATE]
      : [VAP_V1_SINCE, VAP_V1BETA1_SINCE, VAP_FEATURE_GATE];
    throw new KlwError(
      `${where.file}: serve is 'native', but ${where.cluster ?? 'the cluster'} (Kubernetes ${target.version.major}.${target.version.minor}) ` +
        `has no ${policy.kind} (v1 from 1.${v1}; v1beta1 on 1.${beta}-1.${v1 - 1} with featureGates: { ${gate}: true } in clusters.yaml): ` +
        "write serve: 'auto' to serve it from Lambda there, or leave that cluster out",
    );
  }
  return { webhook: true };
}

/** What a cluster changes in a policy's objects: the enforcement of a validating policy's binding. */
export interface PolicyObjectOptions {
  /** The cluster's enforcement of the policy (clusters.yaml): the binding's validationActions become `[it]`. */
  enforcement?: Enforcement;
  /** Labels written on both objects. */
  labels?: Record<string, string>;
}

/**
 * A policy and its binding in `version`, each checked against that version's schema (a field the
 * API does not know is an error naming it and the file).
 */
export function policyObjects(
  policy: PolicyRegistration,
  version: 'v1' | 'v1beta1',
  where: Pick<PolicySubject, 'file'>,
  options: PolicyObjectOptions = {},
): PolicyObject[] {
  const apiVersion = `admissionregistration.k8s.io/${version}`;
  const objects = [policy.policy, policy.binding].map((object) => {
    const copy = structuredClone(object);
    copy.apiVersion = apiVersion;
    if (options.labels) copy.metadata.labels = { ...copy.metadata.labels, ...options.labels };
    return copy;
  });
  if (options.enforcement && policy.kind === 'ValidatingAdmissionPolicy')
    objects[1]!.spec.validationActions = [options.enforcement];
  for (const object of objects) {
    const type = admissionTypeName(version, object.kind);
    const problems = type ? schemaProblems(object, type) : [`${object.kind} is not served in ${apiVersion}`];
    if (problems.length)
      throw new KlwError(
        `${where.file}: ${object.kind} ${object.metadata.name} (${apiVersion}) is refused by the API: ` +
          `${problems.join('; ')}; remove or correct those fields`,
      );
  }
  return objects;
}
