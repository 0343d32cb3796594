// Hostile inputs to the Kubernetes libraries: every call is charged by the size it touches, so an
// expression over a large annotation or string either stops at the cost limit or runs in work
// linear in its cost. Asserted on cost units and work counters, never on time.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { compileExpression, CostLimitExceeded, isCompileError, PER_CALL_COST_LIMIT, toCel } from '../compile.ts';
import { stringIndexingWork } from './strings.ts';
import { UrlValue } from './url.ts';

/** Runs `expression` over an object with `annotations`; the value or the error, and the cost. */
function run(expression: string, annotations: Record<string, string>, limit = PER_CALL_COST_LIMIT) {
  const compiled = compileExpression(expression);
  if (isCompileError(compiled)) throw new Error(compiled.message);
  const object = toCel({ metadata: { name: 'x', annotations } });
  try {
    return { value: compiled.run({ object }, limit), cost: compiled.lastCost };
  } catch (err) {
    return { error: err as Error, cost: compiled.lastCost };
  }
}

/** An annotation of `bytes` bytes: a URL whose query repeats the key `a`. */
const repeatedQuery = (bytes: number): string => `https://example.com/?${'a=1&'.repeat(bytes / 4)}`;

describe('url(s).getQuery() over an 80 kB annotation of repeated keys', () => {
  const expr = "url(object.metadata.annotations.u).getQuery()['a'].size() > 0";

  it('is charged for the parse by the string size, then one unit for the query', () => {
    const small = run(expr, { u: repeatedQuery(80_000) });
    assert.equal(small.value, true);
    // url(): ceil(80,022 / 10) = 8,003; the reads, getQuery, index, size and > are one each.
    assert.equal(small.cost, 8003 + 8);
    const twice = run(expr, { u: repeatedQuery(160_000) });
    assert.equal(twice.cost, 16_003 + 8);
  });

  it('answers every key and value, in order', () => {
    const r = run("url(object.metadata.annotations.u).getQuery()['a'].size() == 20000", { u: repeatedQuery(80_000) });
    assert.equal(r.value, true);
  });

  it('parses the query once however often one URL value is asked', (t) => {
    const spy = t.mock.method(UrlValue.prototype, 'query');
    const r = run('[url(object.metadata.annotations.u)].all(u, lists.range(5000).all(i, u.getQuery().size() == 1))', {
      u: repeatedQuery(80_000),
    });
    assert.equal(r.value, true);
    assert.equal(spy.mock.callCount(), 1);
  });

  it('stops at the limit when the annotation is parsed again and again', () => {
    // A limit of a tenth of the per-call one: the same charging, stopped after a tenth of the parses.
    const limit = PER_CALL_COST_LIMIT / 10;
    const expression = 'lists.range(1000).all(i, url(object.metadata.annotations.u).getQuery().size() == 1)';
    const r = run(expression, { u: repeatedQuery(80_000) }, limit);
    assert.ok(r.error instanceof CostLimitExceeded, String(r.error));
    // Stopped at the 13th parse: 12 × 8,000 units fit in the limit, the next does not.
    assert.ok(r.cost > limit && r.cost < limit + 8100, String(r.cost));
  });
});

describe('strings over large values', () => {
  const mb = `${'a😀'.repeat(250_000)}end`;

  it('charAt costs one unit as in cel-go, and many calls index the string once', () => {
    const before = { ...stringIndexingWork };
    const r = run("lists.range(20000).all(i, object.metadata.annotations.s.charAt(i * 7) != 'z')", { s: mb });
    assert.equal(r.value, true);
    assert.equal(stringIndexingWork.indexBuilds - before.indexBuilds, 1);
    // Per step: the predicate's reads and calls, and cel-go's comprehension overhead.
    const one = run("lists.range(1).all(i, object.metadata.annotations.s.charAt(i * 7) != 'z')", { s: mb });
    const two = run("lists.range(2).all(i, object.metadata.annotations.s.charAt(i * 7) != 'z')", { s: mb });
    assert.equal(r.cost - one.cost, (two.cost - one.cost) * 19_999);
  });

  it('findAll is charged by the string times the pattern, before it runs', () => {
    const s = 'ab1'.repeat(100_000);
    const one = run("object.metadata.annotations.s.findAll('[a-z]+[0-9]').size() > 0", { s });
    assert.equal(one.value, true);
    // ceil((1 + 300,000) / 10) × ceil(11 / 4) = 30,001 × 3, plus the reads, size and >.
    assert.equal(one.cost, 90_003 + 6);
    // Under a 200,000 limit the third call is refused before it searches.
    const many = run(
      "lists.range(100).all(i, object.metadata.annotations.s.findAll('[a-z]+[0-9]').size() > 0)",
      { s },
      200_000,
    );
    assert.ok(many.error instanceof CostLimitExceeded);
    assert.ok(many.cost > 200_000 && many.cost < 200_000 + 90_100, String(many.cost));
  });

  it('indexOf, split, replace and join are charged by the sizes they touch', () => {
    const s = 'x,'.repeat(50_000);
    // Four reads (object, metadata, annotations, s), then the call's own cost.
    assert.equal(run("object.metadata.annotations.s.indexOf('y')", { s }).cost, 4 + 10_000);
    assert.equal(run("object.metadata.annotations.s.split(',')", { s }).cost, 4 + 20_000);
    assert.equal(run("object.metadata.annotations.s.replace(',', ';')", { s }).cost, 4 + 20_000);
    // join: twice the result's size over ten, the result 99,999 characters.
    assert.equal(run("object.metadata.annotations.s.split(',').join(',')", { s }).cost, 4 + 20_000 + 20_000);
  });

  it('a condition over a 1 MB string stops at the limit instead of running on', () => {
    const r = run("lists.range(100).all(i, object.metadata.annotations.s.lowerAscii() != '')", { s: mb });
    assert.ok(r.error instanceof CostLimitExceeded);
  });
});

describe('sets over large lists', () => {
  it('is charged by the product of the sizes: 2,000 × 2,000 stops before comparing', () => {
    const r = run('sets.contains(lists.range(2000), lists.range(2000))', {});
    assert.ok(r.error instanceof CostLimitExceeded);
    const fits = run('sets.contains(lists.range(900), lists.range(900))', {});
    assert.equal(fits.value, true);
    // Each range: its 900 elements, the call and the list (cel-go's allocating list call).
    assert.equal(fits.cost, 810_001 + 2 * (900 + 11));
  });
});
