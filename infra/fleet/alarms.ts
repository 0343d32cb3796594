/**
 * Per-cluster alarms of a fleet deployment: for each function and each cluster the
 * `clusterAlarms` param names, an errors alarm and a p99 duration alarm on the review metrics of
 * that cluster (the EMF dimension set `webhook` + `cluster` every fleet function writes).
 */
import type { Registration } from '../../lib/registration.ts';
import { FLEET_FILE, type Fleet } from './file.ts';

/** A CloudFormation object (a resource, its properties, the resources by logical id). */
type CfnObject = Record<string, unknown>;

/** The `clusterAlarms` param: `all`, or the names of the clusters to alarm on; none when unset. */
export type ClusterAlarmsSetting = 'all' | string[];

/**
 * Most per-cluster alarms one deployment may add. CloudFormation takes 500 resources per
 * template; the functions, their routes, permissions and own alarms need the rest.
 */
export const MAX_CLUSTER_ALARMS = 200;

/** Alarms added per function and alarmed cluster: errors, p99 duration. */
export const ALARMS_PER_CLUSTER = 2;

/** Reads the `clusterAlarms` param: `all`, a comma-separated list of cluster names, or empty for none. */
export function parseClusterAlarms(value: unknown): ClusterAlarmsSetting | undefined {
  if (value === undefined || value === null || value === '' || value === false || value === 'false') return undefined;
  if (value === true || value === 'true' || value === 'all') return 'all';
  const names = String(value)
    .split(',')
    .map((n) => n.trim())
    .filter(Boolean);
  return names.length ? [...new Set(names)] : undefined;
}

/**
 * The clusters to alarm on, in the fleet file's order. Throws when the setting names a cluster
 * the fleet file lacks, when there is no fleet file, or when the alarms would crowd the template.
 */
export function alarmedClusters(
  fleet: Fleet | undefined,
  setting: ClusterAlarmsSetting | undefined,
  functions: number,
): string[] {
  if (!setting) return [];
  if (!fleet) throw new Error(`param clusterAlarms needs the fleet file ${FLEET_FILE} at the project root`);
  const known = fleet.clusters.map((c) => c.name);
  if (setting !== 'all') {
    const unknown = setting.filter((n) => !known.includes(n));
    if (unknown.length)
      throw new Error(
        `param clusterAlarms: no cluster named ${unknown.map((n) => JSON.stringify(n)).join(', ')} in ` +
          `${fleet.file}; the clusters are ${known.join(', ')}`,
      );
  }
  const clusters = setting === 'all' ? known : known.filter((n) => setting.includes(n));
  const count = clusters.length * functions * ALARMS_PER_CLUSTER;
  if (count > MAX_CLUSTER_ALARMS)
    throw new Error(
      `param clusterAlarms: ${clusters.length} clusters x ${functions} functions would add ${count} alarms; ` +
        `at most ${MAX_CLUSTER_ALARMS} fit in one template: name fewer clusters (clusterAlarms: prod-eu,prod-us)`,
    );
  return clusters;
}

/**
 * A cluster name as part of a CloudFormation logical id (letters and digits only): names are
 * lower case, so writing each `-` as `X` keeps distinct names distinct.
 */
export function clusterLogicalId(cluster: string): string {
  return `Cluster${cluster.replaceAll('-', 'X')}`;
}

/** What the per-cluster alarms of one function need. */
export interface ClusterAlarmTarget {
  registration: Pick<Registration, 'name' | 'timeoutSeconds'>;
  logicalIdPrefix: string;
}

/**
 * The per-cluster alarms of one function, as CloudFormation resources built by `alarm` (the
 * plugin's alarm properties, its topic included): errors and timeouts of the cluster's reviews,
 * and their p99 duration above `durationShare` of the webhook timeout.
 */
export function clusterAlarmsFor(
  fn: ClusterAlarmTarget,
  clusters: readonly string[],
  namespace: string,
  durationShare: number,
  alarm: (description: string, props: CfnObject) => CfnObject,
): CfnObject {
  const name = fn.registration.name;
  const thresholdMs = Math.round(fn.registration.timeoutSeconds * 1000 * durationShare);
  const resources: CfnObject = {};
  for (const cluster of clusters) {
    const dimensions = [
      { Name: 'webhook', Value: name },
      { Name: 'cluster', Value: cluster },
    ];
    const metric = (id: string, metricName: string) => ({
      Id: id,
      ReturnData: false,
      MetricStat: {
        Metric: { Namespace: namespace, MetricName: metricName, Dimensions: dimensions },
        Period: 60,
        Stat: 'Sum',
      },
    });
    const id = `${fn.logicalIdPrefix}${clusterLogicalId(cluster)}`;
    resources[`${id}ErrorsAlarm`] = alarm(`${name} in cluster ${cluster}: reviews that errored or timed out`, {
      Threshold: 1,
      Metrics: [
        metric('errored', 'Errored'),
        metric('timedout', 'TimedOut'),
        {
          Id: 'failures',
          Label: 'errors and timeouts',
          ReturnData: true,
          Expression: 'FILL(errored, 0) + FILL(timedout, 0)',
        },
      ],
    });
    resources[`${id}DurationAlarm`] = alarm(
      `${name} in cluster ${cluster}: p99 review duration above ${durationShare * 100}% of the webhook timeout ` +
        `(${fn.registration.timeoutSeconds} s)`,
      {
        Namespace: namespace,
        MetricName: 'Duration',
        Dimensions: dimensions,
        ExtendedStatistic: 'p99',
        Period: 300,
        Threshold: thresholdMs,
        ComparisonOperator: 'GreaterThanThreshold',
      },
    );
  }
  return resources;
}
