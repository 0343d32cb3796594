// The loader's answers kept for the rest of this process: a command (or a test running several
// commands in one process) that loads the same functions again, unchanged, gets the registrations
// of the first load, and what the modules wrote while loading is written again, without starting
// another child. "Unchanged" is the loader's build, the modules' build (its folder is named by its
// content, and checked against it before every load: functions.ts), every file under the
// project's functions/ folder by content (what a module reads beside itself at load), the working
// folder and the environment. Only a load that succeeded, with all of its output, is kept. A load
// that starts while one of the same key is under way (commands started at the same moment) waits
// for it and takes its answer once kept; when that load kept nothing, it loads itself.
import { createHash, type Hash } from 'node:crypto';
import { lstatSync, readdirSync, readFileSync, readlinkSync, realpathSync, statSync } from 'node:fs';
import { join } from 'node:path';

/** What one load answered, and what its child wrote meanwhile, in order. */
export interface Answer<T> {
  modules: T;
  output: Buffer[];
}

/** How many answers are kept: a test file loads a few projects many times; the oldest goes first. */
export const KEPT_ANSWERS = 32;

/**
 * The most a functions/ folder may hold to be compared by content (hashed on every load): far
 * beyond a project's code and settings; a folder holding more (data sets) is loaded afresh each time.
 */
export const MAX_HASHED_BYTES = 16 * 1024 * 1024;

/** The most output of one load that is kept to be written again; a load that wrote more is not kept. */
export const MAX_KEPT_OUTPUT = 1024 * 1024;

const answers = new Map<string, Answer<unknown>>();

/** The loads under way in this process, by key: each settles (never rejects) once its load ended. */
const underWay = new Map<string, Promise<void>>();

/**
 * Adds the folder's files (path and content; a link by its target and what it leads to; a
 * dependency folder left out) to `hash`; false past `budget`. `seen` holds the real paths of the
 * folders entered, so a link back up is entered once.
 */
function hashFolder(hash: Hash, dir: string, budget: { left: number }, seen = new Set<string>()): boolean {
  const real = realpathSync.native(dir);
  if (seen.has(real)) return true;
  seen.add(real);
  const entries = readdirSync(dir).sort();
  for (const name of entries) {
    if (name === 'node_modules') continue;
    const path = join(dir, name);
    const link = lstatSync(path, { throwIfNoEntry: false });
    if (link?.isSymbolicLink()) hash.update(`${path}\0->${readlinkSync(path)}\0`);
    const stat = link?.isSymbolicLink() ? statSync(path, { throwIfNoEntry: false }) : link;
    if (!stat) continue;
    if (stat.isDirectory()) {
      if (!hashFolder(hash, path, budget, seen)) return false;
    } else if (stat.isFile()) {
      budget.left -= stat.size;
      if (budget.left < 0) return false;
      hash.update(`${path}\0`).update(readFileSync(path)).update('\0');
    }
  }
  return true;
}

/**
 * The key of a load of `what` (the loader's build and the modules' URLs) for the project at
 * `root`: undefined when its functions/ folder is too large to compare, or cannot be read whole.
 */
export function answerKey(root: string, what: unknown): string | undefined {
  const hash = createHash('sha256');
  const { NODE_TEST_CONTEXT: _test, ...env } = process.env;
  const sortedEnv = Object.keys(env)
    .sort()
    .map((name) => [name, env[name]]);
  hash.update(JSON.stringify([what, process.cwd(), sortedEnv]));
  try {
    if (!hashFolder(hash, join(root, 'functions'), { left: MAX_HASHED_BYTES })) return undefined;
  } catch {
    return undefined; // a file that cannot be read, a folder gone meanwhile: loaded afresh
  }
  return hash.digest('hex');
}

/** The answer kept under `key`, as a copy the caller may change; undefined when none is. */
export function keptAnswer<T>(key: string | undefined): Answer<T> | undefined {
  const answer = key === undefined ? undefined : answers.get(key);
  return answer && { modules: structuredClone(answer.modules) as T, output: answer.output };
}

/** Keeps `answer` under `key` (a copy), dropping the oldest past KEPT_ANSWERS; output past MAX_KEPT_OUTPUT is not kept. */
export function keepAnswer<T>(key: string | undefined, answer: Answer<T>): void {
  if (key === undefined) return;
  if (answer.output.reduce((sum, chunk) => sum + chunk.length, 0) > MAX_KEPT_OUTPUT) return;
  answers.delete(key);
  answers.set(key, { modules: structuredClone(answer.modules), output: answer.output });
  if (answers.size > KEPT_ANSWERS) answers.delete(answers.keys().next().value!);
}

/**
 * Marks a load under `key` as under way until the returned function is called (once the load
 * ended, kept or not); a key already under way, or undefined, marks nothing.
 */
export function loadUnderWay(key: string | undefined): () => void {
  if (key === undefined || underWay.has(key)) return () => {};
  let ended!: () => void;
  underWay.set(
    key,
    new Promise<void>((resolve) => {
      ended = resolve;
    }),
  );
  return () => {
    underWay.delete(key);
    ended();
  };
}

/**
 * The answer under `key`, waiting first for a load of that key under way in this process: a copy
 * the caller may change, or undefined when none is kept (that load failed, was cut short or saw a
 * change): the caller then loads itself.
 */
export async function answerOnceLoaded<T>(key: string | undefined): Promise<Answer<T> | undefined> {
  const pending = key === undefined ? undefined : underWay.get(key);
  if (pending) await pending;
  return keptAnswer<T>(key);
}
