/**
 * Structured-merge-diff schemas: how each list and map of a kind merges (atomic, a set, a map
 * keyed by some fields, granular). The built-in kinds' come from the generated table, a custom
 * resource's from its CRD's OpenAPI schema, converted as the API server converts it.
 */
import { BUILTIN_SCHEMA_ABBREVIATIONS, BUILTIN_SCHEMA_JSON } from './builtin-schema.ts';

/** A list's element type, relationship (`atomic`, `associative`) and, for a keyed list, its keys. */
export interface ListAtom {
  e: TypeRef;
  r?: string;
  k?: string[];
}

/** A map's declared fields, their scalar defaults, the type of other keys and its relationship. */
export interface MapAtom {
  f?: Record<string, TypeRef>;
  d?: Record<string, unknown>;
  e?: TypeRef;
  r?: string;
}

/** What a value of a type may be: a scalar (`numeric`, `string`, `boolean`, `untyped`), a list, a map. */
export interface Atom {
  s?: string;
  l?: ListAtom;
  m?: MapAtom;
}

/** A named type, a named type with its relationship overridden, or an inlined atom. */
export type TypeRef = string | [name: string, relationship: string] | Atom;

/** Named types. */
export type Schema = Record<string, Atom>;

/** The name of the atomic type of anything (SMD's `__untyped_atomic_`). */
export const UNTYPED_ATOMIC = '__untyped_atomic_';
/** The name of the granular type of anything (SMD's `__untyped_deduced_`). */
export const UNTYPED_DEDUCED = '__untyped_deduced_';

let builtin: Schema | undefined;

/** The built-in types' schema, parsed on first use. */
export function builtinSchema(): Schema {
  if (!builtin) {
    let json = BUILTIN_SCHEMA_JSON;
    for (const [short, long] of BUILTIN_SCHEMA_ABBREVIATIONS) json = json.split(short).join(long);
    builtin = JSON.parse(json) as Schema;
  }
  return builtin;
}

/**
 * The type name of a built-in kind in the schema (`io.k8s.api.apps.v1.Deployment`), or undefined
 * when the schema has none (a custom resource).
 */
export function builtinTypeName(group: string, version: string, kind: string): string | undefined {
  const pkg = group === '' ? 'core' : group === 'internal.apiserver.k8s.io' ? 'apiserverinternal' : group.split('.')[0];
  const name = `io.k8s.api.${pkg}.${version}.${kind}`;
  const type = builtinSchema()[name];
  return type?.m?.f?.apiVersion && type.m.f.kind ? name : undefined;
}

/** The atom a reference stands for, its relationship overridden where the reference says; undefined if unknown. */
export function resolve(schema: Schema, ref: TypeRef): Atom | undefined {
  if (typeof ref === 'string') return schema[ref];
  if (!Array.isArray(ref)) return ref;
  const atom = schema[ref[0]];
  if (!atom) return undefined;
  if (atom.m) return { m: { ...atom.m, r: ref[1] } };
  if (atom.l) return { l: { ...atom.l, r: ref[1] } };
  return undefined;
}

/** The name of a reference, for errors. */
export function refName(ref: TypeRef): string {
  if (typeof ref === 'string') return ref;
  return Array.isArray(ref) ? ref[0] : 'inlined type';
}
