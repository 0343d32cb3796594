/**
 * Kubernetes' rules for names, label and annotation maps, as the API server applies them
 * (k8s.io/apimachinery util/validation, metav1 validation.ValidateLabels and api/validation
 * ValidateAnnotations). Lengths are checked before patterns, so a long string costs no regex.
 */

/** Longest DNS-1123 label, name part of a qualified name, and label value. */
export const NAME_PART_MAX = 63;
/** Longest DNS-1123 subdomain. */
export const DNS1123_SUBDOMAIN_MAX = 253;
/** Most bytes (UTF-8, as Go counts) all annotation keys and values of an object may take together: 256 KiB. */
export const ANNOTATIONS_SIZE_MAX = 256 * 1024;

const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
// The name part of a qualified name: alphanumerics, '-', '_' or '.', alphanumeric at both ends.
// A label value is one too, or empty.
const NAME_PART = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;

const NAME_PART_RULE =
  "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";

/** True for a DNS-1123 label: at most 63 lower-case alphanumerics or '-', alphanumeric at both ends. */
export function isDns1123Label(value: string): boolean {
  return value.length <= NAME_PART_MAX && DNS1123_LABEL.test(value);
}

/** True for a DNS-1123 subdomain: at most 253 characters, DNS-1123 labels joined by '.'. */
export function isDns1123Subdomain(value: string): boolean {
  return value.length <= DNS1123_SUBDOMAIN_MAX && DNS1123_SUBDOMAIN.test(value);
}

/** True for the name part of a qualified name (a qualified name without a prefix). */
export function isQualifiedNamePart(value: string): boolean {
  return value.length <= NAME_PART_MAX && NAME_PART.test(value);
}

/**
 * Why a name is not a qualified name (an optional DNS-subdomain prefix and '/', then a name
 * part), or undefined when it is one.
 */
export function qualifiedNameProblem(name: string): string | undefined {
  const parts = name.split('/');
  if (parts.length > 2)
    return 'a qualified name must consist of a name, optionally prefixed by a DNS subdomain and "/"';
  const [prefix, local] = parts.length === 2 ? parts : [undefined, parts[0]!];
  if (prefix !== undefined) {
    if (!prefix) return 'prefix part must be non-empty';
    if (!isDns1123Subdomain(prefix)) return `prefix part ${JSON.stringify(prefix)} must be a DNS subdomain`;
  }
  if (!local) return 'name part must be non-empty';
  if (local.length > NAME_PART_MAX) return `name part must be no more than ${NAME_PART_MAX} characters`;
  if (!NAME_PART.test(local)) return `name part ${NAME_PART_RULE}`;
  return undefined;
}

/** Why a string is not a label value (empty, or a name part), or undefined when it is one. */
export function labelValueProblem(value: string): string | undefined {
  if (value === '') return undefined;
  if (value.length > NAME_PART_MAX) return `must be no more than ${NAME_PART_MAX} characters`;
  if (!NAME_PART.test(value)) return NAME_PART_RULE;
  return undefined;
}

/** Why the API server would refuse a label map, naming the first bad key, or undefined. */
export function labelsProblem(labels: Readonly<Record<string, string>>): string | undefined {
  for (const key in labels) {
    const keyProblem = qualifiedNameProblem(key);
    if (keyProblem) return `key ${JSON.stringify(key)}: ${keyProblem}`;
    const valueProblem = labelValueProblem(labels[key]!);
    if (valueProblem) return `value of key ${JSON.stringify(key)}: ${valueProblem}`;
  }
  return undefined;
}

/**
 * Why the API server would refuse an annotation map, naming the first bad key, or undefined:
 * keys are qualified names, letter case aside; keys and values take at most 256 KiB in all.
 */
export function annotationsProblem(annotations: Readonly<Record<string, string>>): string | undefined {
  let units = 0;
  for (const key in annotations) {
    const keyProblem = qualifiedNameProblem(key.toLowerCase());
    if (keyProblem) return `key ${JSON.stringify(key)}: ${keyProblem}`;
    units += key.length + annotations[key]!.length;
  }
  // A UTF-16 unit takes at most 3 bytes in UTF-8 (a surrogate pair, two units, takes 4).
  if (units * 3 <= ANNOTATIONS_SIZE_MAX) return undefined;
  let bytes = 0;
  for (const key in annotations) bytes += Buffer.byteLength(key, 'utf8') + Buffer.byteLength(annotations[key]!, 'utf8');
  if (bytes > ANNOTATIONS_SIZE_MAX) return `keys and values take ${bytes} bytes, more than ${ANNOTATIONS_SIZE_MAX}`;
  return undefined;
}
