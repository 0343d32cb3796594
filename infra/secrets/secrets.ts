import { randomBytes } from 'node:crypto';
import { join, resolve } from 'node:path';
import type { SSMClient } from '@aws-sdk/client-ssm';
import { AuthConfigError, parsePathSecrets, type Registration } from '../../lib/internal.ts';
import { callAws } from '../aws-errors.ts';
import { KlwError } from '../errors.ts';
import { makeDir, pathTaken, readPrivate, writeFileSafely } from '../files.ts';

export { PATH_SECRET_ENV, PATH_SECRET_SSM_ENV } from '../../lib/internal.ts';

/** Default local state directory, shared with the emulator's `--state-dir`. */
export const DEFAULT_STATE_DIR = '.klw/local';

/** Bytes of randomness in a new path secret: 256 bits, twice the 128 the secret must carry at least. */
export const PATH_SECRET_BYTES = 32;

/** File in the local state directory (`.klw/local`) that holds the local path secret(s). */
export const LOCAL_PATH_SECRET_FILE = 'path-secret';

/**
 * Written into clientConfig.url instead of the secret by `klw manifests --path-secret placeholder`
 * (the default), to be replaced, whole, by the secret. Its query makes the URL one the API server
 * refuses at `kubectl apply` ("query parameters are not permitted"), showing the URL and so the
 * option to use: manifests that applied would get a 404 for every call.
 */
export const PATH_SECRET_PLACEHOLDER = '__KLW_PATH_SECRET__?write-the-secret-with=klw-manifests--path-secret';

/**
 * The SSM parameter name of a deployed service's path secret; serverless.yml gives the
 * functions the same name in KLW_PATH_SECRET_SSM (see PATH_SECRET_PARAMETER_SLS).
 */
export function pathSecretParameterName(service: string, stage: string): string {
  return `/kube-lambda-webhooks/${service}/${stage}/path-secret`;
}

/** The same name written with Serverless Framework variables, for `provider.environment` in serverless.yml. */
export const PATH_SECRET_PARAMETER_SLS = '/kube-lambda-webhooks/${self:service}/${sls:stage}/path-secret';

/**
 * The SSM parameter of one fleet cluster's path secret(s), beside the service's own (never under
 * it: a parameter cannot also be a path); the functions read it through KLW_FLEET_PATH_SECRET_SSM.
 */
export function clusterPathSecretParameterName(service: string, stage: string, cluster: string): string {
  return `/kube-lambda-webhooks/${service}/${stage}/clusters/${cluster}/path-secret`;
}

/** clusterPathSecretParameterName in Serverless Framework variables, `{cluster}` left for the function to fill. */
export const CLUSTER_PATH_SECRET_PARAMETER_SLS =
  '/kube-lambda-webhooks/${self:service}/${sls:stage}/clusters/{cluster}/path-secret';

/** The local state directory of one fleet cluster: its path secret is `<stateDir>/clusters/<cluster>/path-secret`. */
export function clusterStateDir(stateDir: string, cluster: string): string {
  return join(resolve(stateDir), 'clusters', cluster);
}

/** The local secret file of `cluster` (a fleet's), else the service's, with the cluster it is of. */
export function localSecretSource(stateDir: string, cluster?: string): { file: string; cluster?: string } {
  return cluster
    ? { file: localPathSecretFile(clusterStateDir(stateDir, cluster)), cluster }
    : { file: localPathSecretFile(stateDir) };
}

/** True when a function's URL carries the path secret: every function but those registered with `auth: 'none'`. */
export function usesPathSecret(registration: Registration): boolean {
  return registration.auth !== 'none';
}

/** A new path secret: base64url of 32 random bytes (43 URL-safe characters). */
export function newPathSecret(): string {
  return randomBytes(PATH_SECRET_BYTES).toString('base64url');
}

/** The secret(s) in force: `value` for KLW_PATH_SECRET or the SSM parameter, `current` for URLs. */
export interface PathSecrets {
  /** `current` or `current,previous`: what the functions accept. */
  value: string;
  /** The secret new URLs carry. */
  current: string;
  /** The secret still accepted during a rotation, if any. */
  previous?: string;
}

function fromValue(value: string, origin: string): PathSecrets {
  let secrets: string[];
  try {
    secrets = parsePathSecrets(value, origin);
  } catch (err) {
    if (err instanceof AuthConfigError) throw new KlwError(err.message);
    throw err;
  }
  const [current, previous] = secrets as [string, string?];
  return { value: secrets.join(','), current, ...(previous ? { previous } : {}) };
}

/** Path of the local path-secret file in a state directory. */
export function localPathSecretFile(stateDir: string): string {
  return join(resolve(stateDir), LOCAL_PATH_SECRET_FILE);
}

/**
 * The local path secret(s) for the emulator and `klw manifests --path-secret local`: read from
 * `<stateDir>/path-secret`, created with a new secret when missing (mode 0600, atomically; a
 * symbolic link is refused, a file readable by others narrowed to 0600). Give `value` to the
 * functions as KLW_PATH_SECRET and put `current` in the URLs.
 */
export function ensureLocalPathSecret(
  stateDir: string,
  warn: (message: string) => void = (m) => process.stderr.write(`klw: ${m}\n`),
): PathSecrets {
  const file = localPathSecretFile(stateDir);
  makeDir(resolve(stateDir), { secret: true });
  if (!pathTaken(file)) {
    try {
      writeFileSafely(file, `${newPathSecret()}\n`, { secret: true, exclusive: true });
    } catch (err) {
      // Another klw created it meanwhile: both use that one.
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
  }
  const found = readLocalPathSecret(stateDir, warn);
  if (!found) throw Object.assign(new Error(`${file} does not exist`), { code: 'ENOENT' });
  return found;
}

/**
 * The local path secret(s) in `<stateDir>/path-secret` as the file holds them now, or
 * undefined when the file (or its folder) is missing: never created here.
 */
export function readLocalPathSecret(
  stateDir: string,
  warn: (message: string) => void = (m) => process.stderr.write(`klw: ${m}\n`),
): PathSecrets | undefined {
  const file = localPathSecretFile(stateDir);
  const loose = () =>
    warn(
      `${file} was readable by others; narrowed to 600. Anyone who read it can call the local functions: klw secret rotate --local`,
    );
  let text: string;
  try {
    text = readPrivate(file, loose, 'a path secret');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  return fromValue(text, file);
}

/** What a rotation or retirement did. */
export interface SecretChange {
  before?: PathSecrets;
  after: PathSecrets;
}

/** Next value of a rotation: a new current secret, the old current kept as previous (a first secret when there is none and `create` allows it). */
function rotated(before: PathSecrets | undefined, where: string, create: boolean): PathSecrets {
  if (!before && !create) {
    throw new KlwError(
      `${where} does not exist: nothing to rotate. klw deploy creates it; if the service is deployed, check --region and --stage`,
    );
  }
  if (before?.previous) {
    throw new KlwError(
      `${where} still holds a previous secret from the last rotation; register the current URLs, then run klw secret retire before rotating again`,
    );
  }
  return fromValue(before ? `${newPathSecret()},${before.current}` : newPathSecret(), where);
}

/** Next value of a retirement: the current secret alone; `missing` says what to do when there is none. */
function retired(before: PathSecrets | undefined, where: string, missing: string): PathSecrets {
  if (!before) throw new KlwError(`${where} ${missing}`);
  if (!before.previous) throw new KlwError(`${where} holds no previous secret; nothing to retire`);
  return fromValue(before.current, where);
}

/** Rotates the local secret: a new current one, the old one kept as previous until `retireLocalPathSecret`. */
export function rotateLocalPathSecret(stateDir: string): SecretChange {
  const file = localPathSecretFile(stateDir);
  const before = pathTaken(file) ? ensureLocalPathSecret(stateDir) : undefined;
  // The emulator creates the local secret on first use anyway, so a rotation may as well.
  const after = rotated(before, file, true);
  makeDir(resolve(stateDir), { secret: true });
  writeFileSafely(file, `${after.value}\n`, { secret: true });
  return { ...(before ? { before } : {}), after };
}

/** Drops the local previous secret: only the current one is accepted from then on. */
export function retireLocalPathSecret(stateDir: string): SecretChange {
  const file = localPathSecretFile(stateDir);
  const before = pathTaken(file) ? ensureLocalPathSecret(stateDir) : undefined;
  const after = retired(
    before,
    file,
    'holds no path secret; klw local start-api or klw secret rotate --local creates one',
  );
  writeFileSafely(file, `${after.value}\n`, { secret: true });
  return { before: before!, after };
}

/** The deployed secret(s) in an SSM parameter, or undefined when the parameter does not exist. */
export async function readDeployedPathSecret(ssm: SSMClient, name: string): Promise<PathSecrets | undefined> {
  // Loaded here, not with the module: most commands that use this module never call SSM.
  const { GetParameterCommand, ParameterNotFound } = await import('@aws-sdk/client-ssm');
  const out = await callAws(ssm, `reading SSM parameter ${name}`, async () => {
    try {
      return await ssm.send(new GetParameterCommand({ Name: name, WithDecryption: true }));
    } catch (err) {
      if (err instanceof ParameterNotFound || (err as Error).name === 'ParameterNotFound') return undefined;
      throw err;
    }
  });
  return out && fromValue(out.Parameter?.Value ?? '', `SSM parameter ${name}`);
}

async function putDeployed(ssm: SSMClient, name: string, secrets: PathSecrets, overwrite: boolean): Promise<void> {
  const { PutParameterCommand } = await import('@aws-sdk/client-ssm');
  await callAws(ssm, `writing SSM parameter ${name}`, () =>
    ssm.send(
      new PutParameterCommand({
        Name: name,
        Value: secrets.value,
        Type: 'SecureString',
        Overwrite: overwrite,
        Description: 'kube-lambda-webhooks path secret(s): current[,previous]. Managed by klw secret rotate/retire.',
      }),
    ),
  );
}

/**
 * The deployed secret(s), creating the parameter with a new secret (SecureString) when it
 * does not exist; `klw deploy` calls it first, so a fresh deployment is never open.
 */
export async function ensureDeployedPathSecret(ssm: SSMClient, name: string): Promise<PathSecrets> {
  const existing = await readDeployedPathSecret(ssm, name);
  if (existing) return existing;
  const created = fromValue(newPathSecret(), `SSM parameter ${name}`);
  // Overwrite false: if another deploy created it meanwhile, PutParameter fails instead of replacing it.
  await putDeployed(ssm, name, created, false);
  return created;
}

/** How a parameter is named in messages: `SSM parameter <name>[ in <region>]`. */
function parameterWhere(name: string, region?: string): string {
  return `SSM parameter ${name}${region ? ` in ${region}` : ''}`;
}

/**
 * `klw secret rotate`: a new current secret in SSM, the old current kept as previous. A
 * parameter that does not exist is refused, never created: in the wrong region or stage a
 * rotation would otherwise make a stray secret nothing reads (`klw deploy` creates it).
 * `create` makes it instead: a fleet cluster's secret, made by its first rotation.
 */
export async function rotateDeployedPathSecret(
  ssm: SSMClient,
  name: string,
  region?: string,
  create = false,
): Promise<SecretChange> {
  const before = await readDeployedPathSecret(ssm, name);
  const after = rotated(before, parameterWhere(name, region), create);
  // Creating: Overwrite false, so a parameter another rotation created meanwhile is never replaced.
  await putDeployed(ssm, name, after, !!before);
  return { ...(before ? { before } : {}), after };
}

/** `klw secret retire`: only the current secret is left in SSM. */
export async function retireDeployedPathSecret(ssm: SSMClient, name: string, region?: string): Promise<SecretChange> {
  const before = await readDeployedPathSecret(ssm, name);
  const after = retired(
    before,
    parameterWhere(name, region),
    'does not exist: nothing to retire. klw deploy creates it; if the service is deployed, check --region and --stage',
  );
  await putDeployed(ssm, name, after, true);
  return { before: before!, after };
}
