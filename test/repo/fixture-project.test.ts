// The fixture project the toolkit's tests use is the named examples of functions/, copied.
import assert from 'node:assert/strict';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { after, describe, it } from 'node:test';
import {
  copyFixtureFunctions,
  EXAMPLES,
  FIXTURE_ENTRIES,
  FIXTURE_FUNCTIONS,
  fixtureHash,
} from '../fixtures/project.ts';

const scratch = mkdtempSync(join(tmpdir(), 'klw-fixture-'));
after(() => rmSync(scratch, { recursive: true, force: true }));

/** Every file under dir, relative to it, sorted. */
function files(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((d) => d.isFile())
    .map((d) => relative(dir, join(d.parentPath, d.name)))
    .sort();
}

describe('the fixture project', () => {
  it('holds the named examples byte for byte, and nothing else', () => {
    assert.deepEqual(readdirSync(FIXTURE_FUNCTIONS).sort(), [...FIXTURE_ENTRIES].sort());
    const copied = files(FIXTURE_FUNCTIONS);
    assert.ok(copied.length > FIXTURE_ENTRIES.length, 'the functions were copied with their files');
    for (const file of copied)
      assert.ok(readFileSync(join(FIXTURE_FUNCTIONS, file)).equals(readFileSync(join(EXAMPLES, file))), file);
  });

  it('leaves an added example out, and is named anew when a named one changes', () => {
    const examples = join(scratch, 'examples');
    cpSync(EXAMPLES, examples, { recursive: true });
    mkdirSync(join(examples, 'zz-new-policy'));
    writeFileSync(join(examples, 'zz-new-policy', 'index.ts'), 'export default 1;\n');
    const before = fixtureHash(examples);
    assert.equal(before, fixtureHash(EXAMPLES), 'an added example does not change the fixture');
    copyFixtureFunctions(join(scratch, 'project', 'functions'), examples);
    assert.deepEqual(readdirSync(join(scratch, 'project', 'functions')).sort(), [...FIXTURE_ENTRIES].sort());
    writeFileSync(join(examples, 'pod-defaults', 'quantity.ts'), '// changed\n', { flag: 'a' });
    assert.notEqual(fixtureHash(examples), before);
  });
});
