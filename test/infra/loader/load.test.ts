import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { before, describe, it } from 'node:test';
import { bundlePath } from '../../../infra/build.ts';
import { describeThrown } from '../../../infra/errors.ts';
import { loadFunctions } from '../../../infra/functions.ts';
import { runKlw } from '../../helpers.ts';
import { GOOD_WEBHOOK, keptFunctions, scratchProjects } from '../scratch-projects.ts';

// Projects this file only loads are kept across runs by content, the loader's build of their
// functions with them; the one a test writes into is made anew.
const project = scratchProjects();
const GOOD = GOOD_WEBHOOK;

/** No line of klw's own stack trace: errors are one line naming the file. */
const NO_STACK = /^\s+at /m;

/**
 * Runs `test` so that a function module ending this test process (as it would, imported here)
 * fails the test file rather than passing it silently with exit code 0.
 */
async function guarded(test: () => Promise<void>): Promise<void> {
  const guard = () => {
    process.exitCode = 1;
    process.stderr.write('a function module ended the test process\n');
  };
  process.on('exit', guard);
  try {
    await test();
  } finally {
    process.off('exit', guard);
  }
}

describe('function modules that misbehave at load', () => {
  it('klw lint and klw build refuse a module that calls process.exit(0), naming it, and build writes nothing', () =>
    guarded(async () => {
      const root = await keptFunctions('loader-quitter', {
        good: GOOD('good'),
        quitter: `${GOOD('quitter')}process.exit(0);\n`,
      });
      const lint = await runKlw('--root', root, 'lint');
      assert.equal(lint.code, 1, lint.stderr);
      assert.match(
        lint.stderr,
        /functions\/quitter\/index\.ts: the process loading it exited with code 0 .*process\.exit\(\)/,
      );
      const build = await runKlw('--root', root, 'build');
      assert.equal(build.code, 1, build.stderr);
      assert.match(build.stderr, /functions\/quitter\/index\.ts: .*exited with code 0/);
      assert.equal(existsSync(bundlePath(root, 'good')), false);
      assert.equal(existsSync(bundlePath(root, 'quitter')), false);
    }));

  it('names the module that ends the process after others loaded, whatever its exit code', () =>
    guarded(async () => {
      const root = await keptFunctions('loader-exit-3', { a: GOOD('a'), b: GOOD('b'), c: 'process.exit(3);\n' });
      await assert.rejects(loadFunctions(root), /^KlwError: functions\/c\/index\.ts: .*exited with code 3/);
      const killed = await keptFunctions('loader-sigkill', { k: "process.kill(process.pid, 'SIGKILL');\n" });
      await assert.rejects(loadFunctions(killed), /functions\/k\/index\.ts: .*was killed by SIGKILL/);
    }));

  // The loader's time limit is given small: what is checked is the error, not how long it took. It
  // counts once the loader is ready; the endless loop spins a core for all of it: a shorter one.
  for (const [what, code, timeoutMs, error, kept] of [
    [
      'an endless loop',
      'while (true) {}\n',
      300,
      /functions\/stuck\/index\.ts did not finish loading within 300 ms: an endless loop, a top-level await/,
      'loader-endless-loop',
    ],
    [
      'a top-level await that never settles',
      'await new Promise(() => {});\n',
      1500,
      /functions\/stuck\/index\.ts did not finish loading within 1\.5 s: an endless loop, a top-level await/,
      'loader-endless-await',
    ],
  ] as const) {
    it(`gives up on ${what} after its time limit, naming the module`, async () => {
      const root = await keptFunctions(kept, { stuck: code });
      await assert.rejects(loadFunctions(root, undefined, { timeoutMs }), error);
    });
  }

  it('loads good modules in one child and reads their registrations', async () => {
    const root = await keptFunctions('loader-good', {
      one: GOOD('one'),
      two: `${GOOD('two')}console.log('hello from two');\n`,
    });
    const functions = await loadFunctions(root);
    assert.deepEqual(
      functions.map((f) => [f.name, f.registration.type, (f.registration as { webhookName?: string }).webhookName]),
      [
        ['one', 'validating', 'one.webhooks.kube-lambda.dev'],
        ['two', 'validating', 'two.webhooks.kube-lambda.dev'],
      ],
    );
  });
});

describe('odd values thrown by a module', () => {
  // Each module throws its value at load; the message names the file and says what was thrown.
  const cases: Array<[string, string, RegExp]> = [
    [
      'a Proxy whose every read throws',
      "throw new Proxy({}, { get() { throw new Error('trap'); }, getPrototypeOf() { throw new Error('trap'); } });",
      // Node's loader reads the thrown value first: the error of that read is what reaches klw.
      /: trap$/,
    ],
    ['an object without a prototype', 'throw Object.create(null);', /an object without a prototype/],
    ['a Symbol', "throw Symbol('odd');", /Symbol\(odd\) \(thrown as it is, not an Error\)/],
    ['undefined', 'throw undefined;', /undefined \(thrown as it is/],
    ['an Error', "throw new RangeError('out of range');", /: out of range$/],
    ['a string of 1 MB', "throw 'x'.repeat(1 << 20);", /x… \(1048576 characters\)$/],
    ['a throw from a timer after load', "setTimeout(() => { throw Symbol('late'); }, 0);", /Symbol\(late\)/],
  ];
  let odd: string;
  before(async () => {
    odd = await keptFunctions(
      'loader-odd-throws',
      Object.fromEntries(cases.map(([, code], i) => [`odd-${i}`, `${GOOD(`odd-${i}`)}${code}\n`])),
    );
  });
  for (const [i, [what, , description]] of cases.entries()) {
    it(`describes ${what}, with the file`, async () => {
      const err = await loadFunctions(odd, [`odd-${i}`]).then(
        () => assert.fail('loaded'),
        (e: Error) => e,
      );
      assert.match(err.message, new RegExp(`^functions/odd-${i}/index\\.ts: `));
      assert.match(err.message, description);
      assert.ok(err.message.length < 2200, `${err.message.length} characters`);
    });
  }

  it('klw lint prints one line for a thrown object without a prototype, naming the file, never a stack', async () => {
    const bare = await keptFunctions('loader-bare-throw', { bare: `${GOOD('bare')}throw Object.create(null);\n` });
    const { code, stderr } = await runKlw('--root', bare, 'lint');
    assert.equal(code, 1);
    assert.match(stderr, /^klw: functions\/bare\/index\.ts: an object without a prototype/m);
    assert.doesNotMatch(stderr, NO_STACK);
  });

  it('klw audit names the file when the module throws an odd value only in klw itself', async () => {
    // Loads in the loader's child, then throws when klw imports it to run it: the marker says which.
    const marker = join(project({}), 'loaded');
    const audited = project({
      twice:
        "import { existsSync, writeFileSync } from 'node:fs';\n" +
        GOOD('twice') +
        `if (existsSync(${JSON.stringify(marker)})) throw Object.create(null);\n` +
        `writeFileSync(${JSON.stringify(marker)}, '');\n`,
    });
    const { code, stderr } = await runKlw('--root', audited, 'audit', '--kubeconfig', join(audited, 'none'));
    assert.equal(code, 2, stderr);
    assert.match(stderr, /^klw: functions\/twice\/index\.ts: an object without a prototype/m);
    assert.doesNotMatch(stderr, NO_STACK);
  });

  it('describes any value without throwing', () => {
    const hostile = new Proxy(
      {},
      {
        get: () => assert.fail('read'),
        getPrototypeOf: () => assert.fail('prototype'),
        ownKeys: () => assert.fail('keys'),
        getOwnPropertyDescriptor: () => assert.fail('descriptor'),
      },
    );
    assert.equal(
      describeThrown(hostile),
      'an object whose properties cannot be read (a Proxy that throws?), not an Error',
    );
    assert.equal(describeThrown(new Error('plain')), 'plain');
    assert.equal(describeThrown({ message: 'shaped' }), 'shaped');
    assert.equal(describeThrown({ code: 7 }), '{"code":7} (thrown as it is, not an Error)');
    assert.equal(describeThrown(42n), '42 (thrown as it is, not an Error)');
    assert.match(
      describeThrown(function named() {}),
      /^a function named/,
    );
    const circular: Record<string, unknown> = {};
    circular.self = circular;
    assert.equal(describeThrown(circular), 'an object without a message (thrown instead of an Error)');
  });
});
