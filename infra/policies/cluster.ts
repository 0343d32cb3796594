/**
 * Which policies a cluster serves natively and which from Lambda: the registrations that stay
 * webhooks there, the native objects, and a line per policy saying what it gets and why.
 */
import { relative, resolve } from 'node:path';
import type { Registration } from '../../lib/internal.ts';
import type { FleetCluster } from '../fleet/file.ts';
import { CLUSTER_LABEL, clusterTarget } from '../fleet/manifests.ts';
import { type KubeTarget, parseKubeVersion } from '../kube-versions.ts';
import { policyObjects, policyServing } from './manifests.ts';
import { policyOf, type PolicyObject } from './registration.ts';

/** Label on every object klw writes. */
const MANAGED_BY = { 'app.kubernetes.io/managed-by': 'kube-lambda-webhooks' };

/** A function as the plan needs it: its registration and, for messages, its entry file. */
export interface PlannedFunction {
  registration: Registration;
  /** Absolute path of the function's entry file. */
  entry?: string;
}

/** What one cluster gets of the project's policies. */
export interface PolicyPlan {
  /** The registrations the cluster calls as webhooks: every webhook, and the policies served from Lambda. */
  webhooks: Registration[];
  /** The native policies and their bindings, mutating ones first (the API server's order). */
  objects: PolicyObject[];
  /** One line per policy: what the cluster gets. */
  lines: string[];
  /** The names of the policies served from Lambda in this cluster. */
  servedFromLambda: string[];
}

/** Where the cluster's version comes from: the fleet file's cluster, else `target`, else the registration's own. */
export interface PlanTarget {
  root: string;
  cluster?: FleetCluster;
  /** --kube-version and --feature-gates. */
  target?: KubeTarget;
}

function targetFor(reg: Registration, where: PlanTarget): KubeTarget | undefined {
  const target = where.cluster ? clusterTarget(where.cluster, where.target) : where.target;
  if (target) return target;
  const own = reg.type === 'conversion' ? undefined : reg.kubernetesVersion;
  return own ? { version: parseKubeVersion(own), featureGates: {} } : undefined;
}

/**
 * Splits the project's functions for one cluster (or, without a fleet, the one the options
 * describe): each policy native where that cluster's version can evaluate it and `serve`
 * allows, else a webhook like the others.
 */
export function planPolicies(functions: PlannedFunction[], where: PlanTarget): PolicyPlan {
  const plan: PolicyPlan = { webhooks: [], objects: [], lines: [], servedFromLambda: [] };
  const cluster = where.cluster ? `cluster ${where.cluster.name}` : 'the cluster';
  const natives: PolicyObject[][] = [];
  for (const fn of functions) {
    const reg = fn.registration;
    const policy = policyOf(reg);
    if (!policy) {
      plan.webhooks.push(reg);
      continue;
    }
    const file = fn.entry
      ? relative(resolve(where.root), fn.entry).split('\\').join('/')
      : `functions/${reg.name}/index.ts`;
    const target = targetFor(reg, where);
    const serving = policyServing(policy, target, { file, cluster });
    const shown = target ? ` (Kubernetes ${target.version.major}.${target.version.minor})` : '';
    if ('native' in serving) {
      const enforcement =
        where.cluster?.enforcement[reg.name] ?? (reg.type === 'conversion' ? undefined : reg.enforcement);
      const labels = { ...MANAGED_BY, ...(where.cluster ? { [CLUSTER_LABEL]: where.cluster.name } : {}) };
      natives.push(
        policyObjects(policy, serving.native, { file }, { labels, ...(enforcement ? { enforcement } : {}) }),
      );
      plan.lines.push(`${cluster}${shown}: ${reg.name} is a native ${policy.kind} (${serving.native})`);
    } else {
      plan.webhooks.push(reg);
      plan.servedFromLambda.push(reg.name);
      const type = policy.kind === 'MutatingAdmissionPolicy' ? 'mutating' : 'validating';
      const why =
        policy.serve === 'webhook'
          ? "serve: 'webhook'"
          : target
            ? `no ${policy.kind} there`
            : 'its Kubernetes version is unknown (kubeVersion in clusters.yaml or --kube-version serves it natively where it can)';
      plan.lines.push(`${cluster}${shown}: ${reg.name} is served from Lambda as a ${type} webhook (${why})`);
    }
  }
  const rank = (o: PolicyObject[]) => (o[0]!.kind === 'MutatingAdmissionPolicy' ? 0 : 1);
  natives.sort((a, b) => rank(a) - rank(b) || a[0]!.metadata.name.localeCompare(b[0]!.metadata.name));
  plan.objects = natives.flat();
  return plan;
}
