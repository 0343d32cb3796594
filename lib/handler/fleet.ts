/**
 * One deployment serving several clusters, at run time: which clusters exist and what each
 * changes (enforcement, Kubernetes version) reach a function through environment variables set
 * by the serverless plugin or the emulator from the fleet file (`clusters.yaml`); the calling
 * cluster is the one whose path secret the URL carries, never anything the request body says.
 *
 * - `KLW_FLEET`: JSON `{"<cluster>": {"enforcement"?: "Deny"|"Warn"|"Audit", "kubeVersion"?: "1.29"}}`,
 *   this function's settings per cluster. Unset: one implicit cluster, as without a fleet.
 * - `KLW_FLEET_PATH_SECRET_SSM`: the SSM parameter name of each cluster's secret(s), with
 *   `{cluster}` where the cluster name goes (deployed).
 * - `KLW_FLEET_PATH_SECRETS`: JSON `{"<cluster>": "current[,previous]"}` (local: the emulator).
 */
import type { Enforcement, Registration } from '../registration.ts';
import { ENFORCEMENT_MODES } from '../registration.ts';
import { isDns1123Label } from '../k8s/names.ts';
import {
  AuthConfigError,
  misconfigured,
  NOT_FOUND_REPLY,
  parsePathSecrets,
  pathSecretOf,
  PATH_SECRET_MAX_AGE_MS,
  PATH_SECRET_REFRESH_ON_MISS_MS,
  redactPath,
  type AuthOutcome,
  type AuthRequest,
} from '../auth.ts';
import { cachedParameter, parameterReadMs } from '../parameters.ts';
import { attempt } from './failure.ts';
import type { Caller } from './types.ts';

/** Environment variable holding this function's settings per cluster (JSON); set means the function serves a fleet. */
export const FLEET_ENV = 'KLW_FLEET';
/** Environment variable naming each cluster's SSM parameter, `{cluster}` standing for the cluster name. */
export const FLEET_PATH_SECRET_SSM_ENV = 'KLW_FLEET_PATH_SECRET_SSM';
/** Environment variable holding each cluster's secret(s) locally: JSON `{"<cluster>": "current[,previous]"}`. */
export const FLEET_PATH_SECRETS_ENV = 'KLW_FLEET_PATH_SECRETS';
/** Where the cluster name goes in KLW_FLEET_PATH_SECRET_SSM. */
export const CLUSTER_PLACEHOLDER = '{cluster}';
/** The cluster name logs and metrics use for a caller no fleet cluster matched, keeping the dimension bounded. */
export const UNKNOWN_CLUSTER = 'unknown';
/**
 * Most clusters in a fleet. Each request compares its secret with every cluster's one or two
 * (about a microsecond each), each cluster costs one SSM read per execution environment per
 * five minutes, and every name is a metric dimension value: a hundred keeps all three small.
 */
export const MAX_CLUSTERS = 100;

/** What one cluster changes for this function. */
export interface ClusterSettings {
  enforcement?: Enforcement;
  /** `1.29`: the cluster's Kubernetes version (its CEL environment). */
  kubeVersion?: string;
}

/** The clusters this function serves, by name. */
export type FleetRuntime = ReadonlyMap<string, ClusterSettings>;

let parsed: { raw: string; fleet: FleetRuntime } | undefined;

/**
 * The fleet from KLW_FLEET, or undefined when it is unset (one implicit cluster). Parsed once
 * per distinct value. Throws AuthConfigError when it is not the JSON described above: a
 * function that cannot tell its clusters apart must not guess.
 */
export function fleetFromEnv(env: NodeJS.ProcessEnv = process.env): FleetRuntime | undefined {
  const raw = env[FLEET_ENV];
  if (raw === undefined) return undefined;
  if (parsed?.raw === raw) return parsed.fleet;
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    throw new AuthConfigError(`${FLEET_ENV} is not JSON ({"<cluster>": {"enforcement": "Warn"}})`);
  }
  if (!value || typeof value !== 'object' || Array.isArray(value))
    throw new AuthConfigError(`${FLEET_ENV} is not a JSON object of cluster names`);
  const entries = Object.entries(value as Record<string, unknown>);
  if (!entries.length) throw new AuthConfigError(`${FLEET_ENV} names no cluster`);
  if (entries.length > MAX_CLUSTERS)
    throw new AuthConfigError(`${FLEET_ENV} names ${entries.length} clusters; at most ${MAX_CLUSTERS}`);
  const fleet = new Map<string, ClusterSettings>();
  for (const [name, settings] of entries) {
    if (!isDns1123Label(name) || name === UNKNOWN_CLUSTER)
      throw new AuthConfigError(
        `${FLEET_ENV}: ${JSON.stringify(name)} is not a cluster name ` +
          `(a DNS-1123 label other than "${UNKNOWN_CLUSTER}")`,
      );
    if (!settings || typeof settings !== 'object' || Array.isArray(settings))
      throw new AuthConfigError(`${FLEET_ENV}: cluster ${name} is not an object`);
    const { enforcement, kubeVersion, ...rest } = settings as Record<string, unknown>;
    const extra = Object.keys(rest);
    if (extra.length) throw new AuthConfigError(`${FLEET_ENV}: cluster ${name} has unknown setting ${extra[0]}`);
    if (enforcement !== undefined && !(ENFORCEMENT_MODES as readonly unknown[]).includes(enforcement)) {
      throw new AuthConfigError(
        `${FLEET_ENV}: cluster ${name}: enforcement ${JSON.stringify(enforcement)} ` +
          `is not one of ${ENFORCEMENT_MODES.join(', ')}`,
      );
    }
    if (kubeVersion !== undefined && (typeof kubeVersion !== 'string' || !/^\d+\.\d+$/.test(kubeVersion))) {
      throw new AuthConfigError(
        `${FLEET_ENV}: cluster ${name}: kubeVersion ${JSON.stringify(kubeVersion)} is not a version such as "1.29"`,
      );
    }
    fleet.set(name, {
      ...(enforcement ? { enforcement: enforcement as Enforcement } : {}),
      ...(kubeVersion ? { kubeVersion: kubeVersion as string } : {}),
    });
  }
  parsed = { raw, fleet };
  return fleet;
}

/** The Kubernetes versions the fleet's clusters set (KLW_FLEET); none when unset or broken (the handler answers 500). */
export function fleetKubeVersions(): string[] {
  try {
    return [...(fleetFromEnv() ?? new Map()).values()].flatMap((c) => (c.kubeVersion ? [c.kubeVersion] : []));
  } catch {
    return [];
  }
}

/** The SSM parameter of one cluster's secret(s): the KLW_FLEET_PATH_SECRET_SSM template with the name put in. */
export function clusterParameterName(template: string, cluster: string): string {
  return template.split(CLUSTER_PLACEHOLDER).join(cluster);
}

/** One cluster's valid secrets, current first. */
export interface ClusterSecrets {
  cluster: string;
  secrets: string[];
}

/** Reads an SSM parameter's value through a cache (cachedParameter by default). */
export type ParameterReader = (name: string, maxAgeMs: number) => Promise<string>;

/** Each cluster's secrets, and why those of the clusters left out could not be had. */
export interface FleetSecrets {
  clusters: ClusterSecrets[];
  problems: string[];
}

/**
 * Every cluster's secrets: from KLW_FLEET_PATH_SECRETS, else from each cluster's SSM parameter
 * (through `read`, cached, so SSM reads grow with clusters and time, never with requests). A
 * cluster whose parameter is missing, unreadable or malformed is left out with a problem: its
 * calls fail (by its failurePolicy) and every other cluster keeps working. AuthConfigError
 * when neither variable is set or their form is wrong.
 */
export async function fleetSecrets(
  fleet: FleetRuntime,
  env: NodeJS.ProcessEnv = process.env,
  maxAgeMs = PATH_SECRET_MAX_AGE_MS,
  read: ParameterReader = cachedParameter,
): Promise<FleetSecrets> {
  const local = env[FLEET_PATH_SECRETS_ENV];
  const clusters: ClusterSecrets[] = [];
  const problems: string[] = [];
  if (local !== undefined) {
    let values: Record<string, unknown>;
    try {
      values = JSON.parse(local) as Record<string, unknown>;
    } catch {
      throw new AuthConfigError(`${FLEET_PATH_SECRETS_ENV} is not JSON ({"<cluster>": "current[,previous]"})`);
    }
    if (!values || typeof values !== 'object' || Array.isArray(values))
      throw new AuthConfigError(`${FLEET_PATH_SECRETS_ENV} is not a JSON object`);
    for (const cluster of fleet.keys()) {
      const value = Object.hasOwn(values, cluster) ? values[cluster] : undefined;
      if (typeof value !== 'string') {
        problems.push(`${FLEET_PATH_SECRETS_ENV} holds no secret for cluster ${cluster}`);
        continue;
      }
      try {
        clusters.push({ cluster, secrets: parsePathSecrets(value, `${FLEET_PATH_SECRETS_ENV} (cluster ${cluster})`) });
      } catch (err) {
        problems.push((err as Error).message);
      }
    }
    return { clusters, problems };
  }
  const template = env[FLEET_PATH_SECRET_SSM_ENV];
  if (!template)
    throw new AuthConfigError(
      `${FLEET_ENV} is set but no cluster secrets are (${FLEET_PATH_SECRET_SSM_ENV} or ${FLEET_PATH_SECRETS_ENV})`,
    );
  if (!template.includes(CLUSTER_PLACEHOLDER))
    throw new AuthConfigError(
      `${FLEET_PATH_SECRET_SSM_ENV} has no ${CLUSTER_PLACEHOLDER}: every cluster would share one secret`,
    );
  const names = [...fleet.keys()];
  const results = await Promise.allSettled(
    names.map((cluster) => read(clusterParameterName(template, cluster), maxAgeMs)),
  );
  results.forEach((result, i) => {
    const cluster = names[i]!;
    const name = clusterParameterName(template, cluster);
    if (result.status === 'rejected') {
      problems.push(`cluster ${cluster}: could not read SSM parameter ${name} (${String(result.reason)})`);
      return;
    }
    try {
      clusters.push({ cluster, secrets: parsePathSecrets(result.value, `SSM parameter ${name} (cluster ${cluster})`) });
    } catch (err) {
      problems.push((err as Error).message);
    }
  });
  return { clusters, problems };
}

// node:crypto is loaded only once a fleet is configured, as lib/auth.ts does.
let crypto: Promise<typeof import('node:crypto')> | undefined;

/**
 * The cluster whose secrets include `given`, or undefined. Every secret of every cluster is
 * compared, as SHA-256 digests in constant time and without an early exit, so the time says
 * nothing about which cluster, which secret or how much of it matched. A secret shared by two
 * clusters (never made by klw) matches neither: the caller could not be told apart.
 */
export async function matchCluster(
  given: string | undefined,
  clusters: readonly ClusterSecrets[],
): Promise<string | undefined> {
  const { createHash, timingSafeEqual } = await (crypto ??= import('node:crypto'));
  const digest = (value: string) => createHash('sha256').update(value, 'utf8').digest();
  const mine = digest(given ?? '');
  let found: string | undefined;
  let matches = 0;
  for (const { cluster, secrets } of clusters) {
    let hit = false;
    for (const secret of secrets) hit = timingSafeEqual(mine, digest(secret)) || hit;
    // Both branches assign, so a match costs what a miss does.
    found = hit ? cluster : found;
    matches += hit ? 1 : 0;
  }
  return given && matches === 1 ? found : undefined;
}

/** The outcome of identifying a caller: its cluster, or none, with the problems met on the way. */
export interface CallerCluster {
  /** Undefined when no cluster's secret matched: answer 404 as for a wrong path secret. */
  cluster?: string;
  problems: string[];
}

/**
 * Identifies the calling cluster by the path secret `given`. When nothing matches and the
 * secrets come from SSM, they are read again if older than `refreshOnMissMs` (a cluster just
 * rotated), so a flood of wrong secrets costs at most one read per cluster per interval.
 */
export async function identifyCluster(
  given: string | undefined,
  fleet: FleetRuntime,
  env: NodeJS.ProcessEnv = process.env,
  options: { read?: ParameterReader; maxAgeMs?: number; refreshOnMissMs?: number } = {},
): Promise<CallerCluster> {
  const read = options.read ?? cachedParameter;
  const first = await fleetSecrets(fleet, env, options.maxAgeMs ?? PATH_SECRET_MAX_AGE_MS, read);
  const cluster = await matchCluster(given, first.clusters);
  if (cluster || env[FLEET_PATH_SECRETS_ENV] !== undefined || options.refreshOnMissMs === undefined)
    return { ...(cluster ? { cluster } : {}), problems: first.problems };
  const again = await fleetSecrets(fleet, env, options.refreshOnMissMs, read);
  const late = await matchCluster(given, again.clusters);
  return { ...(late ? { cluster: late } : {}), problems: again.problems };
}

/** The cluster name for logs and metrics: a fleet cluster's name, else `unknown` (a bounded dimension). */
export function clusterDimension(cluster: string | undefined, fleet: FleetRuntime | undefined): string {
  return cluster && fleet?.has(cluster) ? cluster : UNKNOWN_CLUSTER;
}

/** Whether this function serves a fleet (KLW_FLEET is set): its metrics then carry the cluster. */
export function servesFleet(env: NodeJS.ProcessEnv): boolean {
  return env[FLEET_ENV] !== undefined;
}

/**
 * The caller a fleet function names by the matched cluster, with that cluster's settings; no
 * cluster (`auth: 'none'`) is named `unknown` in logs and metrics. Frozen: no stage changes it.
 */
export function fleetCaller(cluster: string | undefined, fleet: FleetRuntime | undefined): Caller {
  const settings = cluster ? fleet?.get(cluster) : undefined;
  return Object.freeze({
    identity: cluster ? 'fleet' : 'none',
    ...(cluster ? { cluster } : {}),
    dimension: clusterDimension(cluster, fleet),
    ...(settings?.enforcement ? { enforcement: settings.enforcement } : {}),
    ...(settings?.kubeVersion ? { kubeVersion: settings.kubeVersion } : {}),
  });
}

/**
 * Authenticates one request of a fleet function by its path secret, naming the calling
 * cluster; undefined when KLW_FLEET is unset (authenticate as without a fleet). A secret no
 * cluster holds answers 404 like an unknown route; a fleet setting that cannot work, 500.
 * `auth: 'none'` functions are called by no cluster in particular.
 */
export async function authenticateFleet(
  registration: Pick<Registration, 'name' | 'auth'>,
  req: AuthRequest,
  env: NodeJS.ProcessEnv = process.env,
  read: ParameterReader = cachedParameter,
): Promise<AuthOutcome | undefined> {
  if (env[FLEET_ENV] === undefined) return undefined;
  // A broken KLW_FLEET is refused below when a cluster is to be named; `auth: 'none'` names none.
  if (registration.auth === 'none')
    return {
      caller: fleetCaller(
        undefined,
        attempt(() => fleetFromEnv(env)),
      ),
    };
  try {
    const fleet = fleetFromEnv(env)!;
    const given = pathSecretOf(req.path, req.pathParameters);
    const { cluster, problems } = await identifyCluster(given, fleet, env, {
      read,
      refreshOnMissMs: PATH_SECRET_REFRESH_ON_MISS_MS,
    });
    if (cluster) return { caller: fleetCaller(cluster, fleet) };
    const fields: Record<string, unknown> = {
      status: 404,
      reason: 'missing or wrong path secret',
      path: redactPath(req.path, registration.name),
    };
    if (problems.length) fields.problems = problems;
    return { refusal: { level: 'warn', msg: 'rejected', fields, reply: NOT_FOUND_REPLY } };
  } catch (err) {
    return misconfigured(err instanceof AuthConfigError ? err.message : String(err));
  }
}

/**
 * Reads a fleet's SSM parameters within the time a request may spend on them (parameterReadMs
 * of its budget), one deadline for every read of the request, a reread after a miss included.
 */
export function fleetReader(budgetMs: number): ParameterReader {
  const readUntil = performance.now() + parameterReadMs(budgetMs);
  return (name, maxAgeMs) => cachedParameter(name, maxAgeMs, Math.max(1, Math.floor(readUntil - performance.now())));
}

/**
 * authenticateFleet of a function bundled without the fleet code: nothing to do without KLW_FLEET;
 * with it, the refusal of a misconfigured fleet, since the bundle cannot tell its clusters apart.
 */
export function fleetLeftOut(env: NodeJS.ProcessEnv): AuthOutcome | undefined {
  if (env[FLEET_ENV] === undefined) return undefined;
  return misconfigured(
    `${FLEET_ENV} is set, but this function was built for a deployment without a fleet; ` +
      'build and deploy it again with the fleet file in the project',
  );
}
