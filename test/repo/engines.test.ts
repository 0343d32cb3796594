// The Node.js versions package.json declares are ones every installed package runs on, so that a
// fresh install (of this repository, or of a project `klw init` makes) prints no EBADENGINE
// warning on any of them; the generated project declares the same.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import semver from 'semver';
import { projectPackageJson } from '../../infra/init.ts';

const root = process.cwd();
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { engines: { node: string } };
const lock = JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8')) as {
  packages: Record<string, { version?: string; engines?: { node?: string } | string[]; optional?: boolean }>;
};

/** The `engines.node` of an installed package (its own package.json), else the lock's record of it. */
function nodeEngine(path: string): string | undefined {
  const file = join(root, path, 'package.json');
  const engines = existsSync(file)
    ? (JSON.parse(readFileSync(file, 'utf8')) as { engines?: unknown }).engines
    : lock.packages[path]!.engines;
  // A few old packages write engines as a list ("node >= 0.8"); npm ignores those.
  return engines && !Array.isArray(engines) && typeof engines === 'object'
    ? (engines as { node?: string }).node
    : undefined;
}

describe('engines', () => {
  const ours = pkg.engines.node;

  it('the declared range is a valid range that includes Node 20', () => {
    assert.ok(semver.validRange(ours), ours);
    assert.ok(semver.satisfies('20.19.0', ours), `${ours} must include the Node 20 the README names`);
  });

  it('every package of the lock runs on every Node.js version package.json declares', () => {
    const outside: string[] = [];
    let checked = 0;
    for (const path of Object.keys(lock.packages)) {
      if (!path) continue;
      const theirs = nodeEngine(path);
      if (!theirs) continue;
      checked++;
      if (!semver.subset(ours, theirs, { includePrerelease: false }))
        outside.push(`${path.replace(/^.*node_modules\//, '')}@${lock.packages[path]!.version}: ${theirs}`);
    }
    assert.ok(checked > 100, `only ${checked} packages with engines: is package-lock.json read?`);
    assert.deepEqual(outside, [], `these packages would warn EBADENGINE on part of ${ours}`);
  });

  it('the project klw init makes declares the same Node.js', () => {
    const project = projectPackageJson('shop-webhooks', '^0.1.0') as { engines: { node: string } };
    assert.equal(project.engines.node, ours);
  });
});
