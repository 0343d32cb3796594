import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { commandsFor, main, program } from '../../infra/cli.ts';
import { AUDIT_INCOMPLETE } from '../../infra/audit/index.ts';
import { KlwError } from '../../infra/errors.ts';
import { RanElsewhere } from '../../infra/node-binary.ts';
import { packageInfo } from '../../infra/version.ts';
import { withCapturedOutput } from '../helpers.ts';

// klw imports a command's module when first run: done here, not while a test holds stdout.
before(() => program());

const empty = mkdtempSync(join(tmpdir(), 'klw-empty-'));
after(() => rmSync(empty, { recursive: true, force: true }));

/** Runs klw in-process; returns the exit code and what it wrote. */
async function run(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const { result, stdout, stderr } = await withCapturedOutput(() => main(['node', 'klw', ...args]), { stdout: true });
  return { code: result, stdout, stderr };
}

describe('klw --version', () => {
  it('prints the version in package.json', async () => {
    const { version } = JSON.parse(readFileSync('package.json', 'utf8')) as { version: string };
    for (const flag of ['--version', '-V']) {
      const { code, stdout } = await run(flag);
      assert.equal(code, 0);
      assert.equal(stdout.trim(), version);
    }
    assert.equal(packageInfo().version, version);
  });

  it('fails when no package.json of this package is above the file', () => {
    assert.throws(
      () => packageInfo(`file://${join(empty, 'x.js')}`),
      /kube-lambda-webhooks: package\.json not found above/,
    );
  });
});

describe('a project without functions', () => {
  for (const setup of ['no functions/ folder', 'an empty functions/ folder', 'folders without an index file']) {
    it(`gets one line saying where functions go (${setup})`, async () => {
      rmSync(join(empty, 'functions'), { recursive: true, force: true });
      if (setup !== 'no functions/ folder') mkdirSync(join(empty, 'functions'));
      if (setup === 'folders without an index file') mkdirSync(join(empty, 'functions', 'half-done'));
      // The folder without an index file is named once (klw runs in-process here, three times).
      const warning =
        'warning: functions/half-done has no index.ts, index.mts, index.js or index.mjs: it is not a function and is skipped\n';
      let warned = 0;
      for (const command of [['build'], ['manifests', '--base-url', 'https://x.example.com'], ['lint']]) {
        const { code, stderr } = await run('--root', empty, ...command);
        assert.equal(code, 1, command.join(' '));
        if (stderr.startsWith(warning)) warned++;
        assert.equal(
          stderr.replace(warning, ''),
          `klw: no functions in ${join(empty, 'functions')}: each function is functions/<name>/index.ts (or .mts, .js, .mjs); add one with \`klw new validating <name>\`\n`,
        );
      }
      assert.equal(warned, setup === 'folders without an index file' ? 1 : 0);
    });
  }
});

describe('exit codes', () => {
  it('a KlwError exits 1 unless it carries another code, and main prints its one line', async () => {
    assert.equal(new KlwError('failed').exitCode, 1);
    const cause = new Error('HTTP 401');
    const incomplete = new KlwError('audit incomplete', { exitCode: AUDIT_INCOMPLETE, cause });
    assert.deepEqual([incomplete.exitCode, incomplete.cause, incomplete.message], [2, cause, 'audit incomplete']);
    // The audit did not run: exit 2, with main's one line and nothing more.
    const { code, stderr } = await run('--root', empty, 'audit', '--page-size', '0');
    assert.equal(code, AUDIT_INCOMPLETE);
    assert.equal(stderr, 'klw: --page-size must be a whole number of at least 1\n');
  });
});

describe('--node', () => {
  it('runs again the argv of its own run when runs in one process overlap', async () => {
    const seen: Array<[string | undefined, string[]]> = [];
    const applyNodeOption = async (spec: string | undefined, argv: string[]) => {
      seen.push([spec, argv]);
      throw new RanElsewhere(spec === '22' ? 3 : 4);
    };
    const argvOf = (major: string, file: string) => ['node', 'klw', '--root', empty, 'test', '--node', major, file];
    const codes = await Promise.all([
      main(argvOf('22', 'a.test.ts'), { applyNodeOption }),
      main(argvOf('24', 'b.test.ts'), { applyNodeOption }),
    ]);
    assert.deepEqual(codes, [3, 4]);
    assert.deepEqual(
      seen.sort(([a], [b]) => String(a).localeCompare(String(b))),
      [
        ['22', argvOf('22', 'a.test.ts')],
        ['24', argvOf('24', 'b.test.ts')],
      ],
    );
  });
});

describe('the command modules klw imports', () => {
  const all = () => [...commandsFor(['node', 'klw'])].sort();

  it("are the command's own for a command klw knows, wherever the program's options are", () => {
    assert.deepEqual(commandsFor(['node', 'klw', 'audit', '--context', 'x']), ['audit']);
    assert.deepEqual(commandsFor(['node', 'klw', '--root', 'lint', 'build', 'lint']), ['build']);
    assert.deepEqual(commandsFor(['node', 'klw', '--root=/p', 'local', 'invoke', 'f']), ['local']);
    assert.deepEqual(commandsFor(['node', 'klw', 'help', 'secret']), ['secret']);
    assert.deepEqual(commandsFor(['node', 'klw', 'test', '--help']), ['test']);
  });

  it("are none for the version, every one for the program's help or a name klw does not know", async () => {
    assert.deepEqual(commandsFor(['node', 'klw', '--version']), []);
    assert.deepEqual(commandsFor(['node', 'klw', '-V']), []);
    const names = (await program()).commands.map((c) => c.name()).sort();
    assert.deepEqual(all(), names);
    for (const argv of [
      [],
      ['--help'],
      ['-h'],
      ['help'],
      ['help', 'nope'],
      ['biuld'],
      ['--root'],
      ['--unknown', 'build'],
    ])
      assert.deepEqual([...commandsFor(['node', 'klw', ...argv])].sort(), names, argv.join(' '));
    // A mistyped name gets the suggestion it got before: every name is known to the program.
    const { code, stderr } = await run('biuld');
    assert.equal(code, 1);
    assert.match(stderr, /unknown command 'biuld'\n\(Did you mean build\?\)/);
  });

  it('build the same program for a command as when all are loaded', async () => {
    const one = await program({}, ['node', 'klw', 'manifests']);
    const whole = await program();
    assert.deepEqual(
      one.commands.map((c) => c.name()),
      ['manifests'],
    );
    assert.equal(
      one.commands[0]!.helpInformation(),
      whole.commands.find((c) => c.name() === 'manifests')!.helpInformation(),
    );
  });
});
