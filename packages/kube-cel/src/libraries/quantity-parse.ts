/**
 * Parsing of Kubernetes quantities as apimachinery's ParseQuantity: the scanner, the suffixes, the
 * rounding of values below 1n, the int64 and decimal representations a string gives.
 */
import {
  bitLength,
  compareScaled,
  fitsInt64,
  INT64_MAX,
  LOG10_2,
  MAX_INT64_FACTORS,
  pow10,
  type QuantityFormat,
  BINARY_SUFFIXES,
  DECIMAL_SUFFIXES,
  Dec,
  NANO,
  Quantity,
  QuantityError,
  QUANTITY_FORMAT_ERROR,
  QUANTITY_NUMERIC_ERROR,
  QUANTITY_SUFFIX_ERROR,
} from './quantity.ts';

/** Scans a quantity string as apimachinery's parseQuantityString. */
function scan(str: string): { positive: boolean; value: string; num: string; denom: string; suffix: string } {
  let positive = true;
  let pos = 0;
  const end = str.length;
  const isDigit = (c: string | undefined): boolean => c !== undefined && c >= '0' && c <= '9';
  if (str[0] === '-') {
    positive = false;
    pos++;
  } else if (str[0] === '+') {
    pos++;
  }
  while (pos < end && str[pos] === '0') pos++;
  if (pos >= end) return { positive, value: '0', num: '0', denom: '', suffix: '' };
  let i = pos;
  while (i < end && isDigit(str[i])) i++;
  let num = str.slice(pos, i);
  if (i >= end) return { positive, value: str, num, denom: '', suffix: '' };
  pos = i;
  if (num === '') num = '0';
  let denom = '';
  if (str[pos] === '.') {
    pos++;
    i = pos;
    while (i < end && isDigit(str[i])) i++;
    denom = str.slice(pos, i);
    if (i >= end) return { positive, value: str, num, denom, suffix: '' };
    pos = i;
  }
  const value = str.slice(0, pos);
  const suffixStart = pos;
  while (pos < end && 'eEinumkKMGTP'.includes(str[pos]!)) pos++;
  if (pos < end && (str[pos] === '-' || str[pos] === '+')) pos++;
  while (pos < end && isDigit(str[pos])) pos++;
  if (pos < end) throw new QuantityError(QUANTITY_FORMAT_ERROR);
  return { positive, value, num, denom, suffix: str.slice(suffixStart) };
}

/** apimachinery's suffixer.interpret: base, exponent and format of a suffix. */
function interpret(suffix: string): { base: 2 | 10; exponent: number; format: QuantityFormat } {
  const decimal = DECIMAL_SUFFIXES[suffix];
  if (decimal !== undefined && Object.hasOwn(DECIMAL_SUFFIXES, suffix))
    return { base: 10, exponent: decimal, format: 'DecimalSI' };
  const binary = BINARY_SUFFIXES[suffix];
  if (binary !== undefined && Object.hasOwn(BINARY_SUFFIXES, suffix))
    return { base: 2, exponent: binary, format: 'BinarySI' };
  if (suffix.length > 1 && (suffix[0] === 'e' || suffix[0] === 'E')) {
    // strconv.ParseInt(s, 10, 64), then truncated to int32 as Go's conversion does.
    const digits = suffix.slice(1);
    if (!/^[+-]?[0-9]+$/.test(digits)) throw new QuantityError(QUANTITY_SUFFIX_ERROR);
    const parsed = BigInt(digits);
    if (!fitsInt64(parsed)) throw new QuantityError(QUANTITY_SUFFIX_ERROR);
    return { base: 10, exponent: Number(BigInt.asIntN(32, parsed)), format: 'DecimalExponent' };
  }
  throw new QuantityError(QUANTITY_SUFFIX_ERROR);
}

/** inf.Dec.SetString on the scanner's value: `[sign]digits[.digits]`, at least one digit. */
function decFromString(value: string): Dec {
  const m = /^([+-]?)([0-9]*)(?:\.([0-9]*))?$/.exec(value);
  if (!m || (m[2] === '' && (m[3] ?? '') === '')) throw new QuantityError(QUANTITY_NUMERIC_ERROR);
  const fraction = m[3] ?? '';
  const unscaled = BigInt(`${m[2]}${fraction}` || '0');
  return new Dec(m[1] === '-' ? -unscaled : unscaled, fraction.length);
}

/** Rounds a non-negative non-zero decimal up (away from zero) to nano, as ParseQuantity does. */
function roundUpToNano(d: Dec): Dec {
  const target = -NANO;
  if (d.scale <= target) return new Dec(d.unscaled * pow10(target - d.scale), target);
  const drop = d.scale - target;
  // Fewer digits than dropped places: a non-zero value below 1n, which rounds up to 1n.
  if (bitLength(d.unscaled) * LOG10_2 < drop - 1) return new Dec(1n, target);
  // Here drop is at most the digits of the value plus one: the input's own size, whatever it is.
  const divisor = 10n ** BigInt(drop);
  const q = d.unscaled / divisor;
  return new Dec(d.unscaled % divisor === 0n ? q : q + 1n, target);
}

/** `quantity(s)`: apimachinery's ParseQuantity, throwing QuantityError with its message. */
export function parseQuantityOrThrow(str: string): Quantity {
  if (str.length === 0) throw new QuantityError(QUANTITY_FORMAT_ERROR);
  if (str === '0') return Quantity.ofInt(0n, 0, 'DecimalSI');
  const { positive, value, num, denom, suffix } = scan(str);
  const { base, exponent, format: parsedFormat } = interpret(suffix);
  let format = parsedFormat;
  let precision: number;
  let scale = 0;
  let mantissa = 1n;
  if (format === 'BinarySI') {
    if (exponent >= 0 && denom.length === 0) {
      mantissa = 1n << BigInt(exponent);
      precision = 15 - num.length - Math.trunc((exponent * 3) / 10) - 1;
    } else {
      precision = -1;
    }
  } else {
    scale = exponent;
    precision = MAX_INT64_FACTORS - (num.length + denom.length);
  }
  if (precision >= 0) {
    scale -= denom.length;
    if (scale >= NANO) {
      const shifted = BigInt(num + denom);
      const result = shifted * mantissa;
      if (fitsInt64(result)) return Quantity.ofInt(positive ? result : -result, scale, format);
    }
  }
  let amount = decFromString(value);
  if (base === 10) amount = new Dec(amount.unscaled, amount.scale - exponent);
  else amount = new Dec(amount.unscaled << BigInt(exponent), amount.scale);
  const negative = amount.unscaled < 0n;
  if (negative) amount = new Dec(-amount.unscaled, amount.scale);
  if (amount.unscaled !== 0n) amount = roundUpToNano(amount);
  // Binary quantities are capped at the largest int64.
  if (format === 'BinarySI' && compareScaled(amount.unscaled, -amount.scale, INT64_MAX, 0) > 0)
    amount = new Dec(INT64_MAX, 0);
  if (format === 'BinarySI' && amount.unscaled !== 0n && compareScaled(amount.unscaled, -amount.scale, 1n, 0) < 0) {
    format = 'DecimalSI';
  }
  if (negative) amount = new Dec(-amount.unscaled, amount.scale);
  return Quantity.ofDecimal(amount.unscaled, amount.scale, format);
}

/** Parses a quantity string, or returns undefined when ParseQuantity refuses it (`isQuantity`). */
export function parseQuantity(text: string): Quantity | undefined {
  try {
    return parseQuantityOrThrow(text);
  } catch (err) {
    if (err instanceof QuantityError) return undefined;
    throw err;
  }
}

/** `isQuantity(s)`. */
export function isQuantity(text: string): boolean {
  return parseQuantity(text) !== undefined;
}

/** Converts an int to a quantity as the library's `add(int)`/`sub(int)` do (`NewQuantity(n, DecimalExponent)`). */
export function quantityOf(value: bigint): Quantity {
  return Quantity.ofInt(value, 0, 'DecimalExponent');
}

/** The Kubernetes minor version each quantity function arrived in (all with the library, in 1.28). */
export const QUANTITY_FUNCTIONS_SINCE: Readonly<Record<string, number>> = {
  quantity: 28,
  isQuantity: 28,
  sign: 28,
  isInteger: 28,
  asInteger: 28,
  asApproximateFloat: 28,
  add: 28,
  sub: 28,
  isLessThan: 28,
  isGreaterThan: 28,
  compareTo: 28,
};
