// `npm test` keeps function builds by content (infra/build-kept.ts, KEPT_BUILDS_ENV): most tests
// need a bundle, not the building of it. A test file that checks the build itself (what a bundle
// holds, its chunks, its sizes) calls buildsForReal() at its top level, so that its bundles are
// built every run; one that builds the same function again (the emulator building what a test
// built) calls buildsOncePerFile(), so that each bundle is built for real the first time in the
// file and the same build is reused after that.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after } from 'node:test';
import { KEPT_BUILDS_ENV } from '../infra/build-kept.ts';

/** Sets KEPT_BUILDS_ENV to `value` (unset when undefined) for the calling test file, restored after it. */
function keptBuildsFor(value: string | undefined): void {
  const kept = process.env[KEPT_BUILDS_ENV];
  if (value === undefined) delete process.env[KEPT_BUILDS_ENV];
  else process.env[KEPT_BUILDS_ENV] = value;
  after(() => {
    if (kept === undefined) delete process.env[KEPT_BUILDS_ENV];
    else process.env[KEPT_BUILDS_ENV] = kept;
  });
}

/** Builds every function bundle of the calling test file (and the processes it starts) for real, as without kept builds. */
export function buildsForReal(): void {
  keptBuildsFor(undefined);
}

/**
 * Builds each function bundle of the calling test file (and the processes it starts) for real the
 * first time, keeping it for the rest of the file only: a later build of the same function with
 * the same files reuses it. Never a build kept from an earlier run or another file.
 */
export function buildsOncePerFile(): void {
  const folder = mkdtempSync(join(tmpdir(), 'klw-file-builds-'));
  keptBuildsFor(folder);
  after(() => rmSync(folder, { recursive: true, force: true }));
}
