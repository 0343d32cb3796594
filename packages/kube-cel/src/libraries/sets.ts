/**
 * cel-go's sets library (`sets.contains`, `sets.equivalent`, `sets.intersects`), enabled by
 * Kubernetes from 1.29. Membership uses the engine's CEL equality, supplied by the caller, so
 * `sets.equivalent([1], [1u, 1.0])` is true where CEL's heterogeneous equality says so. The work is
 * at most size(a) × size(b) comparisons (twice for equivalence), which is what the call is charged.
 */

/** CEL equality of two values, as the engine defines it. */
export type CelEquals = (a: unknown, b: unknown) => boolean;

function has(list: readonly unknown[], value: unknown, equals: CelEquals): boolean {
  for (const item of list) if (equals(item, value)) return true;
  return false;
}

/** `sets.contains(list, sublist)`: every element of sublist is in list (true for an empty sublist). */
export function setsContains(list: readonly unknown[], sublist: readonly unknown[], equals: CelEquals): boolean {
  for (const value of sublist) if (!has(list, value, equals)) return false;
  return true;
}

/** `sets.equivalent(a, b)`: each list contains the other (repeats and order do not matter). */
export function setsEquivalent(a: readonly unknown[], b: readonly unknown[], equals: CelEquals): boolean {
  return setsContains(a, b, equals) && setsContains(b, a, equals);
}

/** `sets.intersects(a, b)`: some element of a is in b (false when either is empty). */
export function setsIntersects(a: readonly unknown[], b: readonly unknown[], equals: CelEquals): boolean {
  for (const value of a) if (has(b, value, equals)) return true;
  return false;
}

/** The Kubernetes minor version the sets functions arrive in. */
export const SETS_FUNCTIONS_SINCE: Readonly<Record<string, number>> = {
  'sets.contains': 29,
  'sets.equivalent': 29,
  'sets.intersects': 29,
};
