// klw lists its commands and their options without loading what the commands run: a command's
// packages (the AWS SDK, esbuild, yaml, the library's zod and CEL) load when its action runs, so
// `klw --help` and every command's start stay cheap. The check runs the real klw (its built
// toolkit) in a child whose module resolutions a loader hook records.
// klw-test: no-tsx (its import() calls are text of the program a child runs)
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { cachedBuild } from '../../infra/build-cache.mjs';

/** The packages only the commands' actions need: none of them may load to list the commands. */
const HEAVY = [
  '@aws-sdk/client-ssm',
  '@aws-sdk/client-lambda',
  '@aws-sdk/client-cloudwatch-logs',
  '@aws-sdk/client-cloudformation',
  'esbuild',
  'yaml',
  'zod',
  'kubernetes-models',
  '@marcbachmann/cel-js',
  'fast-json-patch',
  'yazl',
];

/** Registers a resolve hook appending every module URL the child resolves to the file KLW_LOADED_FILE names. */
const HOOK = `data:text/javascript,${encodeURIComponent(`
import { register } from 'node:module';
register('data:text/javascript,' + encodeURIComponent(\`
import { appendFileSync } from 'node:fs';
export async function resolve(specifier, context, next) {
  const found = await next(specifier, context);
  appendFileSync(process.env.KLW_LOADED_FILE, found.url + '\\\\n');
  return found;
}\`));
`)}`;

/** The package a module URL is in (`@scope/name` or `name`), or undefined outside node_modules. */
export function packageOf(url: string): string | undefined {
  const at = url.lastIndexOf('/node_modules/');
  if (at < 0) return undefined;
  const parts = url.slice(at + '/node_modules/'.length).split('/');
  if (parts[0] === '.cache') return undefined; // the toolkit's own build
  return parts[0]!.startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0];
}

let dir: string;

/** The packages `klw <args>` loads, sorted, with its exit code. */
function packagesLoaded(...args: string[]): { code: number | null; packages: string[] } {
  const file = join(dir, `${args.join('-') || 'none'}.txt`);
  const run = spawnSync(process.execPath, ['--import', HOOK, 'infra/bin/klw.mjs', ...args], {
    env: { ...process.env, KLW_LOADED_FILE: file, NODE_OPTIONS: '' },
    encoding: 'utf8',
  });
  const urls = readFileSync(file, 'utf8').split('\n').filter(Boolean);
  const packages = [...new Set(urls.map(packageOf).filter((p) => p !== undefined))].sort();
  return { code: run.status, packages };
}

describe('klw start', () => {
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'klw-startup-'));
    // The build is current, so the child runs it rather than building (which loads esbuild).
    await cachedBuild();
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('names the package of a module URL', () => {
    assert.equal(packageOf('file:///r/node_modules/@aws-sdk/client-ssm/dist-es/index.js'), '@aws-sdk/client-ssm');
    assert.equal(packageOf('file:///r/node_modules/a/node_modules/yaml/dist/index.js'), 'yaml');
    assert.equal(packageOf('file:///r/node_modules/.cache/klw/0123456789abcdef/cli.mjs'), undefined);
    assert.equal(packageOf('node:fs'), undefined);
  });

  it('lists every command and its options without loading what the commands run', () => {
    const { code, packages } = packagesLoaded('--help');
    assert.equal(code, 0);
    // The hook sees the packages loaded: the program's own is there.
    assert.ok(packages.includes('commander'), packages.join(', '));
    assert.deepEqual(
      packages.filter((p) => HEAVY.includes(p)),
      [],
      'a command module imports its action at the top: import it inside the action instead',
    );
  });
});

/**
 * What a command loads only when its action goes that way: the compiler builds, the zip writer
 * and the AWS SDK deploy, the API models describe a cluster's schemas. None of them may load to
 * lint, write manifests or rotate the local secret.
 */
const NOT_FOR_PROJECT_COMMANDS = [
  'esbuild',
  'yazl',
  'kubernetes-models',
  '@aws-sdk/client-ssm',
  '@aws-sdk/client-lambda',
  '@aws-sdk/client-cloudwatch-logs',
  '@aws-sdk/client-cloudformation',
];

/**
 * Runs klw's built program in one child, as klw.mjs runs it, once for each of `commands`: the
 * packages each run loaded that the runs before it had not, and each run's exit code.
 */
function packagesLoadedBy(commands: string[][]): Array<{ code: number; packages: string[] }> {
  const file = join(dir, 'commands.txt');
  const driver = join(dir, 'commands.mjs');
  writeFileSync(
    driver,
    [
      "import { appendFileSync } from 'node:fs';",
      "import { join } from 'node:path';",
      "import { pathToFileURL } from 'node:url';",
      `const { cachedBuild } = await import(${JSON.stringify(new URL('../../infra/build-cache.mjs', import.meta.url).href)});`,
      'const { dir } = await cachedBuild();',
      'process.setSourceMapsEnabled(true);',
      "const { main } = await import(pathToFileURL(join(dir, 'cli.mjs')).href);",
      `for (const args of ${JSON.stringify(commands)}) {`,
      "  const code = await main(['node', 'klw', ...args]);",
      // Each run's end, and its exit code, among the modules it loaded.
      '  appendFileSync(process.env.KLW_LOADED_FILE, `exit ${code}\\n`);',
      '}',
    ].join('\n'),
  );
  const run = spawnSync(process.execPath, ['--import', HOOK, driver], {
    env: { ...process.env, KLW_LOADED_FILE: file, NODE_OPTIONS: '' },
    encoding: 'utf8',
  });
  assert.equal(run.status, 0, run.stderr);
  const runs: Array<{ code: number; packages: string[] }> = [];
  let urls: string[] = [];
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (!line.startsWith('exit ')) urls.push(line);
    else {
      const packages = [...new Set(urls.map(packageOf).filter((p) => p !== undefined))].sort();
      runs.push({ code: Number(line.slice('exit '.length)), packages });
      urls = [];
    }
  }
  assert.equal(runs.length, commands.length, run.stderr);
  return runs;
}

/** A webhook configuration for `klw lint <file>`: valid, with one warning. */
const CONFIGURATION = `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata: { name: x }
webhooks:
  - name: a.example.com
    admissionReviewVersions: [v1]
    sideEffects: None
    clientConfig: { url: "https://h.example.com/a" }
    rules: [{ apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [pods], scope: Namespaced }]
`;

// In a project without functions: each command has loaded its modules, run until it needs the
// functions (manifests stops there, exit 1), and loaded no function, so no other process runs.
describe('klw lint, klw manifests and klw secret --local', () => {
  let runs: Array<{ code: number; packages: string[] }>;
  const commands = [
    { args: ['lint', 'webhooks.yaml'], code: 0 },
    { args: ['manifests', '--base-url', 'https://webhooks.example.com'], code: 1 },
    { args: ['secret', 'rotate', '--local', '--state-dir', 'state'], code: 0 },
  ];
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'klw-startup-'));
    await cachedBuild();
    writeFileSync(join(dir, 'webhooks.yaml'), CONFIGURATION);
    const inDir = (arg: string) => (['webhooks.yaml', 'state'].includes(arg) ? join(dir, arg) : arg);
    runs = packagesLoadedBy(commands.map(({ args }) => [...args.map(inDir), '--root', dir]));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  for (const [i, { args, code }] of commands.entries()) {
    it(`klw ${args.slice(0, 2).join(' ')} loads none of what builds, deploys or describes a cluster`, () => {
      assert.equal(runs[i]!.code, code);
      const { packages } = runs[i]!;
      if (i === 0) assert.ok(packages.includes('yaml'), packages.join(', '));
      assert.deepEqual(
        packages.filter((p) => NOT_FOR_PROJECT_COMMANDS.includes(p)),
        [],
        'import what only a build or a call to AWS needs where it is needed, not at the top of a module the command loads',
      );
    });
  }
});
