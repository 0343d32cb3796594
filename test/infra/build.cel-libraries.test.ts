// The Kubernetes CEL libraries are a chunk of their own in a function's bundle: only a dynamic
// import reaches it, which a function runs before compiling when one of its expressions names a
// library function; its answers are the package's.
// klw-test: no-tsx (what it imports at run time is the JavaScript it built)
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, it } from 'node:test';
import { buildFunction, bundlePath } from '../../infra/build.ts';
import { toEvent } from '../../lib/testing/index.ts';
import { CONDITION_GATE, POD_POLICY, podReview, scratchProjects } from './scratch-projects.ts';
import { buildsForReal } from '../kept-builds.ts';

// What these tests check is the build itself: made every run, never a kept one.
buildsForReal();

const sources: Record<string, string> = {
  'library-gate': CONDITION_GATE('library-gate', "object.metadata.name.upperAscii().startsWith('WEB-')"),
  'plain-gate': CONDITION_GATE('plain-gate', "object.metadata.name.startsWith('web-')"),
  // A policy served as a webhook whose validation names a library function.
  'library-policy': POD_POLICY(
    'library-policy',
    "object.metadata.name.lowerAscii().startsWith('web-')",
    'not a web pod',
  ),
};
const work = scratchProjects()(sources);

/** A string only the libraries' code holds (the type of the `strings` namespace). */
const LIBRARIES_MARKER = 'kubernetes.lib.strings';

/** The function's answer to a pod named `name`, from its built bundle. */
async function answer(name: string, podName: string): Promise<{ allowed: boolean; status?: { message: string } }> {
  process.env.KLW_LOG_LEVEL = 'silent';
  try {
    const mod = await import(pathToFileURL(bundlePath(work, name)).href);
    return JSON.parse((await mod.handler(toEvent(podReview(podName)))).body).response;
  } finally {
    delete process.env.KLW_LOG_LEVEL;
  }
}

describe('the Kubernetes CEL libraries chunk', () => {
  it('is reached by a dynamic import only, in every function', async () => {
    for (const name of Object.keys(sources)) {
      await buildFunction(work, { name, entry: join(work, 'functions', name, 'index.ts') });
      const dir = dirname(bundlePath(work, name));
      const files = ['index.mjs', ...readdirSync(join(dir, 'chunks')).map((f) => `chunks/${f}`)].filter((f) =>
        f.endsWith('.mjs'),
      );
      const text = new Map(files.map((f) => [f, readFileSync(join(dir, f), 'utf8')]));
      const holding = files.filter((f) => text.get(f)!.includes(LIBRARIES_MARKER));
      assert.equal(holding.length, 1, `${name}: one chunk holds the libraries, not ${holding.join(', ')}`);
      const chunk = holding[0]!.replace('chunks/', '');
      for (const [f, t] of text) {
        assert.ok(!new RegExp(`from\\s*["'][./a-z]*${chunk}["']`).test(t), `${name}: ${f} imports ${chunk} statically`);
      }
      assert.ok(
        [...text.values()].some((t) => new RegExp(`import\\(["'][./a-z]*${chunk}["']\\)`).test(t)),
        `${name}: nothing imports ${chunk}`,
      );
    }
  });

  it('loads when a condition names a library function, and answers as the package', async () => {
    const ran = await answer('library-gate', 'web-1');
    assert.equal(ran.allowed, false);
    assert.equal(ran.status?.message, 'frozen');
    assert.equal((await answer('library-gate', 'db-1')).allowed, true);
    assert.equal((await answer('plain-gate', 'db-1')).allowed, true);
    assert.equal((await answer('plain-gate', 'web-1')).status?.message, 'frozen');
  });

  it('loads for a policy whose validation names a library function', async () => {
    assert.equal((await answer('library-policy', 'web-1')).allowed, true);
    const denied = await answer('library-policy', 'db-1');
    assert.equal(denied.allowed, false);
    assert.match(denied.status?.message ?? '', /not a web pod/);
  });
});
