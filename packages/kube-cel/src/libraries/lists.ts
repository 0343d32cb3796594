/**
 * cel-go's extended lists library as Kubernetes enables it from 1.34 (ext.Lists version 3):
 * `slice`, `flatten`, `reverse`, `lists.range`, `distinct`, `sort` and `sortBy` (through its
 * associated-keys form), with cel-go's messages. CEL equality, ordering and type names come from
 * the engine. Flattening is iterative, so deep lists cannot overflow the stack.
 */

/** A call cel-go answers with an error. */
export class ListsError extends Error {
  override name = 'ListsError';
}

/** Most elements `lists.range` builds (cel-go's maxRangeSize). */
export const MAX_RANGE_SIZE = 10_000_000;

/** `list.slice(start, end)`. */
export function slice<T>(list: readonly T[], start: bigint, end: bigint): T[] {
  if (start < 0n || end < 0n) throw new ListsError(`cannot slice(${start}, ${end}), negative indexes not supported`);
  if (start > end)
    throw new ListsError(`cannot slice(${start}, ${end}), start index must be less than or equal to end index`);
  if (BigInt(list.length) < end) throw new ListsError(`cannot slice(${start}, ${end}), list is length ${list.length}`);
  return list.slice(Number(start), Number(end));
}

/** `list.flatten()` and `list.flatten(depth)`: nested lists spliced in, `depth` levels deep. */
export function flatten(list: readonly unknown[], depth = 1n): unknown[] {
  if (depth < 0n) throw new ListsError('level must be non-negative');
  const out: unknown[] = [];
  // Explicit stack of (list, next index, remaining depth) frames.
  const stack: Array<{ items: readonly unknown[]; index: number; depth: bigint }> = [{ items: list, index: 0, depth }];
  while (stack.length > 0) {
    const frame = stack[stack.length - 1]!;
    if (frame.index >= frame.items.length) {
      stack.pop();
      continue;
    }
    const value = frame.items[frame.index++];
    if (Array.isArray(value) && frame.depth > 0n) stack.push({ items: value, index: 0, depth: frame.depth - 1n });
    else out.push(value);
  }
  return out;
}

/** `list.reverse()`. */
export function reverse<T>(list: readonly T[]): T[] {
  return [...list].reverse();
}

/** `lists.range(n)`: 0 … n-1. */
export function range(n: bigint): bigint[] {
  if (n < 0n) throw new ListsError(`lists.range: size must be non-negative, got ${n}`);
  if (n > BigInt(MAX_RANGE_SIZE))
    throw new ListsError(`lists.range: size ${n} exceeds maximum allowed (${MAX_RANGE_SIZE})`);
  return Array.from({ length: Number(n) }, (_, i) => BigInt(i));
}

/** `list.distinct()`: first occurrences, in order, by CEL equality. */
export function distinct<T>(list: readonly T[], equals: (a: T, b: T) => boolean): T[] {
  const out: T[] = [];
  for (const value of list) if (!out.some((seen) => equals(value, seen))) out.push(value);
  return out;
}

/** How the engine orders CEL values of one comparable type (int, uint, double, bool, string, bytes, duration…). */
export interface CelOrdering {
  /** The CEL type name of a value, or undefined when the type has no ordering. */
  comparableType(value: unknown): string | undefined;
  /** -1, 0 or 1 for two values of the same comparable type. */
  compare(a: unknown, b: unknown): number;
}

/**
 * `list.@sortByAssociatedKeys(keys)` (what `sortBy` expands to) and, with `keys = list`, `sort()`:
 * the list ordered by its keys, equal keys in their original order.
 */
export function sortByKeys<T>(list: readonly T[], keys: readonly unknown[], ordering: CelOrdering): T[] {
  if (list.length !== keys.length) {
    throw new ListsError(
      `@sortByAssociatedKeys() expected a list of the same size as the associated keys list, but got ` +
        `${list.length} and ${keys.length} elements respectively`,
    );
  }
  if (list.length === 0) return [];
  const type = ordering.comparableType(keys[0]);
  if (type === undefined) throw new ListsError('list elements must be comparable');
  if (list.length > 1 && keys.some((k) => ordering.comparableType(k) !== type))
    throw new ListsError('list elements must have the same type');
  const order = list.map((_, i) => i);
  order.sort((i, j) => ordering.compare(keys[i], keys[j]));
  return order.map((i) => list[i]!);
}

/** `list.sort()`. */
export function sort<T>(list: readonly T[], ordering: CelOrdering): T[] {
  return sortByKeys(list, list, ordering);
}

/** The Kubernetes minor version each lists function arrives in. */
export const LISTS_FUNCTIONS_SINCE: Readonly<Record<string, number>> = {
  slice: 34,
  flatten: 34,
  reverse: 34,
  'lists.range': 34,
  distinct: 34,
  sort: 34,
  sortBy: 34,
};
