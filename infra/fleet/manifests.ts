/**
 * The manifests of one fleet cluster: its Kubernetes version's fields, and its name and
 * enforcement written on the webhook configurations so that what a cluster holds says which
 * cluster it was made for. The secret in its URLs is chosen by the caller (withPathSecret).
 */
import { join, resolve } from 'node:path';
import type { Enforcement, Registration } from '../../lib/registration.ts';
import { KlwError } from '../errors.ts';
import { writeFileSafely } from '../files.ts';
import {
  compileProblem,
  enforcedWebhooks,
  forKubeVersion,
  knowsWebhookField,
  type KubeTarget,
  type VersionedManifests,
} from '../kube-versions.ts';
import type { Finding } from '../lint/finding.ts';
import { loadFleet, type FleetCluster } from './file.ts';
import type { KubeDocument } from '../output.ts';

/** Label on each webhook configuration naming the fleet cluster it was written for. */
export const CLUSTER_LABEL = 'kube-lambda-webhooks/cluster';
/**
 * Annotation on each webhook configuration: the enforcement of its webhooks in that cluster,
 * `name=Mode` comma-separated (what the functions apply; the API server ignores it).
 */
export const ENFORCEMENT_ANNOTATION = 'kube-lambda-webhooks/enforcement';

/** The target of a cluster: its kubeVersion and feature gates, else `fallback` (--kube-version), else none. */
export function clusterTarget(cluster: FleetCluster, fallback: KubeTarget | undefined): KubeTarget | undefined {
  if (cluster.kubeVersion && fallback) {
    throw new KlwError(
      `cluster ${cluster.name} has kubeVersion ${cluster.kubeVersion.text} in the fleet file; ` +
        'leave out --kube-version and --feature-gates',
    );
  }
  if (!cluster.kubeVersion) return fallback;
  return { version: cluster.kubeVersion.version, featureGates: cluster.featureGates ?? {} };
}

/** A webhook's enforcement in a cluster: the fleet file's, else the registration's, else Deny. */
export function enforcementIn(cluster: FleetCluster, reg: { name: string; enforcement?: Enforcement }): Enforcement {
  return cluster.enforcement[reg.name] ?? reg.enforcement ?? 'Deny';
}

/**
 * Rewrites manifests for one cluster: the fields its version knows (with the findings of what
 * is left out), and on every webhook configuration the cluster's labels of the fleet file, the
 * cluster label and the enforcement annotation.
 */
export function forCluster(
  documents: readonly KubeDocument[],
  cluster: FleetCluster,
  registrations: Registration[],
  fallback?: KubeTarget,
): VersionedManifests {
  const target = clusterTarget(cluster, fallback);
  const versioned = target
    ? forKubeVersion(documents, target, enforcedWebhooks(registrations))
    : { documents, findings: [] };
  const byWebhook = new Map(
    registrations.flatMap((r) => (r.type === 'conversion' ? [] : [[r.webhookName, r] as const])),
  );
  const out = versioned.documents.map((document) => {
    if (document?.kind !== 'MutatingWebhookConfiguration' && document?.kind !== 'ValidatingWebhookConfiguration')
      return document;
    // A webhook configuration as written: its webhooks named, its metadata's labels and annotations maps.
    const doc = document as KubeDocument & {
      webhooks?: Array<{ name: string }> | null;
      metadata?: { labels?: Record<string, string>; annotations?: Record<string, string> } | null;
    };
    const modes = (doc.webhooks ?? []).flatMap((w) => {
      const reg = byWebhook.get(w.name);
      return reg ? [`${reg.name}=${enforcementIn(cluster, reg)}`] : [];
    });
    const metadata = doc.metadata ?? {};
    return {
      ...doc,
      metadata: {
        ...metadata,
        // The fleet file's labels of the cluster, then the cluster label (which they cannot replace).
        labels: { ...metadata.labels, ...cluster.labels, [CLUSTER_LABEL]: cluster.name },
        annotations: { ...metadata.annotations, [ENFORCEMENT_ANNOTATION]: modes.join(',') },
      },
    };
  });
  return { documents: out, findings: versioned.findings };
}

/** Rule of a matchCondition that uses what a fleet cluster's Kubernetes version does not have. */
export const CLUSTER_CONDITION_RULE = 'fleet-match-conditions-version';

/**
 * The matchConditions a cluster's Kubernetes version cannot compile (a library or syntax newer
 * than it), each an error naming the function, the condition, the cluster and the version. Only
 * where the conditions run for that cluster: its API server keeps the field, or the function
 * enforces them itself. A condition no version compiles is lint's own error, not repeated here.
 */
export function clusterConditionFindings(cluster: FleetCluster, registrations: Registration[]): Finding[] {
  if (!cluster.kubeVersion) return [];
  const target = { version: cluster.kubeVersion.version, featureGates: cluster.featureGates ?? {} };
  const findings: Finding[] = [];
  for (const reg of registrations) {
    if (reg.type === 'conversion' || !reg.matchConditions?.length) continue;
    if (!knowsWebhookField(target, 'matchConditions') && !reg.enforceMatchConditions) continue;
    for (const condition of reg.matchConditions) {
      const problem = compileProblem(condition, target.version);
      if (!problem || compileProblem(condition)) continue;
      findings.push({
        level: 'error',
        rule: CLUSTER_CONDITION_RULE,
        subject: reg.name,
        message: `cluster ${cluster.name} runs Kubernetes ${cluster.kubeVersion.text}: ${problem.message}`,
      });
    }
  }
  return findings;
}

/** clusterConditionFindings of every cluster of the project's fleet file; none without one. */
export function fleetConditionFindings(root: string, registrations: Registration[]): Finding[] {
  const fleet = loadFleet(root, registrations);
  return (fleet?.clusters ?? []).flatMap((cluster) => clusterConditionFindings(cluster, registrations));
}

/** The file of one cluster's manifests in `--out-dir`: `<dir>/<cluster>.<format>`. */
export function clusterManifestFile(outDir: string, cluster: string, format: 'yaml' | 'json'): string {
  return join(resolve(outDir), `${cluster}.${format}`);
}

/**
 * Writes one cluster's manifests, readable by their owner only (0600, atomically, a planted
 * symbolic link refused): their URLs carry the cluster's secret.
 */
export function writeClusterManifests(file: string, text: string): void {
  writeFileSafely(file, text, { secret: true, parents: true });
}
