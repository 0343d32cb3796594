// The project files klw reads (clusters.yaml, serverless.yml, secret files) are read through one
// descriptor opened without following a link and without waiting on a named pipe: a FIFO planted
// at clusters.yaml is refused at once by every command, where opening it used to wait forever
// for a writer. The FIFO cases run in child processes, so a hang fails the test instead of
// stalling the runner.
import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import { mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, describe, it } from 'node:test';
import { cachedBuild, TOOLKIT } from '../../infra/build-cache.mjs';
import { readRegularFile } from '../../infra/files.ts';
import { PATIENCE_MS, projectInRepository } from '../helpers.ts';

const KLW = fileURLToPath(new URL('../../infra/bin/klw.mjs', import.meta.url));

/**
 * The readers the FIFO probe calls, built as klw's own sources are (infra/build-cache.mjs) and kept
 * until a source changes: the probe's child imports them without a TypeScript loader.
 */
const READERS = {
  fleet: 'infra/fleet/file.ts',
  files: 'infra/files.ts',
  serverless: 'infra/deploy/serverless.ts',
  runtimes: 'infra/runtimes.ts',
  project: 'infra/local/back/project.ts',
  secrets: 'infra/secrets/secrets.ts',
  certs: 'infra/local/certs.ts',
  apply: 'infra/local/apply.ts',
};
const readers = async (): Promise<Record<keyof typeof READERS, string>> => {
  const { dir } = await cachedBuild({
    cacheDir: join(TOOLKIT, 'node_modules', '.cache', 'klw-test-files-read'),
    entryPoints: READERS,
  });
  return Object.fromEntries(Object.keys(READERS).map((name) => [name, join(dir, `${name}.mjs`)])) as Record<
    keyof typeof READERS,
    string
  >;
};

const work = projectInRepository('.klw-test-files-read-', {
  guarded: `import { allow, defineValidatingWebhook } from 'kube-lambda-webhooks';
export default defineValidatingWebhook({ name: 'guarded', rules: [], validate: () => allow() });
`,
});
after(() => rmSync(work, { recursive: true, force: true }));
const fifo = (path: string) => execFileSync('mkfifo', [path]);
fifo(join(work, 'clusters.yaml'));
fifo(join(work, 'serverless.yml'));

/** Runs node with `args` in a child; a child still waiting after the patience is killed and reported. */
function child(args: string[]): Promise<{ code: number; stdout: string; stderr: string; hung: boolean }> {
  return new Promise((resolve) =>
    execFile(
      process.execPath,
      args,
      { encoding: 'utf8', timeout: PATIENCE_MS, killSignal: 'SIGKILL' },
      (err, stdout, stderr) => {
        const failed = err as (Error & { code?: number; killed?: boolean }) | null;
        resolve({ code: failed ? Number(failed.code ?? 1) : 0, stdout, stderr, hung: failed?.killed === true });
      },
    ),
  );
}

describe('a named pipe (FIFO) where a project file goes', () => {
  it("every reader refuses it at once: the fleet file, serverless.yml, a secret file, the emulator's state", async () => {
    const secretDir = join(work, '.state', 'clusters', 'a');
    mkdirSync(secretDir, { recursive: true, mode: 0o700 });
    fifo(join(secretDir, 'path-secret'));
    // The emulator's own state: its CA certificate and its record of what it applied.
    const emulatorDir = join(work, '.emulator');
    mkdirSync(emulatorDir, { mode: 0o700 });
    fifo(join(emulatorDir, 'ca.crt'));
    writeFileSync(join(emulatorDir, 'ca.key'), 'not read\n', { mode: 0o600 });
    fifo(join(emulatorDir, 'applied.json'));
    const built = await readers();
    const script = `
      const attempt = async (what, read) => { try { await read(); return [what, 'read']; } catch (err) { return [what, err.message]; } };
      const { loadFleet } = await import(${JSON.stringify(built.fleet)});
      const { readRegularFile } = await import(${JSON.stringify(built.files)});
      const { readServerless } = await import(${JSON.stringify(built.serverless)});
      const { projectRuntime } = await import(${JSON.stringify(built.runtimes)});
      const { configuredRuntime } = await import(${JSON.stringify(built.project)});
      const { readLocalPathSecret } = await import(${JSON.stringify(built.secrets)});
      const { ensureLocalCertificates } = await import(${JSON.stringify(built.certs)});
      const { readRecord } = await import(${JSON.stringify(built.apply)});
      const root = ${JSON.stringify(work)};
      console.log(JSON.stringify(Object.fromEntries([
        await attempt('readRegularFile', () => readRegularFile(root + '/clusters.yaml')),
        await attempt('loadFleet', () => loadFleet(root, [])),
        await attempt('readServerless', () => readServerless(root)),
        ['projectRuntime', projectRuntime(root)],
        ['configuredRuntime', configuredRuntime(root)],
        await attempt('readLocalPathSecret', () => readLocalPathSecret(${JSON.stringify(secretDir)})),
        await attempt('ensureLocalCertificates', () => ensureLocalCertificates(${JSON.stringify(emulatorDir)}, () => {})),
        await attempt('readRecord', () => readRecord(${JSON.stringify(emulatorDir)})),
      ])));`;
    const run = await child(['--input-type=module', '-e', script]);
    assert.equal(run.hung, false, 'a reader waited on the pipe');
    assert.equal(run.code, 0, run.stderr);
    const results = JSON.parse(run.stdout) as Record<string, string>;
    assert.match(results.readRegularFile!, /clusters\.yaml is not a regular file/);
    assert.equal(
      results.loadFleet,
      'clusters.yaml is not a regular file; write the fleet file itself at the project root',
    );
    assert.match(results.readServerless!, /serverless\.yml is not a regular file/);
    // The runtime readers fall back to the default, as for a broken file.
    assert.equal(results.projectRuntime, 'nodejs24.x');
    assert.equal(results.configuredRuntime, 'nodejs24.x');
    assert.match(results.readLocalPathSecret!, /path-secret is not a regular file/);
    assert.match(results.ensureLocalCertificates!, /ca\.crt is not a regular file/);
    assert.match(results.readRecord!, /applied\.json is not readable JSON/);
  });

  for (const args of [['lint'], ['secret', 'rotate', '--local', '--cluster', 'a', '--state-dir', '.state']]) {
    it(`klw ${args.join(' ')} says clusters.yaml is not a regular file, and exits`, async () => {
      const run = await child([KLW, '--root', work, ...args]);
      assert.equal(run.hung, false, `klw ${args[0]} waited on the pipe`);
      assert.notEqual(run.code, 0);
      assert.match(run.stderr, /clusters\.yaml is not a regular file/);
    });
  }
});

describe('readRegularFile', () => {
  it('reads a regular file, and refuses a link, a folder, a missing file and one over the size', () => {
    const dir = join(work, 'plain');
    mkdirSync(dir);
    writeFileSync(join(dir, 'a.yaml'), 'x: 1\n');
    assert.equal(readRegularFile(join(dir, 'a.yaml')), 'x: 1\n');
    symlinkSync(join(dir, 'a.yaml'), join(dir, 'link.yaml'));
    const refusal = (file: string, max?: number) => {
      try {
        readRegularFile(file, max);
      } catch (err) {
        return [(err as { code?: string }).code, (err as Error).message];
      }
      assert.fail(`${file} was read`);
    };
    assert.deepEqual(refusal(join(dir, 'link.yaml')), [
      'ELOOP',
      `${join(dir, 'link.yaml')} is a symbolic link; refusing to follow it (remove it)`,
    ]);
    assert.equal(refusal(dir)[0], 'ENOTREG');
    assert.equal(refusal(join(dir, 'missing.yaml'))[0], 'ENOENT');
    assert.deepEqual(refusal(join(dir, 'a.yaml'), 4), ['EFBIG', `${join(dir, 'a.yaml')} is 5 bytes; at most 4`]);
  });
});
