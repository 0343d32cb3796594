/**
 * Kubernetes quantities (`resource.Quantity`) as exact rationals, for the CEL quantity
 * library: `quantity("500m")`, `isQuantity`, comparisons and arithmetic without rounding.
 */

// Decimal SI suffixes as powers of ten; binary SI suffixes as powers of 1024.
const DECIMAL: Record<string, number> = { n: -9, u: -6, m: -3, '': 0, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18 };
const BINARY: Record<string, number> = { Ki: 1, Mi: 2, Gi: 3, Ti: 4, Pi: 5, Ei: 6 };
const FORMAT = /^([+-]?)(\d+(?:\.\d*)?|\.\d+)(?:([eE][+-]?\d+)|(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]))?$/;
/** Largest and smallest CEL int (int64). */
const INT64_MAX = 2n ** 63n - 1n;
const INT64_MIN = -(2n ** 63n);

/** A quantity: `num / den`, `den` a positive power of ten. */
export class Quantity {
  constructor(
    readonly num: bigint,
    readonly den: bigint,
  ) {}

  /** -1, 0 or 1 as this is below, equal to or above `other`. */
  compareTo(other: Quantity): number {
    const a = this.num * other.den;
    const b = other.num * this.den;
    return a < b ? -1 : a > b ? 1 : 0;
  }

  add(other: Quantity): Quantity {
    const den = this.den > other.den ? this.den : other.den;
    return new Quantity(this.num * (den / this.den) + other.num * (den / other.den), den);
  }

  negate(): Quantity {
    return new Quantity(-this.num, this.den);
  }

  /** True when the value is a whole number that fits in an int64. */
  isInteger(): boolean {
    if (this.num % this.den !== 0n) return false;
    const value = this.num / this.den;
    return value >= INT64_MIN && value <= INT64_MAX;
  }

  /** The whole value; throws when it is not an integer or overflows int64. */
  asInteger(): bigint {
    if (!this.isInteger()) throw new RangeError('cannot convert value to integer');
    return this.num / this.den;
  }

  asApproximateFloat(): number {
    return Number(this.num) / Number(this.den);
  }

  sign(): bigint {
    return this.num < 0n ? -1n : this.num > 0n ? 1n : 0n;
  }

  toString(): string {
    return `Quantity(${this.num}/${this.den})`;
  }
}

/** Parses a quantity string, or returns undefined when it is not one (`resource.ParseQuantity`). */
export function parseQuantity(text: string): Quantity | undefined {
  const match = FORMAT.exec(text);
  if (!match) return undefined;
  const [, sign, digits, exponent, suffix = ''] = match;
  const [whole = '', fraction = ''] = digits!.split('.');
  let num = BigInt((whole || '0') + fraction) * (sign === '-' ? -1n : 1n);
  let den = 10n ** BigInt(fraction.length);
  let power = exponent ? Number(exponent.slice(1)) : (DECIMAL[suffix] ?? 0);
  // Exponents beyond int64's range cannot be quantities the API server accepts.
  if (Math.abs(power) > 18 + 9) return undefined;
  if (BINARY[suffix] !== undefined) {
    num *= 1024n ** BigInt(BINARY[suffix]!);
    power = 0;
  }
  if (power >= 0) num *= 10n ** BigInt(power);
  else den *= 10n ** BigInt(-power);
  return new Quantity(num, den);
}

/** Converts an int to a quantity (for `add(int)` and `sub(int)`). */
export function quantityOf(value: bigint): Quantity {
  return new Quantity(value, 1n);
}
