// The toolkit's tests run against test/fixtures/project/functions so that editing an example never
// changes what the tests prove; this keeps that copy byte for byte equal to functions/.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, it } from 'node:test';
import { FIXTURE_FUNCTIONS } from '../helpers.ts';

const EXAMPLES = join(process.cwd(), 'functions');

/** Every file under dir, relative to it, sorted. */
function files(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((d) => d.isFile())
    .map((d) => relative(dir, join(d.parentPath, d.name)))
    .sort();
}

/** What differs between two trees: files only in one, and files whose bytes differ. */
export function treeDifferences(a: string, b: string): string[] {
  const left = files(a);
  const right = files(b);
  const out = [
    ...left.filter((f) => !right.includes(f)).map((f) => `only in ${a}: ${f}`),
    ...right.filter((f) => !left.includes(f)).map((f) => `only in ${b}: ${f}`),
  ];
  for (const f of left.filter((f) => right.includes(f))) {
    if (!readFileSync(join(a, f)).equals(readFileSync(join(b, f)))) out.push(`differs: ${f}`);
  }
  return out;
}

describe('the fixture copy of the examples', () => {
  it('is byte for byte functions/ (copy functions/ over it after changing an example)', () => {
    assert.deepEqual(treeDifferences(EXAMPLES, FIXTURE_FUNCTIONS), []);
  });

  it('the comparison sees a changed byte and a missing file', () => {
    const fixtureFiles = files(FIXTURE_FUNCTIONS);
    assert.ok(fixtureFiles.length > 3);
    const found = treeDifferences(EXAMPLES, join(FIXTURE_FUNCTIONS, 'pod-policy'));
    assert.ok(found.some((d) => d.startsWith('only in')));
    const policy = join(FIXTURE_FUNCTIONS, 'pod-policy');
    const defaults = join(FIXTURE_FUNCTIONS, 'pod-defaults');
    assert.ok(treeDifferences(policy, defaults).some((d) => d.startsWith('differs: index.ts')));
  });
});
