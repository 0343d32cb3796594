/**
 * CEL types of a kind's schema, as the API server types `object`, `oldObject` and `params` when it
 * type-checks a policy (apiserver cel/common SchemaDeclType): an object's properties are the fields
 * of an object type (a property without a type is left out, so reading it is an undefined field),
 * additionalProperties a map, items a list, int-or-string dyn, string formats byte, duration, date
 * and date-time bytes, duration and timestamp. From an OpenAPI schema (a CRD's, or a test's) or
 * from the built-in kinds' structured-merge-diff schema. Checking only: never in a bundle that runs.
 */
import { resolve, type Schema, type TypeRef } from '../mutating/smd/schema.ts';

/** The part of an OpenAPI schema that decides the CEL type of a value. */
export interface OpenApiSchema {
  type?: string | string[];
  format?: string;
  properties?: Record<string, OpenApiSchema>;
  additionalProperties?: boolean | OpenApiSchema;
  items?: OpenApiSchema;
  'x-kubernetes-int-or-string'?: boolean;
  'x-kubernetes-embedded-resource'?: boolean;
}

/** CEL's reserved words, which a property name is escaped from (`__if__`). */
const RESERVED = new Set(
  'true false null in as break const continue else for function if import let loop package namespace return var void while'.split(
    ' ',
  ),
);

/** A property name as a CEL field (apiserver cel.Escape), or undefined when it has no such name. */
export function escapeField(name: string): string | undefined {
  if (RESERVED.has(name)) return `__${name}__`;
  if (!/^[A-Za-z_][A-Za-z0-9_.\-/]*$/.test(name)) return undefined;
  return name
    .replaceAll('__', '__underscores__')
    .replaceAll('.', '__dot__')
    .replaceAll('-', '__dash__')
    .replaceAll('/', '__slash__');
}

/** Named types of the built-in schema with a CEL type of their own (their OpenAPI type and format). */
const BUILTIN_SCALARS: Record<string, string> = {
  'io.k8s.apimachinery.pkg.apis.meta.v1.Time': 'google.protobuf.Timestamp',
  'io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime': 'google.protobuf.Timestamp',
  'io.k8s.apimachinery.pkg.api.resource.Quantity': 'string',
  'io.k8s.apimachinery.pkg.util.intstr.IntOrString': 'dyn',
};
/** Named types that are a schemaless `type: object` (an object type without fields). */
const BUILTIN_OPAQUE = new Set([
  'io.k8s.apimachinery.pkg.runtime.RawExtension',
  'io.k8s.apimachinery.pkg.apis.meta.v1.FieldsV1',
]);

/**
 * Object types built from schemas, children before parents (the order kube-cel's `types` option
 * registers them in), each named after its path from the kind (`Deployment.spec.template`).
 */
export class CelTypes {
  /** Object type name to its fields' types. */
  readonly types: Record<string, Record<string, string>> = {};
  private readonly named = new Map<string, string | undefined>();
  private readonly building = new Set<string>();

  /** The CEL type of an OpenAPI schema; undefined where the API server gives none. */
  openApi(schema: OpenApiSchema | undefined, path: string, root = false): string | undefined {
    if (!schema) return undefined;
    if (schema['x-kubernetes-int-or-string']) return 'dyn';
    const s = root ? withTypeAndObjectMeta(schema) : schema;
    const type = Array.isArray(s.type) ? s.type[0] : s.type;
    const embedded = (c: OpenApiSchema) => c['x-kubernetes-embedded-resource'] === true;
    switch (type) {
      case 'array': {
        const items = s.items && this.openApi(s.items, `${path}.items`, embedded(s.items));
        return items && `list<${items}>`;
      }
      case 'object': {
        const more = s.additionalProperties;
        if (more && typeof more === 'object') {
          const values = this.openApi(more, `${path}.values`, embedded(more));
          return values && `map<string, ${values}>`;
        }
        const fields: Record<string, string> = {};
        for (const [name, property] of Object.entries(s.properties ?? {})) {
          const field = escapeField(name);
          const t = this.openApi(property, `${path}.${field}`, embedded(property));
          if (field && t) fields[field] = t;
        }
        return this.define(path, fields);
      }
      case 'string':
        return STRING_FORMATS[s.format ?? ''] ?? 'string';
      case 'boolean':
        return 'bool';
      case 'number':
        return 'double';
      case 'integer':
        return 'int';
      default:
        return undefined;
    }
  }

  /** The CEL type of a type of the built-in structured-merge-diff schema. */
  builtin(schema: Schema, ref: TypeRef, path: string): string | undefined {
    const name = typeof ref === 'string' ? ref : Array.isArray(ref) ? ref[0] : undefined;
    if (name !== undefined) {
      if (name in BUILTIN_SCALARS) return BUILTIN_SCALARS[name];
      if (BUILTIN_OPAQUE.has(name)) return this.define(path, {});
      if (this.named.has(name)) return this.named.get(name);
      // A type that contains itself: the inner one is dyn (CEL's object types cannot nest themselves).
      if (this.building.has(name)) return 'dyn';
      this.building.add(name);
      const type = this.builtinAtom(schema, ref, path);
      this.building.delete(name);
      this.named.set(name, type);
      return type;
    }
    return this.builtinAtom(schema, ref, path);
  }

  private builtinAtom(schema: Schema, ref: TypeRef, path: string): string | undefined {
    const atom = resolve(schema, ref);
    if (!atom) return undefined;
    if (atom.s) return SMD_SCALARS[atom.s];
    if (atom.l) {
      const element = this.builtin(schema, atom.l.e, `${path}.items`);
      return element && `list<${element}>`;
    }
    if (!atom.m) return undefined;
    if (!atom.m.f && atom.m.e) {
      const values = this.builtin(schema, atom.m.e, `${path}.values`);
      return values && `map<string, ${values}>`;
    }
    const fields: Record<string, string> = {};
    for (const [name, field] of Object.entries(atom.m.f ?? {})) {
      const escaped = escapeField(name);
      const t = this.builtin(schema, field, `${path}.${escaped}`);
      if (escaped && t) fields[escaped] = t;
    }
    return this.define(path, fields);
  }

  /** Registers an object type under a name made from its path, unique. */
  private define(path: string, fields: Record<string, string>): string {
    const base = path.replace(/[^A-Za-z0-9_.]/g, '_');
    let name = base;
    for (let n = 2; name in this.types; n++) name = `${base}_${n}`;
    this.types[name] = fields;
    return name;
  }
}

/** The CEL types of string formats. */
const STRING_FORMATS: Record<string, string> = {
  byte: 'bytes',
  duration: 'google.protobuf.Duration',
  date: 'google.protobuf.Timestamp',
  'date-time': 'google.protobuf.Timestamp',
};

/** The CEL types of structured-merge-diff scalars; numbers of the built-in kinds are integers. */
const SMD_SCALARS: Record<string, string | undefined> = {
  string: 'string',
  numeric: 'int',
  boolean: 'bool',
  untyped: 'dyn',
};

/**
 * A resource's root schema as the API server completes it (WithTypeAndObjectMeta): `kind`,
 * `apiVersion` and `metadata` with `name` and `generateName`, unless it has them already.
 */
function withTypeAndObjectMeta(s: OpenApiSchema): OpenApiSchema {
  const p = s.properties ?? {};
  const isString = (c?: OpenApiSchema) => [c?.type].flat().includes('string');
  const meta = p.metadata;
  if (
    isString(p.kind) &&
    isString(p.apiVersion) &&
    [meta?.type].flat().includes('object') &&
    isString(meta?.properties?.name) &&
    isString(meta?.properties?.generateName)
  )
    return s;
  const string: OpenApiSchema = { type: 'string' };
  return {
    ...s,
    properties: {
      ...p,
      kind: string,
      apiVersion: string,
      metadata: { type: 'object', properties: { name: string, generateName: string } },
    },
  };
}
