import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { parseAllDocuments, stringify } from 'yaml';

/** Serialises manifests: multi-document YAML, or a `v1 List` in JSON (kubectl applies both). */
export function renderDocuments(documents: Array<Record<string, unknown>>, format: 'yaml' | 'json'): string {
  if (format === 'json') return JSON.stringify({ apiVersion: 'v1', kind: 'List', items: documents }, null, 2) + '\n';
  return documents.map((d) => stringify(d, { lineWidth: 0 })).join('---\n');
}

/** Reads manifests from YAML or JSON text (a `List` is unpacked). */
export function parseDocuments(text: string): Array<Record<string, any>> {
  const docs = parseAllDocuments(text).map((d) => d.toJS() as Record<string, any>).filter((d) => d && typeof d === 'object');
  return docs.flatMap((d) => (d.kind === 'List' && Array.isArray(d.items) ? d.items : [d]));
}

/** Reads manifests from a file. */
export function readDocuments(file: string): Array<Record<string, any>> {
  return parseDocuments(readFileSync(file, 'utf8'));
}

/** Writes text to a file (creating its folder) or to stdout when no file is given. */
export function writeOutput(text: string, file?: string): void {
  if (!file || file === '-') {
    process.stdout.write(text);
    return;
  }
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, text);
}
