import { existsSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

/**
 * The file names a function's entry may have, in order of preference: TypeScript or JavaScript,
 * ES modules either way (a `.js` entry is read as ESM whatever the project's `type`).
 */
export const ENTRY_FILES = ['index.ts', 'index.mts', 'index.js', 'index.mjs'] as const;

/** A function folder under `functions/` and the entry file found in it. */
export interface FunctionSource {
  name: string;
  /** Absolute path of `functions/<name>/index.{ts,mts,js,mjs}`. */
  entry: string;
}

/** The warning for a folder under `functions/` that holds no entry file, so is no function. */
function noEntryMessage(name: string): string {
  return `warning: functions/${name} has no ${ENTRY_FILES.slice(0, -1).join(', ')} or ${ENTRY_FILES.at(-1)}: it is not a function and is skipped`;
}

// Folders already warned about in this process, so commands that look twice say it once.
const warned = new Set<string>();

/** Writes a warning line to stderr once per folder in this process. */
function warnOnce(folder: string, message: string): void {
  if (warned.has(folder)) return;
  warned.add(folder);
  process.stderr.write(`${message}\n`);
}

/**
 * The function folders under `<root>/functions` that hold an entry file, sorted by name. A
 * folder without one (an entry misnamed, or a folder of shared code) is skipped with a warning
 * through `warn`, by default on stderr once per folder in this process; hidden folders and
 * node_modules are skipped silently.
 */
export function findFunctions(
  root: string,
  warn: (message: string, folder: string) => void = (message, folder) => warnOnce(folder, message),
): FunctionSource[] {
  const dir = resolve(root, 'functions');
  if (!existsSync(dir)) return [];
  const found: FunctionSource[] = [];
  for (const d of readdirSync(dir, { withFileTypes: true })) {
    if (!d.isDirectory()) continue;
    const folder = join(dir, d.name);
    const file = ENTRY_FILES.find((f) => existsSync(join(folder, f)));
    if (file) {
      found.push({ name: d.name, entry: join(folder, file) });
      // Warned again should it lose its entry later (klw start --watch).
      warned.delete(folder);
    } else if (!d.name.startsWith('.') && d.name !== 'node_modules') {
      warn(noEntryMessage(d.name), folder);
    }
  }
  return found.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/** The message for a project without functions: where they go and how to add one. */
export function noFunctionsMessage(root: string): string {
  return `no functions in ${resolve(root, 'functions')}: each function is functions/<name>/index.ts (or .mts, .js, .mjs); add one with \`klw new validating <name>\``;
}

/**
 * The environment variable `klw test` gives its test processes: a JSON object mapping each
 * function's entry (absolute path, as `findFunctions` gives it) to the ES module built from it,
 * which describeConformance imports in its place; without it (a test run by hand through tsx),
 * the entries themselves are imported.
 */
export const BUILT_FUNCTIONS_ENV = 'KLW_BUILT_FUNCTIONS';

/** The URL to import a function's entry from: its build when BUILT_FUNCTIONS_ENV names one, else the entry. */
export function functionModuleUrl(entry: string, env: NodeJS.ProcessEnv = process.env): string {
  let built: unknown;
  try {
    built = JSON.parse(env[BUILT_FUNCTIONS_ENV] ?? '{}');
  } catch {
    built = {}; // not klw's: the entries themselves
  }
  const file =
    built && typeof built === 'object' && Object.hasOwn(built, entry) ? Reflect.get(built, entry) : undefined;
  return pathToFileURL(typeof file === 'string' ? file : entry).href;
}
