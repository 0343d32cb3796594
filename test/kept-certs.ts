// The local CA and server certificate klw local makes in a state folder, made once and kept in
// node_modules/.cache/klw-test-certs for the tests whose emulator or fake API server needs TLS but
// that do not test the certificates (test/infra/local/certs.test.ts does): making a set costs
// about 0.7 s of CPU. Each state folder gets a copy, which klw checks as it checks its own and
// replaces when it is not usable: a stale or damaged kept set costs time, never a result.
import { chmodSync, copyFileSync, lstatSync, mkdtempSync, renameSync, rmSync, type Stats } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cacheFolder } from '../infra/build-cache.mjs';
import { makeDir } from '../infra/files.ts';
import { ensureLocalCertificates } from '../infra/local/certs.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
/** The files of a set, as ensureLocalCertificates names them in its folder. */
const FILES = ['ca.crt', 'ca.key', 'server.crt', 'server.key', 'server.names'];

/** What is at `path`, not following a symlink, or undefined. */
function entryAt(path: string): Stats | undefined {
  try {
    return lstatSync(path);
  } catch {
    return undefined;
  }
}

/** The kept set's folder, made when missing (in a draft renamed into place, so no file sees half a set). */
async function keptSet(): Promise<string> {
  const cache = cacheFolder(join(ROOT, 'node_modules', '.cache', 'klw-test-certs'));
  const kept = join(cache, 'local');
  const stat = entryAt(kept);
  if (stat?.isDirectory()) return kept;
  if (stat) rmSync(kept, { force: true });
  const draft = mkdtempSync(join(cache, '.draft-'));
  await ensureLocalCertificates(draft, () => {});
  try {
    renameSync(draft, kept);
  } catch {
    // A test file running at once kept its set first.
    rmSync(draft, { recursive: true, force: true });
  }
  return kept;
}

/** Makes `dir` (private) and copies the kept certificates into it; returns `dir`. */
export async function withKeptCertificates(dir: string): Promise<string> {
  const kept = await keptSet();
  makeDir(dir, { secret: true });
  for (const name of FILES) {
    const from = join(kept, name);
    if (!entryAt(from)?.isFile()) continue;
    copyFileSync(from, join(dir, name));
    chmodSync(join(dir, name), 0o600);
  }
  return dir;
}
