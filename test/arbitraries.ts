import fc from 'fast-check';

/** Code points fast-check's `unit: 'binary'` draws from: all of Unicode but the surrogates. */
const SURROGATES = { first: 0xd800, count: 0x800 };

/**
 * One code point of any plane, surrogates aside: the values of fast-check's `unit: 'binary'`,
 * drawn by arithmetic. fast-check builds that unit's reverse table of all 1.1 million code
 * points (a Map) before its first run, two seconds of CPU in every test process using it.
 */
export const anyCodePoint: fc.Arbitrary<string> = fc.integer({ min: 0, max: 0x10ffff - SURROGATES.count }).map(
  (n) => String.fromCodePoint(n < SURROGATES.first ? n : n + SURROGATES.count),
  (value) => {
    const code = typeof value === 'string' ? value.codePointAt(0) : undefined;
    if (code === undefined || String.fromCodePoint(code) !== value) throw new Error('not one code point');
    if (code >= SURROGATES.first && code < SURROGATES.first + SURROGATES.count) throw new Error('a surrogate');
    return code < SURROGATES.first ? code : code - SURROGATES.count;
  },
);

/** Strings of any code points (see `anyCodePoint`), `constraints` as for `fc.string`. */
export function binaryString(constraints: Omit<fc.StringConstraints, 'unit'> = {}): fc.Arbitrary<string> {
  return fc.string({ ...constraints, unit: anyCodePoint });
}
