// `npm test` keeps function builds by content (infra/build-kept.ts, KEPT_BUILDS_ENV): most tests
// need a bundle, not the building of it. A test file that checks the build itself (what a bundle
// holds, its chunks, its sizes) calls buildsForReal() at its top level, so that its bundles are
// built every run.
import { after } from 'node:test';
import { KEPT_BUILDS_ENV } from '../infra/build-kept.ts';

/** Builds every function bundle of the calling test file (and the processes it starts) for real, as without kept builds. */
export function buildsForReal(): void {
  const kept = process.env[KEPT_BUILDS_ENV];
  delete process.env[KEPT_BUILDS_ENV];
  after(() => {
    if (kept !== undefined) process.env[KEPT_BUILDS_ENV] = kept;
  });
}
