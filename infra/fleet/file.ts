/**
 * The fleet file, `clusters.yaml` at the project root: the clusters one deployment serves, each
 * with its name, Kubernetes version, enforcement per function, labels and kubeconfig context.
 * Without the file there is one implicit cluster, as before fleets existed.
 */
import { closeSync, constants, fstatSync, openSync, readSync } from 'node:fs';
import { join } from 'node:path';
import { isMap, isScalar, isSeq, LineCounter, parseDocument, type Document } from 'yaml';
import type { Enforcement, Registration } from '../../lib/registration.ts';
import { MAX_CLUSTERS, type ClusterSettings } from '../../lib/fleet.ts';
import { KlwError } from '../errors.ts';
import type { KubeVersion } from '../kube-versions.ts';
import {
  checkContext,
  checkEnforcement,
  checkFeatureGates,
  checkKubeVersion,
  checkLabels,
  checkName,
  isObject,
  type ClusterFields,
  type Path,
} from './cluster-fields.ts';

/** Name of the fleet file at the project root. */
export const FLEET_FILE = 'clusters.yaml';

/** Largest fleet file read: a hundred clusters with their settings fit in far less. */
export const FLEET_FILE_MAX_BYTES = 1 << 20;

/** One cluster of the fleet. */
export interface FleetCluster {
  /** A DNS-1123 label: the URL secret's parameter, the metric dimension and the manifests' file name use it. */
  name: string;
  /** The Kubernetes version, as written (`1.29`), and parsed. */
  kubeVersion?: { text: string; version: KubeVersion };
  /** Feature gates on in the cluster's API server beyond the defaults. */
  featureGates?: Record<string, boolean>;
  /** Enforcement per function name, overriding the registration for this cluster. */
  enforcement: Record<string, Enforcement>;
  labels: Record<string, string>;
  /** kubeconfig context of the cluster (`klw audit`). */
  context?: string;
}

/** The clusters of the fleet file, in the file's order. */
export interface Fleet {
  file: string;
  clusters: FleetCluster[];
}

/** One thing wrong in the fleet file. */
export interface FleetProblem {
  file: string;
  /** Where in the file, `clusters[1].enforcement.pod-policy`. */
  path: string;
  line?: number;
  message: string;
  fix: string;
}

/** The fleet file is wrong: every problem found, each with its place and its fix. */
export class FleetFileError extends KlwError {
  constructor(readonly problems: FleetProblem[]) {
    super(problems.map((p) => `${p.file}${p.line ? `:${p.line}` : ''}: ${p.path}: ${p.message}; ${p.fix}`).join('\n'));
  }
}

/** The function names and kinds the fleet file may refer to. */
export type KnownFunctions = ReadonlyArray<Pick<Registration, 'name' | 'type'>>;

const CLUSTER_KEYS = ['name', 'kubeVersion', 'featureGates', 'enforcement', 'labels', 'context'];

/**
 * Validates the text of a fleet file. `functions` are the project's functions: an enforcement
 * for a function that does not exist, or for a conversion function, is an error. Throws
 * FleetFileError listing every problem.
 */
export function parseFleet(text: string, file: string, functions: KnownFunctions): Fleet {
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, uniqueKeys: true, prettyErrors: false });
  const problems: FleetProblem[] = [];
  const lineOf = (path: Path): number | undefined => {
    const node = (path.length ? doc.getIn(path, true) : doc.contents) as
      | { range?: [number, number, number] }
      | undefined;
    return node?.range ? lines.linePos(node.range[0]).line : undefined;
  };
  const shown = (path: Path) =>
    path.map((p, i) => (typeof p === 'number' ? `[${p}]` : `${i ? '.' : ''}${p}`)).join('') || '(top)';
  const problem = (path: Path, message: string, fix: string) => {
    const line = lineOf(path);
    problems.push({ file, path: shown(path), ...(line ? { line } : {}), message, fix });
  };
  if (doc.errors.length) {
    const err = doc.errors[0]!;
    problems.push({
      file,
      path: '(top)',
      line: lines.linePos(err.pos[0]).line,
      message: `not valid YAML: ${err.message.split('\n')[0]}`,
      fix: 'correct the YAML syntax',
    });
    throw new FleetFileError(problems);
  }
  const list = clusterList(toJs(doc), problem);
  if (!list) throw new FleetFileError(problems);
  const seen = new Map<string, number>();
  const clusters: FleetCluster[] = [];
  list.slice(0, MAX_CLUSTERS).forEach((raw: unknown, i: number) => {
    const at = (...rest: Path) => ['clusters', i, ...rest];
    if (!isObject(raw)) {
      problem(at(), 'is not a mapping', 'write each cluster as a mapping: - name: prod-eu');
      return;
    }
    for (const key of Object.keys(raw)) {
      if (!CLUSTER_KEYS.includes(key))
        problem(at(key), `unknown key ${JSON.stringify(key)}`, `a cluster has only ${CLUSTER_KEYS.join(', ')}`);
    }
    const fields: ClusterFields = { raw, cluster: { name: '', enforcement: {}, labels: {} }, at, problem };
    checkName(fields, seen, i);
    checkKubeVersion(fields);
    checkFeatureGates(fields);
    checkEnforcement(fields, functions);
    checkLabels(fields);
    checkContext(fields);
    clusters.push(fields.cluster);
  });
  if (problems.length) throw new FleetFileError(problems);
  return { file, clusters };
}

/** The list under `clusters:`, or undefined (after reporting why) when the file has none to read. */
function clusterList(top: unknown, problem: ClusterFields['problem']): unknown[] | undefined {
  if (!isObject(top)) {
    problem([], 'is not a mapping', 'write `clusters:` followed by a list of clusters, each with a name');
    return undefined;
  }
  for (const key of Object.keys(top))
    if (key !== 'clusters') problem([key], `unknown key ${JSON.stringify(key)}`, 'the file holds only `clusters:`');
  const list = top.clusters;
  if (!Array.isArray(list) || !list.length) {
    problem(
      top.clusters === undefined ? [] : ['clusters'],
      'no clusters',
      'write `clusters:` with a list of at least one cluster (- name: prod-eu), ' +
        'or remove the file to serve one cluster',
    );
    return undefined;
  }
  if (list.length > MAX_CLUSTERS)
    problem(
      ['clusters'],
      `${list.length} clusters; at most ${MAX_CLUSTERS}`,
      'split the fleet between deployments (services or stages)',
    );
  return list;
}

function toJs(doc: Document): unknown {
  const contents = doc.contents;
  if (!contents || !(isMap(contents) || isSeq(contents) || isScalar(contents))) return contents ?? undefined;
  return doc.toJS({ maxAliasCount: 100 });
}

/**
 * The fleet file of a project, or undefined when there is none (one implicit cluster). Read
 * without following a symbolic link and at most FLEET_FILE_MAX_BYTES; throws FleetFileError
 * when it is wrong.
 */
export function loadFleet(root: string, functions: KnownFunctions): Fleet | undefined {
  const file = join(root, FLEET_FILE);
  let fd: number;
  try {
    fd = openSync(file, constants.O_RDONLY | constants.O_NOFOLLOW);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return undefined;
    if (code === 'ELOOP')
      throw new KlwError(`${FLEET_FILE} is a symbolic link; write the fleet file itself at the project root`);
    throw err;
  }
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) throw new KlwError(`${FLEET_FILE} is not a regular file`);
    if (stat.size > FLEET_FILE_MAX_BYTES)
      throw new KlwError(`${FLEET_FILE} is ${stat.size} bytes; at most ${FLEET_FILE_MAX_BYTES}`);
    const buffer = Buffer.alloc(stat.size);
    let read = 0;
    while (read < stat.size) {
      const n = readSync(fd, buffer, read, stat.size - read, read);
      if (!n) break;
      read += n;
    }
    return parseFleet(buffer.subarray(0, read).toString('utf8'), FLEET_FILE, functions);
  } finally {
    closeSync(fd);
  }
}

/** The clusters asked for: one by name (an unknown name is an error naming the known ones), or all. */
export function selectClusters(fleet: Fleet | undefined, which: { cluster?: string; all?: boolean }): FleetCluster[] {
  if (!which.cluster && !which.all) return [];
  if (!fleet)
    throw new KlwError(
      `${which.all ? '--all-clusters' : '--cluster'} needs the fleet file ${FLEET_FILE} at the project root`,
    );
  if (which.all) return fleet.clusters;
  const found = fleet.clusters.find((c) => c.name === which.cluster);
  if (!found)
    throw new KlwError(
      `no cluster named ${JSON.stringify(which.cluster)} in ${fleet.file}; ` +
        `the clusters are ${fleet.clusters.map((c) => c.name).join(', ')}`,
    );
  return [found];
}

/** The value of KLW_FLEET for one function: each cluster's enforcement of it and Kubernetes version. */
export function fleetEnvValue(fleet: Fleet, functionName: string): string {
  const value: Record<string, ClusterSettings> = {};
  for (const cluster of fleet.clusters) {
    const enforcement = cluster.enforcement[functionName];
    value[cluster.name] = {
      ...(enforcement ? { enforcement } : {}),
      ...(cluster.kubeVersion ? { kubeVersion: cluster.kubeVersion.text } : {}),
    };
  }
  return JSON.stringify(value);
}
