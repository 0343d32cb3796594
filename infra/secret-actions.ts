import { existsSync } from 'node:fs';
import type { SSMClient } from '@aws-sdk/client-ssm';
import type { Registration } from '../lib/internal.ts';
import { loadFunctions } from './functions.ts';
import { KlwError } from './errors.ts';
import { loadFleet, selectClusters } from './fleet/file.ts';
import { writeFileSafely } from './files.ts';
import type { Endpoints } from './manifests.ts';
import {
  clusterPathSecretParameterName,
  clusterStateDir,
  ensureDeployedPathSecret,
  ensureLocalPathSecret,
  localPathSecretFile,
  pathSecretParameterName,
  PATH_SECRET_PLACEHOLDER,
  readDeployedPathSecret,
  retireDeployedPathSecret,
  retireLocalPathSecret,
  rotateDeployedPathSecret,
  rotateLocalPathSecret,
  usesPathSecret,
  type PathSecrets,
  type SecretChange,
} from './secrets/index.ts';
import { regionFor } from './region.ts';

/** An SSM client for `region`; the SDK is loaded when the first one is made, not with this module. */
async function ssmClient(region: string | undefined): Promise<SSMClient> {
  const { SSMClient } = await import('@aws-sdk/client-ssm');
  return new SSMClient({ region });
}

/** Where `klw manifests` takes the path secret for clientConfig.url from. */
export type PathSecretSource = 'placeholder' | 'local' | 'ssm' | 'none';

/** The options of `klw manifests` that choose the path secret. */
export interface PathSecretOptions {
  pathSecret: PathSecretSource;
  stateDir: string;
  stage: string;
  region: string;
  /** serverless.yml's service, for `ssm`. */
  service?: string;
  /** A fleet cluster (checked against the fleet file by the caller): that cluster's own secret. */
  cluster?: string;
}

/** A deployed service: its name, stage and region. */
export interface SecretTarget {
  service: string;
  stage: string;
  region: string;
}

/**
 * The endpoints with the path secret the options ask for: the local one (created if missing),
 * the deployed one from SSM, a placeholder, or none. Functions registered with `auth: 'none'`
 * never get one (nor is one looked up when `registrations` are given and all are such).
 */
export async function withPathSecret(
  endpoints: Endpoints,
  registrations: Registration[] | undefined,
  options: PathSecretOptions,
  ssm?: SSMClient,
): Promise<Endpoints> {
  if (options.pathSecret === 'none' || (registrations && !registrations.some(usesPathSecret))) return endpoints;
  if (options.pathSecret === 'placeholder') return { ...endpoints, pathSecret: PATH_SECRET_PLACEHOLDER };
  const cluster = options.cluster;
  if (options.pathSecret === 'local') {
    return {
      ...endpoints,
      pathSecret: ensureLocalPathSecret(cluster ? clusterStateDir(options.stateDir, cluster) : options.stateDir)
        .current,
    };
  }
  if (!options.service) throw new KlwError('--path-secret ssm needs the service name (serverless.yml)');
  const name = cluster
    ? clusterPathSecretParameterName(options.service, options.stage, cluster)
    : pathSecretParameterName(options.service, options.stage);
  const secrets = await readDeployedPathSecret(ssm ?? (await ssmClient(options.region)), name);
  if (!secrets) {
    const fix = cluster
      ? `klw secret rotate --cluster ${cluster} --stage ${options.stage} creates it`
      : `klw deploy --stage ${options.stage} creates it`;
    throw new KlwError(`SSM parameter ${name} does not exist in ${options.region}; ${fix}`);
  }
  return { ...endpoints, pathSecret: secrets.current };
}

/**
 * `klw deploy`'s first step: the service's path secret exists in SSM before the functions
 * that read it are deployed (created when missing); undefined when no function uses one.
 */
export async function ensureTargetPathSecret(
  target: SecretTarget,
  registrations: Registration[],
  ssm?: SSMClient,
): Promise<PathSecrets | undefined> {
  if (!registrations.some(usesPathSecret)) return undefined;
  return ensureDeployedPathSecret(
    ssm ?? (await ssmClient(target.region)),
    pathSecretParameterName(target.service, target.stage),
  );
}

/**
 * The current path secret for `klw smoke`: with `--endpoint` (the local emulator) the one in
 * the state directory, if any; otherwise the deployed one in SSM, if any.
 */
export async function smokePathSecret(
  options: { endpoint?: string; stateDir: string; stage: string; region: string },
  service: string,
  ssm?: SSMClient,
): Promise<string | undefined> {
  if (options.endpoint)
    return existsSync(localPathSecretFile(options.stateDir))
      ? ensureLocalPathSecret(options.stateDir).current
      : undefined;
  const secrets = await readDeployedPathSecret(
    ssm ?? (await ssmClient(options.region)),
    pathSecretParameterName(service, options.stage),
  );
  return secrets?.current;
}

/** Writes manifests that hold a secret: mode 0600, atomically. */
export function writePrivateOutput(file: string, text: string): void {
  writeFileSafely(file, text, { secret: true, parents: true });
}

/** What `klw secret rotate|retire` acts on. */
export interface SecretCommandOptions {
  stage: string;
  /** Default: defaultRegion of serverless.yml. */
  region?: string;
  local?: boolean;
  stateDir: string;
  /** A fleet cluster: only its secret changes. */
  cluster?: string;
}

/** Runs `klw secret rotate` or `klw secret retire` and returns the lines that tell what to do next. */
export async function runSecretCommand(
  action: 'rotate' | 'retire',
  options: SecretCommandOptions,
  service: () => string,
  ssm?: SSMClient,
  config?: () => unknown,
): Promise<string[]> {
  let change: SecretChange;
  let where: string;
  let flags: string;
  const cluster = options.cluster;
  const ofCluster = cluster ? ` --cluster ${cluster}` : '';
  if (options.local) {
    const dir = cluster ? clusterStateDir(options.stateDir, cluster) : options.stateDir;
    where = `${dir} (local${cluster ? `, cluster ${cluster}` : ''})`;
    flags = `--local${ofCluster}`;
    change = action === 'rotate' ? rotateLocalPathSecret(dir) : retireLocalPathSecret(dir);
  } else {
    const region = regionFor(options, () => config?.());
    const name = cluster
      ? clusterPathSecretParameterName(service(), options.stage, cluster)
      : pathSecretParameterName(service(), options.stage);
    where = `SSM parameter ${name} (${region}${cluster ? `, cluster ${cluster}` : ''})`;
    flags = `${cluster ? `--cluster ${cluster} ` : ''}--stage ${options.stage} --region ${region}`;
    const client = ssm ?? (await ssmClient(region));
    // A cluster's secret is its own to create: the first rotation makes it (klw deploy makes the service's).
    change =
      action === 'rotate'
        ? await rotateDeployedPathSecret(client, name, region, !!cluster)
        : await retireDeployedPathSecret(client, name, region);
  }
  const manifests = options.local
    ? `klw manifests --path-secret local${ofCluster} --state-dir ${options.stateDir} --base-url <url> (a running klw local start-api takes the new secret at once and rewrites its manifests${cluster ? ' when they carry this cluster' : ''})`
    : cluster
      ? `klw manifests --path-secret ssm ${flags} --base-url <url>`
      : `klw deploy ${flags} (or klw manifests --path-secret ssm ${flags} --base-url <url>)`;
  if (action === 'rotate') {
    return [
      `${where}: ${change.before ? 'new current secret; the previous one stays valid' : 'created a path secret'}`,
      `next: ${manifests}, then kubectl apply the manifests`,
      `then: klw secret retire ${flags} (the previous secret stops working${options.local ? '' : ' within 5 minutes'})`,
    ];
  }
  return [
    `${where}: previous secret retired; only the current one is accepted${options.local ? ' (by a running klw local start-api at once: it reads the secret again, no restart)' : ' (running functions within 5 minutes)'}`,
  ];
}

/** Throws unless `cluster` is a cluster of the project's fleet file (which must exist and be valid). */
export async function checkCluster(root: string, cluster: string): Promise<void> {
  selectClusters(
    loadFleet(
      root,
      (await loadFunctions(root)).map((f) => f.registration),
    ),
    { cluster },
  );
}
