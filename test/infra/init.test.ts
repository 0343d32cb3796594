import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { main } from '../../infra/cli.ts';
import { EXAMPLE_FUNCTIONS, initProject, projectName } from '../../infra/init.ts';

const scratch = mkdtempSync(join(tmpdir(), 'klw-init-'));
after(() => rmSync(scratch, { recursive: true, force: true }));
const repoPackage = JSON.parse(readFileSync('package.json', 'utf8')) as { version: string; dependencies: Record<string, string>; devDependencies: Record<string, string> };

describe('klw init', () => {
  it('writes an ESM project that depends on this package, with the klw scripts and a first validating function', () => {
    const dir = join(scratch, 'demo');
    const files = initProject(dir);
    assert.deepEqual(files.sort(), [
      '.gitignore',
      'README.md',
      'functions/require-owner/index.ts',
      'package.json',
      'serverless.yml',
      'test/functions/conformance.test.ts',
      'test/functions/require-owner.test.ts',
      'tsconfig.json',
    ]);
    const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
    assert.equal(pkg.name, 'demo');
    assert.equal(pkg.type, 'module');
    assert.deepEqual(pkg.scripts, { start: 'klw start', test: 'klw test', build: 'klw build', lint: 'klw lint', deploy: 'klw deploy' });
    assert.deepEqual(pkg.dependencies, { 'kube-lambda-webhooks': `^${repoPackage.version}` });
    for (const tool of ['tsx', 'typescript', '@types/node']) assert.equal(pkg.devDependencies[tool], repoPackage.devDependencies[tool] ?? repoPackage.dependencies[tool], tool);
    assert.ok(pkg.devDependencies.osls ?? pkg.devDependencies.serverless, 'a Serverless Framework to deploy with');
    const tsconfig = JSON.parse(readFileSync(join(dir, 'tsconfig.json'), 'utf8'));
    assert.equal(tsconfig.compilerOptions.strict, true);
    assert.match(readFileSync(join(dir, 'serverless.yml'), 'utf8'), /^service: demo$/m);
    assert.match(readFileSync(join(dir, '.gitignore'), 'utf8'), /^node_modules\/$/m);
  });

  for (const template of ['mutating', 'conversion'] as const) {
    it(`starts with a ${template} function when asked`, () => {
      const dir = join(scratch, `with-${template}`);
      const files = initProject(dir, { template, packageSpec: 'file:../kube-lambda-webhooks-0.1.0.tgz' });
      assert.ok(files.includes(`functions/${EXAMPLE_FUNCTIONS[template]}/index.ts`));
      assert.equal(files.includes(`functions/${EXAMPLE_FUNCTIONS[template]}/crd.yaml`), template === 'conversion');
      assert.match(readFileSync(join(dir, 'functions', EXAMPLE_FUNCTIONS[template], 'index.ts'), 'utf8'), template === 'mutating' ? /defineMutatingWebhook/ : /defineConversionWebhook/);
      assert.equal(JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')).dependencies['kube-lambda-webhooks'], 'file:../kube-lambda-webhooks-0.1.0.tgz');
    });
  }

  it('uses an empty folder that exists, and refuses one that holds anything', () => {
    const empty = join(scratch, 'empty');
    mkdirSync(empty);
    assert.ok(initProject(empty).includes('package.json'));
    const used = join(scratch, 'used');
    mkdirSync(used);
    writeFileSync(join(used, 'notes.txt'), 'mine');
    assert.throws(() => initProject(used), /used is not empty; klw init creates a project in a new or empty folder/);
    assert.ok(!existsSync(join(used, 'package.json')));
  });

  it('names the package after the folder', () => {
    assert.equal(projectName('/x/My Webhooks'), 'my-webhooks');
    assert.equal(projectName('/x/__'), 'webhooks');
  });

  it('gives every project the conformance test this repository runs', () => {
    assert.equal(readFileSync('infra/templates/project/conformance.test.ts.tmpl', 'utf8'), readFileSync('test/functions/conformance.test.ts', 'utf8'));
  });

  it('is a klw command that refuses an unknown template', async () => {
    const original = process.stderr.write.bind(process.stderr);
    const err: string[] = [];
    process.stderr.write = ((chunk: string) => (err.push(String(chunk)), true)) as typeof process.stderr.write;
    try {
      assert.equal(await main(['node', 'klw', '--root', scratch, 'init', 'cli-made', '--template', 'mutating']), 0);
      assert.notEqual(await main(['node', 'klw', '--root', scratch, 'init', 'other', '--template', 'webhook']), 0);
    } finally {
      process.stderr.write = original;
    }
    assert.ok(existsSync(join(scratch, 'cli-made', 'functions', 'add-created-by', 'index.ts')));
    assert.match(err.join(''), /created cli-made\/package\.json/);
    assert.match(err.join(''), /argument 'webhook' is invalid|Allowed choices are validating, mutating, conversion/);
    assert.ok(!existsSync(join(scratch, 'other')));
  });
});
