// No import cycles in lib/, infra/ or packages/: shared types and constants live in leaf modules,
// and a folder's entry point re-exports one level only. A cycle is reported as the files in it.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { relativeImports, sources } from './imports.ts';

const root = process.cwd();

/** The strongly connected components of more than one file (Tarjan), each sorted. */
export function importCycles(graph: Map<string, string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  const visit = (v: string) => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      component.push(w);
    } while (w !== v);
    if (component.length > 1 || graph.get(v)?.includes(v)) cycles.push(component.sort());
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return cycles;
}

/** Every relative import (type-only ones too) of the sources under the folders. */
function importGraph(dirs: string[]): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const dir of dirs.filter((d) => existsSync(`${root}/${d}`)))
    for (const file of sources(dir)) graph.set(file, relativeImports(file, readFileSync(file, 'utf8')));
  return graph;
}

describe('import cycles', () => {
  it('finds a cycle through type-only imports and ignores a chain', () => {
    const graph = new Map([
      ['a.ts', ['b.ts']],
      ['b.ts', ['c.ts']],
      ['c.ts', ['a.ts']],
      ['d.ts', ['a.ts']],
    ]);
    assert.deepEqual(importCycles(graph), [['a.ts', 'b.ts', 'c.ts']]);
    assert.deepEqual(importCycles(new Map([['x.ts', ['x.ts']]])), [['x.ts']]);
    const text = "import type { T } from './b.ts';\nexport { u } from '../c.ts';\n";
    assert.deepEqual(relativeImports('lib/a.ts', text), ['lib/b.ts', 'c.ts']);
  });

  it('lib/, infra/ and packages/ have none', () => {
    const found = importCycles(importGraph(['lib', 'infra', 'packages']))
      .map((c) => c.join(' <-> '))
      .sort();
    assert.deepEqual(found, [], 'import cycles: move the shared types or constants to a leaf module');
  });
});
