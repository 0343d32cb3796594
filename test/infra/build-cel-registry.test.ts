// Bundles register the CEL engine's standard library when first looked up: the installed engine
// must still read as the edits expect (else bundles would quietly register it at once), an engine
// that does not is bundled registering at once, and a bundle must answer every conformance case as
// the package does unbundled.
// klw-test: no-tsx (what it imports at run time is the bundle it builds)
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { pathToFileURL } from 'node:url';
import * as esbuild from 'esbuild';
import { bundledEvaluator, bundledRegistry, engineGuardsPlugin, withoutGuards } from '../../infra/build-cel-engine.ts';
import { EVALUATOR_EDITS, edited, REGISTRY_EDITS } from '../../infra/build-cel-registry.ts';
import { conformanceAnswers } from '../../packages/kube-cel/test/answers.ts';
import { celEngineFile } from '../helpers.ts';

const dir = mkdtempSync(join(process.cwd(), '.klw-test-cel-registry-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** The installed engine's registry, as the package resolves it, and the module beside it that registers its standard library. */
const registryPath = celEngineFile('registry.js');
const evaluatorPath = celEngineFile('evaluator.js');

describe('the CEL standard library in bundles', () => {
  it('edits a text only where each edit is found exactly once', () => {
    const edits = [{ from: 'a', to: 'b' }];
    assert.equal(edited('xay', edits), 'xby');
    assert.equal(edited('xy', edits), undefined);
    assert.equal(edited('aa', edits), undefined);
    // The replacement is taken as written (no `$&` patterns).
    assert.equal(edited('a', [{ from: 'a', to: '$&$&' }]), '$&$&');
  });

  it('defers the standard library: the installed engine reads as the edits expect', () => {
    const registry = readFileSync(registryPath, 'utf8');
    const bundled = bundledRegistry(registry);
    assert.ok(bundled?.deferred, 'the engine changed: update REGISTRY_EDITS in infra/build-cel-registry.ts');
    for (const { to } of REGISTRY_EDITS) assert.ok(bundled.text.includes(to));
    const evaluator = bundledEvaluator(readFileSync(evaluatorPath, 'utf8'), registry);
    assert.ok(evaluator, 'the engine changed: update EVALUATOR_EDITS in infra/build-cel-registry.ts');
    for (const { to } of EVALUATOR_EDITS) assert.ok(evaluator.includes(to));
  });

  it('registers the standard library at once when the registry no longer reads as expected', () => {
    const registry = readFileSync(registryPath, 'utf8');
    const changed = registry.replace('  getDefinitions() {\n', '  getDefinitions(all) {\n');
    const bundled = bundledRegistry(changed);
    assert.ok(bundled && !bundled.deferred, 'the guards still left out, nothing deferred');
    assert.equal(bundled.text, withoutGuards(changed));
    // The evaluator then asks the registry to defer nothing.
    assert.equal(bundledEvaluator(readFileSync(evaluatorPath, 'utf8'), changed), undefined);
    assert.equal(bundledEvaluator('const globalRegistry = createRegistry()\n', registry), undefined);
  });

  it('answers every CEL conformance case in a bundle as the package unbundled', async () => {
    const outfile = join(dir, 'answers.mjs');
    await esbuild.build({
      entryPoints: [join(process.cwd(), 'packages', 'kube-cel', 'test', 'answers.ts')],
      bundle: true,
      // Values are told apart by their classes' names in the canonical text.
      keepNames: true,
      platform: 'node',
      format: 'esm',
      outfile,
      logLevel: 'silent',
      external: ['re2js'],
      plugins: [engineGuardsPlugin()],
    });
    assert.ok(readFileSync(outfile, 'utf8').includes('globalRegistry.deferRegistrations(true)'), 'bundled deferred');
    const bundled = (await import(pathToFileURL(outfile).href)) as {
      conformanceAnswers: typeof conformanceAnswers;
      loadLibraries: () => Promise<void>;
    };
    await bundled.loadLibraries();
    // Unchecked first: the checker reads every declaration, which registers the rest at once.
    for (const typeCheck of [false, true]) {
      const here = conformanceAnswers(typeCheck);
      const there = bundled.conformanceAnswers(typeCheck);
      assert.ok(here.length > 1000, `${here.length} cases`);
      const differing = here.filter((a, i) => a !== there[i]);
      assert.deepEqual(
        differing,
        [],
        `typeCheck ${typeCheck}: ${differing.length} differ, as ${there.find((a, i) => a !== here[i])}`,
      );
    }
  });
});
