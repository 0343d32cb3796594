/**
 * Conversions and list indexes as cel-go takes them, with its errors: int() and uint() of strings as
 * Go's strconv reads them and of numbers in range, bool() of what strconv.ParseBool reads, and a
 * list index as cel-go's attribute resolution takes it.
 */
import { numeric } from './equality.ts';
import { celGoTypeName } from './runtime-errors.ts';

/** The engine's evaluator (the parts used here). */
interface Evaluator {
  createError(code: string, message: string, node: unknown): Error;
  debugType(v: unknown): unknown;
}
/** A node's handle as the engine calls it for a call: the arguments, the node, the evaluator. */
type CallHandle = (...args: unknown[]) => unknown;

/** The largest and smallest int64, the largest uint64. */
const INT64_MAX = 2n ** 63n - 1n;
const INT64_MIN = -(2n ** 63n);
const UINT64_MAX = 2n ** 64n - 1n;
/** 2^63 and 2^64 as doubles: the first doubles int() and uint() refuse (Go's conversions). */
const TWO_TO_63 = 2 ** 63;
const TWO_TO_64 = 2 ** 64;

/**
 * A list index as cel-go's attribute resolution takes it (types.IndexOrError, then the bounds): an int,
 * a uint or a whole double; `index out of bounds: 5`, `unsupported index value 1.5 in list`,
 * `unsupported index type 'string' in list` otherwise.
 */
export function listIndex(ev: Evaluator, list: unknown[], r: unknown, n: unknown): bigint {
  const i = numeric(r);
  if (i === undefined) {
    const type = celGoTypeName(String(ev.debugType(r)));
    throw ev.createError('invalid_index', `unsupported index type '${type}' in list`, n);
  }
  if (typeof i === 'number' && !Number.isInteger(i))
    throw ev.createError('invalid_index', `unsupported index value ${i} in list`, n);
  const index = BigInt(i);
  if (index < 0n || index >= BigInt(list.length))
    throw ev.createError('index_out_of_bounds', `index out of bounds: ${index}`, n);
  return index;
}

/**
 * int() and uint() of a string as Go's strconv.ParseInt and ParseUint read it (decimal digits only,
 * `''` refused, in range), and of a double within range only, as cel-go: a string that does not parse
 * is `type conversion error from 'string' to 'int'` (cel-go drops strconv's error), a number out of
 * range `integer overflow` or `unsigned integer overflow` (common/types/overflow.go).
 */
export function conversion(name: 'int' | 'uint'): (orig: CallHandle) => CallHandle {
  const digits = name === 'int' ? /^[+-]?[0-9]+$/ : /^[0-9]+$/;
  const overflow = name === 'int' ? 'integer overflow' : 'unsigned integer overflow';
  const [min, max] = name === 'int' ? [INT64_MIN, INT64_MAX] : [0n, UINT64_MAX];
  return (orig) => (args, n, ev) => {
    const v = (args as unknown[])[0];
    const e = ev as Evaluator;
    if (typeof v === 'string' && (!digits.test(v) || BigInt(v) < min || BigInt(v) > max))
      throw e.createError(`${name}_conversion_error`, `type conversion error from 'string' to '${name}'`, n);
    if (typeof v === 'number') {
      const ok = name === 'int' ? v > -TWO_TO_63 && v < TWO_TO_63 : v > -1 && v < TWO_TO_64;
      if (!ok) throw e.createError('numeric_overflow', overflow, n);
    }
    if (name === 'uint' && typeof v === 'bigint' && v < 0n) throw e.createError('numeric_overflow', overflow, n);
    return orig(args, n, ev);
  };
}

/** bool() of a string reads what Go's strconv.ParseBool reads, `T` and `F` included. */
export function boolOfString(orig: CallHandle): CallHandle {
  return (args, n, ev) => {
    const v = (args as unknown[])[0];
    if (v === 'T' || v === 'F') return v === 'T';
    return orig(args, n, ev);
  };
}

/**
 * The declared object types of the variables the API server builds from Go structs without a
 * schema (the request and the namespace): their values are maps at run time (common/values.go
 * unstructured values; valuesschemalesstyped.go: "Unstructured behaves exactly as a Map"), so
 * `type()` of one is `map` (`null_type` when null, as a namespaceObject can be), whatever the checker
 * knew of it.
 */
const SCHEMALESS_OBJECTS = new Set([
  'kubernetes.AdmissionRequest',
  'kubernetes.GroupVersionKind',
  'kubernetes.GroupVersionResource',
  'kubernetes.UserInfo',
  'kubernetes.Namespace',
  'kubernetes.NamespaceMetadata',
  'kubernetes.NamespaceSpec',
  'kubernetes.NamespaceStatus',
  'kubernetes.NamespaceCondition',
]);
/** The engine's type values of maps and of null. */
const runtimeTypes: { map?: unknown; null?: unknown } = {};

/** Tells the semantics the engine's type values of maps and of null. */
export function useRuntimeTypes(types: { map: unknown; null: unknown }): void {
  Object.assign(runtimeTypes, types);
}

/** `type(x)`: `map` for a value of one of those types. */
export function runtimeType(orig: CallHandle): CallHandle {
  return (args, n, ev) => {
    const type = orig(args, n, ev) as { name?: unknown } | undefined;
    if (!SCHEMALESS_OBJECTS.has(String(type?.name))) return type;
    return (args as unknown[])[0] === null ? runtimeTypes.null : runtimeTypes.map;
  };
}
