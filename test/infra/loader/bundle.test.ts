// In a checkout, the loader's child runs on the toolkit built once into JavaScript, not through tsx.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { describe, it } from 'node:test';
import { loadFunctions } from '../../../infra/functions.ts';
import { BUNDLE_CACHE, loaderBundle } from '../../../infra/loader/bundle.ts';
import { FIXTURE_PROJECT } from '../../helpers.ts';

describe("the loader's build", () => {
  it('is one folder named by its content, with source maps, reused while nothing changes', async () => {
    const dir = await loaderBundle();
    assert.ok(dir, 'built in a checkout');
    assert.equal(join(dir, '..'), BUNDLE_CACHE);
    assert.match(basename(dir), /^[0-9a-f]{16}$/);
    assert.match(readFileSync(join(dir, 'child.mjs'), 'utf8'), /function serve\(/);
    assert.ok(existsSync(join(dir, 'child.mjs.map')));
    assert.equal(await loaderBundle(), dir);
  });

  it('loads the functions and reads their registrations', async () => {
    const loaded = await loadFunctions(FIXTURE_PROJECT);
    assert.deepEqual(
      loaded.map((f) => [f.name, f.registration.name]),
      [
        ['crontab-conversion', 'crontab-conversion'],
        ['pod-defaults', 'pod-defaults'],
        ['pod-policy', 'pod-policy'],
      ],
    );
  });
});
