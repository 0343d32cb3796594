// The package on its own: every module it has (sources and tests) imports only its own modules,
// Node's, and the packages its package.json declares; only its adapter imports the engine.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
};
const declared = new Set([...Object.keys(manifest.dependencies), ...Object.keys(manifest.devDependencies)]);

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((f) => {
    const path = join(dir, f);
    if (statSync(path).isDirectory()) return f === 'node_modules' ? [] : sources(path);
    return path.endsWith('.ts') ? [path] : [];
  });
}

/** The package name of a bare specifier (`@scope/name/sub` is `@scope/name`). */
const packageOf = (spec: string) =>
  spec
    .split('/')
    .slice(0, spec.startsWith('@') ? 2 : 1)
    .join('/');

/** What a module imports that the package does not have or declare: `file -> specifier`. */
export function foreignImports(file: string, text: string): string[] {
  const out: string[] = [];
  for (const m of text.matchAll(/^\s*(?:import|export)\b[^'"]*?\bfrom\s+'([^']+)'|\bimport\(\s*'([^']+)'\s*\)/gm)) {
    const spec = (m[1] ?? m[2])!;
    const inside = spec.startsWith('.')
      ? !relative(root, resolve(dirname(file), spec)).startsWith('..')
      : spec.startsWith('node:') || declared.has(packageOf(spec));
    if (!inside) out.push(`${relative(root, file)} -> ${spec}`);
  }
  return out;
}

describe('the package on its own', () => {
  it('imports only its own modules, Node, and what its package.json declares', () => {
    assert.deepEqual(foreignImports(join(root, 'src/a.ts'), "import { x } from '../../../lib/x.ts';\n"), [
      'src/a.ts -> ../../../lib/x.ts',
    ]);
    // Spliced, so that this file's own samples are no imports themselves.
    const dynamic = `const m = await ${'import'}('zod');\n`;
    assert.deepEqual(foreignImports(join(root, 'src/a.ts'), dynamic), ['src/a.ts -> zod']);
    const files = [...sources(join(root, 'src')), ...sources(join(root, 'test'))];
    assert.deepEqual(
      files.flatMap((file) => foreignImports(file, readFileSync(file, 'utf8'))),
      [],
    );
  });
});
