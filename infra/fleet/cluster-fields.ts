/** The checks of one cluster's fields in the fleet file, each reporting every problem it finds. */
import { ENFORCEMENT_MODES, type Enforcement } from '../../lib/registration.ts';
import { isDns1123Label, labelValueProblem, qualifiedNameProblem } from '../../lib/k8s/names.ts';
import { UNKNOWN_CLUSTER } from '../../lib/fleet.ts';
import { parseKubeVersion, V1_APIS_SINCE, type KubeVersion } from '../kube-versions.ts';
import type { FleetCluster, KnownFunctions } from './file.ts';

/** A path in the fleet file: keys and list indexes. */
export type Path = Array<string | number>;

/** What the checks of one cluster's fields share: its raw mapping, what is parsed so far, and where to report. */
export interface ClusterFields {
  raw: Record<string, any>;
  cluster: FleetCluster;
  /** The path of a field of this cluster. */
  at: (...rest: Path) => Path;
  problem: (path: Path, message: string, fix: string) => void;
}

/** `name`: a DNS-1123 label, not the reserved one, not repeated (`seen` maps names to the index of their cluster). */
export function checkName({ raw, cluster, at, problem }: ClusterFields, seen: Map<string, number>, i: number): void {
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

/** `kubeVersion`: a quoted Kubernetes version the webhook APIs exist in. */
export function checkKubeVersion({ raw, cluster, at, problem }: ClusterFields): void {
  if (raw.kubeVersion !== undefined) {
    const version = raw.kubeVersion;
    if (typeof version === 'number') {
      problem(
        at('kubeVersion'),
        `${version} is a number (YAML reads 1.30 as 1.3)`,
        `quote it: kubeVersion: "${version}"`,
      );
    } else {
      let parsed: KubeVersion | undefined;
      try {
        parsed = typeof version === 'string' ? parseKubeVersion(version) : undefined;
      } catch {
        parsed = undefined;
      }
      if (!parsed)
        problem(at('kubeVersion'), `${JSON.stringify(version)} is not a Kubernetes version`, 'write it as "1.29"');
      else if (parsed.major === 1 && parsed.minor < V1_APIS_SINCE) {
        problem(
          at('kubeVersion'),
          `${version}: the webhook APIs klw writes (admissionregistration.k8s.io/v1) ` +
            `need Kubernetes 1.${V1_APIS_SINCE} or later`,
          `upgrade the cluster, or leave it out of the fleet`,
        );
      } else cluster.kubeVersion = { text: `${parsed.major}.${parsed.minor}`, version: parsed };
    }
  }
}

/** `featureGates`: gate names to true or false. */
export function checkFeatureGates({ raw, cluster, at, problem }: ClusterFields): void {
  if (raw.featureGates !== undefined) {
    const gates = raw.featureGates;
    if (!isObject(gates))
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
}

/** `enforcement`: admission functions of the project to Deny, Warn or Audit. */
export function checkEnforcement({ raw, cluster, at, problem }: ClusterFields, functions: KnownFunctions): void {
  const byName = new Map(functions.map((f) => [f.name, f]));
  if (raw.enforcement !== undefined) {
    const modes = raw.enforcement;
    if (!isObject(modes))
      problem(
        at('enforcement'),
        'is not a mapping',
        'write it as a mapping of function name to Deny, Warn or Audit: pod-policy: Warn',
      );
    else {
      for (const [fn, mode] of Object.entries(modes)) {
        const known = byName.get(fn);
        if (!known) {
          const names = functions.filter((f) => f.type !== 'conversion').map((f) => f.name);
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
}

/** `labels`: Kubernetes label keys to valid values. */
export function checkLabels({ raw, cluster, at, problem }: ClusterFields): void {
  if (raw.labels !== undefined) {
    const labels = raw.labels;
    if (!isObject(labels))
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
          problem(
            at('labels', key),
            `${JSON.stringify(value)} is not a string`,
            `quote it: ${key}: "${String(value)}"`,
          );
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
}

/** `context`: a kubeconfig context name. */
export function checkContext({ raw, cluster, at, problem }: ClusterFields): void {
  if (raw.context !== undefined) {
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
}

/** True for a mapping (not a list, not null). */
export function isObject(value: unknown): value is Record<string, any> {
  return !!value && typeof value === 'object' && !Array.isArray(value);
}
