// klw-test: no-tsx (what it imports at run time is the JavaScript it built)
import assert from 'node:assert/strict';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { ANY_DEPLOYMENT, type BuiltFunction, buildFunction, bundlePath } from '../../infra/build.ts';
import { cachedBuild } from '../../infra/build-cache.mjs';
import { scaffold } from '../../infra/scaffold.ts';
import { main, program } from '../../infra/cli.ts';

import { toEvent, admissionReview } from '../../lib/testing/index.ts';
import { FIXTURE_FUNCTIONS, runKlw } from '../helpers.ts';
import { runSuites, type SuitesRun } from '../suites.ts';
import { extractZip, readZip } from '../zip.ts';
import { buildsForReal } from '../kept-builds.ts';
import { keptProject } from '../kept-projects.ts';

// What these tests check is the build itself: made every run, never a kept one.
buildsForReal();

// klw imports a command's module when first run: done here, not while a test holds stdout.
before(() => program());

const root = process.cwd();
// Work in a copy inside the repository, so `kube-lambda-webhooks` still resolves to this package.
const work = mkdtempSync(join(root, '.klw-test-'));
after(() => rmSync(work, { recursive: true, force: true }));
cpSync(FIXTURE_FUNCTIONS, join(work, 'functions'), { recursive: true });

let podPolicy: Promise<BuiltFunction> | undefined;
/** The fixture's pod-policy built for any deployment (the default), once for the tests that read it. */
const builtPodPolicy = () =>
  (podPolicy ??= buildFunction(work, { name: 'pod-policy', entry: join(work, 'functions/pod-policy/index.ts') }));

describe('klw build', () => {
  it('bundles an ESM handler that answers a review, without the AWS SDK', async () => {
    const built = await builtPodPolicy();
    const code = readFileSync(bundlePath(work, 'pod-policy'), 'utf8');
    // The AWS SDK stays external: named only in an import the Lambda runtime resolves, none of its code inside.
    assert.ok(!/@smithy\/|class SSMClient/.test(code), 'AWS SDK code was bundled');
    assert.ok(/import\("@aws-sdk\/client-ssm"\)/.test(code), 'the SSM client is imported at run time');
    assert.ok(built.bundleBytes < 100 * 1024, `bundle is ${built.bundleBytes} bytes`);
    process.env.KLW_LOG_LEVEL = 'silent';
    const mod = await import(bundlePath(work, 'pod-policy'));
    delete process.env.KLW_LOG_LEVEL;
    const result = await mod.handler(
      toEvent(admissionReview({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: { hostPID: true } })),
    );
    assert.equal(JSON.parse(result.body).response.allowed, false);
  });

  it('writes identical zips for unchanged code, and different ones for changed code', async () => {
    const entry = { name: 'pod-defaults', entry: join(work, 'functions/pod-defaults/index.ts') };
    const a = await buildFunction(work, entry);
    const listing = readZip(join(work, a.zip));
    const index = listing.findIndex((e) => e.name === 'index.mjs');
    assert.deepEqual(
      [listing[index]?.modified, listing[index + 1]?.name],
      [[2020, 1, 1, 0, 0, 0], 'index.mjs.map'],
      JSON.stringify(listing.map((e) => [e.name, e.modified])),
    );
    const source = join(work, 'functions/pod-defaults/index.ts');
    const original = readFileSync(source, 'utf8');
    writeFileSync(source, original.replace("|| '500m'", "|| '750m'"));
    const changed = await buildFunction(work, entry);
    writeFileSync(source, original);
    assert.notEqual(changed.zipSha256, a.zipSha256, 'changed code must give a different zip');
    // Built again from the same code (nothing is kept between builds here): the same zip.
    assert.equal((await buildFunction(work, entry)).zipSha256, a.zipSha256, 'restored code gives the first zip again');
  });
});

describe('a bundle built for its deployment', () => {
  const pod = admissionReview({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: { hostPID: true } });
  const handlerOf = async (name: string, deployment = ANY_DEPLOYMENT) => {
    // pod-policy for any deployment: the build the first test reads.
    const built =
      name === 'pod-policy' && deployment === ANY_DEPLOYMENT
        ? await builtPodPolicy()
        : await buildFunction(
            work,
            { name, entry: join(work, 'functions/pod-policy/index.ts') },
            undefined,
            deployment,
          );
    const mod = await import(pathToFileURL(bundlePath(work, name)).href);
    return { built, code: readFileSync(bundlePath(work, name), 'utf8'), handler: mod.handler };
  };

  it('leaves out the sources and the fleet it is not deployed with, and refuses what it left out', async (t) => {
    process.env.KLW_LOG_LEVEL = 'silent';
    t.after(() => {
      delete process.env.KLW_LOG_LEVEL;
      delete process.env.KLW_FLEET;
    });
    const full = await handlerOf('pod-policy');
    const http = await handlerOf('pod-policy-http', { sources: ['http'], fleet: false });
    assert.ok(http.built.bundleBytes < full.built.bundleBytes - 4096, `${http.built.bundleBytes} bytes`);
    // The fleet's and the ALB source's own words are not in it.
    for (const words of ['names no cluster', 'multiValueHeaders'])
      assert.equal([full.code.includes(words), http.code.includes(words)].join(), 'true,false', words);
    const denied = (result: { body: string }) => JSON.parse(result.body).response.allowed === false;
    assert.ok(denied(await http.handler(toEvent(pod))));
    assert.ok(denied(await full.handler(toEvent(pod, { format: 'alb' }))));
    const alb = await http.handler(toEvent(pod, { format: 'alb' }));
    assert.equal(alb.statusCode, 400);
    assert.match(JSON.parse(alb.body).error, /no known source/);
    process.env.KLW_FLEET = '{"blue":{}}';
    const fleet = await http.handler(toEvent(pod));
    assert.equal(fleet.statusCode, 500);
    assert.match(fleet.body, /webhook authentication is misconfigured/);
  });
});

describe('the bundle entry klw build generates', () => {
  // A scratch project of its own: its broken functions must not reach the other tests' project.
  const scratch = mkdtempSync(join(root, '.klw-test-'));
  after(() => rmSync(scratch, { recursive: true, force: true }));
  const fn = (name: string, code: string) => {
    rmSync(join(scratch, 'functions'), { recursive: true, force: true });
    mkdirSync(join(scratch, 'functions', name), { recursive: true });
    writeFileSync(join(scratch, 'functions', name, 'index.ts'), code);
  };
  const klw = (...args: string[]) => runKlw('--root', scratch, ...args);
  const onlyDefault = [
    "import { allow, defineValidatingWebhook, deny } from 'kube-lambda-webhooks';",
    'export default defineValidatingWebhook({',
    "  name: 'only-default',",
    "  rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'], scope: 'Namespaced' }],",
    "  validate: (review) => (review.object?.metadata?.labels?.team ? allow() : deny('pods need a team label')),",
    '});',
    '',
  ].join('\n');

  it('makes the Lambda handler of a module that only default-exports its registration, in the zip', async () => {
    fn('only-default', onlyDefault);
    const { code, stderr } = await klw('build');
    assert.equal(code, 0, stderr);
    // What Lambda runs is the zip: unpack it and call its handler.
    const unpacked = join(scratch, 'unpacked');
    extractZip(join(scratch, 'dist/functions/only-default.zip'), unpacked);
    process.env.KLW_LOG_LEVEL = 'silent';
    const mod = await import(pathToFileURL(join(unpacked, 'index.mjs')).href);
    delete process.env.KLW_LOG_LEVEL;
    assert.equal(typeof mod.handler, 'function', 'the zip exports no handler');
    const pod = (labels: Record<string, string>) =>
      toEvent(admissionReview({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', labels } }));
    assert.equal(JSON.parse((await mod.handler(pod({}))).body).response.allowed, false);
    assert.equal(JSON.parse((await mod.handler(pod({ team: 'a' }))).body).response.allowed, true);
  });

  it('makes the handler of a module with typed rules and no handler export, and the zip answers by them', async () => {
    fn(
      'typed-pods',
      [
        "import { allow, defineValidatingWebhook, deny, on, Pod } from 'kube-lambda-webhooks';",
        'export default defineValidatingWebhook({',
        "  name: 'typed-pods',",
        '  rules: [on(Pod).create()],',
        "  validate: (review) => (review.object?.spec?.hostPID ? deny('no hostPID') : allow()),",
        '});',
        '',
      ].join('\n'),
    );
    const { code, stderr } = await klw('build');
    assert.equal(code, 0, stderr);
    const unpacked = join(scratch, 'unpacked-typed');
    extractZip(join(scratch, 'dist/functions/typed-pods.zip'), unpacked);
    process.env.KLW_LOG_LEVEL = 'silent';
    const mod = await import(pathToFileURL(join(unpacked, 'index.mjs')).href);
    delete process.env.KLW_LOG_LEVEL;
    const pod = (spec: Record<string, unknown>) =>
      toEvent(admissionReview({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'd' }, spec }));
    assert.equal(JSON.parse((await mod.handler(pod({ hostPID: true }))).body).response.allowed, false);
    assert.equal(JSON.parse((await mod.handler(pod({}))).body).response.allowed, true);
    const manifests = await klw(
      'manifests',
      '--base-url',
      'https://h.example.com',
      '--path-secret',
      'none',
      '--out',
      join(scratch, 'm.yaml'),
    );
    assert.equal(manifests.code, 0, manifests.stderr);
    assert.match(
      readFileSync(join(scratch, 'm.yaml'), 'utf8'),
      /operations:\n\s+- CREATE\n\s+apiGroups:\n\s+- ""\n\s+apiVersions:\n\s+- v1\n\s+resources:\n\s+- pods\n\s+scope: Namespaced/,
    );
    assert.equal((await klw('lint')).code, 0);
  });

  it('names the file of a rule lint refuses, with the field and the fix', async () => {
    fn(
      'core-pods',
      onlyDefault
        .replace("'only-default'", "'core-pods'")
        .replace("apiGroups: ['']", "apiGroups: ['core']")
        .replace("resources: ['pods']", "resources: ['Pods']"),
    );
    // Beside it, one whose only fault is the resource's case: one lint names both.
    mkdirSync(join(scratch, 'functions', 'pods-plural'));
    writeFileSync(
      join(scratch, 'functions', 'pods-plural', 'index.ts'),
      onlyDefault.replace("'only-default'", "'pods-plural'").replace("resources: ['pods']", "resources: ['Pods']"),
    );
    const { code, stderr } = await klw('lint');
    assert.equal(code, 1);
    assert.match(
      stderr,
      /^error rule-group core-pods\.\S+: rules\[0\]\.apiGroups: .*is "".*\(functions\/core-pods\/index\.ts\)$/m,
    );
    assert.match(
      stderr,
      /^error rule-resource pods-plural\.\S+: rules\[0\]\.resources: .*did you mean "pods"\?.*\(functions\/pods-plural\/index\.ts\)$/m,
    );
  });

  it('keeps the handler a module exports itself', async () => {
    fn(
      'own-handler',
      onlyDefault.replace("'only-default'", "'own-handler'").replace('export default', 'const webhook =') +
        "export const handler = async () => ({ statusCode: 200, body: 'own' });\nexport default webhook;\n",
    );
    await buildFunction(scratch, { name: 'own-handler', entry: join(scratch, 'functions/own-handler/index.ts') });
    const mod = await import(pathToFileURL(bundlePath(scratch, 'own-handler')).href);
    assert.equal((await mod.handler({})).body, 'own');
  });

  it("warns at lint when the handler a module exports is not its registration's: the zip runs that one", async () => {
    const { stderr } = await klw('lint');
    assert.match(
      stderr,
      /functions\/own-handler\/index\.ts exports a handler that is not its default registration's: the zip runs it, while the manifests describe the registration; export webhook\.handler or remove that export/,
    );
    assert.doesNotMatch(stderr, /only-default\/index\.ts exports a handler/);
  });

  it('refuses a module with neither a default registration nor a handler, at build and lint, naming the file and the fix', async () => {
    fn('no-export', "export const webhook = 'nothing';\n");
    const fix =
      /functions\/no-export\/index\.ts exports no default registration: end it with `export default defineValidatingWebhook\(\{\.\.\.\}\)`/;
    await assert.rejects(
      buildFunction(scratch, { name: 'no-export', entry: join(scratch, 'functions/no-export/index.ts') }),
      fix,
    );
    for (const command of ['build', 'lint']) {
      const { code, stderr } = await klw(command);
      assert.equal(code, 1, `klw ${command} passed a module without a registration`);
      assert.match(stderr, fix);
    }
  });

  it('names the file and the function of a registration define…Webhook refuses', async () => {
    fn('slow', onlyDefault.replace("'only-default'", "'slow'").replace('  rules:', '  timeoutSeconds: 99,\n  rules:'));
    const { code, stderr } = await klw('build');
    assert.equal(code, 1);
    assert.match(
      stderr,
      /^klw: functions\/slow\/index\.ts: function slow: timeoutSeconds must be a whole number from 1 to 30, got 99$/m,
    );
  });

  it('refuses a default export that is not a registration, and a handler export that is not a function', async () => {
    fn('not-a-webhook', 'export default { name: "not-a-webhook" };\n');
    assert.match(
      (await klw('build')).stderr,
      /functions\/not-a-webhook\/index\.ts exports default an object, not a registration: export default the value defineValidatingWebhook/,
    );
    fn(
      'only-default',
      onlyDefault.replace('export default', 'const webhook =') +
        'export const handler = webhook;\nexport default webhook;\n',
    );
    const { code, stderr } = await klw('lint');
    assert.equal(code, 1);
    assert.match(
      stderr,
      /functions\/only-default\/index\.ts exports handler as an object, not a function: remove that export/,
    );
  });
});

describe('klw new', () => {
  const types = ['validating', 'mutating', 'conversion'] as const;
  const scaffolded = new Map<string, string[]>();
  before(() => {
    for (const type of types) scaffolded.set(type, scaffold(work, type, `my-${type}`));
  });
  let tests: Promise<SuitesRun> | undefined;
  /**
   * The tests klw new writes, built as `klw test` builds them (one esbuild build), run once under
   * node --test, all in one process (test/suites.ts). Written by the same calls into a project of
   * their own kept across runs by content (test/kept-projects.ts), where their build is found again.
   */
  const scaffoldedTests = () =>
    (tests ??= keptProject('build-klw-new-tests', (dir) => {
      for (const type of types) scaffold(dir, type, `my-${type}`);
    })
      .then((project) =>
        cachedBuild({
          root: project,
          cacheDir: join(project, '.klw', 'scaffolded-tests'),
          entryPoints: Object.fromEntries(types.map((type) => [type, `test/functions/my-${type}.test.ts`])),
          sourceUrls: true,
        }),
      )
      .then(({ dir }) =>
        runSuites(
          join(work, 'scaffolded.mjs'),
          types.map((type) => [type, join(dir, `${type}.mjs`)]),
          root,
          { tsx: false },
        ),
      ));
  for (const type of types) {
    it(`scaffolds a ${type} function whose test passes`, async () => {
      const name = `my-${type}`;
      assert.ok(scaffolded.get(type)!.includes(`functions/${name}/index.ts`));
      const out = await scaffoldedTests();
      assert.equal(out.result(type), 'ok', out.stdout + out.stderr);
      assert.throws(() => scaffold(work, type, name), /already exists/);
    });
  }

  it('rejects a bad name', () => {
    assert.throws(() => scaffold(work, 'validating', 'Bad_Name'), /not a valid function name/);
  });
});

describe('klw command line', () => {
  const run = (...args: string[]) => runKlw('--root', work, ...args);

  it('fails with one line and exit 1 on a bad URL', async () => {
    const { code, stderr } = await run('manifests', '--base-url', 'http://insecure.example.com');
    assert.equal(code, 1);
    assert.equal(stderr.trim().split('\n').length, 1);
    assert.match(stderr, /^klw: function .*scheme must be https/);
  });

  it('asks for exactly one source of URLs', async () => {
    const { code, stderr } = await run('manifests');
    assert.equal(code, 1);
    assert.match(stderr, /exactly one of --base-url or --function-urls/);
  });

  it('lints files and exits 1 on errors', async () => {
    const file = join(work, 'bad.yaml');
    writeFileSync(
      file,
      'apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingWebhookConfiguration\nmetadata: {name: x}\nwebhooks:\n- name: bad\n  clientConfig: {url: "http://x"}\n  sideEffects: Some\n  admissionReviewVersions: [v1]\n  rules: []\n',
    );
    const { code, stderr } = await run('lint', file);
    assert.equal(code, 1);
    assert.match(stderr, /^error webhook-name bad: /m);
    assert.match(stderr, /^error client-config-url bad: /m);
    assert.match(stderr, /^error side-effects bad: /m);
  });

  it('passes lint on the fixture functions and those klw new wrote', async () => {
    const { code, stderr } = await run('lint');
    assert.equal(code, 0, stderr);
  });

  it('prints help for every command', async () => {
    for (const command of ['build', 'manifests', 'lint', 'new']) {
      const out: string[] = [];
      const original = process.stdout.write.bind(process.stdout);
      process.stdout.write = ((chunk: string) => (out.push(String(chunk)), true)) as typeof process.stdout.write;
      try {
        assert.equal(await main(['node', 'klw', command, '--help']), 0);
      } finally {
        process.stdout.write = original;
      }
      assert.match(out.join(''), new RegExp(`Usage: klw ${command}`));
    }
  });
});
