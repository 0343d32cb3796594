// The shape of infra/: a folder with several files is reached only through its index.ts, and
// every module of infra/commands/ adds its command(s) to the program the same way.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, it } from 'node:test';
import { program } from '../../infra/cli.ts';

const root = process.cwd();

/** The folders of infra/ that have one entry point, index.ts. */
const ENTRY_FOLDERS = ['infra/audit', 'infra/deploy', 'infra/local', 'infra/secrets'];

/** The modules of infra/commands/ that hold what the commands share rather than a command. */
const SHARED_MODULES = ['context.ts', 'options.ts', 'shared.ts'];

/** The repository paths a file imports through relative specifiers. */
function relativeImports(file: string, text: string): string[] {
  const specifiers = [...text.matchAll(/(?:from\s+|import\s*\(\s*|^import\s+)['"](\.{1,2}\/[^'"]+)['"]/gm)].map(
    (m) => m[1]!,
  );
  return specifiers.map((s) =>
    relative(root, resolve(root, dirname(file), s))
      .split('\\')
      .join('/'),
  );
}

/** Source files under a folder, relative to the repository, tests left out. */
function sources(dir: string): string[] {
  return readdirSync(join(root, dir), { recursive: true, withFileTypes: true })
    .filter((d) => d.isFile() && /\.(ts|mjs)$/.test(d.name) && !d.name.endsWith('.test.ts'))
    .map((d) => relative(root, join(d.parentPath, d.name)).split('\\').join('/'));
}

/** `file -> import` for each import of `files` that reaches into an entry folder past its index.ts. */
export function pastEntries(files: Array<{ file: string; text: string }>, folders: string[]): string[] {
  const found: string[] = [];
  for (const { file, text } of files) {
    for (const target of relativeImports(file, text)) {
      const folder = folders.find((f) => dirname(target) === f || target.startsWith(`${f}/`));
      if (!folder || file.startsWith(`${folder}/`)) continue;
      if (target !== `${folder}/index.ts`) found.push(`${file} -> ${target}`);
    }
  }
  return found;
}

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

describe('infra structure', () => {
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

  it('reaches the emulator, deploy, audit and secrets only through their index.ts', () => {
    const files = [...sources('infra'), ...sources('bench')].map((file) => ({
      file,
      text: readFileSync(join(root, file), 'utf8'),
    }));
    assert.ok(files.length > 50, 'finds the sources');
    assert.deepEqual(pastEntries(files, ENTRY_FOLDERS), []);
  });

  it('finds an import past an index.ts', () => {
    const files = [
      { file: 'infra/commands/x.ts', text: "import { startApi } from '../local/api.ts';" },
      { file: 'infra/commands/y.ts', text: "import { startApi } from '../local/index.ts';" },
      { file: 'infra/local/z.ts', text: "import { startApi } from './api.ts';" },
    ];
    assert.deepEqual(pastEntries(files, ENTRY_FOLDERS), ['infra/commands/x.ts -> infra/local/api.ts']);
  });

  it('has every command module export register(cli, context), and the program list them all', async () => {
    const modules = readdirSync(resolve(root, 'infra/commands')).filter(
      (f) => f.endsWith('.ts') && !SHARED_MODULES.includes(f),
    );
    assert.ok(modules.length >= 14, modules.join(', '));
    for (const file of modules) {
      const mod = (await import(pathToFileURL(resolve(root, 'infra/commands', file)).href)) as Record<string, unknown>;
      assert.equal(typeof mod.register, 'function', `${file} exports no register function`);
      assert.equal((mod.register as (...args: unknown[]) => void).length, 2, `${file}: register(cli, context)`);
    }
    const cli = readFileSync(join(root, 'infra/cli.ts'), 'utf8');
    for (const file of modules)
      assert.match(cli, new RegExp(`from './commands/${basename(file)}'`), `infra/cli.ts does not assemble ${file}`);
    const names = program()
      .commands.map((c) => c.name())
      .sort();
    assert.deepEqual(names, [
      'audit',
      'auth-config',
      'build',
      'deploy',
      'init',
      'lint',
      'local',
      'logs',
      'manifests',
      'new',
      'secret',
      'smoke',
      'start',
      'test',
    ]);
  });
});
