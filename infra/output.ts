import { readFileSync } from 'node:fs';
import { writeFileSafely } from './files.ts';
import { Document, parseAllDocuments, visit } from 'yaml';
import { KlwError } from './errors.ts';
import { isRecord } from './json.ts';

/** A Kubernetes object as parsed from a manifest: each member is checked where it is read. */
export type KubeDocument = Record<string, unknown>;

// Plain scalars Go may read as numbers (strconv with base prefixes and underscores: 0o17, 1_000, .5).
const GO_NUMBER_LIKE = /^[-+]?[.\d]/;

/**
 * YAML that Kubernetes tools read back as written. kubectl and the API server parse YAML 1.1
 * (go-yaml v2), where `on`, `off`, `yes`, `no`, `y` and `n` are booleans and Go's number syntax
 * makes numbers of `0o17` or `1_000`: such strings are quoted (a label value `on` would otherwise
 * reach the API server as `true` and be refused).
 */
export function toKubeYaml(value: unknown): string {
  const doc = new Document(value, { version: '1.1' });
  visit(doc, {
    Scalar(_key, node) {
      if (typeof node.value === 'string' && GO_NUMBER_LIKE.test(node.value)) node.type = 'QUOTE_DOUBLE';
    },
  });
  return doc.toString({ lineWidth: 0 });
}

/** Serialises manifests: multi-document YAML, or a `v1 List` in JSON (kubectl applies both). */
export function renderDocuments(documents: Array<Record<string, unknown>>, format: 'yaml' | 'json'): string {
  if (format === 'json') return `${JSON.stringify({ apiVersion: 'v1', kind: 'List', items: documents }, null, 2)}\n`;
  return documents.map((d) => toKubeYaml(d)).join('---\n');
}

/** Kinds kubectl unpacks: `List` and the typed lists (`PodList`, ...) that hold `items`. */
const isList = (doc: KubeDocument) =>
  typeof doc.kind === 'string' && doc.kind.endsWith('List') && Array.isArray(doc.items);

/**
 * Reads Kubernetes objects from YAML (one or more documents) or JSON text; a `List` is unpacked
 * and empty documents (a trailing `---`) are skipped. Throws, naming `source` and the document,
 * when the text is not YAML, holds no object, or holds something that is not a Kubernetes
 * object (no `apiVersion` and `kind`): a file that cannot be read must never pass as clean.
 */
export function parseDocuments(text: string, source = '(input)'): KubeDocument[] {
  const objects: KubeDocument[] = [];
  const docs = parseAllDocuments(text, { prettyErrors: true });
  // parseAllDocuments returns an empty collection for text with no documents at all.
  for (const [i, doc] of (Array.isArray(docs) ? docs : []).entries()) {
    const where = docs.length > 1 ? `${source}: document ${i + 1}` : source;
    const error = doc.errors[0];
    if (error) throw new KlwError(`${where}: not valid YAML or JSON: ${error.message.split('\n')[0]}`);
    const value = doc.toJS() as unknown;
    if (value === null || value === undefined) continue;
    if (
      isRecord(value) &&
      typeof value.kind === 'string' &&
      value.kind.endsWith('List') &&
      'items' in value &&
      !Array.isArray(value.items)
    ) {
      throw new KlwError(`${where}: a ${value.kind} whose items are not a list, got ${describe(value.items)}`);
    }
    const items = isRecord(value) && isList(value) ? (value.items as unknown[]) : [value];
    items.forEach((item, j) => {
      const at = items.length === 1 && item === value ? where : `${where}: items[${j}]`;
      if (!isRecord(item))
        throw new KlwError(
          `${at}: not a Kubernetes object (a YAML or JSON mapping with apiVersion and kind), got ${describe(item)}`,
        );
      const missing = ['apiVersion', 'kind'].filter((k) => typeof item[k] !== 'string' || !item[k]);
      if (missing.length) throw new KlwError(`${at}: not a Kubernetes object: no ${missing.join(' or ')}`);
      objects.push(item);
    });
  }
  if (!objects.length) throw new KlwError(`${source}: holds no Kubernetes objects`);
  return objects;
}

function describe(value: unknown): string {
  if (Array.isArray(value)) return 'a list';
  const text = JSON.stringify(value) ?? String(value);
  return `${typeof value} ${text.length > 40 ? `${text.slice(0, 40)}...` : text}`;
}

/** Reads manifests from a file; throws naming the file when it cannot be read or parsed. */
export function readDocuments(file: string): KubeDocument[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new KlwError(
      `${file}: ${code === 'ENOENT' ? 'not found' : code === 'EISDIR' ? 'is a directory' : `cannot be read (${code ?? (err as Error).message})`}`,
    );
  }
  return parseDocuments(text, file);
}

/**
 * Writes text to a file (creating its folder; atomically, a symbolic link there refused) or to
 * stdout when no file is given; `secret` makes the file 0600.
 */
export function writeOutput(text: string, file?: string, options: { secret?: boolean } = {}): void {
  if (!file || file === '-') {
    process.stdout.write(text);
    return;
  }
  writeFileSafely(file, text, { parents: true, secret: options.secret === true });
}
