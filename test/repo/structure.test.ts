// The shape of infra/: a folder with several files is reached only through its index.ts, and
// every module of infra/commands/ adds its command(s) to the program the same way.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { describe, it } from 'node:test';
import { program } from '../../infra/cli.ts';
import { relativeImports, sources } from './imports.ts';

const root = process.cwd();

/** The folders of infra/ that have one entry point, index.ts. */
const ENTRY_FOLDERS = ['infra/audit', 'infra/deploy', 'infra/local', 'infra/secrets'];

/**
 * The entry points of those folders besides index.ts: serverless.yml is read and checked (klw
 * lint, manifests, secret, logs) without loading what deploys (the builder, the AWS clients).
 */
const OTHER_ENTRIES = ['infra/deploy/serverless.ts'];

/** The modules of infra/commands/ that hold what the commands share rather than a command. */
const SHARED_MODULES = ['context.ts', 'options.ts', 'shared.ts'];

/** A command's action, `<command>-action.ts`: imported by its command's module when it runs. */
const ACTION_MODULE = /^([a-z-]+)-action\.ts$/;

/** `file -> import` for each import of `files` that reaches into an entry folder past its index.ts. */
export function pastEntries(
  files: Array<{ file: string; text: string }>,
  folders: string[],
  others: string[] = [],
): string[] {
  const found: string[] = [];
  for (const { file, text } of files) {
    for (const target of relativeImports(file, text)) {
      const folder = folders.find((f) => dirname(target) === f || target.startsWith(`${f}/`));
      if (!folder || file.startsWith(`${folder}/`)) continue;
      if (target !== `${folder}/index.ts` && !others.includes(target)) found.push(`${file} -> ${target}`);
    }
  }
  return found;
}

describe('infra structure', () => {
  it('checks with Biome failing on warnings too, so none are left', () => {
    const scripts = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).scripts as Record<string, string>;
    assert.match(scripts.check ?? '', /^biome ci --error-on-warnings \.$/);
  });

  it('reaches the emulator, deploy, audit and secrets only through their index.ts', () => {
    const files = [...sources('infra'), ...sources('bench')].map((file) => ({
      file,
      text: readFileSync(join(root, file), 'utf8'),
    }));
    assert.ok(files.length > 50, 'finds the sources');
    assert.deepEqual(pastEntries(files, ENTRY_FOLDERS, OTHER_ENTRIES), []);
  });

  it('finds an import past an index.ts', () => {
    const files = [
      { file: 'infra/commands/x.ts', text: "import { startApi } from '../local/api.ts';" },
      { file: 'infra/commands/y.ts', text: "import { startApi } from '../local/index.ts';" },
      { file: 'infra/local/z.ts', text: "import { startApi } from '../infra/api.ts';" },
    ];
    assert.deepEqual(pastEntries(files, ENTRY_FOLDERS), ['infra/commands/x.ts -> infra/local/api.ts']);
    const other = [{ file: 'infra/commands/w.ts', text: "import { readServerless } from '../deploy/serverless.ts';" }];
    assert.deepEqual(pastEntries(other, ENTRY_FOLDERS), ['infra/commands/w.ts -> infra/deploy/serverless.ts']);
    assert.deepEqual(pastEntries(other, ENTRY_FOLDERS, OTHER_ENTRIES), []);
  });

  it("imports a command's action module from that command's module only, when it runs", () => {
    const actions = readdirSync(resolve(root, 'infra/commands')).filter((f) => ACTION_MODULE.test(f));
    assert.ok(actions.length >= 3, actions.join(', '));
    const files = sources('infra').map((file) => ({ file, text: readFileSync(join(root, file), 'utf8') }));
    for (const action of actions) {
      const command = `infra/commands/${ACTION_MODULE.exec(action)![1]}.ts`;
      const importers = files.filter(
        ({ text }) => text.includes(`'./${action}'`) || text.includes(`/commands/${action}'`),
      );
      assert.deepEqual(
        importers.map((f) => f.file),
        [command],
        `only ${command} imports ${action}`,
      );
      const text = importers[0]!.text;
      assert.ok(text.includes(`await import('./${action}')`), `${command} imports ${action} when the command runs`);
      assert.doesNotMatch(
        text,
        new RegExp(`^import [^;]*'\\./${action.replace('.', '\\.')}'`, 'm'),
        `${command} imports ${action} at its top`,
      );
    }
  });

  it('has every command module export register(cli, context), and the program list them all', async () => {
    const modules = readdirSync(resolve(root, 'infra/commands')).filter(
      (f) => f.endsWith('.ts') && !SHARED_MODULES.includes(f) && !ACTION_MODULE.test(f),
    );
    assert.ok(modules.length >= 14, modules.join(', '));
    for (const file of modules) {
      // A pattern the test build bundles: each module of infra/commands, as the sources have it.
      const mod = (await import(`../../infra/commands/${file}`)) as Record<string, unknown>;
      assert.equal(typeof mod.register, 'function', `${file} exports no register function`);
      assert.equal((mod.register as (...args: unknown[]) => void).length, 2, `${file}: register(cli, context)`);
    }
    const cli = readFileSync(join(root, 'infra/cli.ts'), 'utf8');
    for (const file of modules)
      assert.match(
        cli,
        new RegExp(`import\\('./commands/${basename(file)}'\\)`),
        `infra/cli.ts does not assemble ${file}`,
      );
    const names = (await program()).commands.map((c) => c.name()).sort();
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
