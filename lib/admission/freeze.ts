/**
 * Freezes a JSON value and everything in it, so that a write to any part throws (in strict
 * mode code, which ES modules are). A loop, not recursion: a review may be nested deeply.
 */
export function deepFreeze<T>(value: T): T {
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const next = stack.pop();
    if (typeof next !== 'object' || next === null || Object.isFrozen(next)) continue;
    Object.freeze(next);
    for (const key of Object.keys(next)) stack.push((next as Record<string, unknown>)[key]);
  }
  return value;
}
