import { existsSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';

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

/** The function folders under `<root>/functions` that hold an entry file, sorted by name. */
export function findFunctions(root: string): FunctionSource[] {
  const dir = resolve(root, 'functions');
  if (!existsSync(dir)) return [];
  const found: FunctionSource[] = [];
  for (const d of readdirSync(dir, { withFileTypes: true })) {
    if (!d.isDirectory()) continue;
    const file = ENTRY_FILES.find((f) => existsSync(join(dir, d.name, f)));
    if (file) found.push({ name: d.name, entry: join(dir, d.name, file) });
  }
  return found.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/** The message for a project without functions: where they go and how to add one. */
export function noFunctionsMessage(root: string): string {
  return `no functions in ${resolve(root, 'functions')}: each function is functions/<name>/index.ts (or .mts, .js, .mjs); add one with \`klw new validating <name>\``;
}
