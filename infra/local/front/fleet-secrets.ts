/**
 * The local path secrets the emulator serves: a fleet's, read from each cluster's
 * `<state-dir>/clusters/<name>/path-secret` at start, and again whenever one of those files
 * changes (`klw secret rotate|retire --local --cluster X`), so the running emulator takes the
 * new set without a restart; without a fleet, the service's `<state-dir>/path-secret` likewise.
 * A set is swapped in whole or not at all: while a file is broken, the last good set stays in
 * force and the emulator says why; a cluster whose file or folder is deleted is refused until a
 * new secret is written there (the folder's return is watched for).
 */
import { statSync, watch } from 'node:fs';
import { basename, dirname } from 'node:path';
import type { Registration } from '../../../lib/registration.ts';
import { loadFleet, type Fleet } from '../../fleet/file.ts';
import {
  clusterStateDir,
  ensureLocalPathSecret,
  localPathSecretFile,
  PATH_SECRET_ENV,
  readLocalPathSecret,
  type PathSecrets,
} from '../../secrets/index.ts';
import type { ApiServing, ServedFleet } from './api-request.ts';
import type { Invoker } from '../invoker.ts';

/** Calls `onChange` on any change in one of `dirs`, until closed. Tests inject one they fire themselves. */
export type SecretsWatcher = (dirs: string[], onChange: () => void) => { close(): void };

/** The file system calls the watcher makes: Node's, or a test's that fires events itself. */
export interface WatchFs {
  /** Watches a folder; `listener` gets the name of the entry that changed (the folder's own name when it is removed). */
  watch: (
    dir: string,
    listener: (name: string | null) => void,
  ) => { close(): void; on(event: 'error', f: (err: Error) => void): unknown };
  /** Which folder is at `dir` (inode and birth time: a folder made anew is another one), or undefined when none. */
  identity: (dir: string) => string | undefined;
}

const nodeFs: WatchFs = {
  watch: (dir, listener) => watch(dir, (_event, name) => listener(name === null ? null : String(name))),
  identity: (dir) => {
    try {
      const stat = statSync(dir);
      return stat.isDirectory() ? `${stat.dev}:${stat.ino}:${stat.birthtimeMs}` : undefined;
    } catch {
      return undefined;
    }
  },
};

/**
 * Watches the directories (not the files: klw replaces a secret file by renaming a new one over
 * it, which a watch on the old file would not see), and each one's nearest existing parent: a
 * folder deleted (`rm -rf`) ends its watch, so its parent's event says so, and when the folder
 * comes back (`klw secret rotate --local`) it is watched again. After every event the watches
 * are armed anew for what exists, then `onChange` is called. A watch that fails is logged, not fatal.
 */
export function watchSecretDirs(log: (line: string) => void, fs: WatchFs = nodeFs): SecretsWatcher {
  return (dirs, onChange) => {
    const armed = new Map<string, { id: string; watcher: { close(): void } }>();
    let closed = false;
    const wanted = (): Map<string, string> => {
      const want = new Map<string, string>();
      for (const dir of dirs) {
        const id = fs.identity(dir);
        if (id !== undefined) want.set(dir, id);
        for (let up = dirname(dir); ; up = dirname(up)) {
          const upId = fs.identity(up);
          if (upId !== undefined) {
            want.set(up, upId);
            break;
          }
          if (dirname(up) === up) break;
        }
      }
      return want;
    };
    const drop = (dir: string) => {
      armed.get(dir)?.watcher.close();
      armed.delete(dir);
    };
    const arm = () => {
      const want = wanted();
      for (const [dir, w] of armed) if (want.get(dir) !== w.id) drop(dir);
      for (const [dir, id] of want) {
        if (armed.has(dir)) continue;
        try {
          const w = fs.watch(dir, (name) => {
            // The folder itself removed: its watch has ended, whatever is at the path next.
            if (name === basename(dir)) drop(dir);
            changed();
          });
          w.on('error', (err) => {
            log(JSON.stringify({ level: 'warn', msg: 'watching path secrets failed', dir, error: String(err) }));
            if (armed.get(dir)?.watcher === w) drop(dir);
          });
          armed.set(dir, { id, watcher: w });
        } catch (err) {
          log(JSON.stringify({ level: 'warn', msg: 'watching path secrets failed', dir, error: String(err) }));
        }
      }
    };
    const changed = () => {
      if (closed) return;
      arm();
      onChange();
    };
    arm();
    return {
      close: () => {
        closed = true;
        for (const dir of [...armed.keys()]) drop(dir);
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
 * Each cluster's local secrets as the files hold them now, and the clusters whose file (or
 * folder) is gone: those are left out, never created here (a deleted file is not a new
 * secret). Throws naming the file when one is not a secret.
 */
export function readClusterSecrets(
  file: Fleet,
  stateDir: string,
  warn: (m: string) => void,
): { served: ServedFleet; missing: string[] } {
  const secrets = new Map<string, PathSecrets>();
  const missing: string[] = [];
  for (const { name } of file.clusters) {
    const found = readLocalPathSecret(clusterStateDir(stateDir, name), warn);
    if (found) secrets.set(name, found);
    else missing.push(name);
  }
  return { served: servedFleet(file, secrets), missing };
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
    let next: { served: ServedFleet; missing: string[] };
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
    const changed = changedClusters(fleet, next.served);
    if (!changed.length) return false;
    // A cluster whose secret was deleted is refused from now on, not served a secret that no longer exists.
    for (const cluster of next.missing.filter((name) => fleet!.secrets.has(name)))
      log(
        JSON.stringify({
          level: 'warn',
          msg: `cluster ${cluster}'s path secret was deleted; its calls are refused until a new one is written`,
          file: localPathSecretFile(clusterStateDir(stateDir, cluster)),
          fix: `klw secret rotate --local --cluster ${cluster}`,
        }),
      );
    fleet = next.served;
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
  invoker: Invoker,
  usesSecret: (name: string) => boolean,
  watcher: SecretsWatcher,
  onReload: () => void,
): { close(): void } | undefined {
  const fleet = fleets.get();
  if (!fleet) return undefined;
  return watcher(clusterSecretDirs(fleet.file, fleets.stateDir), () => {
    if (!fleets.reload()) return;
    invoker.renew(usesSecret);
    onReload();
  });
}

/** What watchServiceSecret reads and updates: the service's secrets in force (replaced on a change). */
export interface ServiceSecret {
  stateDir: string;
  secrets: PathSecrets;
  serving: ApiServing;
  invoker: Invoker;
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
  const { stateDir, serving, invoker, usesSecret, log } = service;
  const file = localPathSecretFile(stateDir);
  const warn = (m: string) => log(JSON.stringify({ level: 'warn', msg: m }));
  return watcher([dirname(file)], () => {
    let next: PathSecrets;
    try {
      const found = readLocalPathSecret(stateDir, warn);
      if (!found) throw new Error(`${file} does not exist`);
      next = found;
    } catch (err) {
      const msg = 'path secret not reloaded; still accepting the previous one';
      log(JSON.stringify({ level: 'warn', msg, error: (err as Error).message }));
      return;
    }
    if (next.value === service.secrets.value) return;
    service.secrets = next;
    serving.validSecrets = next.previous ? [next.current, next.previous] : [next.current];
    invoker.renew(usesSecret, { name: PATH_SECRET_ENV, value: next.value });
    log(JSON.stringify({ msg: 'path secret reloaded' }));
    onReload();
  });
}
