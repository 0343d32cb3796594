/**
 * Which functions are deployed: every webhook, and a policy's function only where some cluster
 * serves the policy from Lambda (the same per-cluster choice the manifests make). A policy every
 * cluster evaluates natively needs no function, no URL and no secret.
 */
import type { Fleet } from '../fleet/file.ts';
import { type PlannedFunction, planPolicies } from './cluster.ts';
import { policyOf } from './registration.ts';

/** What is deployed, and a line per policy saying whether its function is and why. */
export interface DeploySelection<T> {
  deployed: T[];
  /** The policies whose function is left out: every cluster serves them natively. */
  skipped: string[];
  lines: string[];
}

/**
 * The functions to deploy for the fleet's clusters (or, without a fleet, the one cluster the
 * registrations' own kubernetesVersion describes): a policy's only where some cluster serves it
 * as a webhook. Throws, naming the file and the fix, where a cluster cannot serve a policy as
 * its `serve` asks.
 */
export function selectDeployed<T extends PlannedFunction & { name: string }>(
  root: string,
  functions: T[],
  fleet: Fleet | undefined,
): DeploySelection<T> {
  const plans = fleet?.clusters.length
    ? fleet.clusters.map((cluster) => ({ cluster: cluster.name, plan: planPolicies(functions, { root, cluster }) }))
    : [{ cluster: 'the cluster', plan: planPolicies(functions, { root }) }];
  const selection: DeploySelection<T> = { deployed: [], skipped: [], lines: [] };
  for (const fn of functions) {
    if (!policyOf(fn.registration)) {
      selection.deployed.push(fn);
      continue;
    }
    const webhookIn = plans.filter((p) => p.plan.servedFromLambda.includes(fn.name)).map((p) => p.cluster);
    if (webhookIn.length) {
      selection.deployed.push(fn);
      selection.lines.push(`policy ${fn.name}: deployed, served from Lambda for ${webhookIn.join(', ')}`);
    } else {
      selection.skipped.push(fn.name);
      selection.lines.push(`policy ${fn.name}: not deployed, every cluster evaluates it natively`);
    }
  }
  return selection;
}
