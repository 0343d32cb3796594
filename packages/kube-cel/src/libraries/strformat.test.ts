import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { goFormatFloat, goQuote } from './go.ts';
import { type FormatArg, stringFormat } from './strformat.ts';

const int = (v: bigint): FormatArg => ({ type: 'int', value: v });
const dbl = (v: number): FormatArg => ({ type: 'double', value: v });
const str = (v: string): FormatArg => ({ type: 'string', value: v });
const error = (message: string) => (err: Error) => err.name === 'FormatError' && err.message === message;

describe('string.format as cel-go', () => {
  it('formats each clause', () => {
    assert.equal(stringFormat('%s', [str('hello')]), 'hello');
    assert.equal(stringFormat('%d and %d', [int(42n), { type: 'uint', value: 7n }]), '42 and 7');
    assert.equal(stringFormat('100%% %s', [str('sure')]), '100% sure');
    assert.equal(stringFormat('%.3f', [dbl(1.2345)]), '1.234');
    assert.equal(stringFormat('%.0f %.0f %.2f', [dbl(0.5), dbl(2.5), dbl(0.125)]), '0 2 0.12');
    assert.equal(stringFormat('%f', [dbl(3)]), '3.000000');
    // The en-US printer's scientific form, as cel-go documents it: 2.718280 × 10⁰⁰.
    assert.equal(stringFormat('%e', [dbl(2.71828)]), '2.718280\u202f\u00d7\u202f10\u2070\u2070');
    assert.equal(stringFormat('%.3e', [dbl(1052.032911275)]), '1.052033\u202f\u00d7\u202f10\u2070\u00b3');
    assert.equal(stringFormat('%e', [dbl(-0.00012345)]), '-1.234500\u202f\u00d7\u202f10\u207b\u2070\u2074');
    assert.equal(stringFormat('%.22e', [dbl(1.5)]), '       1.500000\u202f\u00d7\u202f10\u2070\u2070');
    assert.equal(stringFormat('%b %b %b', [int(5n), int(-5n), { type: 'bool', value: true }]), '101 -101 1');
    assert.equal(stringFormat('%x %X %x', [int(30n), str('Hello'), int(-255n)]), '1e 48656C6C6F -ff');
    assert.equal(stringFormat('%x', [{ type: 'bytes', value: new Uint8Array([0, 255]) }]), '00ff');
    assert.equal(stringFormat('%o %o', [int(11n), int(-15n)]), '13 -17');
    assert.equal(stringFormat('%f %e', [str('NaN'), str('-Infinity')]), 'NaN     -∞');
    assert.equal(stringFormat('é %s ☃', [str('😀')]), 'é 😀 ☃');
  });

  it('prints values for %s as CEL string() does', () => {
    assert.equal(stringFormat('%s', [dbl(123456789.0)]), '1.23456789e+08');
    assert.equal(
      stringFormat('%s %s %s', [{ type: 'bool', value: false }, { type: 'null' }, { type: 'type', name: 'int' }]),
      'false null int',
    );
    assert.equal(stringFormat('%s', [{ type: 'duration', text: '7200s' }]), '7200s');
    assert.equal(stringFormat('%s', [{ type: 'list', items: [int(1n), int(2n), int(3n)] }]), '[1, 2, 3]');
    assert.equal(
      stringFormat('%s', [
        {
          type: 'list',
          items: [str('abc'), dbl(3.14), { type: 'null' }, { type: 'list', items: [int(9n), dbl(8.2), str('tacos')] }],
        },
      ]),
      '["abc", 3.140000, null, [9, 8.200000, "tacos"]]',
    );
    assert.equal(
      stringFormat('%s', [
        {
          type: 'map',
          entries: [
            [str('key1'), { type: 'bytes', value: new TextEncoder().encode('xyz') }],
            [str('key5'), { type: 'null' }],
            [str('key2'), { type: 'duration', text: '7200s' }],
            [str('key4'), { type: 'bool', value: true }],
            [str('key3'), dbl(2.71828)],
          ],
        },
      ]),
      '{"key1":b"xyz", "key2":duration("7200s"), "key3":2.718280, "key4":true, "key5":null}',
    );
    assert.equal(
      stringFormat('%s', [
        { type: 'list', items: [dbl(Infinity), { type: 'timestamp', text: '2024-01-01T00:00:00Z' }] },
      ]),
      '["+Inf", timestamp("2024-01-01T00:00:00Z")]',
    );
  });

  it('groups thousands in %f as the en-US printer does', () => {
    assert.equal(stringFormat('%.2f', [dbl(1234.5)]), '1,234.50');
    assert.equal(stringFormat('%.1f', [dbl(-1234567.25)]), '-1,234,567.2');
  });

  it('refuses with cel-go messages', () => {
    assert.throws(
      () => stringFormat('%d', [str('str')]),
      error('error during formatting: decimal clause can only be used on integers, was given string'),
    );
    assert.throws(
      () => stringFormat('%f', [int(1n)]),
      error('error during formatting: fixed-point clause can only be used on doubles, was given int'),
    );
    assert.throws(
      () => stringFormat('%e', [str('x')]),
      error('error during formatting: scientific clause can only be used on doubles, was given string'),
    );
    assert.throws(
      () => stringFormat('%b', [dbl(1)]),
      error('error during formatting: only integers and bools can be formatted as binary, was given double'),
    );
    assert.throws(
      () => stringFormat('%x', [dbl(1)]),
      error(
        'error during formatting: only integers, byte buffers, and strings can be formatted as hex, was given double',
      ),
    );
    assert.throws(
      () => stringFormat('%o', [str('1')]),
      error('error during formatting: octal clause can only be used on integers, was given string'),
    );
    assert.throws(
      () => stringFormat('%s', [{ type: 'other', typeName: 'optional_type' }]),
      error(
        'error during formatting: string clause can only be used on strings, bools, bytes, ints, doubles, ' +
          'maps, lists, types, durations, and timestamps, was given optional_type',
      ),
    );
    assert.throws(
      () => stringFormat('%z', [int(1n)]),
      error('could not parse formatting clause: unrecognized formatting clause "z"'),
    );
    assert.throws(() => stringFormat('%s %s', [str('a')]), error('index 1 out of range'));
    assert.throws(() => stringFormat('%', [int(1n)]), error('unexpected end of string'));
    assert.throws(() => stringFormat('%', []), error('index 0 out of range'));
    assert.throws(
      () => stringFormat('%.3', [dbl(1)]),
      error(
        'could not parse formatting clause: error while parsing precision: could not find end of precision specifier',
      ),
    );
    assert.throws(
      () => stringFormat('%.f', [dbl(1)]),
      error(
        'could not parse formatting clause: error while parsing precision: error while converting precision to ' +
          'integer: strconv.Atoi: parsing "": invalid syntax',
      ),
    );
    assert.throws(
      () => stringFormat('%s', [{ type: 'map', entries: [[dbl(1), int(1n)]] }]),
      error('error during formatting: no formatting function for map key of type double'),
    );
  });

  it('formats a 1 MB format string in one pass', () => {
    const s = 'ab%%'.repeat(250_000);
    assert.equal(stringFormat(s, []).length, 750_000);
    assert.equal(
      stringFormat(
        '%s'.repeat(100_000),
        Array.from({ length: 100_000 }, () => str('x')),
      ).length,
      100_000,
    );
  });
});

describe('Go formatting helpers', () => {
  it('prints doubles as strconv.FormatFloat(x, g, -1) (checked against Go)', () => {
    const cases: Array<[number, string]> = [
      [123456789.0, '1.23456789e+08'],
      [1e6, '1e+06'],
      [123456, '123456'],
      [1234567, '1.234567e+06'],
      [0.0001, '0.0001'],
      [0.00001, '1e-05'],
      [1.5, '1.5'],
      [-2.25, '-2.25'],
      [1e21, '1e+21'],
      [100, '100'],
      [1 / 3, '0.3333333333333333'],
      [5e-324, '5e-324'],
      [1.7976931348623157e308, '1.7976931348623157e+308'],
      [NaN, 'NaN'],
      [-Infinity, '-Inf'],
      [-0, '-0'],
    ];
    for (const [x, text] of cases) assert.equal(goFormatFloat(x), text, String(x));
  });

  it('quotes as strconv.Quote (checked against Go)', () => {
    assert.equal(goQuote('x\x01\u0085\u00a0é😀\ufeff\u200b'), '"x\\x01\\u0085\\u00a0é😀\\ufeff\\u200b"');
    assert.equal(goQuote('a"b\\c\n\t\x07'), '"a\\"b\\\\c\\n\\t\\a"');
    assert.equal(goQuote('\udead'), '"\\ufffd"');
  });
});
