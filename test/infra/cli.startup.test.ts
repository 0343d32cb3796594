// klw lists its commands and their options without loading what the commands run: a command's
// packages (the AWS SDK, esbuild, yaml, the library's zod and CEL) load when its action runs, so
// `klw --help` and every command's start stay cheap. The check runs the real klw (its built
// toolkit) in a child whose module resolutions a loader hook records.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { cachedBuild } from '../../infra/build-cache.mjs';
import { klwInProcess, projectInRepository } from '../helpers.ts';

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
  const file = join(dir, `${args.join('-').replace(/[^\w-]/g, '_') || 'none'}.txt`);
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
 * What a command loads only when its action goes that way: the compiler builds (the functions'
 * build is current here, so none runs), the zip writer and the AWS SDK deploy, the API models
 * describe a cluster's schemas. None of them may load to lint a project, write its manifests or
 * rotate its local secret.
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

describe('klw lint, klw manifests and klw secret --local', () => {
  let project: string;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'klw-startup-'));
    await cachedBuild();
    project = projectInRepository('.klw-test-startup-', {
      cap: [
        "import { Deployment, on } from 'kube-lambda-webhooks';",
        "import { defineValidatingPolicy } from 'kube-lambda-webhooks/policies';",
        'export default defineValidatingPolicy({',
        "  name: 'cap',",
        '  matchConstraints: { resourceRules: [on(Deployment).create()] },',
        "  validations: [{ expression: 'object.spec.replicas <= 5' }],",
        '});',
      ].join('\n'),
    });
    writeFileSync(
      join(project, 'serverless.yml'),
      'service: startup\nplugins:\n  - kube-lambda-webhooks/serverless\nprovider:\n  name: aws\n  runtime: nodejs24.x\n',
    );
    // Lints in this process first: the functions' build is then current for the runs below.
    const first = await klwInProcess('lint', '--root', project);
    assert.equal(first.code, 0, first.stderr);
  });
  after(() => {
    rmSync(dir, { recursive: true, force: true });
    rmSync(project, { recursive: true, force: true });
  });

  const commands = [
    ['lint'],
    ['manifests', '--base-url', 'https://webhooks.example.com'],
    ['secret', 'rotate', '--local'],
  ];
  for (const args of commands) {
    it(`klw ${args.slice(0, 2).join(' ')} loads none of what builds, deploys or describes a cluster`, () => {
      const state = args[0] === 'secret' ? ['--state-dir', join(dir, 'state')] : [];
      const { code, packages } = packagesLoaded(...args, ...state, '--root', project);
      assert.equal(code, 0);
      assert.ok(packages.includes('yaml'), packages.join(', '));
      assert.deepEqual(
        packages.filter((p) => NOT_FOR_PROJECT_COMMANDS.includes(p)),
        [],
        'import what only a build or a call to AWS needs where it is needed, not at the top of a module the command loads',
      );
    });
  }
});
