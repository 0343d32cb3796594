import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import fastJsonPatch from 'fast-json-patch';
import { diffPatch } from '../../lib/admission/patch.ts';

const json = (v: unknown) => JSON.parse(JSON.stringify(v));

describe('diffPatch', () => {
  it('gives the operations of fast-json-patch compare, in the same order', () => {
    const value = fc.jsonValue({ maxDepth: 4 });
    const object = fc.dictionary(fc.constantFrom('a', 'b', 'c/d', 'e~f', '0', '1'), value, { maxKeys: 5 });
    fc.assert(
      fc.property(object, object, (a, b) => {
        assert.deepEqual(json(diffPatch(a, b)), json(fastJsonPatch.compare(a, b)));
      }),
      { numRuns: 3000 },
    );
  });

  it('gives the operations of compare for an object and a changed copy of it', () => {
    fc.assert(
      fc.property(fc.object({ maxDepth: 4 }), fc.object({ maxDepth: 2 }), (a, extra) => {
        const b = { ...structuredClone(a), ...extra };
        assert.deepEqual(json(diffPatch(a, b)), json(fastJsonPatch.compare(a, b)));
      }),
      { numRuns: 1000 },
    );
  });

  it('compares objects nested 50,000 levels deep', () => {
    const build = (leaf: unknown) => {
      let value: unknown = leaf;
      for (let i = 0; i < 50_000; i++) value = { a: value };
      return value as object;
    };
    const patch = diffPatch(build(1), build(2));
    assert.equal(patch.length, 1);
    assert.equal(patch[0]!.op, 'replace');
    assert.equal(patch[0]!.path, '/a'.repeat(50_000));
  });

  it('writes an array hole as null', () => {
    // eslint-disable-next-line no-sparse-arrays
    assert.deepEqual(diffPatch({ l: [1, 2] }, { l: [1, undefined] }), [{ op: 'replace', path: '/l/1', value: null }]);
  });
});
