// The README's first screen is for a user of the toolkit (init, write, test, run locally, deploy,
// register), after the two commands of a fresh checkout; this repository's own suite and its
// times are in docs/architecture.md. The generated project's README links only to what the
// installed package holds.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';

const root = process.cwd();
const readme = readFileSync(join(root, 'README.md'), 'utf8');
/** What a terminal or a repository page shows before scrolling. */
const firstScreen = readme.split('\n').slice(0, 40).join('\n');

describe("the README's first screen", () => {
  it('starts with the two commands of a fresh checkout', () => {
    assert.match(readme, /^```sh\nnpm install && npm start .*\nnpm test /m);
    assert.ok(readme.indexOf('npm install && npm start') < readme.indexOf('npx klw init'));
  });

  it("walks a user's project through init, write, test, run locally, deploy and register", () => {
    const steps = ['npx klw init', 'write:', 'test:', 'run locally:', 'deploy:', 'register:'];
    let at = -1;
    for (const step of steps) {
      const found = firstScreen.indexOf(step, at + 1);
      assert.ok(found > at, `${JSON.stringify(step)} on the first screen, after the step before it`);
      at = found;
    }
  });

  it("keeps this repository's suite timings off it, in docs/architecture.md", () => {
    assert.doesNotMatch(firstScreen, /busy loops|CPU time|\d+ min \d+ s/);
    const architecture = readFileSync(join(root, 'docs', 'architecture.md'), 'utf8');
    const section = architecture.slice(architecture.indexOf('## Tests of this project'));
    assert.match(section, /`npm test` runs the unit, adapter, fuzz, infra, emulator and parity tests/);
    assert.match(section, /both cores busy with two busy loops/);
  });
});

describe("the generated project's README", () => {
  const template = readFileSync(join(root, 'infra', 'templates', 'project', 'README.md.tmpl'), 'utf8');
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { name: string; files: string[] };

  it('links to no registry page, only to what the installed package holds', () => {
    const links = [...template.matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1]!);
    assert.ok(links.length > 0);
    for (const link of links) {
      assert.doesNotMatch(link, /npmjs\.com/, link);
      const prefix = `node_modules/${pkg.name}/`;
      if (!link.startsWith(prefix)) continue;
      const inPackage = link.slice(prefix.length).split('#')[0]!;
      assert.ok(existsSync(join(root, inPackage)), `${link}: ${inPackage} is not in the repository`);
      assert.ok(
        pkg.files.some((f) => inPackage === f || inPackage.startsWith(`${f}/`)),
        `${link}: ${inPackage} is not among package.json's files`,
      );
    }
  });
});
