/**
 * What `klw manifests` refuses of the project's policies for one cluster: what the API server
 * refuses when a policy or its binding is created, and every expression that does not compile
 * in the CEL environment of the Kubernetes version that runs it there (natively, or from Lambda
 * for that caller): the cluster's, else --kube-version, else the policy's own kubernetesVersion,
 * else the newest. The same checks as `klw lint`, each naming the file, the field and the fix.
 */
import { relative, resolve } from 'node:path';
import type { FleetCluster } from './fleet/file.ts';
import type { KubeTarget } from './kube-versions.ts';
import type { Finding } from './lint/finding.ts';
import { lintPolicy, type LintedFunction } from './lint/policies.ts';
import { policyOf } from './policies/registration.ts';

/** The cluster a manifest is written for: a fleet cluster, or the one --kube-version describes. */
export interface PolicyCheckTarget {
  cluster?: FleetCluster;
  target?: KubeTarget;
}

/** The findings of the project's policies for one cluster (see the module's comment). */
export function manifestPolicyFindings(root: string, functions: LintedFunction[], where: PolicyCheckTarget): Finding[] {
  const findings: Finding[] = [];
  const targetText = where.target ? `${where.target.version.major}.${where.target.version.minor}` : undefined;
  for (const fn of functions) {
    const policy = policyOf(fn.registration);
    if (!policy) continue;
    const own = fn.registration.type === 'conversion' ? undefined : fn.registration.kubernetesVersion;
    const version = where.cluster?.kubeVersion?.text ?? targetText ?? own;
    const label = where.cluster
      ? `cluster ${where.cluster.name}`
      : version
        ? `Kubernetes ${version}`
        : 'the newest Kubernetes';
    const file = relative(resolve(root), fn.entry).split('\\').join('/');
    const found = lintPolicy(fn.name, file, policy, [{ ...(version ? { kubernetesVersion: version } : {}), label }]);
    findings.push(...found.map((f) => (where.cluster ? { ...f, subject: `${where.cluster.name}: ${f.subject}` } : f)));
  }
  return findings;
}
