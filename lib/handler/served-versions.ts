/**
 * The Kubernetes version whose CEL environment compiles expressions served from Lambda, one rule
 * for validating and mutating policies and for matchConditions enforced in-function alike. A
 * native policy (or a webhook's matchConditions) is compiled by the API server of the cluster
 * that runs it, in that cluster's environment; the function standing in for that API server
 * compiles as the calling cluster would: its `kubeVersion` in the fleet (clusters.yaml), else the
 * definition's own `kubernetesVersion`, else the newest version modelled. `klw lint` checks each
 * expression for the same versions (each fleet cluster's, else the registration's), so an
 * expression it reports for a cluster is an expression error there in-function, under the
 * failurePolicy, and nowhere else.
 */
import { fleetKubeVersions } from './fleet.ts';

/** The version served expressions compile in for a caller: the caller's, else the definition's, else the newest (undefined). */
export function servedVersion(own: string | undefined, caller: string | undefined): string | undefined {
  return caller ?? own;
}

/** Compiles served expressions for a caller's version; each version once. */
export type ServedCompiler<C> = (callerVersion?: string) => C;

/**
 * The served expressions' compilations, one per version (the fleet's versions at most, so few), by
 * `servedVersion`. Inside Lambda every version the fleet names and the definition's own compile
 * while the module loads (the init phase), once `chunksReady` has loaded the chunks the expressions
 * need (RE2, the Kubernetes libraries); elsewhere each compiles on first use.
 */
export function servedCompiler<C>(
  own: string | undefined,
  compile: (version: string | undefined) => C,
  chunksReady: () => Promise<unknown> | undefined,
): ServedCompiler<C> {
  const compiled = new Map<string | undefined, C>();
  const forVersion = (version: string | undefined): C => {
    if (compiled.has(version)) return compiled.get(version)!;
    const c = compile(version);
    compiled.set(version, c);
    return c;
  };
  const forCaller: ServedCompiler<C> = (callerVersion) => forVersion(servedVersion(own, callerVersion));
  if (process.env.AWS_LAMBDA_FUNCTION_NAME) {
    const all = () => {
      forCaller();
      for (const version of fleetKubeVersions()) forCaller(version);
    };
    const loading = chunksReady();
    if (loading) loading.then(all, () => {});
    else all();
  }
  return forCaller;
}
