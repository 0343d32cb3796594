/**
 * A deep copy of a JSON value (plain objects, arrays, primitives), several times faster
 * than structuredClone on review-sized data. An own `__proto__` key, which JSON.parse can
 * produce, is copied as data and never becomes the copy's prototype.
 */
export function cloneJson<T>(value: T): T {
  if (typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) {
    const out = new Array(value.length);
    for (let i = 0; i < value.length; i++) out[i] = cloneJson(value[i]);
    return out as T;
  }
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value)) {
    const v = cloneJson((value as Record<string, unknown>)[key]);
    if (key === '__proto__') Object.defineProperty(out, key, { value: v, enumerable: true, writable: true, configurable: true });
    else out[key] = v;
  }
  return out as T;
}
