import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { actualSize, libraryCallCost, traversalCost } from '../cost/library-costs.ts';
import { setsContains, setsEquivalent, setsIntersects } from './sets.ts';

/** A stand-in for CEL equality: numbers of any kind by value, lists and maps element by element. */
const celEquals = (a: unknown, b: unknown): boolean => {
  const numeric = (v: unknown) => typeof v === 'number' || typeof v === 'bigint';
  if (numeric(a) && numeric(b)) return Number(a) === Number(b);
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((v, i) => celEquals(v, b[i]));
  if (a instanceof Map && b instanceof Map) {
    return (
      a.size === b.size && [...a].every(([k, v]) => [...b].some(([k2, v2]) => celEquals(k, k2) && celEquals(v, v2)))
    );
  }
  return a === b;
};

describe('cel-go sets library', () => {
  // cel-go ext sets tests as function calls (1.0 and 1u written as doubles and bigints).
  it('contains', () => {
    assert.equal(setsContains([], [], celEquals), true);
    assert.equal(setsContains([], [1n], celEquals), false);
    assert.equal(setsContains([1n, 2n, 3n, 4n], [2n, 3n], celEquals), true);
    assert.equal(setsContains([1n, 2n, 3n], [3n, 2n, 1n], celEquals), true);
    assert.equal(setsContains([1n], [1n, 1n], celEquals), true);
    assert.equal(setsContains([1n, 2n], [2n, 2n, 3n], celEquals), false);
    assert.equal(setsContains([1n], [1.0, 1n], celEquals), true);
    assert.equal(setsContains([[1n], [2n, 3n]], [[2n, 3.0]], celEquals), true);
    assert.equal(setsContains([new Map([['a', 1n]])], [new Map([['a', 1.0]])], celEquals), true);
    assert.equal(setsContains(['a'], ['b'], celEquals), false);
  });

  it('equivalent', () => {
    assert.equal(setsEquivalent([], [], celEquals), true);
    assert.equal(setsEquivalent([1n], [1n, 1n], celEquals), true);
    assert.equal(setsEquivalent([1n], [1n, 1.0], celEquals), true);
    assert.equal(setsEquivalent([1n, 2n, 3n], [3n, 2.0, 1n], celEquals), true);
    assert.equal(setsEquivalent([1n, 2n], [2n, 2n, 2n], celEquals), false);
    assert.equal(setsEquivalent([1n], [], celEquals), false);
  });

  it('intersects', () => {
    assert.equal(setsIntersects([1n], [], celEquals), false);
    assert.equal(setsIntersects([], [1n], celEquals), false);
    assert.equal(setsIntersects([1n], [1n, 2n], celEquals), true);
    assert.equal(
      setsIntersects(
        [[1n], [2n, 3n]],
        [
          [1n, 2n],
          [2n, 3.0],
        ],
        celEquals,
      ),
      true,
    );
    assert.equal(setsIntersects([1n, 2n], [3n, 4n], celEquals), false);
  });

  it('compares at most what the call is charged for', () => {
    let comparisons = 0;
    const counting = (a: unknown, b: unknown) => (comparisons++, a === b);
    const a = Array.from({ length: 300 }, (_, i) => i);
    const b = Array.from({ length: 200 }, (_, i) => -i - 1);
    setsEquivalent(a, a, counting);
    setsIntersects(a, b, counting);
    setsContains(a, b, counting);
    const charged = [
      libraryCallCost('sets.equivalent', '', [a, a])!,
      libraryCallCost('sets.intersects', '', [a, b])!,
      libraryCallCost('sets.contains', '', [a, b])!,
    ];
    assert.deepEqual(charged, [1 + 300 * 300 * 2, 1 + 300 * 200, 1 + 300 * 200]);
    assert.ok(comparisons <= charged.reduce((x, y) => x + y), `${comparisons} comparisons`);
  });
});

describe('Kubernetes library call costs', () => {
  it('measures sizes as cel-go: code points, elements, entries', () => {
    assert.equal(actualSize('a😀b'), 3);
    assert.equal(actualSize(new Uint8Array(5)), 5);
    assert.equal(actualSize([1, 2]), 2);
    assert.equal(actualSize(new Map([[1, 2]])), 1);
    assert.equal(actualSize(42n), 1);
  });

  it('charges string traversals by a tenth of the size, rounded up with Go doubles', () => {
    assert.equal(libraryCallCost('url', 'string_to_url', ['x'.repeat(23)]), 3);
    assert.equal(libraryCallCost('lowerAscii', 'string_lower_ascii', ['😀'.repeat(10)]), 1);
    assert.equal(libraryCallCost('substring', '', ['x'.repeat(1_000_001)]), 100_001);
    assert.equal(libraryCallCost('replace', '', ['x'.repeat(23), 'x', 'y']), 5);
    assert.equal(libraryCallCost('split', '', ['x'.repeat(30), ',']), 6);
    assert.equal(libraryCallCost('join', '', [['ab', 'cd'], '-'], 'ab-cd'), 1);
    assert.equal(libraryCallCost('quantity', '', ['1500m']), 1);
    assert.equal(libraryCallCost('isQuantity', '', ['']), 0);
  });

  it('charges regex searches by string length times pattern length', () => {
    // (1 + 99) / 10 = 10 for the string, 9 / 4 rounded up = 3 for the pattern.
    assert.equal(libraryCallCost('findAll', '', ['x'.repeat(99), '[a-z]+[0]', 5n]), 30);
    assert.equal(libraryCallCost('find', '', ['', 'a']), 1);
  });

  it('charges list scans by traversal (string bytes, truncated)', () => {
    assert.equal(traversalCost(['x'.repeat(19), 'é'.repeat(10)]), 1 + 2);
    assert.equal(traversalCost([1n, 2n, 3n]), 3);
    assert.equal(traversalCost(new Map([['k'.repeat(10), [1n, 'v'.repeat(20)]]])), 1 + 1 + 2);
    assert.equal(libraryCallCost('indexOf', '', ['x'.repeat(35), 'y']), 3);
    assert.equal(libraryCallCost('sum', '', [[1n, 2n]]), 2);
    const deep: unknown[] = [];
    let at = deep;
    for (let i = 0; i < 100_000; i++) {
      const next: unknown[] = [];
      at.push(next);
      at = next;
    }
    at.push('x'.repeat(100));
    assert.equal(traversalCost(deep), 10);
  });

  it('charges ip and cidr calls as declared', () => {
    assert.equal(libraryCallCost('ip', 'string_to_ip', ['192.168.0.1']), 2);
    assert.equal(libraryCallCost('ip', 'cidr_ip', [{}]), 1);
    assert.equal(libraryCallCost('ip.isCanonical', '', ['192.168.0.1']), 3);
    assert.equal(libraryCallCost('containsIP', 'cidr_contains_ip_string', ['10.0.0.0/8', '10.0.0.1']), 2 + 1);
    assert.equal(libraryCallCost('containsIP', 'cidr_contains_ip_ip', ['10.0.0.0/8', {}]), 2);
    assert.equal(
      libraryCallCost('containsCIDR', 'cidr_contains_cidr_string', ['10.0.0.0/8', '10.0.0.0/16']),
      2 + 1 + 1 + 2,
    );
    assert.equal(libraryCallCost('family', '', [{}]), 1);
  });

  it('has fixed costs for the authorizer and quantity arithmetic, and none for others', () => {
    assert.equal(libraryCallCost('check', '', [{}, 'get']), 350_000);
    assert.equal(libraryCallCost('serviceAccount', '', [{}, 'ns', 'sa']), 1);
    assert.equal(libraryCallCost('add', '', [{}, {}]), 1);
    assert.equal(libraryCallCost('charAt', '', ['x', 0n]), undefined);
    assert.equal(libraryCallCost('getQuery', '', [{}]), undefined);
  });
});
