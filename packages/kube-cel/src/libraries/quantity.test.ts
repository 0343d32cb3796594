import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isQuantity, parseQuantity, parseQuantityOrThrow } from './quantity-parse.ts';
import {
  Quantity,
  QUANTITY_FORMAT_ERROR,
  QUANTITY_NUMERIC_ERROR,
  QUANTITY_SUFFIX_ERROR,
  QuantityError,
} from './quantity.ts';

const q = parseQuantityOrThrow;
const gcd = (a: bigint, b: bigint): bigint => (b === 0n ? (a < 0n ? -a : a) : gcd(b, a % b));
/** The exact value as a reduced fraction `num/den`. */
const fraction = (num: bigint, den: bigint): string => {
  const g = gcd(num, den) || 1n;
  return `${num / g}/${den / g}`;
};
const exact = (s: string): string => {
  const v = q(s);
  return fraction(v.num, v.den);
};

describe('quantity parsing as apimachinery ParseQuantity', () => {
  // Exact values of quantities apimachinery's own parse table expects, in the form unscaled × 10^exp.
  const values: Array<[string, bigint, number]> = [
    ['0', 0n, 0],
    ['0n', 0n, 0],
    ['0Ki', 0n, 0],
    ['0T', 0n, 0],
    ['1', 1n, 0],
    ['1Ki', 1024n, 0],
    ['8Ki', 8192n, 0],
    ['7Mi', 7n * 2n ** 20n, 0],
    ['3Ei', 3n * 2n ** 60n, 0],
    ['5n', 5n, -9],
    ['4u', 4n, -6],
    ['3m', 3n, -3],
    ['8k', 8n, 3],
    ['50k', 5n, 4],
    ['1E', 1n, 18],
    ['1E-3', 1n, -3],
    ['1e3', 1n, 3],
    ['1E18', 1n, 18],
    ['100.035k', 100035n, 0],
    ['0.001', 1n, -3],
    ['0.0005k', 5n, -1],
    ['0.50000', 5n, -1],
    ['0.5e-2', 5n, -3],
    ['10.035M', 10035n, 3],
    ['1.3E+6', 13n, 5],
    ['1.7E18', 17n, 17],
    ['7.123456M', 7123456n, 0],
    ['1.01E', 101n, 16],
    // Rounded up to the nearest nano, away from zero.
    ['3.001n', 4n, -9],
    ['1.1E-9', 2n, -9],
    ['0.0000000001', 1n, -9],
    ['0.5e-9', 1n, -9],
    ['0.9n', 1n, -9],
    ['0.00000012345', 124n, -9],
    ['0.00000012354', 124n, -9],
    ['0.000000000001Ki', 2n, -9],
    // Binary quantities above int64 are capped; decimal ones are not.
    ['9Ei', 2n ** 63n - 1n, 0],
    ['9223372036854775807Ki', 2n ** 63n - 1n, 0],
    ['12E', 12n, 18],
    ['100.035Ki', 10243584n, -2],
    ['0.5Mi', 524288n, 0],
    ['0.025Ti', 274877906944n, -1],
    ['.001', 1n, -3],
    ['.0001k', 100n, -3],
    ['1.', 1n, 0],
    ['1.G', 1n, 9],
    // Odd corners the scanner accepts: a lone sign, a lone dot and a bare suffix read as zero.
    ['+', 0n, 0],
    ['-', 0n, 0],
    ['.', 0n, 0],
    ['-.', 0n, 0],
    ['Ki', 0n, 0],
    ['k', 0n, 0],
    ['+Mi', 0n, 0],
    // 10^40 is kept (no cap for decimal quantities); an exponent is truncated to int32 as Go converts it.
    ['1e40', 1n, 40],
    ['-1e40', -1n, 40],
    ['1e4294967296', 1n, 0],
    ['1e4294967297', 1n, 1],
    ['0.5n', 1n, -9],
    ['-0.5n', -1n, -9],
  ];
  for (const [input, unscaled, exponent] of values) {
    it(`${JSON.stringify(input)} is ${unscaled}e${exponent}`, () => {
      const expected =
        exponent >= 0 ? fraction(unscaled * 10n ** BigInt(exponent), 1n) : fraction(unscaled, 10n ** BigInt(-exponent));
      assert.equal(exact(input), expected);
      // apimachinery's table holds with an explicit + too.
      if (!/^[+-]/.test(input)) assert.equal(exact(`+${input}`), expected);
    });
  }

  const invalid: Array<[string, string]> = [
    ['', QUANTITY_FORMAT_ERROR],
    ['1.1.M', QUANTITY_FORMAT_ERROR],
    ['1+1.0M', QUANTITY_FORMAT_ERROR],
    ['0.1mi', QUANTITY_SUFFIX_ERROR],
    ['0.1am', QUANTITY_FORMAT_ERROR],
    ['aoeu', QUANTITY_FORMAT_ERROR],
    ['.5i', QUANTITY_SUFFIX_ERROR],
    ['1i', QUANTITY_SUFFIX_ERROR],
    ['-3.01i', QUANTITY_SUFFIX_ERROR],
    ['-3.01e-', QUANTITY_SUFFIX_ERROR],
    [' 1', QUANTITY_FORMAT_ERROR],
    ['1 ', QUANTITY_FORMAT_ERROR],
    ['10Mo', QUANTITY_FORMAT_ERROR],
    ['10Mm', QUANTITY_SUFFIX_ERROR],
    ['20Mo', QUANTITY_FORMAT_ERROR],
    ['1e', QUANTITY_SUFFIX_ERROR],
    ['1e+', QUANTITY_SUFFIX_ERROR],
    ['1KiB', QUANTITY_FORMAT_ERROR],
    ['1e99999999999999999999', QUANTITY_SUFFIX_ERROR],
    ['1..5', QUANTITY_FORMAT_ERROR],
    // No digit at all where the exact path needs one.
    ['Ei', QUANTITY_NUMERIC_ERROR],
    ['-.Ei', QUANTITY_NUMERIC_ERROR],
    ['e-20', QUANTITY_NUMERIC_ERROR],
  ];
  for (const [input, message] of invalid) {
    it(`refuses ${JSON.stringify(input)}: ${message.slice(0, 40)}`, () => {
      assert.throws(
        () => q(input),
        (err: Error) => err instanceof QuantityError && err.message === message,
      );
      assert.equal(parseQuantity(input), undefined);
      assert.equal(isQuantity(input), false);
    });
  }

  it('says the regular expression in the format error as apimachinery does', () => {
    assert.equal(
      QUANTITY_FORMAT_ERROR,
      "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
    );
  });

  it('keeps the format of the suffix (binary below 1 becomes decimal)', () => {
    assert.equal(q('1Ki').format, 'BinarySI');
    assert.equal(q('1k').format, 'DecimalSI');
    assert.equal(q('1e3').format, 'DecimalExponent');
    assert.equal(q('0.000000000001Ki').format, 'DecimalSI');
    assert.equal(q('0.5Ki').format, 'BinarySI');
  });
});

describe('quantity functions of the CEL library', () => {
  // k8s.io/apiserver pkg/cel/library quantity tests, as function calls.
  it('compares', () => {
    assert.ok(q('200M').equals(q('200M')));
    assert.ok(q('200M').equals(q('0.2G')) && q('0.2G').equals(q('200M')));
    assert.ok(q('2M').equals(q('0.002G')) && q('2000k').equals(q('2M')) && q('0.002G').equals(q('2000k')));
    assert.ok(!q('200M').equals(q('0.3G')));
    assert.equal(q('50M').compareTo(q('50Mi')), -1);
    assert.equal(q('50M').compareTo(q('100M')), -1);
    assert.equal(q('100M').compareTo(q('50M')), 1);
    assert.equal(q('50Mi').compareTo(q('50M')), 1);
    assert.equal(q('150Mi').compareTo(q('100Mi')), 1);
    assert.equal(q('200M').compareTo(q('0.2G')), 0);
    assert.equal(q('10000T').compareTo(q('100Gi')), 1);
    assert.equal(q('1e40').compareTo(q('9223372036854775807')), 1);
    assert.equal(q('-1e40').compareTo(q('1n')), -1);
  });

  it('adds and subtracts quantities and ints', () => {
    assert.ok(q('50k').add(q('20')).equals(q('50.02k')));
    assert.equal(q('50k').addInt(20n).compareTo(q('50020')), 0);
    assert.ok(q('50k').sub(q('20')).equals(q('49.98k')));
    assert.ok(q('50k').subInt(20n).equals(q('49980')));
    assert.equal(q('50k').addInt(20n).sub(q('100k')).asInteger(), -49980n);
    assert.equal(q('50k').addInt(20n).sub(q('100k')).subInt(-50000n).asInteger(), 20n);
    assert.ok(q('1').add(q('500m')).equals(q('1.5')));
    assert.equal(q('1').sub(q('3')).sign(), -1n);
  });

  it('gives an int only for the scaled-int64 form with a non-negative scale', () => {
    assert.equal(q('50k').asInteger(), 50000n);
    assert.equal(q('50').isInteger(), true);
    assert.equal(q('2Ki').asInteger(), 2048n);
    assert.equal(q('9999999999999999999999999999999999999G').isInteger(), false);
    assert.throws(
      () => q('9999999999999999999999999999999999999G').asInteger(),
      /^QuantityError: cannot convert value to integer$/,
    );
    // Whole values the API server still refuses: a fraction with a binary suffix is parsed
    // exactly (decimal form), and milli-units keep a negative scale.
    assert.throws(() => q('1.5Gi').asInteger(), /cannot convert value to integer/);
    assert.equal(q('1.5Gi').isInteger(), false);
    assert.equal(q('1000m').isInteger(), false);
    assert.equal(q('1e40').isInteger(), false);
    assert.equal(q('1e18').asInteger(), 10n ** 18n);
    assert.equal(q('0e400').asInteger(), 0n);
    assert.equal(q('1.5').isInteger(), false);
    // Adding past int64 moves to the decimal form for good.
    const big = q('9223372036854775807').addInt(1n);
    assert.equal(big.isInteger(), false);
    assert.equal(big.subInt(1n).isInteger(), false);
  });

  it('converts to float as Go does, float64(unscaled) × Pow10(exponent)', () => {
    assert.equal(q('50.703k').asApproximateFloat(), 50703);
    assert.equal(q('1500m').asApproximateFloat(), 1.5);
    // 3 × 10^-1 in doubles, not the nearest double to 0.3: Go's answer.
    assert.equal(q('0.3').asApproximateFloat(), 0.30000000000000004);
    assert.equal(q('1.5Gi').asApproximateFloat(), 1610612736);
    assert.equal(q('7e40').asApproximateFloat(), 7e40);
    assert.equal(q('1e400').asApproximateFloat(), Infinity);
    assert.ok(Number.isNaN(q('0e400').asApproximateFloat()));
  });

  it('has a sign', () => {
    assert.equal(q('-1').sign(), -1n);
    assert.equal(q('0').sign(), 0n);
    assert.equal(q('-0.0Gi').sign(), 0n);
    assert.equal(q('1n').sign(), 1n);
  });

  it('turns the receiver of a comparison with a decimal quantity into a decimal, as Go does', () => {
    const one = q('1');
    assert.equal(one.isInteger(), true);
    assert.equal(one.compareTo(q('1')), 0);
    assert.equal(one.isInteger(), true);
    assert.ok(one.equals(q('1.5Gi')) === false && one.isInteger());
    assert.equal(one.compareTo(q('1.5Gi')), -1);
    assert.equal(one.isInteger(), false);
  });

  it('shares a decimal quantity with the result of add and sub, as Go shallow copies do', () => {
    const a = q('1.5Gi');
    const b = a.add(q('1'));
    assert.ok(a.equals(b));
    assert.ok(a.equals(q('1610612737')));
    const c = q('2').add(q('1'));
    assert.ok(c.equals(q('3')));
  });

  it('subtracts the most negative int as Go wraps it', () => {
    const min = -(2n ** 63n);
    assert.ok(
      q('0')
        .subInt(min)
        .equals(Quantity.ofDecimal(2n ** 63n, 0)),
    );
    // -(-2^63) wraps to itself in int64: 1 - (-2^63) is computed as 1 + (-2^63).
    assert.equal(q('1').subInt(min).asInteger(), 1n + min);
  });
});

describe('quantity bounds', () => {
  it('parses a million-digit quantity and compares far-apart exponents without building them', () => {
    const huge = `1${'0'.repeat(1_000_000)}`;
    assert.equal(q(huge).compareTo(q('1e999999')), 1);
    assert.equal(q('1e2000000000').compareTo(q('1')), 1);
    assert.equal(q('1').compareTo(q('1e2000000000')), -1);
    assert.equal(q('1e-2000000000').compareTo(q('1n')), 0);
    assert.equal(q('1e2000000000').equals(q('1e2000000000')), true);
  });

  it('rounds a 200,000-digit fraction to nano exactly', () => {
    const digits = `1${'0'.repeat(200_000)}`;
    assert.ok(q(`${digits}e-200000`).equals(q('1')));
    assert.ok(q(`${digits}1e-200001`).equals(q('1.000000001')));
  });

  it('refuses to align exponents that are billions apart instead of running out of memory', () => {
    assert.throws(() => q('12345678901234567890e2000000000'), /too far apart/);
    assert.throws(() => q('1e2000000000').add(q('1.5Gi')), /too far apart/);
  });
});
