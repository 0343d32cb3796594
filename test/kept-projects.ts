// Projects that tests run `klw test` in, kept across runs by content. klw test keeps a project's
// test build in the project (node_modules/.cache/klw-test), named by the project's path and reused
// while the files it read keep their size and time: a project written anew in a new folder every
// run is built anew every run, about a second and a half of esbuild for one that imports the
// toolkit. A kept project is written in a draft folder each run, named by the hash of what was
// written, and moved into place only when no project of that content is there yet: the same
// files, in the same place, untouched since, so klw test finds its build as it left it.
import { createHash } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  renameSync,
  rmSync,
} from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository's root: kept projects sit in it, so `kube-lambda-webhooks` and tsx resolve to its own. */
const ROOT = fileURLToPath(new URL('..', import.meta.url));
/** Kept projects are named `<PREFIX><name>-<content hash>`; .gitignore leaves `.klw-test-*` out. */
const PREFIX = '.klw-test-kept-';
/** Drafts are `<DRAFTS>XXXXXX/<name>`: the project's folder is named `name` while it is written. */
const DRAFTS = `${PREFIX}draft-`;

/** Adds the files under `dir` to `hash` (path, then content; a link by its target), but the caches under node_modules. */
function hashFiles(hash: ReturnType<typeof createHash>, base: string, dir: string): void {
  for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
    const path = join(dir, entry.name);
    const rel = relative(base, path);
    if (entry.isDirectory()) {
      if (rel !== join('node_modules', '.cache')) hashFiles(hash, base, path);
    } else if (entry.isSymbolicLink()) hash.update(`${rel}\0->${readlinkSync(path)}\0`);
    else hash.update(`${rel}\0`).update(readFileSync(path)).update('\0');
  }
}

/**
 * The project `make` writes into the folder it is given (named `name`, which it may take as the
 * project's name), kept by content: the folder of an earlier run when that one holds the same
 * files, else this run's, moved into place. Other projects kept under `name` are removed. A test
 * must not change a kept project: what it changes needs a project of its own.
 */
export async function keptProject(name: string, make: (dir: string) => unknown): Promise<string> {
  const draft = mkdtempSync(join(ROOT, DRAFTS));
  try {
    const dir = join(draft, name);
    mkdirSync(dir);
    await make(dir);
    const hash = createHash('sha256');
    hashFiles(hash, dir, dir);
    const project = join(ROOT, `${PREFIX}${name}-${hash.digest('hex').slice(0, 16)}`);
    if (!existsSync(project)) {
      try {
        renameSync(dir, project);
      } catch {
        // Another test process kept the same project first: theirs is as good.
      }
    }
    const mine = `${PREFIX}${name}-`;
    for (const old of readdirSync(ROOT))
      if (old.startsWith(mine) && /^[0-9a-f]{16}$/.test(old.slice(mine.length)) && join(ROOT, old) !== project)
        rmSync(join(ROOT, old), { recursive: true, force: true });
    return project;
  } finally {
    rmSync(draft, { recursive: true, force: true });
  }
}
