// The esbuild side of the cached build: the sources it read, the module standing in for esbuild,
// and an import() of a missing file left to fail when it runs.
// klw-test: no-tsx (what it imports at run time is the JavaScript it built)
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { pathToFileURL } from 'node:url';
import * as esbuild from 'esbuild';
import { hashOf } from '../../infra/build-cache.mjs';
import { bundled, REQUIRED_ESBUILD } from '../../infra/build-cache-esbuild.mjs';
import { project } from './test-runner.projects.ts';

// Inside the repository, so that `esbuild` resolves from the sources as it does for the toolkit.
const root = mkdtempSync(join(process.cwd(), '.klw-test-build-esbuild-'));
after(() => rmSync(root, { recursive: true, force: true }));

/** The text of the built entry `name` (in memory). */
function output(out: esbuild.BuildResult, name: string): string {
  const file = out.outputFiles!.find((f) => f.path.endsWith(`${name}.mjs`));
  assert.ok(file, `${name}.mjs in the build`);
  return file.text;
}

describe('the cached build, esbuild side', () => {
  it('records the hash of every source it read, and none of a package', async () => {
    const dir = project(root, 'read', {
      'main.ts':
        "import { two } from './two.ts';\nimport { parse } from 'yaml';\nexport const v = two + String(parse);\n",
      'two.ts': 'export const two = 2;\n',
    });
    const spec = { root: dir, entryPoints: [join(dir, 'main.ts')], sourceUrls: false };
    const { read, packages } = await bundled(esbuild, spec, join(dir, 'out'));
    assert.deepEqual([...read].sort(), [
      [join(dir, 'main.ts'), hashOf(join(dir, 'main.ts'))],
      [join(dir, 'two.ts'), hashOf(join(dir, 'two.ts'))],
    ]);
    assert.equal(packages.size, 0, 'no esbuild import: no package input');
  });

  it('stands a module requiring esbuild in for its import, and names its package.json as an input', async () => {
    const dir = project(root, 'standin', {
      'main.ts': "import * as esbuild from 'esbuild';\nexport const version = esbuild.version;\n",
    });
    const spec = { root: dir, entryPoints: [join(dir, 'main.ts')], sourceUrls: false };
    const { out, packages } = await bundled(esbuild, spec, join(dir, 'out'));
    const main = createRequire(join(dir, 'index.js')).resolve('esbuild');
    assert.deepEqual([...packages], [join(main, '..', '..', 'package.json')]);
    const text = output(out, 'main');
    assert.doesNotMatch(text, /from ["']esbuild["']/, 'no import of the package itself');
    assert.match(text, /createRequire/);
    assert.equal(REQUIRED_ESBUILD, 'klw-required-esbuild');
    // Run: the stand-in gives the very package an import gives.
    for (const f of out.outputFiles!) {
      mkdirSync(join(f.path, '..'), { recursive: true });
      writeFileSync(f.path, f.contents);
    }
    const built = await import(pathToFileURL(join(dir, 'out', 'main.mjs')).href);
    assert.equal(built.version, esbuild.version);
  });

  it("builds an import() of a missing file as its absolute URL, to fail when it runs; its module's own import.meta with sourceUrls", async () => {
    const dir = project(root, 'missing', {
      'main.ts': "export const missing = () => import('./not-there.mjs');\nexport const here = import.meta.filename;\n",
    });
    const spec = { root: dir, entryPoints: [join(dir, 'main.ts')], sourceUrls: true };
    const { out, read } = await bundled(esbuild, spec, join(dir, 'out'));
    const text = output(out, 'main');
    assert.ok(text.includes(pathToFileURL(join(dir, 'not-there.mjs')).href), 'the missing file by its URL');
    assert.ok(text.includes(JSON.stringify(join(dir, 'main.ts'))), "the source's own filename");
    assert.deepEqual([...read.keys()], [join(dir, 'main.ts')], 'read once, by the build that succeeded');
  });

  it('fails a build that cannot resolve a static import, as esbuild does', async () => {
    const dir = project(root, 'broken', { 'main.ts': "import { x } from './gone.ts';\nexport const y = x;\n" });
    const spec = { root: dir, entryPoints: [join(dir, 'main.ts')], sourceUrls: false };
    await assert.rejects(bundled(esbuild, spec, join(dir, 'out')), /Could not resolve "\.\/gone\.ts"/);
  });
});
