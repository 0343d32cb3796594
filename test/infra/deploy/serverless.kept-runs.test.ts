// The kept osls runs of serverless-package.ts: only a successful run is kept, its name changes with
// everything osls reads, and a planted symlink at the cache folder or at an entry is never followed.
import assert from 'node:assert/strict';
import {
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  rmSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, beforeEach, describe, it } from 'node:test';
import { BUILT_FUNCTIONS_ENV } from '../../../lib/harness/discover.ts';
import { pruneRuns, runName, serverlessPackage } from './serverless-package.ts';

const scratch = mkdtempSync(join(tmpdir(), 'klw-osls-cache-'));
after(() => rmSync(scratch, { recursive: true, force: true }));

let work: string;
let cache: string;
let packageDir: string;
beforeEach(() => {
  const at = mkdtempSync(join(scratch, 'case-'));
  work = join(at, 'work');
  cache = join(at, 'cache');
  packageDir = join(at, 'package');
  mkdirSync(work);
  writeFileSync(join(work, 'serverless.yml'), 'service: x\n');
});

/** A fake osls: counts its runs, writes a template into the package folder and answers `code`. */
function fakeOsls(code: number) {
  const calls: string[][] = [];
  const run = async (_work: string, args: string[]) => {
    calls.push(args);
    mkdirSync(packageDir, { recursive: true });
    writeFileSync(join(packageDir, 'template.json'), `{"run":${calls.length}}`);
    return { code, stdout: `run ${calls.length}`, stderr: '' };
  };
  return { calls, run };
}

const env = { AWS_ACCESS_KEY_ID: '' };

describe('kept osls runs', () => {
  it('never keeps a failed run (an error, a killed osls), and keeps a successful one', async () => {
    const failing = fakeOsls(137);
    await serverlessPackage(work, ['--stage', 'test'], packageDir, env, { run: failing.run, cache });
    const again = await serverlessPackage(work, ['--stage', 'test'], packageDir, env, { run: failing.run, cache });
    assert.equal(failing.calls.length, 2, 'the failure is run again, not replayed');
    assert.equal(again.code, 137);
    const ok = fakeOsls(0);
    await serverlessPackage(work, ['--stage', 'test'], packageDir, env, { run: ok.run, cache });
    rmSync(packageDir, { recursive: true });
    const kept = await serverlessPackage(work, ['--stage', 'test'], packageDir, env, { run: ok.run, cache });
    assert.equal(ok.calls.length, 1, 'the success is kept');
    assert.equal(kept.stdout, 'run 1');
    assert.ok(existsSync(join(packageDir, 'template.json')), 'the package folder comes back');
    await serverlessPackage(work, ['--stage', 'test'], packageDir, env, { run: ok.run, cache, fresh: true });
    assert.equal(ok.calls.length, 2, 'a fresh run is real');
  });

  it('keeps a failed run that says the failure expected, and only such a one', async () => {
    const refused = fakeOsls(1);
    const expected = { run: refused.run, cache, failure: /^run 1$/ };
    await serverlessPackage(work, ['--stage', 'test'], packageDir, env, expected);
    const kept = await serverlessPackage(work, ['--stage', 'test'], packageDir, env, expected);
    assert.equal(refused.calls.length, 1, 'the expected failure is kept');
    assert.deepEqual([kept.code, kept.stdout], [1, 'run 1']);
    const other = fakeOsls(1);
    const unexpected = { run: other.run, cache, failure: /out of memory/ };
    await serverlessPackage(work, ['--stage', 'other'], packageDir, env, unexpected);
    await serverlessPackage(work, ['--stage', 'other'], packageDir, env, unexpected);
    assert.equal(other.calls.length, 2, 'another failure is run again');
  });

  it('names a run by the environment osls reads, Node, and symlinks by their target', () => {
    const base = runName(work, [], env);
    assert.equal(runName(work, [], { ...env, UNRELATED: 'x' }), base);
    for (const name of ['NODE_OPTIONS', 'HOME', 'SERVERLESS_ACCESS_KEY', 'SLS_DEBUG', 'AWS_REGION', 'KLW_X', 'PATH'])
      assert.notEqual(runName(work, [], { ...env, [name]: 'changed' }), base, name);
    assert.notEqual(runName(work, ['--stage', 'prod'], env), base);
    symlinkSync('/one/place', join(work, 'link'));
    const linked = runName(work, [], env);
    assert.notEqual(linked, base, 'a symlink counts');
    rmSync(join(work, 'link'));
    symlinkSync('/another/place', join(work, 'link'));
    assert.notEqual(runName(work, [], env), linked, 'a symlink counts by its target');
  });

  it("leaves klw test's own variables out of a run's name and of osls's environment", async () => {
    // Names the run's test build, which changes with any test file: osls and the plugin never read it.
    const runner = { ...env, [BUILT_FUNCTIONS_ENV]: '{"/p/functions/a/index.ts":"/cache/1234/a/index.mjs"}' };
    assert.equal(runName(work, [], runner), runName(work, [], env));
    const seen: NodeJS.ProcessEnv[] = [];
    const run = async (_work: string, _args: string[], given: NodeJS.ProcessEnv) => {
      seen.push(given);
      return { code: 0, stdout: '', stderr: '' };
    };
    await serverlessPackage(work, [], packageDir, runner, { run, cache });
    assert.equal(seen.length, 1);
    assert.equal(seen[0]![BUILT_FUNCTIONS_ENV], undefined);
    assert.equal(seen[0]!.AWS_ACCESS_KEY_ID, '', 'the rest is passed on');
  });

  it('removes a symlink planted at the cache folder without following it', async () => {
    const victim = join(scratch, 'victim-folder');
    const name = runName(work, [], env);
    mkdirSync(join(victim, name), { recursive: true });
    writeFileSync(join(victim, name, 'result.json'), JSON.stringify({ code: 0, stdout: 'planted', stderr: '' }));
    symlinkSync(victim, cache);
    const ok = fakeOsls(0);
    const result = await serverlessPackage(work, [], packageDir, env, { run: ok.run, cache });
    assert.equal(result.stdout, 'run 1', 'the planted run is not read');
    assert.ok(lstatSync(cache).isDirectory(), 'the cache is a real folder now');
    assert.deepEqual(readdirSync(victim), [name], 'nothing was written through the link');
  });

  it('removes a symlink planted at an entry without following it', async () => {
    const victim = mkdtempSync(join(scratch, 'victim-entry-'));
    writeFileSync(join(victim, 'result.json'), JSON.stringify({ code: 0, stdout: 'planted', stderr: '' }));
    mkdirSync(cache);
    const entry = join(cache, runName(work, [], env));
    symlinkSync(victim, entry);
    const ok = fakeOsls(0);
    const result = await serverlessPackage(work, [], packageDir, env, { run: ok.run, cache });
    assert.equal(result.stdout, 'run 1');
    assert.ok(lstatSync(entry).isDirectory(), 'the entry is a real folder now');
    assert.deepEqual(readdirSync(victim), ['result.json'], 'the target is untouched');
  });

  it('prunes only entries of other toolkit sources and drafts older than an hour', () => {
    mkdirSync(cache);
    const current = 'a'.repeat(16);
    const names = [`${current}-${'1'.repeat(16)}`, `${'b'.repeat(16)}-${'2'.repeat(16)}`, 'unrelated', '.draft-old'];
    for (const name of [...names, '.draft-new']) mkdirSync(join(cache, name));
    const hour = 3600;
    utimesSync(join(cache, '.draft-old'), 1_000_000, 1_000_000);
    utimesSync(join(cache, '.draft-new'), 1_000_000 + hour, 1_000_000 + hour);
    pruneRuns(cache, current, (1_000_000 + hour + 60) * 1000);
    assert.deepEqual(readdirSync(cache).sort(), ['.draft-new', `${current}-${'1'.repeat(16)}`, 'unrelated']);
  });
});
