// The one interface between the emulator's halves: front/ and back/ meet only in infra/local/invoker.ts.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { relativeImports, sources } from '../../repo/imports.ts';

const root = process.cwd();

/** `file -> import` for each import of one emulator half that reaches into the other. */
export function acrossHalves(files: Array<{ file: string; text: string }>): string[] {
  const half = (path: string) => /^infra\/local\/(front|back)\//.exec(path)?.[1];
  return files.flatMap(({ file, text }) => {
    const mine = half(file);
    if (!mine) return [];
    return relativeImports(file, text)
      .filter((target) => half(target) !== undefined && half(target) !== mine)
      .map((target) => `${file} -> ${target}`);
  });
}

describe("the emulator's two halves", () => {
  it("joins the emulator's front and back halves only through infra/local/invoker.ts", () => {
    const files = sources('infra/local').map((file) => ({ file, text: readFileSync(join(root, file), 'utf8') }));
    const front = files.filter((f) => f.file.startsWith('infra/local/front/'));
    const back = files.filter((f) => f.file.startsWith('infra/local/back/'));
    assert.ok(front.length >= 3 && back.length >= 5, 'finds both halves');
    assert.deepEqual(acrossHalves(files), []);
    // The interface itself is types only: it runs nothing of either half.
    const invoker = readFileSync(join(root, 'infra/local/invoker.ts'), 'utf8');
    assert.deepEqual(
      relativeImports('infra/local/invoker.ts', invoker).filter((t) => t.startsWith('infra/local/')),
      [],
    );
    assert.doesNotMatch(invoker.replace(/^\s*(\/\/|\/?\*).*$/gm, ''), /^(export )?(function|class|const|let) /m);
    const sample = [
      {
        file: 'infra/local/front/a.ts',
        text: "import { FunctionPool } from '../back/pool.ts';\nimport type { Invoker } from '../invoker.ts';",
      },
      { file: 'infra/local/back/b.ts', text: "import { readBody } from '../front/http.ts';" },
      {
        file: 'infra/local/api.ts',
        text: "import { readBody } from './front/http.ts';\nimport { FunctionPool } from './back/pool.ts';",
      },
    ];
    assert.deepEqual(acrossHalves(sample), [
      'infra/local/front/a.ts -> infra/local/back/pool.ts',
      'infra/local/back/b.ts -> infra/local/front/http.ts',
    ]);
  });
});
