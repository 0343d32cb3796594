// The conformance test of a project run by `klw test` from its build: the project's functions are
// built with it and imported from there, so no test process loads tsx; what a user sees stays the
// same (the function's file and lines in errors, a function changed or added picked up, a function
// throwing at load failing its own test). Run by hand through tsx, it imports the sources.
// klw-test: no-tsx (its import() is text for another file)
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, sep } from 'node:path';
import { after, beforeEach, describe, it } from 'node:test';
import { pathToFileURL } from 'node:url';
import { BUILT_FUNCTIONS_ENV, functionModuleUrl } from '../../lib/harness/discover.ts';
import { projectInRepository } from '../helpers.ts';
import { klwTest, withFailingTsx } from './test-runner.projects.ts';

const root = process.cwd();
const CONFORMANCE = join('test', 'functions', 'conformance.test.ts');

/**
 * A function that writes, when loaded, how its process was started (to `loads.jsonl` in the
 * project): the test process's node options and file. `extra` goes at line 9, after the record.
 */
const probe = (extra = '') => `import { appendFileSync } from 'node:fs';
import { allow, defineValidatingWebhook } from 'kube-lambda-webhooks';

appendFileSync(
  'loads.jsonl',
  \`\${JSON.stringify({ execArgv: process.execArgv, file: process.argv[1] })}\\n\`,
);

${extra}
export default defineValidatingWebhook({
  name: 'probe',
  rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'] }],
  validate: () => allow(),
});
`;

// Inside the repository, so `kube-lambda-webhooks` resolves to its sources (and tsx to its own);
// a CommonJS project: the functions' builds are ES modules whatever the package type.
const work = projectInRepository('.klw-test-conformance-', { probe: probe() });
after(() => rmSync(work, { recursive: true, force: true }));
mkdirSync(join(work, 'test', 'functions'), { recursive: true });
cpSync(join(root, CONFORMANCE), join(work, CONFORMANCE));
writeFileSync(join(work, 'package.json'), JSON.stringify({ name: 'probe-project', type: 'commonjs' }));
const passing = (name: string) => `import { it } from 'node:test';\nit('${name}', () => {});\n`;
// Three more test files, for the runs under --group.
for (const [file, text] of Object.entries({
  'test/other.test.ts': passing('other'),
  'test/more.test.ts': passing('more'),
  'test/long.test.ts': `// klw-test: own-process\n${passing('long')}`,
}))
  writeFileSync(join(work, file), text);

/**
 * Runs the project's tests as npm test runs this repository's, under --group, one at a time:
 * one long file of its own, where the three short ones would share a process. The times are
 * written before each run: klw test keeps the times it measures there.
 */
function groupRun(): { code: number; out: string } {
  const times = { 'test/long.test.ts': 10_000, 'test/other.test.ts': 10, 'test/more.test.ts': 10, [CONFORMANCE]: 10 };
  mkdirSync(join(work, '.klw'), { recursive: true });
  writeFileSync(join(work, '.klw', 'test-times.json'), JSON.stringify(times));
  return klwTest(work, '--reporter', 'tap', '--group', '--concurrency', '1', 'test');
}

/** The processes that loaded the probe since the last call (and each test's start), as it recorded them. */
function loads(): Array<{ execArgv: string[]; file: string }> {
  const file = join(work, 'loads.jsonl');
  let text = '';
  try {
    text = readFileSync(file, 'utf8');
  } catch {}
  rmSync(file, { force: true });
  return text
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line));
}

describe('the conformance test run by klw test', () => {
  beforeEach(() => loads());

  // The first run of the project's tests, and the loads it recorded: each test below reads its part.
  let first: { code: number; out: string; seen: ReturnType<typeof loads> } | undefined;
  /** The first run, made by the first test that reads it. */
  const firstRun = () => {
    if (!first) {
      loads();
      first = { ...groupRun(), seen: loads() };
    }
    return first;
  };

  it('imports the functions from the build, in a test process without tsx', () => {
    const { code, out, seen } = firstRun();
    assert.equal(code, 0, out);
    assert.match(out, /# Subtest: probe conformance/);
    assert.match(out, /^ {4}ok \d+ - answers v1 and v1beta1 reviews/m);
    assert.equal(seen.length, 1, JSON.stringify(seen));
    assert.ok(!seen[0]!.execArgv.some((a) => /tsx/.test(a)), JSON.stringify(seen));
    assert.ok(seen[0]!.file.includes(`${sep}.cache${sep}klw-test${sep}`), seen[0]!.file);
    assert.match(seen[0]!.file, /conformance\.test\.mjs$/);
  });

  it('picks up a function changed since (to throw at load: its own test fails, with its line) and one added', () => {
    // After the first run: its build is the one to pick the changes up.
    firstRun();
    const entry = join(work, 'functions', 'probe', 'index.ts');
    writeFileSync(entry, probe("throw new Error('broken at load');"));
    const js = join(work, 'functions', 'added', 'index.mjs');
    mkdirSync(join(js, '..'), { recursive: true });
    writeFileSync(
      js,
      `import { allow, defineValidatingWebhook } from 'kube-lambda-webhooks';
export default defineValidatingWebhook({ name: 'added', rules: [{ operations: ['CREATE'], apiGroups: ['apps'], apiVersions: ['v1'], resources: ['deployments'] }], validate: () => allow() });
`,
    );
    try {
      const { code, out } = groupRun();
      const seen = loads();
      assert.notEqual(code, 0, out);
      assert.match(out, /^ {4}not ok 1 - loads$/m);
      assert.match(out, /functions\/probe\/index\.ts throws when loaded: Error: broken at load/);
      assert.match(out, /\(.*functions\/probe\/index\.ts:9:\d+\)/, 'the stack names the source line');
      assert.match(out, /^ok \d+ - added conformance$/m, 'the JavaScript function added');
      assert.equal(seen.length, 1);
      assert.ok(!seen[0]!.execArgv.some((a) => /tsx/.test(a)), JSON.stringify(seen));
    } finally {
      writeFileSync(entry, probe());
      rmSync(join(js, '..'), { recursive: true });
    }
  });

  it('keeps a process of its own under --group, where its late suites could not run', () => {
    const { code, out } = firstRun();
    assert.equal(code, 0, out);
    assert.match(out, /^ {4}ok \d+ - answers v1 and v1beta1 reviews/m);
    assert.match(out, /^# pass 4$/m, 'the conformance check, other, more and long');
    assert.match(out, /^# Subtest: .*test\/other\.test\.ts$/m, 'other and more ran as a group');
    assert.doesNotMatch(out, /^# Subtest: .*conformance\.test\.ts$/m, 'not the conformance test');
  });

  it('imports the sources when run by hand through tsx', () => {
    const { NODE_TEST_CONTEXT: _context, ...env } = process.env;
    env[BUILT_FUNCTIONS_ENV] = JSON.stringify({ [join(work, 'functions', 'other', 'index.ts')]: '/nowhere.mjs' });
    const run = spawnSync(process.execPath, ['--import', 'tsx', '--test', '--test-reporter=tap', CONFORMANCE], {
      cwd: work,
      env,
      encoding: 'utf8',
    });
    assert.equal(run.status, 0, `${run.stdout}${run.stderr}`);
    assert.match(run.stdout, /# Subtest: probe conformance/);
    const seen = loads();
    assert.equal(seen.length, 1);
    assert.ok(seen[0]!.file.endsWith(CONFORMANCE), seen[0]!.file);
  });
});

describe('a tsx that fails whatever loads it', () => {
  // What shows the klw init projects of test-runner.test.ts passing from the build.
  it('fails a test file that needs tsx', () => {
    const dir = withFailingTsx(join(work, 'failing-tsx'));
    mkdirSync(join(dir, 'test'));
    writeFileSync(join(dir, 'test', 'needs-tsx.test.ts'), "await import(String('./x.ts'));\n");
    const { code, out } = klwTest(dir, '--reporter', 'tap');
    assert.notEqual(code, 0, out);
    assert.match(out, /tsx loaded/);
  });
});

describe('the lint test klw init writes', () => {
  it('fails saying to install the package when no kube-lambda-webhooks is found above the project', () => {
    const dir = mkdtempSync(join(tmpdir(), 'klw-lint-test-'));
    try {
      mkdirSync(join(dir, 'test'));
      cpSync(join(root, 'infra', 'templates', 'project', 'lint.test.ts.tmpl'), join(dir, 'test', 'lint.test.ts'));
      const { code, out } = klwTest(dir, '--reporter', 'tap');
      assert.notEqual(code, 0, out);
      assert.match(out, /kube-lambda-webhooks has no infra\/bin\/klw\.mjs here: run npm install/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('functionModuleUrl', () => {
  it('gives the build the environment names for the entry, else the entry', () => {
    const entry = join(work, 'functions', 'probe', 'index.ts');
    const at = (value: string | undefined) => functionModuleUrl(entry, { [BUILT_FUNCTIONS_ENV]: value });
    assert.equal(at(JSON.stringify({ [entry]: '/built/probe.mjs' })), pathToFileURL('/built/probe.mjs').href);
    for (const value of [undefined, '', 'not json', 'null', '[]', '"x"', '{}', JSON.stringify({ [entry]: 1 })])
      assert.equal(at(value), pathToFileURL(entry).href, String(value));
    assert.equal(
      functionModuleUrl(entry, { [BUILT_FUNCTIONS_ENV]: JSON.stringify({ ['__proto__']: '/x.mjs' }) }),
      pathToFileURL(entry).href,
    );
  });
});
