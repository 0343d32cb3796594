// The functions' build for the loader (.klw/load): reused while no file it read changed, built
// again when one did or when what the cache holds cannot be trusted, and stack traces of a
// function's code at load still name its TypeScript file.
import assert from 'node:assert/strict';
import { lstatSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { loadDir } from '../../infra/functions.ts';
import { runKlw } from '../helpers.ts';
import { GOOD_WEBHOOK, scratchProjects } from './scratch-projects.ts';

const project = scratchProjects();
const GOOD = GOOD_WEBHOOK;

/** The build folders under the project's .klw/load (one set of functions): their paths. */
function builds(root: string): string[] {
  const sets = readdirSync(loadDir(root));
  assert.equal(sets.length, 1, `one set of functions built together: ${sets.join(', ')}`);
  const set = join(loadDir(root), sets[0]!);
  return readdirSync(set)
    .filter((name) => /^[0-9a-f]{16}$/.test(name))
    .map((name) => join(set, name));
}

/** A function `name` that says `word` on stderr when it loads. */
const SAYS = (name: string, word: string) => `${GOOD(name)}console.error('${name} says ${word}');\n`;

/** What the functions said while `klw lint` loaded them. */
async function said(root: string): Promise<string[]> {
  const { code, stderr } = await runKlw('--root', root, 'lint');
  assert.equal(code, 0, stderr);
  return stderr.split('\n').filter((line) => line.includes(' says '));
}

describe("the functions' build for the loader", () => {
  it('is reused while nothing changed, and built again, with the new code, when a source changed', async () => {
    const root = project({ one: SAYS('one', 'hello'), two: SAYS('two', 'hello') });
    assert.deepEqual(await said(root), ['one says hello', 'two says hello']);
    const [first] = builds(root);
    const inode = lstatSync(join(first!, 'one.mjs')).ino;
    assert.deepEqual(await said(root), ['one says hello', 'two says hello']);
    assert.deepEqual(builds(root), [first]);
    assert.equal(lstatSync(join(first!, 'one.mjs')).ino, inode, 'the same file, not written again');
    // A longer file (a new size), so the change is seen whatever the clock's resolution.
    writeFileSync(join(root, 'functions', 'two', 'index.ts'), SAYS('two', 'goodbye'));
    assert.deepEqual(await said(root), ['one says hello', 'two says goodbye']);
    assert.equal(builds(root).length, 2, 'a new build beside the old one');
  });

  it('never trusts a link planted in place of a built module, nor a module changed in place', async () => {
    const root = project({ one: SAYS('one', 'genuine') });
    await said(root);
    const [build] = builds(root);
    const module = join(build!, 'one.mjs');
    // A module of another project's making, linked where the build's was.
    const elsewhere = project({ one: SAYS('one', 'planted') });
    assert.deepEqual(await said(elsewhere), ['one says planted']);
    rmSync(module);
    symlinkSync(join(builds(elsewhere)[0]!, 'one.mjs'), module);
    assert.deepEqual(await said(root), ['one says genuine']);
    // The same size, other content: a module that says something else.
    const [rebuilt] = builds(root);
    assert.ok(lstatSync(join(rebuilt!, 'one.mjs')).isFile());
    const size = lstatSync(join(rebuilt!, 'one.mjs')).size;
    const other = "console.error('one says corrupt');\n";
    writeFileSync(join(rebuilt!, 'one.mjs'), other + ' '.repeat(size - other.length));
    assert.deepEqual(await said(root), ['one says genuine']);
  });

  it('names the first function that does not build, its file and line, and loads none', async () => {
    const root = project({
      fine: SAYS('fine', 'hello'),
      missing: `${GOOD('missing')}import './nowhere.ts';\n`,
      syntax: `${GOOD('syntax')}const = ;\n`,
    });
    const { code, stderr } = await runKlw('--root', root, 'lint');
    assert.notEqual(code, 0);
    assert.match(stderr, /functions\/missing: .*functions\/missing\/index\.ts:3: Could not resolve "\.\/nowhere\.ts"/);
    assert.doesNotMatch(stderr, /syntax|says/);
  });

  it("names the function's own .ts file in a stack trace its code prints at load", async () => {
    const root = project({
      traced: `${GOOD('traced')}\nconsole.error(new Error('where am I').stack);\n`,
    });
    const { code, stderr } = await runKlw('--root', root, 'lint');
    assert.equal(code, 0, stderr);
    assert.match(stderr, /where am I\n\s+at .*functions\/traced\/index\.ts:4:\d+/);
  });
});
