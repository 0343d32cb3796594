// The docs' type-check, its pass kept by content. tsc over the docs' examples parses and binds
// every file they reach (the package's sources and the type definitions of its dependencies, some
// 1,800 files) on every run, even when nothing it reads has changed: seconds of CPU for an answer
// that cannot have changed. A pass is kept with the hash of every file
// tsc read (--listFiles) and with what else decides what it reads (the tsc version, its arguments,
// the repository's TypeScript settings and lock file): while all of them are unchanged the pass
// stands without running tsc, and any change runs it again. A failure is never kept.
import { lstatSync, readFileSync, rmSync } from 'node:fs';
import { isAbsolute } from 'node:path';
import { hashOf, sha256 } from '../../infra/build-cache.mjs';
import { writeFileSafely } from '../../infra/files.ts';

/** A finished process: its exit code and output. */
export interface Finished {
  code: number;
  stdout: string;
  stderr: string;
}

/** What a kept pass records: the key it was made under, and every file tsc read with its hash. */
interface KeptPass {
  key: string;
  files: Array<[string, string]>;
}

/** The files tsc --listFiles printed: its lines that are absolute paths (its errors name relative ones). */
export function listedFiles(stdout: string): string[] {
  return stdout.split('\n').filter((line) => isAbsolute(line) && /\.[cm]?tsx?$/.test(line));
}

/** The kept pass at `record` when it is one of `key` and every file it read is unchanged. */
function stillPasses(record: string, key: string): boolean {
  try {
    // A link planted there is no record: never followed, and replaced when a pass is kept.
    if (!lstatSync(record).isFile()) return false;
    const kept = JSON.parse(readFileSync(record, 'utf8')) as KeptPass;
    return kept.key === key && kept.files.length > 0 && kept.files.every(([file, hash]) => hashOf(file) === hash);
  } catch {
    return false;
  }
}

/**
 * The result of `check` (a run of tsc with --listFiles), or a pass without running it when the pass
 * kept at `record` was made under the same `key` (what decides the check besides the files it
 * reads) and no file it read has changed since. A pass is kept at `record`.
 */
export async function keptTypeCheck(
  record: string,
  key: readonly string[],
  check: () => Promise<Finished>,
): Promise<Finished & { kept: boolean }> {
  const name = sha256(key.join('\n'));
  if (stillPasses(record, name)) return { code: 0, stdout: '', stderr: '', kept: true };
  const out = await check();
  if (out.code === 0) {
    const files = listedFiles(out.stdout).map((file): [string, string] => [file, hashOf(file)]);
    if (files.length) {
      // Anything but a file planted at the record (a link) is removed, never written through.
      if (lstatSync(record, { throwIfNoEntry: false })?.isFile() === false) rmSync(record, { recursive: true });
      writeFileSafely(record, JSON.stringify({ key: name, files } satisfies KeptPass));
    }
  }
  return { ...out, kept: false };
}
