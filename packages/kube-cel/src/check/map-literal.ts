/**
 * Map literals built as cel-go builds them: string keys as a plain object, other keys as a Map, a
 * repeated key keeping its last value, an optional entry without a value taking its key out.
 */
import { celEquals, isUint, numeric } from '../evaluate/equality.ts';
import { ABSENT, entryValue, optionalEntries } from '../evaluate/entries.ts';
import type { Engine, Node } from './semantics-types.ts';

/**
 * A map literal's value: a plain object when every key is a string (as the engine gives string-keyed
 * maps, every name kept, `__proto__` included), a Map otherwise (1, true and 'a' stay distinct keys);
 * a key given twice keeps its last value, as cel-go's.
 */
export function mapLiteral(ev: Engine, node: Node, scope: unknown): unknown {
  const entries = optionalEntries(node);
  const pairs = (node.args as Array<[unknown, unknown]>).map(
    ([k, v]) => [ev.run(k, scope), ev.run(v, scope), v] as const,
  );
  const map = new Map<unknown, unknown>();
  for (const [i, [k, value, valueNode]] of pairs.entries()) {
    const v = entries?.has(i) ? entryValue(ev, value, valueNode, { k }) : value;
    // Map keys are ints, uints, bools and strings in CEL.
    if (!(typeof k === 'string' || typeof k === 'boolean' || typeof k === 'bigint' || isUint(k)))
      throw ev.createError('unsupported_key_type', `unsupported key type: ${k === null ? 'null' : typeof k}`, node);
    // An optional entry without a value takes the key out, as cel-go's map building does.
    if (v === ABSENT) {
      for (const x of map.keys()) if (x === k || (numeric(x) !== undefined && celEquals(ev, x, k))) map.delete(x);
      continue;
    }
    // A key given again replaces the earlier entry, as in cel-go's Go map of values (keyed by type and
    // value: `1` and `1u` stay two keys).
    for (const x of map.keys()) if (x !== k && isUint(x) && isUint(k) && uintValue(x) === uintValue(k)) map.delete(x);
    map.set(k, v);
  }
  if (![...map.keys()].every((k) => typeof k === 'string')) return map;
  const out: Record<string, unknown> = {};
  for (const [k, v] of map) Object.defineProperty(out, k as string, { value: v, enumerable: true, writable: true });
  return out;
}

/** The value of a uint. */
function uintValue(u: unknown): bigint {
  return BigInt((u as { valueOf(): bigint | number }).valueOf());
}
