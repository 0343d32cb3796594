/**
 * Readers of a parsed JSON or YAML document (a manifest, a kubeconfig, serverless.yml, an API
 * server's answer), typed `unknown`: each narrows what it reads and never throws on a document of
 * the wrong shape.
 */

/** True for a JSON object (not null, not an array). */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The value at a path of object members, or undefined where a member is missing or its holder is no object. */
export function valueAt(document: unknown, ...path: string[]): unknown {
  let value = document;
  for (const key of path) {
    if (!isRecord(value) || !Object.hasOwn(value, key)) return undefined;
    value = value[key];
  }
  return value;
}

/** The string at a path of object members, or undefined where there is none. */
export function stringAt(document: unknown, ...path: string[]): string | undefined {
  const value = valueAt(document, ...path);
  return typeof value === 'string' ? value : undefined;
}
