/** `klw logs --cluster X`: only the lines of one fleet cluster's calls. */
import { UNKNOWN_CLUSTER } from '../../lib/handler/fleet.ts';
import { isDns1123Label } from '../../lib/k8s/names.ts';
import { KlwError } from '../errors.ts';
import { loadFunctions } from '../functions.ts';
import { FLEET_FILE, loadFleet } from './file.ts';

/**
 * The server-side filter for one cluster: its review lines and the warnings and errors that name
 * it. A refused request names no cluster (its secret matched none), so it is not among them.
 * `cluster` must be a DNS-1123 label (checked by checkLogsCluster), which needs no quoting.
 */
export function clusterFilterPattern(cluster: string): string {
  if (!isDns1123Label(cluster)) throw new KlwError(`${JSON.stringify(cluster)} is not a cluster name`);
  return `{ ($.cluster = "${cluster}") && (($.msg = "review") || ($.level = "warn") || ($.level = "error")) }`;
}

/** True when a log line (parsed JSON) is one of `cluster`'s. */
export function isClusterLine(line: Record<string, unknown>, cluster: string): boolean {
  return line.cluster === cluster;
}

/**
 * Throws unless `cluster` is a cluster of the project's fleet file, or `unknown` (the name
 * review lines give callers no cluster's secret matched).
 */
export async function checkLogsCluster(root: string, cluster: string): Promise<void> {
  if (cluster === UNKNOWN_CLUSTER) return;
  const fleet = loadFleet(
    root,
    (await loadFunctions(root)).map((f) => f.registration),
  );
  if (!fleet) throw new KlwError(`--cluster needs the fleet file ${FLEET_FILE} at the project root`);
  if (!fleet.clusters.some((c) => c.name === cluster))
    throw new KlwError(
      `no cluster named ${JSON.stringify(cluster)} in ${fleet.file}; the clusters are ` +
        `${fleet.clusters.map((c) => c.name).join(', ')} (and ${UNKNOWN_CLUSTER}, callers no secret matched)`,
    );
}
