// klw-test: patches-builtins (its bounds tests count the steps of array iteration)
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isUrl, parseUrl } from './url.ts';

const query = (s: string): Array<[string, string[]]> => [...parseUrl(s).query()];

describe('the CEL url library as Go net/url reads it', () => {
  // k8s.io/apiserver pkg/cel/library URL tests, as function calls (answers checked against Go).
  it('reads the parts', () => {
    const u = parseUrl('https://user:pass@example.com:80/path?query=val#fragment');
    assert.equal(u.scheme, 'https');
    assert.equal(u.host, 'example.com:80');
    assert.equal(u.hostname(), 'example.com');
    assert.equal(u.port(), '80');
    assert.equal(u.escapedPath(), '/path');
    assert.deepEqual(query('https://user:pass@example.com:80/path?query=val#fragment'), [['query', ['val']]]);
    assert.equal(parseUrl('https://[::1]:80/path').hostname(), '::1');
    assert.equal(parseUrl('https://[::1]/path').port(), '');
    assert.equal(parseUrl('/path').scheme, '');
  });

  it('refuses what url.ParseRequestURI refuses, with its message', () => {
    assert.equal(isUrl('../relative-path'), false);
    assert.equal(isUrl('https://a:b:c/'), false);
    assert.equal(isUrl('https://example.com'), true);
    assert.throws(
      () => parseUrl('../relative-path'),
      /^UrlError: URL parse error during conversion from string: parse "\.\.\/relative-path": invalid URI for request$/,
    );
    assert.throws(() => parseUrl('https://a:b:c/'), /parse "https:\/\/a:b:c\/": invalid port ":c" after host$/);
    assert.throws(
      () => parseUrl('https://x/\u0001'),
      /parse "https:\/\/x\/\\x01": net\/url: invalid control character in URL$/,
    );
  });

  it('drops query pairs Go drops (semicolons, bad escapes) and keeps order of repeated keys', () => {
    assert.deepEqual(query('https://h/p?a=1&a=2;b&c=%zz&d&=e&a+b=c+d%20&&x=%E2%82%AC'), [
      ['a', ['1']],
      ['d', ['']],
      ['', ['e']],
      ['a b', ['c d ']],
      ['x', ['€']],
    ]);
    assert.deepEqual(query('https://h/p?%=1&a=%4'), []);
    assert.deepEqual(query('https://h/p?a==b'), [['a', ['=b']]]);
    assert.deepEqual(query('https://example.com/path?k1=a&k2=b&k2=c'), [
      ['k1', ['a']],
      ['k2', ['b', 'c']],
    ]);
  });
});

/**
 * Runs fn counting every step of every array iteration (spreads, for…of), and fails once more
 * than `budget` steps were taken: a deterministic bound on the work instead of a clock.
 */
function withIterationBudget<T>(budget: number, fn: () => T): { result: T; steps: number } {
  const original = Object.getOwnPropertyDescriptor(Array.prototype, Symbol.iterator)!;
  const values = Array.prototype[Symbol.iterator];
  let steps = 0;
  Object.defineProperty(Array.prototype, Symbol.iterator, {
    ...original,
    value: function (this: unknown[]) {
      const inner = values.call(this);
      return {
        next() {
          if (++steps > budget) throw new Error(`more than ${budget} iteration steps`);
          return inner.next();
        },
        [Symbol.iterator]() {
          return this;
        },
      };
    },
  });
  try {
    return { result: fn(), steps };
  } finally {
    Object.defineProperty(Array.prototype, Symbol.iterator, original);
  }
}

describe('url library bounds', () => {
  it('reads a 1 MB query of one repeated key with iteration steps linear in the pairs', () => {
    const pairs = 250_000;
    const raw = `https://example.com/?${Array.from({ length: pairs }, (_, i) => `k=${i % 10}`).join('&')}`;
    assert.ok(raw.length > 1_000_000);
    // Copying the list of a repeated key at each pair would take pairs² / 2 steps.
    const { result: query, steps } = withIterationBudget(10 * pairs, () => parseUrl(raw).query());
    assert.ok(steps <= 10 * pairs, `${steps} steps`);
    const values = query.get('k')!;
    assert.equal(values.length, pairs);
    assert.equal(values[pairs - 1], String((pairs - 1) % 10));
  });

  it('unescapes a 1 MB path of multi-byte characters', () => {
    const path = `/${'é'.repeat(500_000)}`;
    const u = parseUrl(`https://example.com${path}`);
    assert.equal(u.path.length, path.length);
    assert.equal(u.escapedPath().length, 1 + 500_000 * 6);
  });
});
