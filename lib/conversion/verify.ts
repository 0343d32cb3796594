import { setMember } from '../json.ts';
import { annotationsProblem, labelsProblem } from '../k8s/names.ts';
import type { KubeObject } from '../review/schemas.ts';
import { WebhookError } from '../errors.ts';

/** A conversion that cannot be done; its message is shown to the API server's client as is. */
export class ConversionError extends WebhookError {
  override name = 'ConversionError';
  readonly code = 'CONVERSION_FAILED';
}

/** A ConversionReview object: a Kubernetes object with apiVersion and kind. */
export type ConvertibleObject = KubeObject & { apiVersion: string; kind: string };

/** The metadata fields a converter may not change. */
const IDENTITY_FIELDS = ['name', 'namespace', 'uid'] as const;

/** `kind ns/name` of an object, for messages. */
export function describeObject(object: KubeObject, index: number): string {
  const meta = object.metadata ?? {};
  const name = meta.namespace ? `${meta.namespace}/${meta.name ?? ''}` : (meta.name ?? '(unnamed)');
  return `object ${index} (${object.kind ?? 'unknown kind'} ${name})`;
}

/**
 * Checks a converted object against its original by the API server's rules and returns it
 * as the API server would keep it: apiVersion must be the desired one; kind, name, namespace
 * and uid unchanged; metadata present, with labels and annotations (if any) maps of strings,
 * which the API server accepts when they differ from the original's (label keys and values,
 * annotation keys and size); of the metadata only labels and annotations are taken from the result.
 * Throws a ConversionError naming the object and field when the converter broke a rule.
 */
export function verifyConverted(
  original: ConvertibleObject,
  converted: unknown,
  desiredAPIVersion: string,
  index: number,
): KubeObject {
  // Messages are built only when a rule is broken: this runs once per object on the hot path.
  const where = () => describeObject(original, index);
  if (typeof converted !== 'object' || converted === null || Array.isArray(converted)) {
    throw new ConversionError(`converter returned no object for ${where()}`);
  }
  const out = converted as KubeObject;
  if (out.apiVersion !== desiredAPIVersion) {
    throw new ConversionError(
      `converter bug: ${where()} has apiVersion ${JSON.stringify(out.apiVersion ?? null)}, expected ${JSON.stringify(desiredAPIVersion)}`,
    );
  }
  if (out.kind !== original.kind) {
    throw new ConversionError(
      `converter bug: ${where()} changed kind from ${JSON.stringify(original.kind)} to ${JSON.stringify(out.kind ?? null)}`,
    );
  }
  // The API server's restoreObjectMeta refuses a result without metadata, or with metadata,
  // labels or annotations that are not objects of strings.
  const after = out.metadata as unknown;
  if (after === undefined) {
    throw new ConversionError(
      `converter bug: ${where()} has no metadata (the API server refuses it: missing metadata in converted object)`,
    );
  }
  if (!isPlainObject(after)) {
    throw new ConversionError(`converter bug: ${where()} has metadata that is ${typeOf(after)}, not an object`);
  }
  const before = original.metadata ?? {};
  for (const field of IDENTITY_FIELDS) {
    if ((before[field] ?? '') !== (after[field] ?? '')) {
      throw new ConversionError(
        `converter bug: ${where()} changed metadata.${field} from ${JSON.stringify(before[field] ?? null)} to ${JSON.stringify(after[field] ?? null)}`,
      );
    }
  }
  const metadata: Record<string, unknown> = {};
  for (const key in before) if (key !== 'labels' && key !== 'annotations') setMember(metadata, key, before[key]);
  for (const field of ['labels', 'annotations'] as const) {
    const map = after[field];
    if (map === undefined || map === null) continue;
    if (!isPlainObject(map))
      throw new ConversionError(
        `converter bug: ${where()} has metadata.${field} that is ${typeOf(map)}, not an object`,
      );
    const was = isPlainObject(before[field]) ? (before[field] as Record<string, unknown>) : undefined;
    let changed = false;
    let count = 0;
    for (const key in map) {
      const value = map[key];
      if (typeof value !== 'string') {
        throw new ConversionError(
          `converter bug: ${where()} has metadata.${field}[${JSON.stringify(key)}] that is ${typeOf(value)}, not a string`,
        );
      }
      count++;
      if (!changed && (was === undefined || was[key] !== value)) changed = true;
    }
    // Like restoreObjectMeta: a map that changed is checked whole, an unchanged one not at all.
    if (changed || count !== countKeys(was)) {
      const strings = map as Record<string, string>;
      const problem = field === 'labels' ? labelsProblem(strings) : annotationsProblem(strings);
      if (problem)
        throw new ConversionError(`converter bug: ${where()} has metadata.${field} the API server refuses: ${problem}`);
    }
    metadata[field] = map;
  }
  out.metadata = metadata;
  return out;
}

/** Number of keys of a map (0 for none), counted without building a list of them. */
function countKeys(map: Record<string, unknown> | undefined): number {
  let n = 0;
  for (const _ in map) n++;
  return n;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** What a JSON value is, for messages: `null`, `an array`, `a string`, ... */
function typeOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}

/** A copy of metadata, its labels and annotations copied too (one level: they hold strings). */
export function metadataCopy(metadata: NonNullable<KubeObject['metadata']>): NonNullable<KubeObject['metadata']> {
  const copy = { ...metadata };
  if (isPlainObject(copy.labels)) copy.labels = { ...copy.labels };
  if (isPlainObject(copy.annotations)) copy.annotations = { ...copy.annotations };
  return copy;
}
