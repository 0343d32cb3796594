/**
 * Kubernetes quantities (apimachinery's `resource.Quantity`) for the CEL quantity library, as the
 * API server computes them: the same parser (its odd corners included: `+`, `.` and `Ki` are zero,
 * `1e40` is 10^40, `0.5n` rounds up to `1n`, binary quantities above int64 are capped), the same
 * two representations (a scaled int64 or an arbitrary-precision decimal, which decides what
 * `asInteger()` accepts: `quantity('1.5Gi').asInteger()` and `quantity('1000m').asInteger()` are
 * errors there) and the same arithmetic, float conversion and error messages.
 */

/** How a quantity was written (apimachinery's Format). */
export type QuantityFormat = 'DecimalExponent' | 'BinarySI' | 'DecimalSI';

/** A string ParseQuantity refuses, or a value this implementation will not compute. */
export class QuantityError extends Error {
  override name = 'QuantityError';
}

export const SPLIT_RE = '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$';
/** apimachinery's ErrFormatWrong. */
export const QUANTITY_FORMAT_ERROR = `quantities must match the regular expression '${SPLIT_RE}'`;
/** apimachinery's ErrNumeric. */
export const QUANTITY_NUMERIC_ERROR = 'unable to parse numeric part of quantity';
/** apimachinery's ErrSuffix. */
export const QUANTITY_SUFFIX_ERROR = "unable to parse quantity's suffix";
/** The CEL library's error for asInteger() on a quantity without an int64 form. */
export const QUANTITY_NOT_INTEGER = 'cannot convert value to integer';

/**
 * Most decimal digits a power of ten may have when two quantities with far-apart exponents are
 * aligned. Go builds such numbers without a bound (`quantity('1e2000000000').add(...)` runs the API
 * server out of memory); a quantity of a realistic size never comes near, and 10^100000 is built in
 * about a millisecond, so beyond it the operation fails instead.
 */
export const QUANTITY_MAX_ALIGN_DIGITS = 100_000;

export const INT64_MAX = 2n ** 63n - 1n;
export const INT64_MIN = -(2n ** 63n);
/** Digits of an int64 beyond which the fast path stops (apimachinery's maxInt64Factors). */
export const MAX_INT64_FACTORS = 18;
/** The finest scale a parsed quantity keeps: nano (10^-9). */
export const NANO = -9;
export const LOG10_2 = Math.log10(2);

export const DECIMAL_SUFFIXES: Record<string, number> = {
  n: -9,
  u: -6,
  m: -3,
  '': 0,
  k: 3,
  M: 6,
  G: 9,
  T: 12,
  P: 15,
  E: 18,
};
export const BINARY_SUFFIXES: Record<string, number> = { Ki: 10, Mi: 20, Gi: 30, Ti: 40, Pi: 50, Ei: 60 };

export const fitsInt64 = (v: bigint): boolean => v >= INT64_MIN && v <= INT64_MAX;
export const wrap64 = (v: bigint): bigint => BigInt.asIntN(64, v);
export const abs = (v: bigint): bigint => (v < 0n ? -v : v);

/** 10^n, refusing a power larger than QUANTITY_MAX_ALIGN_DIGITS digits. */
export function pow10(n: number): bigint {
  if (n > QUANTITY_MAX_ALIGN_DIGITS) throw new QuantityError('quantity exponents too far apart to compute exactly');
  return 10n ** BigInt(n);
}

/** An arbitrary-precision decimal, `unscaled × 10^-scale` (gopkg.in/inf.v0's Dec). */
export class Dec {
  constructor(
    public unscaled: bigint,
    public scale: number,
  ) {}
}

/** Number of bits of |v| (0 for 0), in linear time. */
export function bitLength(v: bigint): number {
  if (v === 0n) return 0;
  const hex = abs(v).toString(16);
  return (hex.length - 1) * 4 + (32 - Math.clz32(parseInt(hex[0]!, 16)));
}

/** Exact sign of `a × 10^ea - b × 10^eb`, without building powers of ten beyond the operands' sizes. */
export function compareScaled(a: bigint, ea: number, b: bigint, eb: number): number {
  const sa = a < 0n ? -1 : a > 0n ? 1 : 0;
  const sb = b < 0n ? -1 : b > 0n ? 1 : 0;
  if (sa !== sb || sa === 0) return sa < sb ? -1 : sa > sb ? 1 : 0;
  // |x| lies in [2^(bits-1), 2^bits) × 10^e: compare the decimal magnitudes when they are apart.
  const lowA = (bitLength(a) - 1) * LOG10_2 + ea;
  const highA = bitLength(a) * LOG10_2 + ea;
  const lowB = (bitLength(b) - 1) * LOG10_2 + eb;
  const highB = bitLength(b) * LOG10_2 + eb;
  if (lowA > highB + 1e-9) return sa;
  if (lowB > highA + 1e-9) return -sa;
  // Close magnitudes: the exponents differ by about the operands' digit counts, so aligning is cheap.
  const [x, y] = ea >= eb ? [a * pow10(ea - eb), b] : [a, b * pow10(eb - ea)];
  return x < y ? -1 : x > y ? 1 : 0;
}

/** `x + y` for decimals: the larger scale, exact (inf.Dec.Add). */
export function decAdd(x: Dec, y: Dec): Dec {
  const scale = Math.max(x.scale, y.scale);
  const rescale = (d: Dec): bigint => (d.unscaled === 0n ? 0n : d.unscaled * pow10(scale - d.scale));
  return new Dec(rescale(x) + rescale(y), scale);
}

/** Go's math.Pow10: products and quotients of the same tables, so the same doubles. */
export function goPow10(n: number): number {
  const tab = (i: number): number => Number(`1e${i}`);
  if (n >= 0 && n <= 308) return tab(Math.floor(n / 32) * 32) * tab(n % 32);
  if (n <= 0 && n >= -323) return Number(`1e-${Math.floor(-n / 32) * 32}`) / tab(-n % 32);
  return n > 0 ? Infinity : 0;
}

/**
 * A quantity as apimachinery holds it: a scaled int64 (`value × 10^scale`) or, once a value does
 * not fit or was parsed through the exact path, a decimal. Values are shared as the API server
 * shares them: `add`/`sub` on a decimal quantity change the receiver's decimal too, and comparing
 * turns the receiver into a decimal (after which `isInteger()` is false), as Go's pointers do.
 */
export class Quantity {
  private value: bigint;
  private scale: number;
  private dec: Dec | undefined;

  private constructor(
    value: bigint,
    scale: number,
    dec: Dec | undefined,
    /** The format the quantity was written in. */
    public format: QuantityFormat,
  ) {
    this.value = value;
    this.scale = scale;
    this.dec = dec;
  }

  /** A quantity `value × 10^scale` in the scaled-int64 form (`resource.NewScaledQuantity`). */
  static ofInt(value: bigint, scale = 0, format: QuantityFormat = 'DecimalExponent'): Quantity {
    return new Quantity(wrap64(value), scale, undefined, format);
  }

  /** A quantity in the decimal form, `unscaled × 10^-scale`. */
  static ofDecimal(unscaled: bigint, scale: number, format: QuantityFormat = 'DecimalSI'): Quantity {
    return new Quantity(0n, 0, new Dec(unscaled, scale), format);
  }

  /** True while the quantity is in the scaled-int64 form. */
  get isScaledInt(): boolean {
    return this.dec === undefined;
  }

  /** The value as the fraction `num / den` (`den` a positive power of ten). */
  get num(): bigint {
    const { unscaled, exponent } = this.parts();
    return exponent >= 0 ? unscaled * pow10(exponent) : unscaled;
  }

  /** The denominator of `num / den`. */
  get den(): bigint {
    const { exponent } = this.parts();
    return exponent >= 0 ? 1n : pow10(-exponent);
  }

  private parts(): { unscaled: bigint; exponent: number } {
    return this.dec
      ? { unscaled: this.dec.unscaled, exponent: -this.dec.scale }
      : { unscaled: this.value, exponent: this.scale };
  }

  private shallowCopy(): Quantity {
    return new Quantity(this.value, this.scale, this.dec, this.format);
  }

  /** Go's AsDec: switches this quantity to the decimal form in place. */
  private toDec(): Dec {
    if (!this.dec) {
      this.dec = new Dec(this.value, -this.scale);
      this.value = 0n;
      this.scale = 0;
    }
    return this.dec;
  }

  private decCopy(): Dec {
    return this.dec ?? new Dec(this.value, -this.scale);
  }

  private isZero(): boolean {
    return (this.dec ? this.dec.unscaled : this.value) === 0n;
  }

  /** `sign()`: -1, 0 or 1. */
  sign(): bigint {
    const v = this.dec ? this.dec.unscaled : this.value;
    return v < 0n ? -1n : v > 0n ? 1n : 0n;
  }

  /** Go's AsInt64: the value when it is a scaled int64 with a non-negative scale that fits. */
  asInt64(): bigint | undefined {
    if (this.dec) return undefined;
    if (this.scale === 0) return this.value;
    if (this.scale < 0) return undefined;
    if (this.value === 0n) return 0n;
    if (this.scale > MAX_INT64_FACTORS + 1) return undefined;
    const v = this.value * 10n ** BigInt(this.scale);
    return fitsInt64(v) ? v : undefined;
  }

  /** `isInteger()`: true when the quantity has an int64 form (AsInt64 succeeds). */
  isInteger(): boolean {
    return this.asInt64() !== undefined;
  }

  /** `asInteger()`: the int64 form, or QuantityError('cannot convert value to integer'). */
  asInteger(): bigint {
    const v = this.asInt64();
    if (v === undefined) throw new QuantityError(QUANTITY_NOT_INTEGER);
    return v;
  }

  /** `asApproximateFloat()`: Go's AsApproximateFloat64, `float64(unscaled) × Pow10(exponent)`. */
  asApproximateFloat(): number {
    const { unscaled, exponent } = this.parts();
    const base = Number(unscaled);
    return exponent === 0 ? base : base * goPow10(exponent);
  }

  /** Exact comparison without changing either quantity (Go's Quantity.Equal, CEL `==`). */
  equals(other: Quantity): boolean {
    const a = this.parts();
    const b = other.parts();
    return compareScaled(a.unscaled, a.exponent, b.unscaled, b.exponent) === 0;
  }

  /**
   * `compareTo()`, `isLessThan()`, `isGreaterThan()`: Go's Cmp, -1, 0 or 1. As in Go, when either
   * side is a decimal the receiver is turned into a decimal.
   */
  compareTo(other: Quantity): number {
    if (this.dec || other.dec) this.toDec();
    const a = this.parts();
    const b = other.parts();
    return compareScaled(a.unscaled, a.exponent, b.unscaled, b.exponent);
  }

  /** `add(quantity)`: a new quantity (Go's Add on a shallow copy). */
  add(other: Quantity): Quantity {
    const copy = this.shallowCopy();
    copy.addInPlace(other);
    return copy;
  }

  /** `sub(quantity)`: a new quantity (Go's Sub on a shallow copy). */
  sub(other: Quantity): Quantity {
    const copy = this.shallowCopy();
    copy.subInPlace(other);
    return copy;
  }

  /** `add(int)`: adds `NewQuantity(n, DecimalExponent)`. */
  addInt(n: bigint): Quantity {
    return this.add(Quantity.ofInt(n, 0, 'DecimalExponent'));
  }

  /** `sub(int)`: subtracts `NewQuantity(n, DecimalExponent)`. */
  subInt(n: bigint): Quantity {
    return this.sub(Quantity.ofInt(n, 0, 'DecimalExponent'));
  }

  /** The negated quantity (Go's Neg on a copy). */
  negate(): Quantity {
    const copy = this.shallowCopy();
    if (!copy.dec && copy.value !== INT64_MIN) {
      copy.value = -copy.value;
      return copy;
    }
    const d = copy.decCopy();
    copy.dec = new Dec(-d.unscaled, d.scale);
    copy.value = 0n;
    copy.scale = 0;
    return copy;
  }

  private addInPlace(y: Quantity): void {
    if (!this.dec && !y.dec) {
      if (this.value === 0n) this.format = y.format;
      if (this.intAdd(y.value, y.scale)) return;
    } else if (this.isZero()) {
      this.format = y.format;
    }
    const d = this.toDec();
    const sum = decAdd(d, y.decCopy());
    d.unscaled = sum.unscaled;
    d.scale = sum.scale;
  }

  private subInPlace(y: Quantity): void {
    if (this.isZero()) this.format = y.format;
    if (!this.dec && !y.dec && this.value === 0n && y.value === INT64_MIN) {
      this.dec = new Dec(-INT64_MIN, -y.scale);
      this.value = 0n;
      this.scale = 0;
      return;
    }
    // Go negates y's int64 with wrap-around: the most negative value stays itself.
    if (!this.dec && !y.dec && this.intAdd(wrap64(-y.value), y.scale)) return;
    const d = this.toDec();
    const yd = y.decCopy();
    const diff = decAdd(d, new Dec(-yd.unscaled, yd.scale));
    d.unscaled = diff.unscaled;
    d.scale = diff.scale;
  }

  /** Go's int64Amount.Add: false (and no change) when the sum leaves int64. */
  private intAdd(bValue: bigint, bScale: number): boolean {
    if (bValue === 0n) return true;
    if (this.value === 0n) {
      this.value = bValue;
      this.scale = bScale;
      return true;
    }
    const shift = (v: bigint, by: number): bigint | undefined => {
      if (by > MAX_INT64_FACTORS + 1) return undefined;
      const r = v * 10n ** BigInt(by);
      return fitsInt64(r) ? r : undefined;
    };
    let a = this.value;
    let b = bValue;
    let scale = this.scale;
    if (this.scale > bScale) {
      const s = shift(a, this.scale - bScale);
      if (s === undefined) return false;
      a = s;
      scale = bScale;
    } else if (this.scale < bScale) {
      const s = shift(b, bScale - this.scale);
      if (s === undefined) return false;
      b = s;
    }
    if (!fitsInt64(a + b)) return false;
    this.value = a + b;
    this.scale = scale;
    return true;
  }

  /** A short description for debugging (not the canonical Kubernetes string). */
  toString(): string {
    const { unscaled, exponent } = this.parts();
    return `Quantity(${unscaled}e${exponent}, ${this.dec ? 'decimal' : 'int64'}, ${this.format})`;
  }
}
