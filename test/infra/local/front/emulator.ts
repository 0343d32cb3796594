// Start-up shared by the emulator's secret tests: path secret files as the local state keeps
// them, and the emulator on a project that has them.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type RunningApi, type StartApiOptions, startApi } from '../../../../infra/local/api.ts';
import { ManualTimer } from '../../../helpers.ts';
import { withKeptCertificates } from '../../../kept-certs.ts';

/** Writes `<dir>/path-secret` (`current[,previous]`) as the local state keeps it: the folder 0700, the file 0600. */
export function writePathSecret(dir: string, secrets: string): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  writeFileSync(join(dir, 'path-secret'), `${secrets}\n`, { mode: 0o600 });
}

/**
 * Starts the emulator on the project at `root` with the local secrets of `stateDir` and the kept
 * certificates: one process per function, function timeouts that never run out (a cold start on a
 * loaded machine takes as long as it takes), its log lines pushed onto `logs`. `more` adds options
 * or replaces these.
 */
export async function startEmulator(
  root: string,
  stateDir: string,
  logs: string[],
  more: Partial<StartApiOptions> = {},
): Promise<RunningApi> {
  return startApi({
    root,
    port: 0,
    stateDir: await withKeptCertificates(stateDir),
    log: (l) => logs.push(l),
    functionLog: () => {},
    concurrency: 1,
    invocationTimer: new ManualTimer().timer,
    ...more,
  });
}
