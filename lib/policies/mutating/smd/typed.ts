/**
 * Values read against a structured-merge-diff schema: which part of a type a value is (its
 * scalar, list or map), a list item's identity (its keys, or its value in a set), and the check
 * the API server makes when it reads an object as typed (unknown fields, wrong scalars, duplicate
 * keys), with structured-merge-diff's error texts.
 */
import { type Atom, type ListAtom, refName, resolve, type Schema, type TypeRef } from './schema.ts';

/** One error and the path it is at (`.spec.replicas`). */
export interface SmdError {
  path: string;
  message: string;
}

/** The text of errors as structured-merge-diff joins them. */
export function errorsText(errors: readonly SmdError[]): string {
  const one = (e: SmdError) => (e.path ? `${e.path}: ${e.message}` : e.message);
  if (errors.length === 1) return one(errors[0] as SmdError);
  return ['errors:', ...errors.map((e) => `  ${one(e)}`)].join('\n');
}

/** Prefixes the errors' paths. */
export function prefixed(errors: SmdError[], prefix: string): SmdError[] {
  for (const e of errors) e.path = prefix + e.path;
  return errors;
}

export const isMap = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);
const isScalar = (v: unknown) =>
  typeof v === 'number' || typeof v === 'string' || typeof v === 'boolean' || typeof v === 'bigint';

/** The part of an atom a value takes (a null or a mismatched value keeps the whole atom). */
export function deduce(atom: Atom, v: unknown): Atom {
  if (v === null || v === undefined) return atom;
  if (isScalar(v)) return atom.s ? { s: atom.s } : atom;
  if (Array.isArray(v)) return atom.l ? { l: atom.l } : atom;
  if (isMap(v)) return atom.m ? { m: atom.m } : atom;
  return atom;
}

/** A value as structured-merge-diff prints it in a path (`"x"`, `1`, `true`). */
export function valueString(v: unknown): string {
  if (v === null) return 'null';
  if (typeof v === 'string') return JSON.stringify(v);
  if (Array.isArray(v)) return `[${v.map(valueString).join(',')}]`;
  if (isMap(v))
    return Object.keys(v)
      .map((k) => `${k}=${valueString(v[k])}`)
      .join('');
  return String(v);
}

/** A list item's identity: `[name="x"]` for a keyed list, `[="x"]` for a set; an Error when it has none. */
export function itemKey(schema: Schema, list: ListAtom, item: unknown): string | Error {
  if (list.r !== 'associative') return new Error('invalid indexing of non-associative list');
  if (list.k?.length) {
    if (item === null) return new Error('associative list with keys may not have a null element');
    if (!isMap(item)) return new Error('associative list with keys may not have non-map elements');
    const element = resolve(schema, list.e);
    const fields: Array<[string, unknown]> = [];
    for (const key of list.k) {
      if (Object.hasOwn(item, key)) fields.push([key, item[key]]);
      else {
        if (!element?.m)
          return new Error(`couldn't find default value for ${key}: associative list may not have non-map types`);
        const def = element.m.d?.[key];
        if (def !== undefined && def !== null) fields.push([key, def]);
      }
    }
    if (fields.length === 0)
      return new Error(
        `associative list with keys has an element that omits all key fields ["${list.k.join('" "')}"] (and doesn't have default values for any key fields)`,
      );
    fields.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
    return `[${fields.map(([k, v]) => `${k}=${valueString(v)}`).join(',')}]`;
  }
  if (isMap(item)) return new Error("associative list without keys has an element that's a map type");
  if (Array.isArray(item)) return new Error('not supported: associative list with lists as elements');
  if (item === null) return new Error("associative list without keys has an element that's an explicit null");
  return `[=${valueString(item)}]`;
}

/** How Go prints a scalar of the wrong type in structured-merge-diff's messages. */
function goValue(v: unknown): string {
  if (typeof v === 'string') return `&value.valueUnstructured{Value:${JSON.stringify(v)}}`;
  if (Array.isArray(v) || isMap(v)) return `&value.valueUnstructured{Value:${JSON.stringify(v)}}`;
  return `&value.valueUnstructured{Value:${String(v)}}`;
}

/** The error of a scalar that is not of its type, or undefined. */
export function scalarError(type: string, v: unknown, prefix = ''): string | undefined {
  if (v === undefined || v === null) return undefined;
  const numeric = typeof v === 'number' || typeof v === 'bigint';
  switch (type) {
    case 'numeric':
      return numeric ? undefined : `${prefix}expected numeric (int or float), got ${goType(v)}`;
    case 'string':
      return typeof v === 'string' ? undefined : `${prefix}expected string, got ${goValue(v)}`;
    case 'boolean':
      return typeof v === 'boolean' ? undefined : `${prefix}expected boolean, got ${goValue(v)}`;
    case 'untyped':
      return isScalar(v) ? undefined : `${prefix}expected any scalar, got ${goValue(v)}`;
    default:
      return `${prefix}unexpected scalar type in schema: ${type}`;
  }
}

function goType(v: unknown): string {
  if (typeof v === 'string') return 'string';
  if (typeof v === 'boolean') return 'bool';
  if (Array.isArray(v)) return '[]interface {}';
  return 'map[string]interface {}';
}

/**
 * Checks a value against a type as the API server reads an object as typed: the errors, each
 * with its path. `allowDuplicates` accepts repeated keys in keyed lists (the live object).
 */
export function validate(schema: Schema, ref: TypeRef, v: unknown, allowDuplicates: boolean): SmdError[] {
  const found = resolve(schema, ref);
  if (!found) return [{ path: '', message: `schema error: no type found matching: ${refName(ref)}` }];
  const atom = deduce(found, v);
  if (atom.m) return validateMap(schema, atom.m, v, allowDuplicates);
  if (atom.s) {
    const error = scalarError(atom.s, v);
    return error ? [{ path: '', message: error }] : [];
  }
  if (atom.l) return validateList(schema, atom.l, v, allowDuplicates);
  return [
    { path: '', message: `schema error: invalid atom: ${typeof ref === 'string' ? `named type: ${ref}` : 'inlined'}` },
  ];
}

function validateMap(schema: Schema, map: Atom['m'] & object, v: unknown, allowDuplicates: boolean): SmdError[] {
  if (v === null || v === undefined) return [];
  if (!isMap(v)) return [{ path: '', message: `expected map, got ${goValue(v)}` }];
  const errors: SmdError[] = [];
  for (const key of Object.keys(v).sort()) {
    const type = map.f?.[key] ?? map.e;
    if (!type) {
      errors.push({ path: `.${key}`, message: 'field not declared in schema' });
      break;
    }
    errors.push(...prefixed(validate(schema, type, v[key], allowDuplicates), `.${key}`));
  }
  return errors;
}

function validateList(schema: Schema, list: ListAtom, v: unknown, allowDuplicates: boolean): SmdError[] {
  if (v === null || v === undefined) return [];
  if (!Array.isArray(v)) return [{ path: '', message: `expected list, got ${goValue(v)}` }];
  const errors: SmdError[] = [];
  const seen = new Set<string>();
  for (const [i, item] of v.entries()) {
    let path = `[${i}]`;
    if (list.r === 'associative') {
      const key = itemKey(schema, list, item);
      if (key instanceof Error) {
        errors.push({ path: '', message: `element ${i}: ${key.message}` });
        return errors;
      }
      if (seen.has(key) && !allowDuplicates) errors.push({ path: '', message: `duplicate entries for key ${key}` });
      seen.add(key);
      path = key;
    }
    errors.push(...prefixed(validate(schema, list.e, item, allowDuplicates), path));
  }
  return errors;
}

/**
 * The paths of the atomic lists, maps and structs in an apply configuration (only declared
 * fields are followed), which a mutation may not set: setting one would drop what it leaves out.
 */
export function findAtomics(schema: Schema, ref: TypeRef, v: unknown, path = ''): string[] {
  const atom = resolve(schema, ref);
  if (!atom) return [];
  const found: string[] = [];
  if (isMap(v) && atom.m) {
    if (atom.m.r === 'atomic') found.push(path);
    for (const key of Object.keys(v)) {
      const field = atom.m.f?.[key];
      if (field) found.push(...findAtomics(schema, field, v[key], `${path}.${key}`));
    }
  }
  if (Array.isArray(v) && atom.l) {
    if (atom.l.r === 'atomic') found.push(path);
    for (const [i, item] of v.entries()) found.push(...findAtomics(schema, atom.l.e, item, `${path}[${i}]`));
  }
  return found;
}
