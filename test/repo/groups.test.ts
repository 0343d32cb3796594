// The groups of test/groups/ and `npm test` agree: every folder a group runs is left out of npm
// test's own search (so no test runs twice) and nothing else is (so every test runs). A grouped
// file that needs a process of its own gets one.
// klw-test: no-tsx (what it imports at run time is built first)
// klw-test: own-process (it runs a group of its own: klw test --group does not nest groups)
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { after, describe, it } from 'node:test';
import { pathToFileURL } from 'node:url';
import { findTestFiles } from '../../infra/test-runner.ts';
import { PATCHES_BUILTINS } from '../../infra/test-groups.ts';
import { NEEDS_OWN_PROCESS, runGroup, testFilesUnder } from '../group.ts';
import { importBuilt } from '../helpers.ts';

const root = process.cwd();

/** The folders each group file of test/groups/ runs. */
function groupedFolders(): string[] {
  return readdirSync(join(root, 'test', 'groups')).flatMap((name) => {
    const text = readFileSync(join(root, 'test', 'groups', name), 'utf8');
    const call = /runGroup\((\[[^\]]*\]),/.exec(text);
    assert.ok(call, `test/groups/${name} calls runGroup`);
    return JSON.parse(call[1]!.replace(/'/g, '"')) as string[];
  });
}

// A folder of two test files for runGroup: one that shares the process, one that needs its own.
const scratch = mkdtempSync(join(root, '.klw-test-group-'));
const dir = basename(scratch);
const marker = join(scratch, 'own-process-ran');
mkdirSync(join(scratch, 'sub'));
writeFileSync(
  join(scratch, 'shared.test.ts'),
  "import { it } from 'node:test';\nit('shared', () => { (globalThis as any).sharedRan = process.pid; });\n",
);
writeFileSync(
  join(scratch, 'sub', 'own.test.ts'),
  `import { writeFileSync } from 'node:fs';\nimport { it } from 'node:test';\nprocess.on('exit', () => {});\nit('own', () => writeFileSync(${JSON.stringify(marker)}, String(process.pid)));\n`,
);
// One that loads TypeScript at run time, which a group's build cannot give it.
const tsxMarker = join(scratch, 'tsx-ran');
writeFileSync(join(scratch, 'helper.ts'), 'export const ran: number = process.pid;\n');
writeFileSync(
  join(scratch, 'sub', 'dynamic.test.ts'),
  `import { writeFileSync } from 'node:fs';\nimport { it } from 'node:test';\nconst helper = ${JSON.stringify(join(scratch, 'helper.ts'))};\nit('dynamic', async () => writeFileSync(${JSON.stringify(tsxMarker)}, String((await import(helper)).ran)));\n`,
);
after(() => rmSync(scratch, { recursive: true, force: true }));
// Built into JavaScript, then imported: this file runs from klw test's build, without tsx.
await runGroup([dir], (file) =>
  importBuilt(pathToFileURL(join(root, file)), join(scratch, 'built', file.replace(/\.ts$/, '.mjs'))),
);

describe('test groups', () => {
  it('are the folders npm test leaves out, besides the end-to-end and journey tests', () => {
    const scripts = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).scripts as Record<string, string>;
    const excluded =
      /--exclude ((?:[^-\s][^\s]*\s+)+)/
        .exec(scripts.test ?? '')?.[1]
        ?.trim()
        .split(/\s+/) ?? [];
    assert.deepEqual(excluded.filter((d) => d !== 'test/e2e' && d !== 'test/journey').sort(), groupedFolders().sort());
    for (const folder of groupedFolders()) assert.ok(testFilesUnder([folder]).length > 0, folder);
  });

  it('and npm test run every test file exactly once', () => {
    const scripts = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).scripts as Record<string, string>;
    const [, folders = '', excluded = ''] =
      /klw\.mjs test ((?:[^-\s]\S*\s+)+)--exclude ((?:[^-\s]\S*\s+)+)/.exec(scripts.test ?? '') ?? [];
    const searched = findTestFiles(root, { dirs: folders.trim().split(/\s+/), exclude: excluded.trim().split(/\s+/) });
    const grouped = testFilesUnder(groupedFolders());
    const runs = [...searched, ...grouped].filter((f) => !f.startsWith(`${dir}/`));
    assert.equal(new Set(runs).size, runs.length, 'no file found by the search and by a group');
    const all = findTestFiles(root, { dirs: folders.trim().split(/\s+/), exclude: ['test/e2e', 'test/journey'] });
    assert.deepEqual(runs.sort(), all.filter((f) => !f.startsWith(`${dir}/`) && !f.startsWith('.klw-test-')).sort());
  });

  it('run a file in this process, and one that needs its own or tsx in a child', () => {
    assert.deepEqual(testFilesUnder([dir]), [
      `${dir}/shared.test.ts`,
      `${dir}/sub/dynamic.test.ts`,
      `${dir}/sub/own.test.ts`,
    ]);
    assert.equal((globalThis as { sharedRan?: number }).sharedRan, process.pid);
    const pid = Number(readFileSync(marker, 'utf8'));
    assert.ok(pid > 0 && pid !== process.pid, 'the file that listens for process events ran in another process');
    const tsxPid = Number(readFileSync(tsxMarker, 'utf8'));
    assert.ok(
      tsxPid > 0 && tsxPid !== process.pid,
      'the file that imports TypeScript at run time ran in another process',
    );
  });

  it('know what a file must not do in a shared process', () => {
    for (const text of [
      "process.chdir('/')",
      'process.exit(1)',
      "process.on('exit', f)",
      "process.once('SIGINT', f)",
      "import { spawn } from 'node:child_process'",
      "import { Worker } from 'node:worker_threads'",
    ])
      assert.match(text, NEEDS_OWN_PROCESS, text);
    for (const text of ['process.env.X = "1"', 'process.cwd()', "t.mock.method(o, 'f')", 'process.pid'])
      assert.doesNotMatch(text, NEEDS_OWN_PROCESS, text);
  });

  it('say so when they replace a built-in of every array, so that they run last', () => {
    const replaces = /\b(?:defineProperty\(Array\.prototype|(?:Array\.prototype|proto)\[Symbol\.iterator\] =)/;
    const replacing = findTestFiles(root, { dirs: ['test', 'functions', 'packages'] }).filter((f) =>
      replaces.test(readFileSync(join(root, f), 'utf8')),
    );
    for (const file of ['packages/kube-cel/src/libraries/url.test.ts', 'test/infra/fleet/file.hostile.test.ts'])
      assert.ok(replacing.includes(file), `the check finds ${file}`);
    for (const file of replacing) assert.match(readFileSync(join(root, file), 'utf8'), PATCHES_BUILTINS, file);
  });
});
