import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { libraryCallCost } from '../cost/library-costs.ts';
import { type CelOrdering, distinct, flatten, range, reverse, slice, sort, sortByKeys } from './lists.ts';

const error = (message: string) => (err: Error) => err.name === 'ListsError' && err.message === message;
/** A stand-in for the engine: ints as bigints, strings; lists are not comparable. */
const ordering: CelOrdering = {
  comparableType: (v) =>
    typeof v === 'bigint' ? 'int' : typeof v === 'string' ? 'string' : typeof v === 'number' ? 'double' : undefined,
  compare: (a, b) =>
    (a as bigint | string) < (b as bigint | string) ? -1 : (a as bigint | string) > (b as bigint | string) ? 1 : 0,
};
const celEquals = (a: unknown, b: unknown) =>
  (typeof a === 'bigint' || typeof a === 'number') && (typeof b === 'bigint' || typeof b === 'number')
    ? Number(a) === Number(b)
    : a === b;

describe('cel-go lists library (version 3)', () => {
  // cel-go ext lists tests, as function calls.
  it('slices', () => {
    const l = [1n, 2n, 3n, 4n];
    assert.deepEqual(slice(l, 0n, 4n), l);
    assert.deepEqual(slice(l, 0n, 0n), []);
    assert.deepEqual(slice(l, 1n, 1n), []);
    assert.deepEqual(slice(l, 4n, 4n), []);
    assert.deepEqual(slice(l, 1n, 3n), [2n, 3n]);
    assert.throws(
      () => slice(l, 3n, 0n),
      error('cannot slice(3, 0), start index must be less than or equal to end index'),
    );
    assert.throws(() => slice(l, 0n, 10n), error('cannot slice(0, 10), list is length 4'));
    assert.throws(() => slice(l, -5n, 10n), error('cannot slice(-5, 10), negative indexes not supported'));
    assert.throws(() => slice(l, -5n, -3n), error('cannot slice(-5, -3), negative indexes not supported'));
  });

  it('flattens to a depth', () => {
    assert.deepEqual(flatten([]), []);
    assert.deepEqual(flatten([1n, [2n, [3n, 4n]]]), [1n, 2n, [3n, 4n]]);
    assert.deepEqual(flatten([1n, 2n, [], [], [3n, 4n]]), [1n, 2n, 3n, 4n]);
    assert.deepEqual(flatten([1n, [2n, [3n, 4n]]], 2n), [1n, 2n, 3n, 4n]);
    assert.deepEqual(flatten([1n, [2n, [3n, [4n]]]], 2n), [1n, 2n, 3n, [4n]]);
    assert.deepEqual(flatten([1n, [2n]], 0n), [1n, [2n]]);
    assert.throws(() => flatten([1n, [2n, [3n, [4n]]]], -1n), error('level must be non-negative'));
  });

  it('reverses, ranges and removes repeats', () => {
    assert.deepEqual(reverse([5n, 1n, 2n, 3n]), [3n, 2n, 1n, 5n]);
    assert.deepEqual(reverse([]), []);
    assert.deepEqual(range(4n), [0n, 1n, 2n, 3n]);
    assert.deepEqual(range(0n), []);
    assert.throws(() => range(-1n), error('lists.range: size must be non-negative, got -1'));
    assert.throws(() => range(10_000_001n), error('lists.range: size 10000001 exceeds maximum allowed (10000000)'));
    assert.deepEqual(distinct([1n, 2n, 2n, 3n, 3n, 3n], celEquals), [1n, 2n, 3n]);
    assert.deepEqual(distinct(['b', 'b', 'c', 'a', 'c'], celEquals), ['b', 'c', 'a']);
    assert.deepEqual(distinct([1n, 'b', 2n, 'b'], celEquals), [1n, 'b', 2n]);
    assert.deepEqual(distinct([1n, 1.0, 2n], celEquals), [1n, 2n]);
  });

  it('sorts comparable elements of one type, and by associated keys', () => {
    assert.deepEqual(sort([4n, 3n, 2n, 1n], ordering), [1n, 2n, 3n, 4n]);
    assert.deepEqual(sort(['d', 'a', 'b', 'c'], ordering), ['a', 'b', 'c', 'd']);
    assert.deepEqual(sort([], ordering), []);
    assert.deepEqual(sort([[1n]], { ...ordering, comparableType: () => 'list' }), [[1n]]);
    assert.throws(() => sort([1n, 'b'], ordering), error('list elements must have the same type'));
    assert.throws(() => sort([[1n, 2n, 3n]], ordering), error('list elements must be comparable'));
    assert.deepEqual(sortByKeys(['foo', 'bar', 'baz'], [3n, 1n, 2n], ordering), ['bar', 'baz', 'foo']);
    assert.throws(
      () => sortByKeys(['a'], [1n, 2n], ordering),
      error(
        '@sortByAssociatedKeys() expected a list of the same size as the associated keys list, but got 1 and 2 ' +
          'elements respectively',
      ),
    );
  });

  it('charges as cel-go version 3 tracks', () => {
    assert.equal(libraryCallCost('slice', 'list_slice', [[1n, 2n, 3n], 0n, 2n], [1n, 2n]), 13);
    assert.equal(libraryCallCost('lists.range', 'lists_range', [5n], range(5n)), 16);
    assert.equal(libraryCallCost('flatten', 'list_flatten_int', [[1n, [2n]], 3n], [1n, 2n]), 17);
    assert.equal(libraryCallCost('distinct', 'list_distinct', [[1n, 2n, 3n]]), 29);
    assert.equal(libraryCallCost('sort', 'list_string_sort', [['a', 'b', 'c']]), 11 + Math.trunc(9 * 2.1));
    assert.equal(
      libraryCallCost('@sortByAssociatedKeys', '', [
        ['a', 'b'],
        [2n, 1n],
      ]),
      19,
    );
    assert.equal(libraryCallCost('sort', '', [[]]), 11);
  });

  it('flattens a list nested 100,000 deep without recursion', () => {
    let nested: unknown[] = ['leaf'];
    for (let i = 0; i < 100_000; i++) nested = [nested];
    assert.deepEqual(flatten(nested, 1_000_000n), ['leaf']);
  });
});
