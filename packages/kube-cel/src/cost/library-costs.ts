/**
 * Runtime cost of Kubernetes' CEL library calls as the API server charges them (its library
 * CostEstimator.CallCost, and the trackers cel-go's sets library declares), so an engine can add
 * the same units to an expression's cost. Sizes are cel-go's: a string's size is its code points,
 * a list's its elements, a map's its entries; a traversal counts string bytes. Float products use
 * the same doubles as Go (23 × 0.1 is 2.3000000000000003, charged 3 there and here).
 */
import { codePointLength, utf8Length } from '../libraries/go.ts';

/** cel-go's common.StringTraversalCostFactor: one unit per ten characters. */
export const STRING_TRAVERSAL_COST_FACTOR = 0.1;
/** cel-go's common.RegexStringLengthCostFactor: a regex is taken to hold one expression per four characters. */
export const REGEX_STRING_LENGTH_COST_FACTOR = 0.25;
/** The fixed cost of an authorization check: two per expression fit the per-expression limit. */
export const AUTHORIZER_CHECK_COST = 350_000;
/** cel-go's common.ListCreateBaseCost: what allocating a list adds to a call. */
export const LIST_CREATE_BASE_COST = 10;

/** cel-go's trackAllocatingListCall: size × factor (truncated), plus the call and the list allocation. */
const allocatingListCall = (factor: number, size: number): number =>
  Math.trunc(size * factor) + 1 + LIST_CREATE_BASE_COST;

/** cel-go's trackListSelfCompare: a worst-case n² comparison, a little more for strings and bytes. */
function selfCompare(list: unknown): number {
  const size = actualSize(list);
  if (size === 0 || !Array.isArray(list)) return allocatingListCall(2, 0);
  const first = list[0];
  const factor = typeof first === 'string' || first instanceof Uint8Array ? 2 + STRING_TRAVERSAL_COST_FACTOR : 2;
  return allocatingListCall(factor, size * size);
}

/** cel-go's traits.Sizer size of a value: code points, bytes, elements or entries; 1 for anything else. */
export function actualSize(value: unknown): number {
  if (typeof value === 'string') return codePointLength(value);
  if (value instanceof Uint8Array) return value.length;
  if (Array.isArray(value)) return value.length;
  if (value instanceof Map || value instanceof Set) return value.size;
  return 1;
}

/**
 * The library's traversalCost: a tenth of each string's bytes (truncated), summed over lists and
 * over map keys and values; 1 for any other value. Iterative, so deep values cannot overflow the stack.
 */
export function traversalCost(value: unknown): number {
  let cost = 0;
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const v = stack.pop();
    if (typeof v === 'string') cost += Math.trunc(utf8Length(v) * STRING_TRAVERSAL_COST_FACTOR);
    else if (v instanceof Uint8Array) cost += Math.trunc(v.length * STRING_TRAVERSAL_COST_FACTOR);
    else if (Array.isArray(v)) for (const item of v) stack.push(item);
    else if (v instanceof Map) for (const [k, item] of v) stack.push(k, item);
    else cost += 1;
  }
  return cost;
}

/** The pattern size a named format is charged as (`maxRegexSize`), whether given itself or wrapped as `{ format }`. */
function maxRegexSize(value: unknown): number {
  const v = value as { maxRegexSize?: number; format?: { maxRegexSize?: number } } | undefined;
  return v?.maxRegexSize ?? v?.format?.maxRegexSize ?? 0;
}

const traverse = (size: number, factor = 1): number => Math.ceil(size * factor * STRING_TRAVERSAL_COST_FACTOR);

/**
 * The runtime cost of one call, or undefined where the library declares none (cel-go then charges
 * its default of 1 for the call). `fn` is the function name as declared (`indexOf`, `sets.contains`,
 * `ip.isCanonical`), `overloadId` the overload's id where the cost depends on it, `args` the
 * receiver first, then the arguments, and `result` the call's result (used by `join`).
 */
export function libraryCallCost(
  fn: string,
  overloadId: string,
  args: readonly unknown[],
  result?: unknown,
): number | undefined {
  switch (fn) {
    case 'isSorted':
    case 'sum':
    case 'max':
    case 'min':
    case 'indexOf':
    case 'lastIndexOf':
      return args.length > 0 ? traversalCost(args[0]) : 0;
    case 'url':
    case 'lowerAscii':
    case 'upperAscii':
    case 'substring':
    case 'trim':
      return args.length >= 1 ? traverse(actualSize(args[0])) : undefined;
    case 'replace':
    case 'split':
      return args.length >= 1 ? traverse(actualSize(args[0]), 2) : undefined;
    case 'join':
      return args.length >= 1 ? traverse(actualSize(result), 2) : undefined;
    // cel-go's runtime cost of the standard `matches`, the same as the regex library's.
    case 'matches':
    case 'find':
    case 'findAll': {
      if (args.length < 2) return undefined;
      const strCost = Math.ceil((1 + actualSize(args[0])) * STRING_TRAVERSAL_COST_FACTOR);
      const regexCost = Math.ceil(actualSize(args[1]) * REGEX_STRING_LENGTH_COST_FACTOR);
      return strCost * regexCost;
    }
    case 'validate': {
      // The format library's: the string against the longest pattern the format's check stands for.
      if (args.length < 2) return undefined;
      const strCost = Math.ceil((1 + actualSize(args[1])) * STRING_TRAVERSAL_COST_FACTOR);
      return strCost * Math.ceil(maxRegexSize(args[0]) * REGEX_STRING_LENGTH_COST_FACTOR);
    }
    // cel-go's own runtime costs of the strings extension's format and quote: the string's traversal.
    case 'format':
    case 'strings.quote':
    case 'semver':
    case 'isSemver':
    case 'cidr':
    case 'isIP':
    case 'isCIDR':
    case 'quantity':
    case 'isQuantity':
      return args.length >= 1 ? traverse(actualSize(args[0])) : undefined;
    case 'sign':
    case 'asInteger':
    case 'isInteger':
    case 'asApproximateFloat':
    case 'isGreaterThan':
    case 'isLessThan':
    case 'compareTo':
    case 'add':
    case 'sub':
      return 1;
    default:
      return netCallCost(fn, overloadId, args) ?? collectionCallCost(fn, args, result) ?? authorizerCallCost(fn, args);
  }
}

/** The runtime cost of a call of the ip and cidr libraries' methods (undefined for any other). */
function netCallCost(fn: string, overloadId: string, args: readonly unknown[]): number | undefined {
  switch (fn) {
    case 'ip':
      if (args.length < 1) return undefined;
      // The ip of a cidr value is a field read.
      return overloadId === 'cidr_ip' ? 1 : traverse(actualSize(args[0]));
    case 'ip.isCanonical':
      return args.length >= 1 ? traverse(actualSize(args[0]), 2) : undefined;
    case 'masked':
    case 'prefixLength':
    case 'family':
    case 'isUnspecified':
    case 'isLoopback':
    case 'isLinkLocalMulticast':
    case 'isLinkLocalUnicast':
      return 1;
    case 'containsIP': {
      if (args.length < 2) return undefined;
      const cidrSize = actualSize(args[0]);
      let cost = traverse(cidrSize + cidrSize);
      if (overloadId === 'cidr_contains_ip_string') cost += traverse(actualSize(args[1]));
      return cost;
    }
    case 'containsCIDR': {
      if (args.length < 2) return undefined;
      const cidrSize = actualSize(args[0]);
      let cost = traverse(cidrSize + cidrSize) + traverse(cidrSize) + 1;
      if (overloadId === 'cidr_contains_cidr_string') cost += traverse(actualSize(args[1]));
      return cost;
    }
    default:
      return undefined;
  }
}

/** The runtime cost of a call of cel-go's sets and lists libraries (undefined for any other). */
function collectionCallCost(fn: string, args: readonly unknown[], result: unknown): number | undefined {
  switch (fn) {
    case 'sets.contains':
    case 'sets.intersects':
    case 'sets.equivalent': {
      // cel-go's sets library: 1 + size(a) × size(b) × factor, two passes for equivalence.
      const factor = fn === 'sets.equivalent' ? 2 : 1;
      return 1 + Math.trunc(actualSize(args[0]) * actualSize(args[1]) * factor);
    }
    // cel-go's lists library (version 3 trackers).
    case 'slice':
    case 'lists.range':
    case 'reverse':
      return allocatingListCall(1, actualSize(result));
    case 'flatten':
      return allocatingListCall(args.length === 2 ? Number(args[1]) : 1, actualSize(args[0]));
    case 'distinct':
    case 'sort':
      return selfCompare(args[0]);
    case '@sortByAssociatedKeys':
      return selfCompare(args[1]);
    default:
      return undefined;
  }
}

/** cel-go's common.StructCreateBaseCost: what allocating a struct adds. */
const STRUCT_CREATE_BASE_COST = 40;
/** A selector's length per requirement at most: `k,` is the shortest requirement that repeats. */
const SELECTOR_LENGTH_TO_REQUIREMENT_COUNT = 0.5;

/**
 * The library's selectorCostEstimate for a selector of `length` characters: the list of
 * requirements, the parse (a traversal), and a struct and a values list for each requirement the
 * length can hold, each product rounded up as cel-go's cost factors round.
 */
function selectorCost(length: number): number {
  const requirements = Math.ceil(length * SELECTOR_LENGTH_TO_REQUIREMENT_COUNT);
  return (
    LIST_CREATE_BASE_COST +
    traverse(length) +
    Math.ceil(requirements * (LIST_CREATE_BASE_COST + STRUCT_CREATE_BASE_COST))
  );
}

/** The runtime cost of a call of the authorizer library (undefined for any other). */
function authorizerCallCost(fn: string, args: readonly unknown[]): number | undefined {
  switch (fn) {
    case 'check':
      return AUTHORIZER_CHECK_COST;
    case 'fieldSelector':
    case 'labelSelector':
      return args.length >= 2 ? selectorCost(actualSize(args[1])) : undefined;
    case 'serviceAccount':
    case 'path':
    case 'group':
    case 'resource':
    case 'subresource':
    case 'namespace':
    case 'name':
    case 'allowed':
    case 'reason':
    case 'error':
    case 'errored':
      return 1;
    default:
      return undefined;
  }
}
