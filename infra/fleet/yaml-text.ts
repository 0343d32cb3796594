/**
 * The YAML side of reading the fleet file, in time linear in its size: the document parsed
 * without the YAML library's duplicate-key check (which compares each key with every earlier
 * one), repeated keys found instead with one index per mapping, that index reused to find the
 * line of any path, and aliases expanded within a bound that names the file's line.
 */
import { isAlias, isMap, isPair, isScalar, isSeq, LineCounter, parseDocument, type Document, type Node } from 'yaml';

/** Most alias expansions in the fleet file: a hundred clusters sharing settings need far fewer. */
export const FLEET_MAX_ALIAS_COUNT = 100;

/** A path in the fleet file: keys of mappings and indexes of lists. */
export type FleetPath = Array<string | number>;

/** One problem found in the YAML itself, before the clusters are read. */
export interface YamlProblem {
  path: FleetPath;
  line?: number;
  message: string;
  fix: string;
}

/** The fleet file's YAML is wrong: its problems, each with its line and fix. */
export class FleetYamlError extends Error {
  constructor(readonly problems: YamlProblem[]) {
    super(problems.map((p) => p.message).join('\n'));
  }
}

/** A parsed fleet file: its value, and the line of any path in it. */
export interface FleetYaml {
  value: unknown;
  lineOf: (path: FleetPath) => number | undefined;
}

/** A mapping's entries by key, as the key reads once the mapping is a JavaScript object. */
type KeyIndex = Map<string, { key: Node | null; value: Node | null }>;

/** The text of a mapping key as toJS makes it a property name; undefined for a key that is a collection. */
function keyText(key: unknown): string | undefined {
  if (key === null || key === undefined) return '';
  if (isScalar(key)) return String(key.value ?? '');
  return undefined;
}

/** The line a node starts on. */
function lineAt(lines: LineCounter, node: Node | null | undefined): number | undefined {
  return node?.range ? lines.linePos(node.range[0]).line : undefined;
}

/**
 * Parses the fleet file's text; throws the YAML's problems (a syntax error, repeated keys,
 * too many aliases), each with its line and fix, as an array of YamlProblem.
 */
export function parseFleetYaml(text: string): FleetYaml {
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, uniqueKeys: false, prettyErrors: false });
  if (doc.errors.length) {
    const err = doc.errors[0]!;
    throw new FleetYamlError([
      {
        path: [],
        line: lines.linePos(err.pos[0]).line,
        message: `not valid YAML: ${err.message.split('\n')[0]}`,
        fix: 'correct the YAML syntax',
      },
    ]);
  }
  const indexes = new Map<Node, KeyIndex>();
  const repeated = indexAll(doc, lines, indexes);
  if (repeated.length) throw new FleetYamlError(repeated);
  const value = toJs(doc, lines);
  const lineOf = (path: FleetPath): number | undefined => {
    let node = doc.contents as Node | null;
    let keyNode: Node | null = null;
    for (const step of path) {
      keyNode = null;
      if (typeof step === 'number' && isSeq(node)) node = (node.items[step] as Node | undefined) ?? null;
      else if (typeof step === 'string' && isMap(node)) {
        const entry = indexes.get(node)?.get(step);
        node = entry?.value ?? null;
        keyNode = entry?.key ?? null;
      } else return undefined;
      if (!node && !keyNode) return undefined;
    }
    return lineAt(lines, node) ?? lineAt(lines, keyNode);
  };
  return { value, lineOf };
}

/** A path kept as a link to its parent's, so a deep document costs no copies of long paths. */
interface PathLink {
  step: string | number;
  up: PathLink | undefined;
}

function pathOf(link: PathLink | undefined): FleetPath {
  const path: FleetPath = [];
  for (let at = link; at; at = at.up) path.push(at.step);
  return path.reverse();
}

/**
 * Indexes every mapping of the document by key, walking it once without recursion (a deeply
 * nested file cannot exhaust the stack); the keys that repeat, each as a problem.
 */
function indexAll(doc: Document, lines: LineCounter, indexes: Map<Node, KeyIndex>): YamlProblem[] {
  const problems: YamlProblem[] = [];
  const stack: Array<{ node: unknown; at: PathLink | undefined }> = [{ node: doc.contents, at: undefined }];
  while (stack.length) {
    const { node, at } = stack.pop()!;
    if (isSeq(node))
      for (let i = 0; i < node.items.length; i++) stack.push({ node: node.items[i], at: { step: i, up: at } });
    if (!isMap(node)) continue;
    const index: KeyIndex = new Map();
    indexes.set(node, index);
    for (const pair of node.items) {
      if (!isPair(pair)) continue;
      const key = pair.key as Node | null;
      const value = pair.value as Node | null;
      const text = keyText(key);
      if (text === undefined) continue;
      const first = index.get(text);
      if (first) {
        const firstLine = lineAt(lines, first.key);
        problems.push({
          path: pathOf({ step: text, up: at }),
          line: lineAt(lines, key) ?? lineAt(lines, value),
          message: `not valid YAML: the key ${JSON.stringify(text)} is repeated${firstLine ? ` (first on line ${firstLine})` : ''}`,
          fix: 'keep one of them',
        });
        continue;
      }
      index.set(text, { key, value });
      stack.push({ node: value, at: { step: text, up: at } });
    }
  }
  return problems.sort((a, b) => (a.line ?? 0) - (b.line ?? 0));
}

/** The document as JavaScript, its aliases expanded at most FLEET_MAX_ALIAS_COUNT times. */
function toJs(doc: Document, lines: LineCounter): unknown {
  const contents = doc.contents;
  if (!contents || !(isMap(contents) || isSeq(contents) || isScalar(contents))) return contents ?? undefined;
  try {
    return doc.toJS({ maxAliasCount: FLEET_MAX_ALIAS_COUNT });
  } catch (err) {
    if (!/alias/i.test((err as Error).message)) throw err;
    throw new FleetYamlError([
      {
        path: [],
        line: firstAliasLine(doc, lines),
        message: `its aliases (*name) expand past ${FLEET_MAX_ALIAS_COUNT} copies (aliases of aliases multiply)`,
        fix: 'write the settings out, or use fewer aliases of aliases',
      },
    ]);
  }
}

/** The line of the document's first alias, found without recursion. */
function firstAliasLine(doc: Document, lines: LineCounter): number | undefined {
  let first: number | undefined;
  const stack: unknown[] = [doc.contents];
  while (stack.length) {
    const node = stack.pop();
    if (isAlias(node)) {
      const line = lineAt(lines, node);
      if (line !== undefined && (first === undefined || line < first)) first = line;
    } else if (isSeq(node)) for (const item of node.items) stack.push(item);
    else if (isMap(node)) for (const pair of node.items) stack.push(pair.key, pair.value);
  }
  return first;
}
