// The projects tests run klw test in are kept by content: the same files reuse the folder (and the
// test build klw test left in it), other files make a new one in its place.
import assert from 'node:assert/strict';
import { existsSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { after, describe, it } from 'node:test';
import { keptProject } from '../kept-projects.ts';

const root = process.cwd();
// A name of this process's own, so that no other run's projects are touched.
const name = `kept-test-${process.pid}`;
/** The kept projects named `name`. */
const kept = (name: string) =>
  readdirSync(root).filter((f) => f.startsWith(`.klw-test-kept-${name}-`) && /^[0-9a-f]{16}$/.test(f.slice(-16)));
/** The drafts (of any test file running now) that hold a project named `name`. */
const drafts = (name: string) =>
  readdirSync(root).filter((f) => f.startsWith('.klw-test-kept-draft-') && existsSync(join(root, f, name)));
after(() => {
  for (const dir of readdirSync(root).filter((f) => f.startsWith(`.klw-test-kept-${name}`)))
    rmSync(join(root, dir), { recursive: true, force: true });
});

describe('a kept project', () => {
  it('is the same folder for the same files, with what was left there, and a new one for other files', async () => {
    const written: string[] = [];
    const make = (text: string) => (dir: string) => {
      written.push(basename(dir));
      writeFileSync(join(dir, 'a.txt'), text);
    };
    const first = await keptProject(name, make('one'));
    writeFileSync(join(first, 'left.txt'), 'by klw test');
    assert.equal(await keptProject(name, make('one')), first);
    assert.ok(existsSync(join(first, 'left.txt')), 'reused as it was left');
    const other = await keptProject(name, make('two'));
    assert.notEqual(other, first);
    assert.ok(!existsSync(first), 'the project of the other files is removed');
    assert.deepEqual(kept(name), [basename(other)]);
    assert.deepEqual(written, [name, name, name], 'written in a folder named as the project');
  });

  it('is not kept when it cannot be written, leaving no draft', async () => {
    await assert.rejects(
      keptProject(`${name}-broken`, () => {
        throw new Error('cannot write');
      }),
      /cannot write/,
    );
    assert.deepEqual(drafts(`${name}-broken`), []);
    assert.deepEqual(kept(`${name}-broken`), []);
  });
});
