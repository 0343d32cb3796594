/**
 * The local path secrets the emulator serves: a fleet's, read from each cluster's
 * `<state-dir>/clusters/<name>/path-secret` at start, and again whenever one of those files
 * changes (`klw secret rotate|retire --local --cluster X`), so the running emulator takes the
 * new set without a restart; without a fleet, the service's `<state-dir>/path-secret` likewise.
 * A set is swapped in whole or not at all: while a file is missing or broken, the last good set
 * stays in force and the emulator says why.
 */
import { existsSync, watch } from 'node:fs';
import { dirname } from 'node:path';
import type { Registration } from '../../lib/registration.ts';
import { loadFleet, type Fleet } from '../fleet/file.ts';
import {
  clusterStateDir,
  ensureLocalPathSecret,
  localPathSecretFile,
  PATH_SECRET_ENV,
  type PathSecrets,
} from '../secrets/index.ts';
import type { ApiServing, ServedFleet } from './api-request.ts';
import type { LocalProject } from './project.ts';

/** Calls `onChange` on any change in one of `dirs`, until closed. Tests inject one they fire themselves. */
export type SecretsWatcher = (dirs: string[], onChange: () => void) => { close(): void };

/**
 * Watches the directories (not the files: klw replaces a secret file by renaming a new one over
 * it, which a watch on the old file would not see); a watch that fails is logged, not fatal.
 */
export function watchSecretDirs(log: (line: string) => void): SecretsWatcher {
  return (dirs, onChange) => {
    const watchers = dirs.map((dir) =>
      watch(dir, () => onChange()).on('error', (err) =>
        log(JSON.stringify({ level: 'warn', msg: 'watching cluster path secrets failed', dir, error: String(err) })),
      ),
    );
    return {
      close: () => {
        for (const w of watchers) w.close();
      },
    };
  };
}

/** The served fleet for a set of cluster secrets: the map the emulator checks and the functions' KLW_FLEET_PATH_SECRETS. */
export function servedFleet(file: Fleet, secrets: Map<string, PathSecrets>): ServedFleet {
  const value = JSON.stringify(Object.fromEntries([...secrets].map(([name, s]) => [name, s.value])));
  return { file, secrets, value };
}

/** Each cluster's local secrets, created when missing (at start). */
export function ensureClusterSecrets(file: Fleet, stateDir: string, warn: (m: string) => void): ServedFleet {
  return servedFleet(
    file,
    new Map(file.clusters.map((c) => [c.name, ensureLocalPathSecret(clusterStateDir(stateDir, c.name), warn)])),
  );
}

/**
 * Each cluster's local secrets as the files hold them now; throws naming the file when one is
 * missing (never created here: a deleted file is not a new secret) or not a secret.
 */
export function readClusterSecrets(file: Fleet, stateDir: string, warn: (m: string) => void): ServedFleet {
  const secrets = new Map<string, PathSecrets>();
  for (const { name } of file.clusters) {
    const dir = clusterStateDir(stateDir, name);
    if (!existsSync(localPathSecretFile(dir))) throw new Error(`${localPathSecretFile(dir)} does not exist`);
    secrets.set(name, ensureLocalPathSecret(dir, warn));
  }
  return servedFleet(file, secrets);
}

/** The directories holding the clusters' secret files, which a SecretsWatcher watches. */
export function clusterSecretDirs(file: Fleet, stateDir: string): string[] {
  return file.clusters.map((c) => dirname(localPathSecretFile(clusterStateDir(stateDir, c.name))));
}

/** The clusters whose secrets differ between two sets (names only: the secrets are never logged). */
export function changedClusters(before: ServedFleet, after: ServedFleet): string[] {
  return after.file.clusters
    .map((c) => c.name)
    .filter((name) => before.secrets.get(name)?.value !== after.secrets.get(name)?.value);
}

/** The fleet of the project and its secrets: loaded with the functions first served (`of`), read again (`reload`). */
export interface FleetLoader {
  of: (functions: readonly Registration[]) => ServedFleet | null;
  get: () => ServedFleet | null | undefined;
  /** Reads the clusters' secrets again; true when they changed and the new set is in force. */
  reload: () => boolean;
  stateDir: string;
}

/** The fleet of the project, loaded once with the functions first served (`of`), and as loaded so far (`get`). */
export function fleetLoader(root: string, stateDir: string, log: (line: string) => void): FleetLoader {
  let fleet: ServedFleet | null | undefined;
  const warn = (m: string) => log(JSON.stringify({ level: 'warn', msg: m }));
  const fleetOf = (functions: readonly Registration[]) => {
    if (fleet !== undefined) return fleet;
    const file = loadFleet(root, functions);
    return (fleet = file ? ensureClusterSecrets(file, stateDir, warn) : null);
  };
  const reload = () => {
    if (!fleet) return false;
    let next: ServedFleet;
    try {
      next = readClusterSecrets(fleet.file, stateDir, warn);
    } catch (err) {
      log(
        JSON.stringify({
          level: 'warn',
          msg: 'cluster path secrets not reloaded; still accepting the previous ones',
          error: (err as Error).message,
        }),
      );
      return false;
    }
    const changed = changedClusters(fleet, next);
    if (!changed.length) return false;
    fleet = next;
    log(JSON.stringify({ msg: 'cluster path secrets reloaded', clusters: changed }));
    return true;
  };
  return { of: fleetOf, get: () => fleet, reload, stateDir };
}

/**
 * Watches a served fleet's secret files: a change is swapped in whole (the emulator's check at
 * once, the functions' workers as their in-flight calls end), then `onReload` is called;
 * undefined without a fleet.
 */
export function watchFleetSecrets(
  fleets: FleetLoader,
  project: LocalProject,
  usesSecret: (name: string) => boolean,
  watcher: SecretsWatcher,
  onReload: () => void,
): { close(): void } | undefined {
  const fleet = fleets.get();
  if (!fleet) return undefined;
  return watcher(clusterSecretDirs(fleet.file, fleets.stateDir), () => {
    if (!fleets.reload()) return;
    for (const fn of project.functions)
      if (usesSecret(fn.name)) project.pools.get(fn.name)?.update(project.runtime(fn.registration));
    onReload();
  });
}

/** What watchServiceSecret reads and updates: the service's secrets in force (replaced on a change). */
export interface ServiceSecret {
  stateDir: string;
  secrets: PathSecrets;
  serving: ApiServing;
  project: LocalProject;
  usesSecret: (name: string) => boolean;
  log: (line: string) => void;
}

/**
 * Without a fleet: watches the service's local secret file, and swaps a changed secret in (the
 * emulator's check at once, the functions' KLW_PATH_SECRET as their workers are replaced), then
 * calls `onReload`. A missing or broken file keeps the secrets in force, with a warning.
 */
export function watchServiceSecret(
  service: ServiceSecret,
  watcher: SecretsWatcher,
  onReload: () => void,
): { close(): void } {
  const { stateDir, serving, project, usesSecret, log } = service;
  const file = localPathSecretFile(stateDir);
  const warn = (m: string) => log(JSON.stringify({ level: 'warn', msg: m }));
  return watcher([dirname(file)], () => {
    let next: PathSecrets;
    try {
      if (!existsSync(file)) throw new Error(`${file} does not exist`);
      next = ensureLocalPathSecret(stateDir, warn);
    } catch (err) {
      const msg = 'path secret not reloaded; still accepting the previous one';
      log(JSON.stringify({ level: 'warn', msg, error: (err as Error).message }));
      return;
    }
    if (next.value === service.secrets.value) return;
    service.secrets = next;
    serving.validSecrets = next.previous ? [next.current, next.previous] : [next.current];
    project.setExtraEnv(PATH_SECRET_ENV, next.value);
    for (const fn of project.functions)
      if (usesSecret(fn.name)) project.pools.get(fn.name)?.update(project.runtime(fn.registration));
    log(JSON.stringify({ msg: 'path secret reloaded' }));
    onReload();
  });
}
