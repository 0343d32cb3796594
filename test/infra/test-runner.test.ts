// A project's own tests survive its functions changing: the conformance test this repository
// runs (test/functions/conformance.test.ts), in a project with other functions, run by `klw test`.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { pathToFileURL } from 'node:url';
import fc from 'fast-check';
import { loadFunctions } from '../../infra/functions.ts';
import { initProject } from '../../infra/init.ts';
import { scaffold } from '../../infra/scaffold.ts';
import { expandTestPaths, findTestFiles, testCommand } from '../../infra/test-runner.ts';
import { findFunctions } from '../../lib/harness/discover.ts';
import { binaryString } from '../arbitraries.ts';
import { FUZZ_RUNS, importBuilt, runKlw } from '../helpers.ts';
import { keptProject } from '../kept-projects.ts';
import { withFailingTsx } from './test-runner.projects.ts';

const root = process.cwd();
const KLW = join(root, 'infra', 'bin', 'klw.mjs');
// Inside the repository, so `kube-lambda-webhooks` resolves to this package's sources.
const work = mkdtempSync(join(root, '.klw-test-project-'));
const outside = mkdtempSync(join(tmpdir(), 'klw-no-tsx-'));
after(() => {
  rmSync(work, { recursive: true, force: true });
  rmSync(outside, { recursive: true, force: true });
});

/** Runs `klw test` in the project the way `npm test` does; returns its exit code and output. */
function klwTest(dir: string, ...args: string[]): { code: number; out: string } {
  const { NODE_TEST_CONTEXT: _context, ...env } = process.env;
  const run = spawnSync(process.execPath, [KLW, '--root', dir, 'test', '--reporter', 'tap', ...args], {
    cwd: dir,
    env,
    encoding: 'utf8',
  });
  return { code: run.status ?? 1, out: `${run.stdout}${run.stderr}` };
}

const write = (file: string, text: string) => {
  mkdirSync(join(file, '..'), { recursive: true });
  writeFileSync(file, text);
};

/** Copies the repository's conformance test into the project `dir`. */
const withConformance = (dir: string) =>
  cpSync(join(root, 'test', 'functions', 'conformance.test.ts'), join(dir, 'test', 'functions', 'conformance.test.ts'));
/** Copies the lint test klw init writes into the project `dir`. */
const withLint = (dir: string) =>
  cpSync(
    join(root, 'infra', 'templates', 'project', 'lint.test.ts.tmpl'),
    join(dir, 'test', 'functions', 'lint.test.ts'),
  );

withConformance(work);

/**
 * The project the tests below start from: the conformance test, functions from klw new of every
 * kind and functions written as .js and .mjs.
 */
function functionsProject(dir: string): void {
  withConformance(dir);
  for (const type of ['validating', 'mutating', 'conversion'] as const) scaffold(dir, type, `new-${type}`);
  const js = (name: string) => `import { allow, defineValidatingWebhook } from 'kube-lambda-webhooks';
export default defineValidatingWebhook({ name: '${name}', rules: [{ operations: ['CREATE'], apiGroups: ['apps'], apiVersions: ['v1'], resources: ['deployments'] }], validate: () => allow() });
`;
  write(join(dir, 'functions', 'plain-js', 'index.js'), js('plain-js'));
  write(join(dir, 'functions', 'plain-mjs', 'index.mjs'), js('plain-mjs'));
}

/** A klw init project of the module type, whose tsx fails whatever loads it (withFailingTsx). */
function initialized(dir: string, type: 'commonjs' | 'module'): void {
  initProject(dir);
  // The repository's tsconfig (above) maps the package's name to its sources, as an install would.
  rmSync(join(dir, 'tsconfig.json'));
  const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ ...pkg, type }, null, 2));
  withFailingTsx(dir);
}

/**
 * One run of the conformance test, made by the first test that reads it, in a klw init project of
 * type CommonJS with the functions of functionsProject, a conversion that needs a sample, a folder
 * that is no function, and functions that fail: a mutating one that is not idempotent, one that
 * exports no webhook and one that throws while loading. Each test that reads it reads its part.
 */
let failing: Promise<{ work: string; run: { code: number; out: string } }> | undefined;
const failingRun = () => {
  failing ??= (async () => {
    const work = await keptProject('runner-failing-functions', (work) => {
      initialized(work, 'commonjs');
      functionsProject(work);
      // The scaffolded conversion, with a CRD that requires `size`: the generated "conformance" is no whole number.
      scaffold(work, 'conversion', 'strict-widgets');
      const crd = join(work, 'functions', 'strict-widgets', 'crd.yaml');
      writeFileSync(
        crd,
        readFileSync(crd, 'utf8').replace(
          '        type: object\n        properties:\n          size:\n            type: string',
          '        type: object\n        required: [size]\n        properties:\n          size:\n            type: string',
        ),
      );
      write(join(work, 'functions', 'oops', 'handler.ts'), 'export const nothing = 1;\n');
      mkdirSync(join(work, 'functions', '.cache'), { recursive: true });
      write(
        join(work, 'functions', 'counter', 'index.ts'),
        `import { defineMutatingWebhook } from 'kube-lambda-webhooks';
// Counts its own calls in an annotation: every call patches again.
export default defineMutatingWebhook({ name: 'counter', rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'] }], mutate: (pod) => {
  const annotations = ((pod.metadata ??= {}).annotations ??= {});
  annotations.calls = String(Number(annotations.calls ?? 0) + 1);
} });
`,
      );
      write(join(work, 'functions', 'no-export', 'index.ts'), 'export const nothing = 1;\n');
      write(join(work, 'functions', 'broken', 'index.ts'), "throw new Error('broken at load');\n");
    });
    return { work, run: klwTest(work, 'test/functions/conformance.test.ts') };
  })();
  return failing;
};

describe('a project whose functions are not the examples', () => {
  // One run of npm test over functions from klw new of every kind and functions written as .js
  // and .mjs, with the lint test klw init writes: each test below reads its part.
  let project: string;
  let full: { code: number; out: string };
  before(async () => {
    project = await keptProject('runner-functions', (dir) => {
      functionsProject(dir);
      withLint(dir);
    });
    full = klwTest(project);
  });

  it('passes npm test with functions from klw new of every kind', () => {
    const { code, out } = full;
    assert.equal(code, 0, out);
    for (const name of ['new-validating', 'new-mutating', 'new-conversion'])
      assert.match(out, new RegExp(`# Subtest: ${name} conformance`));
    assert.match(out, /round-trips an object through every version it declares/);
    assert.match(out, /is idempotent/);
  });

  it('finds .js and .mjs functions too, and checks them', async () => {
    assert.deepEqual(
      (await loadFunctions(project)).map((f) => [f.name, f.entry.slice(f.entry.lastIndexOf('/') + 1)]),
      [
        ['new-conversion', 'index.ts'],
        ['new-mutating', 'index.ts'],
        ['new-validating', 'index.ts'],
        ['plain-js', 'index.js'],
        ['plain-mjs', 'index.mjs'],
      ],
    );
    const { code, out } = full;
    assert.equal(code, 0, out);
    assert.match(out, /# Subtest: plain-js conformance/);
    assert.match(out, /# Subtest: plain-mjs conformance/);
  });

  // The run of the conformance test with them all (failingRun): each test below reads its part.
  describe('with a conversion that needs a sample, a folder that is no function, and functions that fail', () => {
    let work: string;
    let dir: string;
    let run: { code: number; out: string };
    before(async () => {
      ({ work, run } = await failingRun());
      dir = join(work, 'functions', 'strict-widgets');
    });

    it('fails npm test for a mutating function that is not idempotent, naming it', () => {
      const { code, out } = run;
      assert.notEqual(code, 0, out);
      assert.match(out, /not ok \d+ - counter conformance/);
      assert.match(out, /counter: CREATE pods: not idempotent/);
      assert.match(out, /klw: tests failed/);
    });

    it('fails for a function folder whose entry exports no webhook', () => {
      const { code, out } = run;
      assert.notEqual(code, 0, out);
      assert.match(out, /not ok \d+ - no-export conformance/);
      assert.match(
        out,
        /functions\/no-export\/index\.ts exports no default registration: end it with `export default defineValidatingWebhook/,
      );
    });

    it('passes a conversion function that refuses the generated object, asking for a sample to round-trip', () => {
      assert.match(readFileSync(join(dir, 'crd.yaml'), 'utf8'), /required: \[size\]/);
      const { out } = run;
      assert.match(out, /^ok \d+ - strict-widgets conformance$/m, 'its suite passes (counter and no-export fail)');
      assert.match(
        out,
        /ok \d+ - round-trips an object through every version it declares # SKIP strict-widgets: the generated Widget at example\.com\/v1alpha1 could not be converted/,
      );
      assert.match(out, /describeConformance\(\{ samples: \{ "strict-widgets": /);
    });

    it('warns about a folder under functions/ without an entry file, naming it, once', () => {
      const warnings: string[] = [];
      assert.ok(!findFunctions(work, (message) => warnings.push(message)).some((f) => f.name === 'oops'));
      assert.deepEqual(warnings, [
        'warning: functions/oops has no index.ts, index.mts, index.js or index.mjs: it is not a function and is skipped',
      ]);
      const { out } = run;
      assert.equal(
        out.match(
          /functions\/oops has no index\.ts, index\.mts, index\.js or index\.mjs: it is not a function and is skipped/g,
        )?.length,
        1,
        out,
      );
    });
  });

  it('fails npm test for a rule the API server never matches, with the file, the field and the fix', async () => {
    const dir = await keptProject('runner-never-matches', (dir) => {
      functionsProject(dir);
      withLint(dir);
      write(
        join(dir, 'functions', 'never-matches', 'index.ts'),
        `import { allow, defineValidatingWebhook } from 'kube-lambda-webhooks';
export default defineValidatingWebhook({ name: 'never-matches', rules: [{ operations: ['CREATE'], apiGroups: ['apps'], apiVersions: ['v1'], resources: ['deployment'] }], validate: () => allow() });
`,
      );
    });
    const { code, out } = klwTest(dir, 'test/functions/lint.test.ts');
    assert.notEqual(code, 0, out);
    assert.match(out, /not ok \d+ - klw lint: the API server takes every registration and its rules match/);
    assert.match(
      out,
      /rules\[0\]\.resources: group "apps" has no resource "deployment" .*did you mean "deployments"\?.*\(functions\/never-matches\/index\.ts\)/,
    );
    // Without it (the run of all the tests above), the lint test passes.
    assert.equal(full.code, 0, full.out);
    assert.match(full.out, /^ok \d+ - klw lint: the API server takes every registration and its rules match$/m);
  });

  it('stays green with every function removed, saying there are none', async () => {
    const dir = await keptProject('runner-no-functions', (dir) => {
      mkdirSync(join(dir, 'test', 'functions'), { recursive: true });
      withConformance(dir);
    });
    const { code, out } = klwTest(dir);
    assert.equal(code, 0, out);
    assert.match(out, /no functions in .*functions: each function is functions\/<name>\/index\.ts/);
  });
});

describe('the mutating template', () => {
  it('labels with a valid label value whatever the username', async () => {
    // Kept by content: the same source in the same place, whose build npm test keeps (build-kept.ts).
    const dir = await keptProject('runner-labels', (dir) => scaffold(dir, 'mutating', 'label-check'));
    const { labelValue } = await importBuilt<{ labelValue: (text: string) => string }>(
      pathToFileURL(join(dir, 'functions', 'label-check', 'index.ts')),
      join(work, 'label-check.mjs'),
    );
    // metadata.labels values, as the API server validates them.
    const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;
    assert.equal(labelValue(`${'a'.repeat(62)}-x`), 'a'.repeat(62), 'cut to 63, the trailing - goes');
    assert.equal(labelValue(`${'a'.repeat(62)}_x`), 'a'.repeat(62));
    assert.equal(labelValue(`${'a'.repeat(62)}.x`), 'a'.repeat(62));
    assert.equal(labelValue(`-${'a'.repeat(70)}`), 'a'.repeat(62), 'the leading - goes after the cut');
    assert.equal(labelValue('system:serviceaccount:ci:deployer'), 'system_serviceaccount_ci_deployer');
    assert.equal(labelValue('::'), '');
    fc.assert(
      fc.property(binaryString({ maxLength: 100 }), (username) => {
        const value = labelValue(username);
        return value.length <= 63 && LABEL_VALUE.test(value);
      }),
      { numRuns: FUZZ_RUNS },
    );
    // A valid value is kept as it is.
    fc.assert(
      fc.property(
        fc.stringMatching(/^[a-z0-9]([a-z0-9._-]{0,61}[a-z0-9])?$/),
        (username) => labelValue(username) === username,
      ),
      { numRuns: FUZZ_RUNS },
    );
  });
});

describe('a klw init project of either module type', () => {
  for (const type of ['commonjs', 'module'] as const) {
    it(`runs its function test and the conformance checks as "type": "${type}", all from the build`, async () => {
      const dir = await keptProject(`init-${type}`, (dir) => initialized(dir, type));
      const { code, out } = klwTest(dir);
      assert.equal(code, 0, out);
      assert.match(out, /# Subtest: require-owner conformance/);
      assert.match(out, /ok \d+ - answers v1 and v1beta1 reviews of what its rules match/);
      // The conformance check, the lint of the registrations and the function's two tests.
      assert.match(out, /^ok \d+ - klw lint: the API server takes every registration and its rules match$/m);
      assert.match(out, /^# pass 4$/m);
      assert.match(out, /^# fail 0$/m);
    });
  }

  it('fails the conformance test when a function throws while loading, as CommonJS too', async () => {
    // The CommonJS project of failingRun, where functions/broken throws at load.
    const { code, out } = (await failingRun()).run;
    assert.notEqual(code, 0, out);
    assert.match(out, /Error: broken at load/);
  });
});

describe('klw test', () => {
  it('finds .test.ts, .mts, .js and .mjs files under test/ and functions/, sorted, leaving out excluded folders, dependencies and dot folders', () => {
    const dir = join(outside, 'find');
    for (const file of [
      'test/b.test.ts',
      'test/a.test.mjs',
      'test/e2e/slow.test.ts',
      'test/node_modules/x.test.js',
      'test/.cache/y.test.js',
      'test/helpers.ts',
      'functions/f/f.test.mts',
      'functions/f/index.ts',
      'other/z.test.js',
    ])
      write(join(dir, file), '');
    assert.deepEqual(findTestFiles(dir, { exclude: ['test/e2e'] }), [
      'functions/f/f.test.mts',
      'test/a.test.mjs',
      'test/b.test.ts',
    ]);
    assert.deepEqual(findTestFiles(dir), [
      'functions/f/f.test.mts',
      'test/a.test.mjs',
      'test/b.test.ts',
      'test/e2e/slow.test.ts',
    ]);
  });

  it('loads TypeScript through tsx only when there is TypeScript to load', () => {
    const dir = join(outside, 'js-only');
    write(join(dir, 'test', 'a.test.mjs'), '');
    assert.deepEqual(testCommand(dir, { concurrency: 2 }), [
      '--test',
      '--test-reporter=spec',
      '--test-concurrency=2',
      'test/a.test.mjs',
    ]);
    assert.deepEqual(testCommand(work, { files: ['test/functions/conformance.test.ts'], namePattern: 'conf' }), [
      '--import',
      'tsx',
      '--test',
      '--test-reporter=spec',
      '--test-name-pattern=conf',
      'test/functions/conformance.test.ts',
    ]);
  });

  it('says how to install tsx when TypeScript tests cannot be loaded', () => {
    const dir = join(outside, 'no-tsx');
    write(join(dir, 'test', 'a.test.ts'), '');
    assert.throws(() => testCommand(dir), /TypeScript tests need tsx: npm install --save-dev tsx/);
  });

  it('fails with a message when there are no tests', async () => {
    const dir = join(outside, 'empty');
    mkdirSync(dir, { recursive: true });
    // Refused before node --test starts: klw runs in this process.
    const { code, stderr } = await runKlw('--root', dir, 'test');
    assert.equal(code, 1);
    assert.match(stderr, /^klw: no test files \(\*\.test\.ts, \.mts, \.js, \.mjs\) under .*test or .*functions$/m);
  });

  it('runs the test files under a folder given as an argument', async () => {
    // TypeScript tests, which node --test does not look for in a folder by itself; inside the
    // repository so tsx resolves.
    const passing = "import { test } from 'node:test';\ntest('passes', () => {});\n";
    const dir = await keptProject('runner-folders', (dir) => {
      for (const file of [
        'test/functions/a.test.ts',
        'test/functions/deeper/b.test.mts',
        'test/other.test.ts',
        'test/functions/helper.ts',
      ])
        write(join(dir, file), passing);
    });
    const { code, out } = klwTest(dir, 'test/functions/');
    assert.equal(code, 0, out);
    assert.match(out, /^# tests 2$/m, 'a.test.ts and deeper/b.test.mts');
    assert.deepEqual(
      expandTestPaths(dir, ['test/functions']),
      expandTestPaths(dir, ['test/functions/']),
      'with or without the slash',
    );
    assert.deepEqual(expandTestPaths(dir, ['test/other.test.ts', 'test/functions/', 'test/functions/a.test.ts']), [
      'test/other.test.ts',
      'test/functions/a.test.ts',
      'test/functions/deeper/b.test.mts',
    ]);
    assert.deepEqual(expandTestPaths(dir, ['test'], ['test/functions/deeper']), [
      'test/functions/a.test.ts',
      'test/other.test.ts',
    ]);
  });

  it('fails with a message when the paths given hold no test file, or do not exist', async () => {
    const dir = join(outside, 'folders-empty');
    write(join(dir, 'docs', 'notes.md'), '');
    write(join(dir, 'test', 'a.test.mjs'), "import { test } from 'node:test';\ntest('passes', () => {});\n");
    // Refused before node --test starts: klw runs in this process.
    const empty = await runKlw('--root', dir, 'test', 'docs/');
    assert.equal(empty.code, 1, empty.stderr);
    assert.match(empty.stderr, /^klw: no test files \(\*\.test\.ts, \.mts, \.js, \.mjs\) in docs\/$/m);
    const missing = await runKlw('--root', dir, 'test', 'tests/');
    assert.equal(missing.code, 1, missing.stderr);
    assert.match(missing.stderr, /^klw: tests\/: no such test file or folder in .*folders-empty$/m);
  });

  it('passes on the exit code of a failing test file', async () => {
    // The run of failingRun, whose conformance test fails.
    const { code, out } = (await failingRun()).run;
    assert.equal(code, 1, out);
    assert.match(out, /klw: tests failed \(node --test exited with 1\)/);
  });
});
