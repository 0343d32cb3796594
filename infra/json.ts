/**
 * A parsed JSON or YAML document (a manifest, a kubeconfig, serverless.yml, an API server's
 * answer) read by property paths. `Json` is loose: its readers check the values they use
 * (`typeof`, `Array.isArray`) where a wrong shape matters. New code takes `unknown` and reads it
 * with the narrowing readers below, which never throw on a document of the wrong shape.
 */
// biome-ignore lint/suspicious/noExplicitAny: the one loose document type, shared by the readers above.
export type Json = Record<string, any>;

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
