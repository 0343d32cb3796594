import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  charAt,
  indexOf,
  join,
  lastIndexOf,
  lowerAscii,
  quote,
  replace,
  split,
  stringIndexingWork,
  substring,
  trim,
  upperAscii,
} from './strings.ts';

const error = (message: string) => (err: Error) => err.name === 'StringsError' && err.message === message;

describe('cel-go extended strings as Kubernetes enables them', () => {
  // cel-go ext strings tests, rewritten as function calls.
  it('charAt by code point', () => {
    assert.equal(charAt('tacocat', 3n), 'o');
    assert.equal(charAt('tacocat', 7n), '');
    assert.equal(charAt('©αT', 0n), '©');
    assert.equal(charAt('©αT', 1n), 'α');
    assert.equal(charAt('©αT', 2n), 'T');
    assert.equal(charAt('a😀b', 1n), '😀');
    assert.equal(charAt('a😀b', 2n), 'b');
    assert.throws(() => charAt('tacocat', 8n), error('index out of range: 8'));
    assert.throws(() => charAt('tacocat', -1n), error('index out of range: -1'));
  });

  it('indexOf by code point, an error for an offset outside the string', () => {
    assert.equal(indexOf('a😀b', 'b'), 2n);
    assert.equal(indexOf('tacocat', ''), 0n);
    assert.equal(indexOf('tacocat', 'ac'), 1n);
    assert.equal(indexOf('tacocat', 'none'), -1n);
    assert.equal(indexOf('tacocat', '', 3n), 3n);
    assert.equal(indexOf('tacocat', '', 30n), 30n);
    assert.equal(indexOf('tacocat', 'a', 3n), 5n);
    assert.equal(indexOf('tacocat', 'at', 3n), 5n);
    assert.equal(indexOf('ta©o©αT', '©'), 2n);
    assert.equal(indexOf('ta©o©αT', '©', 3n), 4n);
    assert.equal(indexOf('ta©o©αT', '©αT', 3n), 4n);
    assert.equal(indexOf('ta©o©αT', '©α', 5n), -1n);
    assert.equal(indexOf('ijk', 'k'), 2n);
    assert.equal(indexOf('hello wello', 'hello wello'), 0n);
    assert.equal(indexOf('hello wello', 'ello', 6n), 7n);
    assert.equal(indexOf('hello wello', 'elbo room!!'), -1n);
    assert.throws(() => indexOf('', 'a'), error('index out of range: 0'));
    assert.throws(() => indexOf('tacocat', 'a', 30n), error('index out of range: 30'));
    assert.throws(() => indexOf('tacocat', 'a', -1n), error('index out of range: -1'));
  });

  it('lastIndexOf by code point', () => {
    assert.equal(lastIndexOf('tacocat', ''), 7n);
    assert.equal(lastIndexOf('a😀b😀', ''), 4n);
    assert.equal(lastIndexOf('tacocat', 'at'), 5n);
    assert.equal(lastIndexOf('tacocat', 'none'), -1n);
    assert.equal(lastIndexOf('tacocat', '', 3n), 3n);
    assert.equal(lastIndexOf('tacocat', 'a', 3n), 1n);
    assert.equal(lastIndexOf('ta©o©αT', '©'), 4n);
    assert.equal(lastIndexOf('ta©o©αT', '©', 3n), 2n);
    assert.equal(lastIndexOf('ta©o©αT', '©α', 4n), 4n);
    assert.equal(lastIndexOf('hello wello', 'ello', 6n), 1n);
    assert.equal(lastIndexOf('hello wello', 'low'), -1n);
    assert.equal(lastIndexOf('hello wello', 'elbo room!!'), -1n);
    assert.equal(lastIndexOf('hello wello', 'hello wello'), 0n);
    assert.equal(lastIndexOf('bananananana', 'nana', 7n), 6n);
    assert.equal(lastIndexOf('x😀y😀z', '😀'), 3n);
    assert.throws(() => lastIndexOf('', 'a'), error('index out of range: -1'));
    assert.throws(() => lastIndexOf('tacocat', 'a', -1n), error('index out of range: -1'));
    assert.throws(() => lastIndexOf('tacocat', 'a', 30n), error('index out of range: 30'));
  });

  it('changes only ASCII letters in lowerAscii and upperAscii', () => {
    assert.equal(lowerAscii('TacoCat'), 'tacocat');
    assert.equal(lowerAscii('TacoCÆt Xii'), 'tacocÆt xii');
    assert.equal(lowerAscii('ÀÉÎ İ'), 'ÀÉÎ İ');
    assert.equal(upperAscii('tacoCat'), 'TACOCAT');
    assert.equal(upperAscii('tacoCæt Xii'), 'TACOCæT XII');
    assert.equal(upperAscii('ß ﬁ'), 'ß ﬁ');
  });

  it('replaces as Go strings.Replace, an empty pattern around every code point', () => {
    assert.equal(replace('abc', '', '-'), '-a-b-c-');
    assert.equal(replace('a😀', '', '-'), '-a-😀-');
    assert.equal(replace('abc', '', '-', 2n), '-a-bc');
    assert.equal(replace('hello hello', 'he', 'we'), 'wello wello');
    assert.equal(replace('hello hello', 'he', 'we', -1n), 'wello wello');
    assert.equal(replace('hello hello', 'he', 'we', 1n), 'wello hello');
    assert.equal(replace('hello hello', 'he', 'we', 0n), 'hello hello');
    assert.equal(replace('hello hello', '', '_'), '_h_e_l_l_o_ _h_e_l_l_o_');
    assert.equal(replace('hello hello', 'h', ''), 'ello ello');
    assert.equal(replace('aaa', 'aa', 'b'), 'ba');
  });

  it('splits as Go strings.SplitN', () => {
    assert.deepEqual(split('hello world', ' '), ['hello', 'world']);
    assert.deepEqual(split('hello world events!', ' ', 0n), []);
    assert.deepEqual(split('hello world events!', ' ', 1n), ['hello world events!']);
    assert.deepEqual(split('hello world events!', ' ', 2n), ['hello', 'world events!']);
    assert.deepEqual(split('hello world events!', ' ', -1n), ['hello', 'world', 'events!']);
    assert.deepEqual(split('a😀b', ''), ['a', '😀', 'b']);
    assert.deepEqual(split('a😀b', '', 2n), ['a', '😀b']);
    assert.deepEqual(split('', ''), []);
    assert.deepEqual(split('', ','), ['']);
    assert.deepEqual(split(',a,', ','), ['', 'a', '']);
  });

  it('takes substrings by code point, with cel-go errors', () => {
    assert.equal(substring('tacocat', 4n), 'cat');
    assert.equal(substring('tacocat', 7n), '');
    assert.equal(substring('tacocat', 0n, 4n), 'taco');
    assert.equal(substring('tacocat', 4n, 4n), '');
    assert.equal(substring('ta©o©αT', 2n, 6n), '©o©α');
    assert.equal(substring('ta©o©αT', 7n, 7n), '');
    assert.equal(substring('a😀b', 1n, 2n), '😀');
    assert.throws(() => substring('tacocat', 40n), error('index out of range: 40'));
    assert.throws(() => substring('tacocat', -1n), error('index out of range: -1'));
    assert.throws(() => substring('tacocat', 1n, 40n), error('index out of range: 40'));
    assert.throws(() => substring('tacocat', -1n, 4n), error('index out of range: -1'));
    assert.throws(() => substring('tacocat', 3n, 1n), error('invalid substring range. start: 3, end: 1'));
  });

  it('trims Go white space (NEL and NBSP yes, BOM no)', () => {
    assert.equal(trim(' \f\n\r\t\vtext  '), 'text');
    assert.equal(trim('\u0085\u00a0\u1680text'), 'text');
    assert.equal(
      trim('\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200atext\u2028\u2029\u202f\u205f\u3000'),
      'text',
    );
    assert.equal(trim('\ufefftext\ufeff'), '\ufefftext\ufeff');
    assert.equal(trim('   '), '');
  });

  it('joins', () => {
    assert.equal(join(['x', 'y']), 'xy');
    assert.equal(join(['x', 'y'], '-'), 'x-y');
    assert.equal(join([]), '');
    assert.equal(join([], '-'), '');
  });

  it('quotes with CEL escapes', () => {
    assert.equal(quote('first\nsecond'), '"first\\nsecond"');
    assert.equal(quote('bell\x07'), '"bell\\a"');
    assert.equal(quote('\b\f\r\t\v'), '"\\b\\f\\r\\t\\v"');
    assert.equal(quote('ends with \\'), '"ends with \\\\"');
    assert.equal(quote('say "hi"'), '"say \\"hi\\""');
    assert.equal(quote(''), '""');
    assert.equal(quote('kōkua 😀'), '"kōkua 😀"');
    assert.equal(quote('\x00\x1b'), '"\x00\x1b"');
    assert.equal(quote('bad \ud800'), '"bad \ufffd"');
  });
});

describe('strings bounds', () => {
  const big = `${'a😀'.repeat(250_000)}end`; // 1 MB of UTF-16, 500,003 code points

  it('answers 20,000 charAt and substring calls on a 1 MB string with surrogate pairs in one indexing pass', () => {
    // The last index is kept by the string's value: another test of this process may have left
    // these very strings indexed, so strings of other values are indexed first.
    charAt('😀'.repeat(40), 0n);
    charAt('y'.repeat(64), 0n);
    const before = { ...stringIndexingWork };
    let seen = 0;
    for (let i = 0; i < 20_000; i++) {
      const at = BigInt((i * 7919) % 500_003);
      seen += charAt(big, at).length;
      seen += substring(big, at, at).length;
      // Checked early too, so a string indexed at each call fails here instead of running for minutes.
      if (i === 10) assert.equal(stringIndexingWork.indexBuilds - before.indexBuilds, 1);
    }
    assert.ok(seen > 20_000);
    // One scan and one index of the string for all 40,000 calls.
    assert.equal(stringIndexingWork.scans - before.scans, 1);
    assert.equal(stringIndexingWork.indexBuilds - before.indexBuilds, 1);
    const ascii = 'x'.repeat(1_000_000);
    for (let i = 0; i < 10_000; i++) charAt(ascii, BigInt(i * 99));
    assert.equal(stringIndexingWork.scans - before.scans, 2);
    assert.equal(charAt(big, 500_002n), 'd');
    assert.equal(indexOf(big, 'end', 499_000n), 500_000n);
    assert.equal(lastIndexOf(big, 'a'), 499_998n);
  });

  it('replaces, splits and trims 1 MB strings', () => {
    assert.equal(replace(big, '', '-').length, big.length + 500_004);
    assert.equal(split(big, '').length, 500_003);
    assert.equal(split('x,'.repeat(500_000), ',').length, 500_001);
    const spaced = `${' '.repeat(1_000_000)}x${' '.repeat(1_000_000)}`;
    assert.equal(trim(spaced), 'x');
    assert.equal(lowerAscii('A'.repeat(1_000_000)), 'a'.repeat(1_000_000));
    assert.equal(quote('\n'.repeat(500_000)).length, 1_000_002);
  });
});
