// The loader's answers reused within one process: the same functions, unchanged, load once; any
// change a module could see at load (its code, a file beside it, the environment) loads afresh;
// a failed or cut-short load is never kept.
import assert from 'node:assert/strict';
import { fork } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { PassThrough } from 'node:stream';
import { loadFunctions } from '../../../infra/functions.ts';
import { answerKey, KEPT_ANSWERS, keepAnswer, keptAnswer, MAX_HASHED_BYTES } from '../../../infra/loader/answers.ts';
import type { StartLoader } from '../../../infra/loader/load.ts';
import { withCapturedOutput } from '../../helpers.ts';
import { GOOD_WEBHOOK, keptFunctions, scratchProjects } from '../scratch-projects.ts';

const project = scratchProjects();

/** A loader start that counts the children it starts (as klw starts them). */
function counted(): { start: StartLoader; children: () => number } {
  let children = 0;
  return {
    start: (module, args, options) => {
      children++;
      return fork(module, args, options);
    },
    children: () => children,
  };
}

/** A validating function `name` whose webhook name ends in what the `settings` file (beside it) says at load. */
const READS_SETTINGS = (name: string, settings: string) =>
  "import { readFileSync } from 'node:fs';\n" +
  "import { allow, defineValidatingWebhook, on, Pod } from 'kube-lambda-webhooks';\n" +
  `const { suffix } = JSON.parse(readFileSync(${JSON.stringify(settings)}, 'utf8'));\n` +
  `console.error('${name} loads with ' + suffix + ' and ' + process.env.KLW_TEST_ANSWER);\n` +
  `export default defineValidatingWebhook({ name: '${name}', webhookName: '${name}.' + suffix, rules: [on(Pod).create()], validate: () => allow() });\n`;

/** The webhook names the functions register. */
const webhookNames = (functions: Awaited<ReturnType<typeof loadFunctions>>) =>
  functions.map((f) => (f.registration as { webhookName?: string }).webhookName);

/** Loads the project's functions with `start`, capturing what is written: the names and the lines said at load. */
async function load(root: string, start: StartLoader): Promise<{ names: unknown[]; said: string[] }> {
  const { result, stderr } = await withCapturedOutput(() => loadFunctions(root, undefined, { start }));
  return { names: webhookNames(result), said: stderr.split('\n').filter((line) => line.includes(' loads with ')) };
}

/** A project of one function, `one`, that reads its settings.json (suffix `suffix`) at load. */
function readingSettings(suffix: string): { root: string; settings: string } {
  const root = project({ one: GOOD_WEBHOOK('one') });
  const settings = join(root, 'functions', 'one', 'settings.json');
  writeFileSync(settings, `{ "suffix": "${suffix}" }`);
  writeFileSync(join(root, 'functions', 'one', 'index.ts'), READS_SETTINGS('one', settings));
  return { root, settings };
}

describe("the loader's answers within one process", () => {
  it('loads unchanged functions once, writing what they said at load again, and gives a copy each time', async () => {
    const { root } = readingSettings('example.com');
    const { start, children } = counted();
    const first = await load(root, start);
    assert.deepEqual(first, { names: ['one.example.com'], said: ['one loads with example.com and undefined'] });
    const second = await load(root, start);
    assert.deepEqual(second, first);
    assert.equal(children(), 1, 'the second load reused the first');
    // A caller changing what it got changes nothing kept.
    const [fn] = await loadFunctions(root, undefined, { start });
    (fn!.registration as { webhookName?: string }).webhookName = 'changed';
    assert.deepEqual((await load(root, start)).names, ['one.example.com']);
    assert.equal(children(), 1);
  });

  it('shares a load under way: loads started at once start one child, and each writes what was said', async () => {
    const { root } = readingSettings('example.com');
    const { start, children } = counted();
    const { result, stderr } = await withCapturedOutput(() =>
      Promise.all([0, 1, 2].map(() => loadFunctions(root, undefined, { start }))),
    );
    assert.deepEqual(result.map(webhookNames), [['one.example.com'], ['one.example.com'], ['one.example.com']]);
    assert.equal(children(), 1, 'the loads started while the first was under way took its answer');
    assert.equal(stderr.split('\n').filter((line) => line.includes(' loads with ')).length, 3);
    // Each got a copy of its own.
    assert.notEqual(result[0]![0]!.registration, result[1]![0]!.registration);
  });

  it('loads afresh when a module, a file beside it or the environment changed', async () => {
    const { root, settings } = readingSettings('a.example.com');
    const { start, children } = counted();
    assert.deepEqual((await load(root, start)).names, ['one.a.example.com']);
    // A file the module reads at load, never imported: the same size, other content.
    writeFileSync(settings, '{ "suffix": "b.example.com" }');
    assert.deepEqual((await load(root, start)).names, ['one.b.example.com']);
    assert.equal(children(), 2);
    // The module's own code.
    writeFileSync(
      join(root, 'functions', 'one', 'index.ts'),
      READS_SETTINGS('one', settings).replace("'one.' + suffix", "'one.x' + suffix"),
    );
    assert.deepEqual((await load(root, start)).names, ['one.xb.example.com']);
    assert.equal(children(), 3);
    // The environment the module reads.
    process.env.KLW_TEST_ANSWER = 'set';
    try {
      assert.deepEqual((await load(root, start)).said, ['one loads with b.example.com and set']);
    } finally {
      delete process.env.KLW_TEST_ANSWER;
    }
    assert.equal(children(), 4);
    // A new function folder.
    mkdirSync(join(root, 'functions', 'two'));
    writeFileSync(join(root, 'functions', 'two', 'index.ts'), GOOD_WEBHOOK('two'));
    assert.equal((await loadFunctions(root, undefined, { start })).length, 2);
    assert.equal(children(), 5);
  });

  it('keeps no failed load, nor shares one with loads started while it was under way', async () => {
    // Only loaded: kept across runs (scratch-projects.ts), the loader's build of it with it.
    const root = await keptFunctions('answers-failing', {
      bad: `${GOOD_WEBHOOK('bad')}throw new Error('not today');\n`,
    });
    const { start, children } = counted();
    await Promise.all([0, 1].map(() => assert.rejects(loadFunctions(root, undefined, { start }), /not today/)));
    assert.equal(children(), 2, 'the second waited for the first, which kept nothing, and loaded itself');
    await assert.rejects(loadFunctions(root, undefined, { start }), /not today/);
    assert.equal(children(), 3);
  });

  it("keeps no load whose output klw stopped reading (a process holding the child's pipe)", async () => {
    const root = await keptFunctions('answers-output-cut', { one: GOOD_WEBHOOK('one') });
    let children = 0;
    // The child's stderr as klw sees it never ends: klw stops reading after the grace.
    const held: StartLoader = (module, args, options) => {
      children++;
      const child = fork(module, args, options);
      const open = new PassThrough();
      child.stderr!.pipe(open, { end: false });
      Object.defineProperty(child, 'stderr', { value: open });
      return child;
    };
    for (let i = 0; i < 2; i++) await loadFunctions(root, undefined, { start: held, outputGraceMs: 10 });
    assert.equal(children, 2);
  });

  it('follows links under functions/ to what they lead to, once, and reads nothing it cannot', () => {
    const root = project({ one: GOOD_WEBHOOK('one') });
    const elsewhere = mkdtempSync(join(root, 'shared-'));
    writeFileSync(join(elsewhere, 'settings.json'), '{ "suffix": "a" }');
    symlinkSync(elsewhere, join(root, 'functions', 'one', 'shared'));
    // A link back up: entered once, not forever.
    symlinkSync(join(root, 'functions'), join(root, 'functions', 'one', 'up'));
    const before = answerKey(root, 'x');
    assert.equal(typeof before, 'string');
    writeFileSync(join(elsewhere, 'settings.json'), '{ "suffix": "b" }');
    assert.notEqual(answerKey(root, 'x'), before, 'a file behind a linked folder changed');
    // A functions "folder" that is a file cannot be compared: no key, loaded afresh.
    const odd = project({});
    rmSync(join(odd, 'functions'), { recursive: true, force: true });
    writeFileSync(join(odd, 'functions'), '');
    assert.equal(answerKey(odd, 'x'), undefined);
  });

  it('compares no functions folder larger than its limit, and keeps the newest answers', () => {
    const root = project({ one: GOOD_WEBHOOK('one') });
    assert.equal(typeof answerKey(root, 'x'), 'string');
    assert.notEqual(answerKey(root, 'x'), answerKey(root, 'y'));
    writeFileSync(join(root, 'functions', 'one', 'data.bin'), Buffer.alloc(MAX_HASHED_BYTES + 1));
    assert.equal(answerKey(root, 'x'), undefined);
    for (let i = 0; i <= KEPT_ANSWERS; i++) keepAnswer(`kept-${i}`, { modules: [i], output: [] });
    assert.equal(keptAnswer('kept-0'), undefined, 'the oldest went');
    assert.deepEqual(keptAnswer(`kept-${KEPT_ANSWERS}`)?.modules, [KEPT_ANSWERS]);
    keepAnswer('too-loud', { modules: [], output: [Buffer.alloc(1024 * 1024 + 1)] });
    assert.equal(keptAnswer('too-loud'), undefined);
  });
});
