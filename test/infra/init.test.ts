import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, describe, it } from 'node:test';
import { runKlw } from '../helpers.ts';
import {
  EXAMPLE_FUNCTIONS,
  initProject,
  installOrigin,
  packageHint,
  projectName,
  projectPackageSpec,
} from '../../infra/init.ts';
import { packageInfo } from '../../infra/version.ts';

const scratch = mkdtempSync(join(tmpdir(), 'klw-init-'));
after(() => rmSync(scratch, { recursive: true, force: true }));
const repoPackage = JSON.parse(readFileSync('package.json', 'utf8')) as {
  version: string;
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
};

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
      'test/functions/lint.test.ts',
      'test/functions/require-owner.test.ts',
      'tsconfig.json',
    ]);
    const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
    assert.equal(pkg.name, 'demo');
    assert.equal(pkg.type, 'module');
    assert.deepEqual(pkg.scripts, {
      start: 'klw start',
      test: 'klw test',
      build: 'klw build',
      lint: 'klw lint',
      deploy: 'klw deploy',
    });
    assert.deepEqual(pkg.dependencies, { 'kube-lambda-webhooks': `^${repoPackage.version}` });
    for (const tool of ['tsx', 'typescript', '@types/node'])
      assert.equal(
        pkg.devDependencies[tool],
        repoPackage.devDependencies[tool] ?? repoPackage.dependencies[tool],
        tool,
      );
    assert.ok(pkg.devDependencies.osls ?? pkg.devDependencies.serverless, 'a Serverless Framework to deploy with');
    const tsconfig = JSON.parse(readFileSync(join(dir, 'tsconfig.json'), 'utf8'));
    assert.equal(tsconfig.compilerOptions.strict, true);
    assert.match(readFileSync(join(dir, 'serverless.yml'), 'utf8'), /^service: demo$/m);
    assert.match(readFileSync(join(dir, '.gitignore'), 'utf8'), /^node_modules\/$/m);
  });

  for (const template of ['mutating', 'conversion'] as const) {
    it(`starts with a ${template} function when asked`, () => {
      const dir = join(scratch, `with-${template}`);
      writeFileSync(join(scratch, 'kube-lambda-webhooks-0.1.0.tgz'), '');
      const files = initProject(dir, { template, packageSpec: 'file:kube-lambda-webhooks-0.1.0.tgz', cwd: scratch });
      assert.ok(files.includes(`functions/${EXAMPLE_FUNCTIONS[template]}/index.ts`));
      assert.equal(files.includes(`functions/${EXAMPLE_FUNCTIONS[template]}/crd.yaml`), template === 'conversion');
      assert.match(
        readFileSync(join(dir, 'functions', EXAMPLE_FUNCTIONS[template], 'index.ts'), 'utf8'),
        template === 'mutating' ? /defineMutatingWebhook/ : /defineConversionWebhook/,
      );
      assert.equal(
        JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')).dependencies['kube-lambda-webhooks'],
        'file:../kube-lambda-webhooks-0.1.0.tgz',
      );
    });
  }

  it('reads a file: spec or a bare path from the current folder and writes it relative to the new project', () => {
    const packs = join(scratch, 'packs');
    mkdirSync(join(packs, 'inner'), { recursive: true });
    const tarball = join(packs, 'kube-lambda-webhooks-0.1.0.tgz');
    writeFileSync(tarball, '');
    const cases: Array<[spec: string, cwd: string, dir: string, written: string]> = [
      // `klw init relpkg --package file:./kube-lambda-webhooks-0.1.0.tgz` beside the tarball.
      ['file:./kube-lambda-webhooks-0.1.0.tgz', packs, join(packs, 'relpkg'), 'file:../kube-lambda-webhooks-0.1.0.tgz'],
      ['./kube-lambda-webhooks-0.1.0.tgz', packs, join(packs, 'bare'), 'file:../kube-lambda-webhooks-0.1.0.tgz'],
      [
        'kube-lambda-webhooks-0.1.0.tgz',
        packs,
        join(packs, 'inner', 'deeper'),
        'file:../../kube-lambda-webhooks-0.1.0.tgz',
      ],
      [
        'file:../kube-lambda-webhooks-0.1.0.tgz',
        join(packs, 'inner'),
        join(scratch, 'elsewhere'),
        'file:../packs/kube-lambda-webhooks-0.1.0.tgz',
      ],
      [`file:${tarball}`, '/', join(scratch, 'absolute'), 'file:../packs/kube-lambda-webhooks-0.1.0.tgz'],
      ['../../packs', join(packs, 'inner'), join(scratch, 'folder'), 'file:../packs'],
    ];
    for (const [spec, cwd, dir, written] of cases) {
      assert.equal(projectPackageSpec(spec, dir, cwd), written, spec);
      initProject(dir, { packageSpec: spec, cwd });
      const dependency = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')).dependencies[
        'kube-lambda-webhooks'
      ] as string;
      assert.equal(dependency, written, spec);
      assert.ok(
        existsSync(resolve(dir, dependency.slice('file:'.length))),
        `${spec}: ${dependency} is found from the project`,
      );
    }
    for (const spec of [
      '^0.1.0',
      '0.1.0',
      'latest',
      'npm:kube-lambda-webhooks@0.1.0',
      'https://example.com/k.tgz',
      'github:o/r',
    ]) {
      assert.equal(projectPackageSpec(spec, join(scratch, 'x'), packs), spec);
    }
  });

  it('refuses a tarball that is not there, naming where it looked, and writes nothing', () => {
    const dir = join(scratch, 'missing-tarball');
    assert.throws(
      () => initProject(dir, { packageSpec: 'file:./nowhere-0.1.0.tgz', cwd: scratch }),
      (error: Error) =>
        error.message ===
        `--package file:./nowhere-0.1.0.tgz: ${join(scratch, 'nowhere-0.1.0.tgz')} does not exist (a path is read from the current folder, ${scratch}; make the tarball with npm pack)`,
    );
    assert.ok(!existsSync(dir));
  });

  it('knows when it runs from a tarball install or the sources, and hints at --package then', () => {
    // An npx cache entry: <prefix>/node_modules/kube-lambda-webhooks with npm's hidden lock file.
    const prefix = join(scratch, 'npx-cache');
    const dir = join(prefix, 'node_modules', 'kube-lambda-webhooks');
    mkdirSync(dir, { recursive: true });
    const info = { name: 'kube-lambda-webhooks', version: '0.1.0', dir, dependencies: {}, devDependencies: {} };
    const lock = (resolved: string) =>
      writeFileSync(
        join(prefix, 'node_modules', '.package-lock.json'),
        JSON.stringify({ packages: { 'node_modules/kube-lambda-webhooks': { version: '0.1.0', resolved } } }),
      );
    lock('file:../packs/kube-lambda-webhooks-0.1.0.tgz');
    const origin = installOrigin(info);
    assert.deepEqual(origin, { kind: 'tarball', tarball: join(scratch, 'packs', 'kube-lambda-webhooks-0.1.0.tgz') });
    assert.equal(
      packageHint(origin, '0.1.0'),
      `note: this klw was installed from ${join(scratch, 'packs', 'kube-lambda-webhooks-0.1.0.tgz')}; the project depends on kube-lambda-webhooks@^0.1.0, which npm install finds only once that version is published. If it is not, run klw init again with --package ${join(scratch, 'packs', 'kube-lambda-webhooks-0.1.0.tgz')}`,
    );
    lock('https://registry.npmjs.org/kube-lambda-webhooks/-/kube-lambda-webhooks-0.1.0.tgz');
    assert.deepEqual(installOrigin(info), { kind: 'registry' });
    assert.equal(packageHint({ kind: 'registry' }, '0.1.0'), undefined);
    assert.deepEqual(installOrigin(packageInfo()), { kind: 'checkout' });
    assert.match(
      packageHint({ kind: 'checkout' }, '0.1.0')!,
      /runs from the kube-lambda-webhooks sources.*npm pack.*--package/,
    );
  });

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

  it('gives every project the conformance and lint tests this repository runs', () => {
    for (const name of ['conformance', 'lint'])
      assert.equal(
        readFileSync(`infra/templates/project/${name}.test.ts.tmpl`, 'utf8'),
        readFileSync(`test/functions/${name}.test.ts`, 'utf8'),
      );
  });

  it('is a klw command that refuses an unknown template', async () => {
    const init = (...args: string[]) => runKlw('--root', scratch, 'init', ...args);
    const runs = [
      await init('cli-made', '--template', 'mutating'),
      await init('cli-packaged', '--package', '^0.1.0'),
      await init('other', '--template', 'webhook'),
    ];
    assert.deepEqual(
      runs.map((r) => r.code === 0),
      [true, true, false],
    );
    const err = runs.map((r) => r.stderr);
    assert.ok(existsSync(join(scratch, 'cli-made', 'functions', 'add-created-by', 'index.ts')));
    assert.match(err.join(''), /created cli-made\/package\.json/);
    // Run from these sources without --package, klw says how to depend on a tarball instead.
    assert.equal(
      err.join('').match(/runs from the kube-lambda-webhooks sources/g)?.length,
      1,
      'one hint, for the init without --package',
    );
    assert.match(err.join(''), /argument 'webhook' is invalid|Allowed choices are validating, mutating, conversion/);
    assert.ok(!existsSync(join(scratch, 'other')));
  });
});
