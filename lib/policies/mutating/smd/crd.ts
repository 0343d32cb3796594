/**
 * A custom resource's structured-merge-diff schema, from its CRD version's `openAPIV3Schema`, as
 * the API server converts it: lists atomic unless `x-kubernetes-list-type` says `set` or `map`
 * (with `x-kubernetes-list-map-keys`), maps granular unless `x-kubernetes-map-type: atomic`,
 * objects without properties (or that preserve unknown fields) taking any field, untyped
 * scalars for int-or-string and formatted strings, and `metadata` read as ObjectMeta.
 */
import {
  type Atom,
  builtinSchema,
  type MapAtom,
  type Schema,
  type TypeRef,
  UNTYPED_ATOMIC,
  UNTYPED_DEDUCED,
} from './schema.ts';

/** An OpenAPI v3 schema as a CRD writes it (the parts the merge reads). */
export interface CrdSchema {
  type?: string;
  format?: string;
  properties?: Record<string, CrdSchema>;
  additionalProperties?: CrdSchema | boolean;
  items?: CrdSchema;
  default?: unknown;
  'x-kubernetes-list-type'?: string;
  'x-kubernetes-list-map-keys'?: string[];
  'x-kubernetes-map-type'?: string;
  'x-kubernetes-preserve-unknown-fields'?: boolean;
  'x-kubernetes-int-or-string'?: boolean;
  'x-kubernetes-embedded-resource'?: boolean;
}

const OBJECT_META = 'io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta';

function scalar(s: CrdSchema): Atom {
  switch (s.type) {
    case 'integer':
    case 'number':
      return { s: 'numeric' };
    case 'boolean':
      return { s: 'boolean' };
    case 'string':
      return { s: !s.format || s.format === 'byte' ? 'string' : 'untyped' };
    default:
      return { s: 'untyped' };
  }
}

function mapOf(s: CrdSchema, preserve: boolean, embedded: boolean): MapAtom {
  const map: MapAtom = {};
  const properties = { ...s.properties };
  for (const [name, member] of Object.entries(properties)) {
    map.f ??= {};
    map.f[name] = atomOf(member, preserve);
    if (member.default !== undefined && (typeof member.default !== 'object' || member.default === null)) {
      map.d ??= {};
      map.d[name] = member.default;
    }
  }
  if (embedded) {
    map.f = { ...map.f, apiVersion: { s: 'string' }, kind: { s: 'string' }, metadata: OBJECT_META };
  }
  const additional = s.additionalProperties;
  if (typeof additional === 'object') map.e = atomOf(additional, preserve);
  else if (
    additional === true ||
    (additional === undefined && (preserve || !s.properties || Object.keys(s.properties).length === 0))
  )
    map.e = UNTYPED_DEDUCED;
  if (s['x-kubernetes-map-type'] === 'atomic') map.r = 'atomic';
  else if (s['x-kubernetes-map-type'] === 'granular') map.r = 'separable';
  return map;
}

function listOf(s: CrdSchema, preserve: boolean): NonNullable<Atom['l']> {
  const type = s['x-kubernetes-list-type'];
  const element: TypeRef = s.items ? atomOf(s.items, preserve) : UNTYPED_ATOMIC;
  if (type === 'set') return { e: element, r: 'associative' };
  if (type === 'map') return { e: element, r: 'associative', k: s['x-kubernetes-list-map-keys'] ?? [] };
  return { e: element, r: 'atomic' };
}

function atomOf(s: CrdSchema, inherited: boolean): Atom {
  const preserve = inherited || s['x-kubernetes-preserve-unknown-fields'] === true;
  if (s['x-kubernetes-int-or-string']) return { s: 'untyped' };
  const embedded = s['x-kubernetes-embedded-resource'] === true;
  if (s.type === 'object' || (embedded && !s.type)) return { m: mapOf(s, preserve, embedded) };
  if (s.type === 'array') return { l: listOf(s, preserve) };
  if (!s.type) return { s: 'untyped', l: listOf(s, preserve), m: mapOf(s, preserve, false) };
  return scalar(s);
}

/**
 * The schema of a custom resource kind and its type name: the built-in types (for ObjectMeta)
 * and the kind's own, its root's `apiVersion`, `kind` and `metadata` as the API server declares them.
 */
export function crdSchema(
  group: string,
  version: string,
  kind: string,
  openAPIV3Schema: CrdSchema,
): { schema: Schema; typeName: string } {
  const root = atomOf({ ...openAPIV3Schema, type: 'object' }, false);
  const map = root.m as MapAtom;
  map.f = { ...map.f, apiVersion: { s: 'string' }, kind: { s: 'string' }, metadata: OBJECT_META };
  const typeName = `${group}.${version}.${kind}`;
  return { schema: { ...builtinSchema(), [typeName]: root }, typeName };
}
