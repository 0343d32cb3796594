// Runtime cost as cel-go's tracker charges it, with its size factors for the standard functions:
// what cel-go stops at the 1,000,000 per-expression limit is stopped here, and what it lets finish
// finishes. Sizes are chosen so that each case is at least 10% away from the limit either way.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { compileUnoptimized, isCompileError, PER_CALL_COST_LIMIT } from '../compile.ts';

/** `n` distinct strings of `len` characters, none starting with `x`. */
const strings = (n: number, len: number): string[] => Array.from({ length: n }, (_, i) => String(i).padEnd(len, 'a'));

/**
 * Runs `expression` on `object`: its cost, or `stopped` at the limit. cel-go's cost tests build
 * their programs without OptOptimize: so is it built here, its literals charged.
 */
function cost(expression: string, object: unknown): number | 'stopped' {
  const compiled = compileUnoptimized(expression);
  if (isCompileError(compiled)) throw new Error(compiled.message);
  try {
    compiled.run({ object, oldObject: null, request: {}, namespaceObject: null, authorizer: null });
    return compiled.lastCost;
  } catch (err) {
    if ((err as Error).name === 'CostLimitExceeded') return 'stopped';
    throw err;
  }
}

describe('cost by size, as cel-go charges the standard functions', () => {
  it('a nested map concatenating strings: charged by their lengths (string +)', () => {
    // cel-go per inner step: two reads, `+` ceil((100 + 100) / 10) = 20, the list append 12:
    // 240² steps × 34 ≈ 1.96M. With one-character strings, 15 per step: ≈ 0.86M.
    const expression = 'object.l.map(a, object.l.map(b, a + b)).size() > 0';
    assert.equal(cost(expression, { l: strings(240, 100) }), 'stopped');
    const small = cost(expression, { l: strings(240, 1) });
    assert.ok(
      typeof small === 'number' && small < 0.9 * PER_CALL_COST_LIMIT && small > 0.8 * PER_CALL_COST_LIMIT,
      `${small}`,
    );
  });

  it('startsWith and endsWith: a tenth of the receiver per call', () => {
    // Per step: 3 for the loop, a read, ceil(100,000 / 10) = 10,000 for the call.
    assert.equal(cost("object.l.exists(s, s.startsWith('x'))", { l: strings(110, 100_000) }), 'stopped');
    const under = cost("object.l.exists(s, s.endsWith('x'))", { l: strings(90, 100_000) });
    assert.ok(typeof under === 'number' && under > 900_000 && under < PER_CALL_COST_LIMIT, `${under}`);
  });

  it('contains: the product of both tenths', () => {
    // ceil(10,000 / 10) × ceil(1,000 / 10) = 100,000 per call.
    const o = (n: number) => ({ l: strings(n, 10_000), t: 'x'.repeat(1000) });
    assert.equal(cost('object.l.exists(s, s.contains(object.t))', o(11)), 'stopped');
    const under = cost('object.l.exists(s, s.contains(object.t))', o(9));
    assert.ok(typeof under === 'number' && under > 900_000, `${under}`);
  });

  it('equality and ordering of strings: a tenth of the shorter', () => {
    const long = 'a'.repeat(100_000);
    // 10,000 per comparison; 120 comparisons are past the limit, 80 within it.
    const o = (n: number) => ({ l: Array.from({ length: n }, () => long), t: long });
    assert.equal(cost('object.l.all(s, s == object.t)', o(120)), 'stopped');
    assert.ok((cost('object.l.all(s, s == object.t)', o(80)) as number) > 800_000);
    assert.equal(cost('object.l.all(s, s <= object.t)', o(120)), 'stopped');
    assert.equal(cost("object.t == 'a'", o(0)), 1 + 2 + 0);
  });

  it('membership in a list: its size', () => {
    const o = (n: number) => ({ l: strings(1000, 1), items: strings(n, 1) });
    // 1,000 per membership test.
    assert.equal(cost('object.items.all(i, !(i in object.l) || true)', o(1100)), 'stopped');
    assert.ok((cost('object.items.all(i, i in object.l || true)', o(900)) as number) < PER_CALL_COST_LIMIT);
  });

  it('list and map literals: 10 and 30 to create', () => {
    assert.equal(cost('[1, 2, 3].size() == 3', {}), 12);
    assert.equal(cost('[object.a].size() == 1', { a: 1n }), 14);
    assert.equal(cost("{'a': object.a}.size() == 1", { a: 1n }), 34);
    assert.equal(cost("{'a': 1}.size() == 1", {}), 32);
  });
});
