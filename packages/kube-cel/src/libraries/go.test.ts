import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { seeded } from '../../test/seeded.ts';
import { goQuote, SHORT_ESCAPES } from './go.ts';

/** strconv.Quote restated code point by code point: what goQuote must answer for any string. */
function quoteByCodePoint(s: string): string {
  let out = '"';
  for (const c of s) {
    const cp = c.codePointAt(0)!;
    if (SHORT_ESCAPES[c] !== undefined) out += SHORT_ESCAPES[c];
    else if (cp >= 0xd800 && cp <= 0xdfff) out += '\\ufffd';
    else if (/^[\p{L}\p{M}\p{N}\p{P}\p{S} ]$/u.test(c)) out += c;
    else if (cp < 0x80) out += `\\x${cp.toString(16).padStart(2, '0')}`;
    else if (cp <= 0xffff) out += `\\u${cp.toString(16).padStart(4, '0')}`;
    else out += `\\U${cp.toString(16).padStart(8, '0')}`;
  }
  return `${out}"`;
}

/** Code units picked to reach every branch: printable ASCII, quotes, controls, Latin-1, surrogates alone and paired. */
const UNITS = [
  0x41, 0x20, 0x7e, 0x22, 0x5c, 0x0a, 0x07, 0x00, 0x1f, 0x7f, 0x85, 0xa0, 0xe9, 0x200b, 0xfeff, 0x4e2d, 0xd83d, 0xde00,
  0xdead, 0xdbff, 0xdc00, 0xe000, 0xfffd,
];

describe('goQuote', () => {
  it('answers as strconv.Quote code point by code point, on 3,000 seeded strings', () => {
    const r = seeded(42);
    for (let n = 0; n < 3000; n++) {
      const s = String.fromCharCode(...Array.from({ length: r.int(12) }, () => r.pick(UNITS)));
      assert.equal(goQuote(s), quoteByCodePoint(s), JSON.stringify(s));
    }
  });

  it('copies printable ASCII runs around escapes, and a pair split at the end stays alone', () => {
    assert.equal(goQuote(''), '""');
    assert.equal(goQuote('plain text ~'), '"plain text ~"');
    assert.equal(goQuote('a"b\\c'), '"a\\"b\\\\c"');
    assert.equal(goQuote('x\ud83d\ude00y'), '"x😀y"');
    assert.equal(goQuote('x\ud83d'), '"x\\ufffd"');
    assert.equal(goQuote('\ude00\ud83d'), '"\\ufffd\\ufffd"');
    assert.equal(goQuote(`${'a'.repeat(100_000)}\n`), `"${'a'.repeat(100_000)}\\n"`);
  });
});
