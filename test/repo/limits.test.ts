// Size limits for everything outside the tests: no source file over MAX_FILE_LINES lines, no function
// over MAX_FUNCTION_LINES, unless a `// size: <reason>` comment says why (at the top of the file, or
// on the lines just above the function). Measured with the TypeScript compiler's own parser.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';
import ts from 'typescript';

const root = process.cwd();

/** Most lines a source file may have: a file a reader takes in at one sitting. */
export const MAX_FILE_LINES = 400;
/** Most lines a function may have, its signature and closing brace included: about two screens. */
export const MAX_FUNCTION_LINES = 80;
/** The folders whose sources the limits hold for. */
const DIRS = ['lib', 'infra', 'functions', 'bench', 'packages/kube-cel/src'];

/** A comment that lets the file or function below it pass a limit; the reason after the colon is required. */
const SIZE_MARKER = /\/\/\s*size:\s*\S/;

/**
 * Files over a limit that their owners are still splitting. Each entry leaves this list when its
 * file is within limits, and the test fails while a listed file already is: the list only shrinks.
 */
const PENDING = new Set<string>([]);

/** One measure over its limit. */
export interface Excess {
  /** The file, relative to the repository. */
  file: string;
  /** The function's name (its variable's, property's or method's), or undefined for the file itself. */
  name?: string;
  /** The line it starts on (1-based). */
  line: number;
  /** Its length in lines. */
  lines: number;
  /** The limit it passes. */
  limit: number;
}

/** Source files under a folder, relative to the repository, tests left out. */
export function sourceFiles(dir: string): string[] {
  return readdirSync(join(root, dir), { recursive: true, withFileTypes: true })
    .filter((d) => d.isFile() && /\.(ts|mts|cts|js|mjs|cjs)$/.test(d.name) && !/\.test\.[cm]?[jt]s$/.test(d.name))
    .map((d) => relative(root, join(d.parentPath, d.name)).split('\\').join('/'))
    .filter((f) => !f.split('/').includes('node_modules'))
    .sort();
}

/** The name a reader would look the function up by. */
function functionName(node: ts.FunctionLikeDeclaration): string {
  if (node.name) return node.name.getText();
  const parent = node.parent;
  if (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent) || ts.isPropertyDeclaration(parent))
    return parent.name.getText();
  if (ts.isExportAssignment(parent)) return 'default export';
  if (ts.isCallExpression(parent)) {
    const callee = parent.expression;
    const called = ts.isPropertyAccessExpression(callee) ? callee.name.getText() : callee.getText();
    return `callback of ${called}()`;
  }
  return 'anonymous function';
}

/** True when one of the comment lines right above `line` (0-based), or `line` itself, holds the size marker. */
function markedAt(lines: string[], line: number): boolean {
  if (SIZE_MARKER.test(lines[line] ?? '')) return true;
  for (let i = line - 1; i >= 0; i--) {
    const text = lines[i]!.trim();
    if (!(text.startsWith('//') || text.startsWith('*') || text.startsWith('/*'))) return false;
    if (SIZE_MARKER.test(text)) return true;
  }
  return false;
}

/** True when the file's opening comment holds the size marker. */
function fileMarked(lines: string[]): boolean {
  for (const line of lines) {
    const text = line.trim();
    if (SIZE_MARKER.test(text)) return true;
    if (text && !(text.startsWith('//') || text.startsWith('*') || text.startsWith('/*') || text.startsWith('#!')))
      return false;
  }
  return false;
}

/** The line a function's leading comment belongs to: that of the statement or property it is the value of. */
function anchorLine(source: ts.SourceFile, node: ts.Node): number {
  let anchor: ts.Node = node;
  const parent = node.parent;
  if (ts.isVariableDeclaration(parent) && ts.isVariableDeclarationList(parent.parent))
    anchor = parent.parent.parent ?? parent;
  else if (ts.isPropertyAssignment(parent) || ts.isExportAssignment(parent)) anchor = parent;
  return source.getLineAndCharacterOfPosition(anchor.getStart(source)).line;
}

/** What in `text` (the file `file`) passes the limits without a size comment saying why. */
export function measure(
  file: string,
  text: string,
  limits = { file: MAX_FILE_LINES, function: MAX_FUNCTION_LINES },
): Excess[] {
  const kind = /\.[cm]?js$/.test(file) ? ts.ScriptKind.JS : ts.ScriptKind.TS;
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, kind);
  const lines = text.split('\n');
  const excess: Excess[] = [];
  const fileLines = text.endsWith('\n') ? lines.length - 1 : lines.length;
  if (fileLines > limits.file && !fileMarked(lines))
    excess.push({ file, line: 1, lines: fileLines, limit: limits.file });
  const visit = (node: ts.Node): void => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body) {
      const fn = node as ts.FunctionLikeDeclaration;
      const start = source.getLineAndCharacterOfPosition(fn.getStart(source)).line;
      const end = source.getLineAndCharacterOfPosition(fn.getEnd()).line;
      const length = end - start + 1;
      if (length > limits.function && !markedAt(lines, start) && !markedAt(lines, anchorLine(source, fn)))
        excess.push({ file, name: functionName(fn), line: start + 1, lines: length, limit: limits.function });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return excess;
}

/** One line per excess: file:line, the function, its length and the limit. */
export function describeExcess(e: Excess): string {
  return e.name === undefined
    ? `${e.file}: ${e.lines} lines (limit ${e.limit})`
    : `${e.file}:${e.line} ${e.name}: ${e.lines} lines (limit ${e.limit})`;
}

/**
 * Where the measures of earlier runs are kept, by each file's content: measuring is a pure function
 * of the file's path and text, this test's code and the parser's version, so a file unchanged since
 * is not parsed again. Any other change (this file, TypeScript) starts the record afresh.
 */
const MEASURES = join(root, 'node_modules', '.cache', 'klw-limits', 'measures.json');

/** The measures of `files`, each taken from the record when its text is unchanged, else measured. */
function measureAll(files: string[]): Map<string, Excess[]> {
  const sha = (text: string) => createHash('sha256').update(text).digest('hex');
  const recipe = sha(
    readFileSync(fileURLToPath(import.meta.url), 'utf8') +
      ts.version +
      JSON.stringify([MAX_FILE_LINES, MAX_FUNCTION_LINES]),
  );
  let kept: { recipe: string; measures: Record<string, [string, Excess[]]> } | undefined;
  try {
    kept = JSON.parse(readFileSync(MEASURES, 'utf8'));
  } catch {
    kept = undefined;
  }
  const before = kept?.recipe === recipe ? kept.measures : {};
  const measures: Record<string, [string, Excess[]]> = {};
  for (const file of files) {
    const text = readFileSync(join(root, file), 'utf8');
    const hash = sha(text);
    const earlier = before[file];
    measures[file] = earlier?.[0] === hash ? earlier : [hash, measure(file, text)];
  }
  mkdirSync(join(MEASURES, '..'), { recursive: true });
  const draft = `${MEASURES}.${process.pid}`;
  writeFileSync(draft, JSON.stringify({ recipe, measures }));
  renameSync(draft, MEASURES);
  return new Map(files.map((f) => [f, measures[f]![1]]));
}

describe('size limits', () => {
  const files = DIRS.flatMap(sourceFiles);
  const results = measureAll(files);

  it('finds the sources it measures', () => {
    assert.ok(files.includes('infra/cli.ts') && files.includes('lib/index.ts'), files.join(', '));
    assert.ok(!files.some((f) => f.endsWith('.test.ts')));
  });

  it(`no file over ${MAX_FILE_LINES} lines and no function over ${MAX_FUNCTION_LINES}, unless a size comment says why`, () => {
    const over = [...results].filter(([f]) => !PENDING.has(f)).flatMap(([, e]) => e);
    assert.deepEqual(over.map(describeExcess), []);
  });

  it('lists as pending only files still over a limit', () => {
    const missing = [...PENDING].filter((f) => !existsSync(join(root, f)));
    assert.deepEqual(missing, [], 'pending files that no longer exist: take them off the list');
    const within = [...PENDING].filter((f) => results.get(f)?.length === 0);
    assert.deepEqual(within, [], 'these files are within the limits now: take them off PENDING');
  });
});

describe('measure', () => {
  const limits = { file: 5, function: 3 };

  it('names a long function, its line and its length', () => {
    const text = 'const a = 1;\nexport function long(): void {\n  a;\n  a;\n}\n';
    assert.deepEqual(measure('x.ts', text, limits).map(describeExcess), ['x.ts:2 long: 4 lines (limit 3)']);
  });

  it('names arrow functions by their variable, methods by their name, callbacks by their call', () => {
    const text = [
      'const arrow = () => {',
      '  1;',
      '  2;',
      '};',
      'class K {',
      '  method() {',
      '    1;',
      '    2;',
      '  }',
      '}',
      'cli.action(async () => {',
      '  1;',
      '  2;',
      '});',
    ].join('\n');
    const names = measure('x.ts', text, { file: 100, function: 3 }).map((e) => e.name);
    assert.deepEqual(names, ['arrow', 'method', 'callback of action()']);
  });

  it('counts a file over its limit, and lets a size comment pass it', () => {
    const text = 'a;\nb;\nc;\nd;\ne;\nf;\n';
    assert.deepEqual(measure('x.ts', text, limits).map(describeExcess), ['x.ts: 6 lines (limit 5)']);
    assert.deepEqual(measure('x.ts', `// size: a table read as one\n${text}`, limits), []);
  });

  it('lets a size comment above a function pass it, and only one with a reason', () => {
    const body = 'function long() {\n  1;\n  2;\n}\n';
    assert.deepEqual(measure('x.ts', `// size: one switch over every kind\n${body}`, limits), []);
    assert.deepEqual(measure('x.ts', `/** Doc. */\n// size: one switch\n${body}`, limits), []);
    assert.equal(measure('x.ts', `// size:\n${body}`, limits).length, 1);
    assert.equal(measure('x.ts', `// size: far above\nconst x = 1;\n${body}`, limits).length, 1);
  });

  it('finds the comment above the statement an arrow function is the value of', () => {
    const text = '// size: a reason\nexport const fn = async (\n  a: number,\n) => {\n  a;\n};\n';
    assert.deepEqual(measure('x.ts', text, limits), []);
  });

  it('measures JavaScript modules too', () => {
    const text = 'export function long() {\n  1;\n  2;\n}\n';
    assert.equal(measure('x.mjs', text, limits)[0]?.name, 'long');
  });
});
