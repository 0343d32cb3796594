import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import fastJsonPatch from 'fast-json-patch';
import { applyPatchCopy, diffPatch } from '../../../lib/admission/patch.ts';
import { FUZZ_RUNS } from '../../helpers.ts';

const json = (v: unknown) => JSON.parse(JSON.stringify(v));

describe('diffPatch', () => {
  it('gives the operations of fast-json-patch compare, in the same order', () => {
    const value = fc.jsonValue({ maxDepth: 4 });
    const object = fc.dictionary(fc.constantFrom('a', 'b', 'c/d', 'e~f', '0', '1'), value, { maxKeys: 5 });
    fc.assert(
      fc.property(object, object, (a, b) => {
        assert.deepEqual(json(diffPatch(a, b)), json(fastJsonPatch.compare(a, b)));
      }),
      { numRuns: FUZZ_RUNS },
    );
  });

  it('gives the operations of compare for an object and a changed copy of it, as JSON carries the copy', () => {
    fc.assert(
      fc.property(fc.object({ maxDepth: 4 }), fc.object({ maxDepth: 2 }), (a, extra) => {
        const b = { ...structuredClone(a), ...extra };
        assert.deepEqual(json(diffPatch(json(a), b)), json(fastJsonPatch.compare(json(a), json(b))));
      }),
      { numRuns: FUZZ_RUNS },
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

  it('gives a patch that applies to the original and yields the changed object as JSON carries it', () => {
    const key = fc.constantFrom('a', 'b', 'c/d', 'e~f', '0', '1');
    // Values JSON.stringify writes differently than they are held: dropped from objects, null in arrays.
    const odd = fc.constantFrom<unknown>(
      undefined,
      () => 1,
      Symbol('s'),
      NaN,
      Infinity,
      { toJSON: () => undefined },
      new Date(0),
      { toJSON: () => [1, 2] },
    );
    const { value } = fc.letrec((tie) => ({
      value: fc.oneof({ depthSize: 'small' }, fc.jsonValue({ maxDepth: 1 }), odd, tie('array'), tie('object')),
      array: fc.oneof(fc.array(tie('value'), { maxLength: 4 }), fc.sparseArray(tie('value'), { maxLength: 4 })),
      object: fc.dictionary(key, tie('value'), { maxKeys: 4 }),
    }));
    const original = fc.dictionary(key, fc.jsonValue({ maxDepth: 3 }), { maxKeys: 5 });
    const changed = fc.dictionary(key, value, { maxKeys: 5 });
    fc.assert(
      fc.property(original, changed, (a, b) => {
        const patch = json(diffPatch(a, b));
        // Applied as the API server applies it: fc.jsonValue sometimes names a member __proto__.
        const applied = applyPatchCopy(json(a), patch);
        assert.deepEqual(applied, json(b));
      }),
      { numRuns: FUZZ_RUNS },
    );
  });

  it('writes an array grown past its end with holes as nulls, never adding out of bounds', () => {
    const changed = { l: [1] as unknown[] };
    changed.l[3] = 4;
    assert.deepEqual(diffPatch({ l: [1] }, changed), [
      { op: 'add', path: '/l/1', value: null },
      { op: 'add', path: '/l/2', value: null },
      { op: 'add', path: '/l/3', value: 4 },
    ]);
  });

  it('leaves out members JSON leaves out and gives every operation a value', () => {
    const fn = () => 1;
    assert.deepEqual(diffPatch({ a: 1, b: 2 }, { a: fn, b: 2, c: Symbol('c'), d: { toJSON: () => undefined } }), [
      { op: 'remove', path: '/a' },
    ]);
    assert.deepEqual(diffPatch({ l: [1, 2] }, { l: [fn, 2, Symbol('x')] }), [
      { op: 'replace', path: '/l/0', value: null },
      { op: 'add', path: '/l/2', value: null },
    ]);
    assert.deepEqual(diffPatch({ t: 'x' }, { t: new Date(0) }), [
      { op: 'replace', path: '/t', value: '1970-01-01T00:00:00.000Z' },
    ]);
    assert.deepEqual(diffPatch({ n: null }, { n: NaN }), []);
  });

  it('writes an array hole as null', () => {
    // eslint-disable-next-line no-sparse-arrays
    assert.deepEqual(diffPatch({ l: [1, 2] }, { l: [1, undefined] }), [{ op: 'replace', path: '/l/1', value: null }]);
  });
});
