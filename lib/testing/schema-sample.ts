/** A generated value as an object's fields: none unless it is a mapping. */
export function asFields(value: unknown): Record<string, unknown> {
  return value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

/** Deepest schema nesting a sample is generated for (CRD schemas are trees; a hostile one stops here). */
const SAMPLE_DEPTH = 32;

/** Longest string a sample pads to for `minLength` (a hostile schema could ask for gigabytes). */
const SAMPLE_MAX_LENGTH = 4096;

/** Values for string formats the API server checks (k8s.io/kube-openapi strfmt), one each. */
const FORMAT_SAMPLES: Record<string, string> = {
  'date-time': '2020-01-01T00:00:00Z',
  date: '2020-01-01',
  duration: '1s',
  byte: 'Y29uZm9ybWFuY2U=',
  email: 'conformance@example.com',
  hostname: 'conformance.example.com',
  ipv4: '192.0.2.1',
  ipv6: '2001:db8::1',
  cidr: '192.0.2.0/24',
  mac: '02:00:00:00:00:01',
  uri: 'https://conformance.example.com/',
  url: 'https://conformance.example.com/',
  uuid: '5f7b1d5e-0000-4000-8000-000000000003',
  password: 'conformance',
};

/** `value` when it is an integer (as a schema's lengths and counts are), else undefined. */
const integer = (value: unknown): number | undefined => (Number.isInteger(value) ? (value as number) : undefined);

/**
 * The smallest value a structural schema (a CRD version's openAPIV3Schema) accepts, as far as it
 * can be known without a pattern engine: every required property, of its type, the first enum
 * value, the default, a value of the format, lengths and bounds kept. Undefined for no schema.
 */
export function sampleFromSchema(schema: unknown, depth = 0): unknown {
  if (!schema || typeof schema !== 'object' || Array.isArray(schema) || depth > SAMPLE_DEPTH) return undefined;
  const s = schema as Record<string, unknown>;
  if (Array.isArray(s.enum) && s.enum.length) return structuredClone(s.enum[0]);
  if (s.default !== undefined) return structuredClone(s.default);
  if (s['x-kubernetes-int-or-string'] === true) return 1;
  switch (s.type) {
    case 'object': {
      const out: Record<string, unknown> = {};
      const properties = asFields(s.properties);
      for (const name of Array.isArray(s.required) ? s.required : []) {
        if (typeof name !== 'string') continue;
        const value = sampleFromSchema(properties[name] ?? s.additionalProperties, depth + 1);
        out[name] = value === undefined ? {} : value;
      }
      return out;
    }
    case 'array': {
      const minItems = integer(s.minItems);
      const count = minItems !== undefined && minItems > 0 ? Math.min(minItems, SAMPLE_DEPTH) : 0;
      return Array.from({ length: count }, (_, i) => {
        const item = sampleFromSchema(s.items, depth + 1);
        // listType set (and unique items) need distinct members.
        return typeof item === 'string' ? `${item}${i || ''}` : typeof item === 'number' ? item + i : item;
      });
    }
    case 'string': {
      let value = FORMAT_SAMPLES[s.format as string] ?? 'conformance';
      const maxLength = integer(s.maxLength);
      const minLength = integer(s.minLength);
      if (maxLength !== undefined && value.length > maxLength) value = value.slice(0, maxLength);
      if (minLength !== undefined && value.length < minLength) {
        value = value.padEnd(Math.min(minLength, SAMPLE_MAX_LENGTH), 'x');
      }
      return value;
    }
    case 'integer':
    case 'number': {
      const min = typeof s.minimum === 'number' ? (s.exclusiveMinimum === true ? s.minimum + 1 : s.minimum) : undefined;
      const max = typeof s.maximum === 'number' ? (s.exclusiveMaximum === true ? s.maximum - 1 : s.maximum) : undefined;
      const value = min !== undefined ? min : max !== undefined && max < 1 ? max : 1;
      return s.type === 'integer' ? Math.ceil(value) : value;
    }
    case 'boolean':
      return false;
    default:
      return undefined;
  }
}
