/**
 * The fleet file, `clusters.yaml` at the project root: the clusters one deployment serves, each
 * with its name, Kubernetes version, enforcement per function, labels and kubeconfig context.
 * Without the file there is one implicit cluster, as before fleets existed.
 */
import { join } from 'node:path';
import { ENFORCEMENT_MODES, type Enforcement, type Registration } from '../../lib/registration.ts';
import { isDns1123Label, labelValueProblem, qualifiedNameProblem } from '../../lib/k8s/names.ts';
import { MAX_CLUSTERS, UNKNOWN_CLUSTER, type ClusterSettings } from '../../lib/handler/fleet.ts';
import { KlwError } from '../errors.ts';
import { readRegularFile, type ReadRefusal } from '../files.ts';
import { FleetYamlError, parseFleetYaml, type FleetPath, type FleetYaml } from './yaml-text.ts';
import { parseKubeVersion, releaseVersionProblem, V1_APIS_SINCE, type KubeVersion } from '../kube-versions.ts';
import { isRecord } from '../json.ts';

/** A mapping of clusters.yaml as parsed: each member is checked where it is read. */
type Raw = Record<string, unknown>;

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

/** Most problems the error's message shows: a file of thousands of stray keys is not printed back whole. */
export const MAX_PROBLEMS_SHOWN = 20;

/** The fleet file is wrong: every problem found, each with its place and its fix. */
export class FleetFileError extends KlwError {
  constructor(readonly problems: FleetProblem[]) {
    const lines = problems
      .slice(0, MAX_PROBLEMS_SHOWN)
      .map((p) => `${p.file}${p.line ? `:${p.line}` : ''}: ${p.path}: ${p.message}; ${p.fix}`);
    const more = problems.length - MAX_PROBLEMS_SHOWN;
    if (more > 0) lines.push(`${problems[0]!.file}: and ${more} more problems; correct these first, then run again`);
    super(lines.join('\n'));
  }
}

/** A path as problems show it: `clusters[1].enforcement.pod-policy`, `(top)` for the whole file. */
function shown(path: FleetPath): string {
  return path.map((p, i) => (typeof p === 'number' ? `[${p}]` : `${i ? '.' : ''}${p}`)).join('') || '(top)';
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
  let yaml: FleetYaml;
  try {
    yaml = parseFleetYaml(text);
  } catch (err) {
    if (!(err instanceof FleetYamlError)) throw err;
    throw new FleetFileError(
      err.problems.map((p) => ({
        file,
        path: shown(p.path),
        ...(p.line ? { line: p.line } : {}),
        message: p.message,
        fix: p.fix,
      })),
    );
  }
  const problems: FleetProblem[] = [];
  const problem = (path: FleetPath, message: string, fix: string) => {
    const line = yaml.lineOf(path);
    problems.push({ file, path: shown(path), ...(line ? { line } : {}), message, fix });
  };
  const top = yaml.value;
  if (!isRecord(top)) {
    problem([], 'is not a mapping', 'write `clusters:` followed by a list of clusters, each with a name');
    throw new FleetFileError(problems);
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
    throw new FleetFileError(problems);
  }
  if (list.length > MAX_CLUSTERS)
    problem(
      ['clusters'],
      `${list.length} clusters; at most ${MAX_CLUSTERS}`,
      'split the fleet between deployments (services or stages)',
    );
  const byName = new Map(functions.map((f) => [f.name, f]));
  const seen = new Map<string, number>();
  const clusters: FleetCluster[] = [];
  list.slice(0, MAX_CLUSTERS).forEach((raw: unknown, i: number) => {
    const at = (...rest: Array<string | number>) => ['clusters', i, ...rest];
    if (!isRecord(raw)) {
      problem(at(), 'is not a mapping', 'write each cluster as a mapping: - name: prod-eu');
      return;
    }
    for (const key of Object.keys(raw)) {
      if (!CLUSTER_KEYS.includes(key))
        problem(at(key), `unknown key ${JSON.stringify(key)}`, `a cluster has only ${CLUSTER_KEYS.join(', ')}`);
    }
    const cluster: FleetCluster = { name: '', enforcement: {}, labels: {} };
    readName(raw, cluster, at, problem, seen, i);
    if (raw.kubeVersion !== undefined) readKubeVersion(raw, cluster, at, problem);
    if (raw.featureGates !== undefined) readFeatureGates(raw, cluster, at, problem);
    if (raw.enforcement !== undefined) readEnforcement(raw, cluster, at, problem, functions, byName);
    if (raw.labels !== undefined) readLabels(raw, cluster, at, problem);
    if (raw.context !== undefined) readContext(raw, cluster, at, problem);
    clusters.push(cluster);
  });
  if (problems.length) throw new FleetFileError(problems);
  return { file, clusters };
}

/** The path of a field of the cluster being read. */
type At = (...rest: Array<string | number>) => Array<string | number>;
/** Records a problem at a path of the fleet file. */
type Problem = (path: Array<string | number>, message: string, fix: string) => void;

/** Reads a cluster's `name`: a DNS-1123 label, not reserved, not another cluster's. */
function readName(
  raw: Raw,
  cluster: FleetCluster,
  at: At,
  problem: Problem,
  seen: Map<string, number>,
  i: number,
): void {
  const name = raw.name;
  if (name === undefined) {
    problem(at(), 'has no name', 'give it a name: a DNS-1123 label such as prod-eu');
  } else if (typeof name !== 'string' || !isDns1123Label(name)) {
    problem(
      at('name'),
      `${JSON.stringify(name)} is not a DNS-1123 label`,
      'use at most 63 lower-case letters, digits and -, starting and ending with a letter or digit',
    );
  } else if (name === UNKNOWN_CLUSTER) {
    problem(
      at('name'),
      `"${UNKNOWN_CLUSTER}" is reserved`,
      `choose another name: metrics name callers no cluster matched "${UNKNOWN_CLUSTER}"`,
    );
  } else if (seen.has(name)) {
    problem(
      at('name'),
      `${JSON.stringify(name)} is also the name of clusters[${seen.get(name)}]`,
      'give every cluster its own name',
    );
  } else {
    seen.set(name, i);
    cluster.name = name;
  }
}

/** Reads a cluster's `kubeVersion`: a quoted Kubernetes version the webhook APIs exist in. */
function readKubeVersion(raw: Raw, cluster: FleetCluster, at: At, problem: Problem): void {
  const version = raw.kubeVersion;
  if (typeof version === 'number') {
    problem(
      at('kubeVersion'),
      `${version} is a number (YAML reads 1.30 as 1.3)`,
      `quote it: kubeVersion: "${version}"`,
    );
  } else if (typeof version !== 'string') {
    problem(at('kubeVersion'), `${JSON.stringify(version)} is not a Kubernetes version`, 'write it as "1.29"');
  } else {
    const wrong = releaseVersionProblem(version);
    // The minor's digits are kept as written: at most two, so the text is exact.
    const parsed = wrong ? undefined : parseKubeVersion(version);
    if (!parsed)
      problem(
        at('kubeVersion'),
        `${JSON.stringify(version)} ${wrong}`,
        'write the version the cluster runs, as kubectl version shows it: "1.29" or "v1.29.3"',
      );
    else if (parsed.minor < V1_APIS_SINCE) {
      problem(
        at('kubeVersion'),
        `${version}: the webhook APIs klw writes (admissionregistration.k8s.io/v1) ` +
          `need Kubernetes 1.${V1_APIS_SINCE} or later`,
        `upgrade the cluster, or leave it out of the fleet`,
      );
    } else cluster.kubeVersion = { text: `${parsed.major}.${parsed.minor}`, version: parsed };
  }
}

/** Reads a cluster's `featureGates`: gate names to true or false. */
function readFeatureGates(raw: Raw, cluster: FleetCluster, at: At, problem: Problem): void {
  const gates = raw.featureGates;
  if (!isRecord(gates))
    problem(
      at('featureGates'),
      'is not a mapping',
      'write it as a mapping of gate to true or false: AdmissionWebhookMatchConditions: true',
    );
  else {
    cluster.featureGates = {};
    for (const [gate, on] of Object.entries(gates)) {
      if (!/^[A-Za-z0-9]+$/.test(gate))
        problem(
          at('featureGates', gate),
          `${JSON.stringify(gate)} is not a feature gate name`,
          'use the name kube-apiserver takes, letters and digits',
        );
      else if (typeof on !== 'boolean')
        problem(at('featureGates', gate), `${JSON.stringify(on)} is not true or false`, `write ${gate}: true`);
      else cluster.featureGates[gate] = on;
    }
  }
}

/** Reads a cluster's `enforcement`: admission functions of the project to Deny, Warn or Audit. */
function readEnforcement(
  raw: Raw,
  cluster: FleetCluster,
  at: At,
  problem: Problem,
  functions: KnownFunctions,
  byName: ReadonlyMap<string, KnownFunctions[number]>,
): void {
  const modes = raw.enforcement;
  if (!isRecord(modes))
    problem(
      at('enforcement'),
      'is not a mapping',
      'write it as a mapping of function name to Deny, Warn or Audit: pod-policy: Warn',
    );
  else {
    const names = functions.filter((f) => f.type !== 'conversion').map((f) => f.name);
    for (const [fn, mode] of Object.entries(modes)) {
      const known = byName.get(fn);
      if (!known) {
        problem(
          at('enforcement', fn),
          `no function is named ${JSON.stringify(fn)}`,
          names.length ? `use one of ${names.join(', ')}` : 'add the function under functions/ first',
        );
      } else if (known.type === 'conversion') {
        problem(
          at('enforcement', fn),
          `${fn} is a conversion function, which denies nothing`,
          'remove it: enforcement applies to admission functions',
        );
      } else if (!(ENFORCEMENT_MODES as readonly unknown[]).includes(mode)) {
        problem(
          at('enforcement', fn),
          `${JSON.stringify(mode)} is not an enforcement`,
          `use one of ${ENFORCEMENT_MODES.join(', ')}`,
        );
      } else cluster.enforcement[fn] = mode as Enforcement;
    }
  }
}

/** Reads a cluster's `labels`: Kubernetes label keys to valid values. */
function readLabels(raw: Raw, cluster: FleetCluster, at: At, problem: Problem): void {
  const labels = raw.labels;
  if (!isRecord(labels))
    problem(at('labels'), 'is not a mapping', 'write it as a mapping of label to value: env: prod');
  else {
    for (const [key, value] of Object.entries(labels)) {
      const keyProblem = qualifiedNameProblem(key);
      if (keyProblem)
        problem(
          at('labels', key),
          `key ${JSON.stringify(key)}: ${keyProblem}`,
          'use a Kubernetes label key such as env or example.com/tier',
        );
      else if (typeof value !== 'string')
        problem(at('labels', key), `${JSON.stringify(value)} is not a string`, `quote it: ${key}: "${String(value)}"`);
      else {
        const valueProblem = labelValueProblem(value);
        if (valueProblem)
          problem(
            at('labels', key),
            `value ${JSON.stringify(value)}: ${valueProblem}`,
            'use at most 63 letters, digits, -, _ and ., starting and ending with a letter or digit',
          );
        else cluster.labels[key] = value;
      }
    }
  }
}

/** Reads a cluster's kubeconfig `context`. */
function readContext(raw: Raw, cluster: FleetCluster, at: At, problem: Problem): void {
  const context = raw.context;
  // eslint-disable-next-line no-control-regex
  if (typeof context !== 'string' || !context.trim() || /[\u0000-\u001f\u007f]/.test(context)) {
    problem(
      at('context'),
      `${JSON.stringify(context)} is not a kubeconfig context name`,
      'write the context name as kubectl config get-contexts shows it',
    );
  } else cluster.context = context;
}

/**
 * The fleet file of a project, or undefined when there is none (one implicit cluster). Read
 * without following a symbolic link and at most FLEET_FILE_MAX_BYTES; throws FleetFileError
 * when it is wrong.
 */
export function loadFleet(root: string, functions: KnownFunctions): Fleet | undefined {
  let text: string;
  try {
    text = readRegularFile(join(root, FLEET_FILE), FLEET_FILE_MAX_BYTES);
  } catch (err) {
    const { code, size } = err as { code?: ReadRefusal; size?: number };
    if (code === 'ENOENT') return undefined;
    if (code === 'ELOOP')
      throw new KlwError(`${FLEET_FILE} is a symbolic link; write the fleet file itself at the project root`);
    if (code === 'ENOTREG')
      throw new KlwError(`${FLEET_FILE} is not a regular file; write the fleet file itself at the project root`);
    if (code === 'EFBIG') throw new KlwError(`${FLEET_FILE} is ${size} bytes; at most ${FLEET_FILE_MAX_BYTES}`);
    throw err;
  }
  return parseFleet(text, FLEET_FILE, functions);
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
