// The relative imports of the repository's sources, for the layering and cycle tests.
import { readdirSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

const root = process.cwd();

/** Source files under a folder, relative to the repository, tests left out. */
export function sources(dir: string): string[] {
  return readdirSync(join(root, dir), { recursive: true, withFileTypes: true })
    .filter((d) => d.isFile() && /\.(ts|mjs)$/.test(d.name) && !d.name.endsWith('.test.ts'))
    .map((d) => relative(root, join(d.parentPath, d.name)).split('\\').join('/'));
}

/** The repository paths a file imports through relative specifiers. */
export function relativeImports(file: string, text: string): string[] {
  const specifiers = [...text.matchAll(/(?:from\s+|import\s*\(\s*|^import\s+)['"](\.{1,2}\/[^'"]+)['"]/gm)].map(
    (m) => m[1]!,
  );
  return specifiers.map((s) =>
    relative(root, resolve(root, dirname(file), s))
      .split('\\')
      .join('/'),
  );
}
