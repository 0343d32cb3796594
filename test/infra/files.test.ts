import assert from 'node:assert/strict';
import {
  chmodSync,
  cpSync,
  existsSync,
  linkSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { writeAuthConfig } from '../../infra/auth-config.ts';
import { makeDir, pathTaken, PRIVATE_MODE, writeFileSafely } from '../../infra/files.ts';
import { ensureCacheDir } from '../../infra/node-cache.ts';
import { ensureLocalPathSecret } from '../../infra/secrets/secrets.ts';
import { FIXTURE_FUNCTIONS, runKlw } from '../helpers.ts';

const scratch = mkdtempSync(join(tmpdir(), 'klw-files-'));
after(() => rmSync(scratch, { recursive: true, force: true }));
let count = 0;
/** A fresh folder under the scratch folder. */
const fresh = (): string => {
  const dir = join(scratch, `d${++count}`);
  mkdirSync(dir, { recursive: true });
  return dir;
};
const modeOf = (file: string) => statSync(file).mode & 0o777;
const OUTSIDE = 'belongs to someone else\n';

/** A file outside the folder a command writes to, and a link to it planted at `at`. */
function plantLink(at: string): string {
  const outside = join(fresh(), 'outside.txt');
  writeFileSync(outside, OUTSIDE, { mode: 0o644 });
  chmodSync(outside, 0o644);
  symlinkSync(outside, at);
  return outside;
}

/** A link at `at` to a file that does not exist (yet): following it would create that file. */
function plantDangling(at: string): string {
  const target = join(fresh(), 'created-through-the-link.txt');
  symlinkSync(target, at);
  return target;
}

/** The link at `at` is still the link, and what it pointed to is as it was. */
function assertUntouched(at: string, outside: string, existed: boolean): void {
  assert.ok(lstatSync(at).isSymbolicLink(), `${at} is still the planted link`);
  if (existed) {
    assert.equal(readFileSync(outside, 'utf8'), OUTSIDE);
    assert.equal(modeOf(outside), 0o644);
  } else {
    assert.equal(existsSync(outside), false, 'nothing was created through the link');
  }
}

/** No temp files are left next to `file` after a refusal or a write. */
function assertNoTemps(dir: string): void {
  assert.deepEqual(
    readdirSync(dir).filter((f) => f.endsWith('.tmp')),
    [],
  );
}

describe('makeDir', () => {
  it('makes the missing folders top down, secret ones 0700, and leaves a folder there alone', () => {
    const base = mkdtempSync(join(tmpdir(), 'klw-makedir-'));
    try {
      makeDir(join(base, 'a', 'b', 'c'), { secret: true });
      for (const d of ['a', 'a/b', 'a/b/c']) assert.equal(statSync(join(base, d)).mode & 0o777, 0o700, d);
      makeDir(join(base, 'a', 'b', 'c'));
      makeDir(join(base, 'a', 'b', 'c', '.', '..', 'c'));
      writeFileSync(join(base, 'file'), 'x');
      assert.throws(() => makeDir(join(base, 'file')), { code: 'EEXIST' });
      assert.throws(() => makeDir(join(base, 'file', 'sub')), { code: 'ENOTDIR' });
      symlinkSync(join(base, 'a'), join(base, 'link'));
      makeDir(join(base, 'link', 'b'));
      makeDir(join(base, 'link', 'new'));
      assert.ok(statSync(join(base, 'a', 'new')).isDirectory(), 'made through a link to a folder, as mkdir -p does');
    } finally {
      rmSync(base, { recursive: true, force: true });
    }
  });

  it('makes the folders with the mode given, whatever the umask', () => {
    const base = mkdtempSync(join(tmpdir(), 'klw-makedir-'));
    const umask = process.umask(0);
    try {
      makeDir(join(base, 'a', 'b'), { mode: 0o755 });
      ensureCacheDir(join(base, 'cache', 'node'));
      for (const d of ['a', 'a/b', 'cache', 'cache/node']) assert.equal(statSync(join(base, d)).mode & 0o777, 0o755, d);
    } finally {
      process.umask(umask);
      rmSync(base, { recursive: true, force: true });
    }
  });

  it('fails where the system refuses a folder whose parent is there, instead of trying forever', () => {
    // procfs answers ENOENT to a mkdir under /proc: Node's recursive mkdirSync loops on it.
    assert.throws(() => makeDir('/proc/klw-no-such/sub'), { code: 'ENOENT' });
    assert.throws(() => ensureCacheDir('/proc/klw-no-such'), { code: 'ENOENT' });
  });
});

describe('writeFileSafely', () => {
  it('writes a secret 0600 whatever the umask, and narrows a file it replaces', () => {
    const dir = fresh();
    const file = join(dir, 'token');
    // An open umask must not widen it, and a tight one (no owner write) must not narrow it.
    for (const mask of [0, 0o277]) {
      const umask = process.umask(mask);
      try {
        writeFileSafely(file, 'a', { secret: true });
      } finally {
        process.umask(umask);
      }
      assert.equal(modeOf(file), PRIVATE_MODE, `umask ${mask.toString(8)}`);
    }
    const old = join(dir, 'old');
    writeFileSync(old, 'public\n');
    chmodSync(old, 0o644);
    writeFileSafely(old, 'secret\n', { secret: true });
    assert.equal(modeOf(old), PRIVATE_MODE);
    assert.equal(readFileSync(old, 'utf8'), 'secret\n');
    assertNoTemps(dir);
  });

  it('replaces a file rather than writing through a hard link to it', () => {
    const dir = fresh();
    const original = join(dir, 'original');
    writeFileSync(original, OUTSIDE);
    linkSync(original, join(dir, 'linked'));
    writeFileSafely(join(dir, 'linked'), 'new\n', { secret: true });
    assert.equal(readFileSync(original, 'utf8'), OUTSIDE);
    assert.equal(readFileSync(join(dir, 'linked'), 'utf8'), 'new\n');
  });

  for (const secret of [true, false]) {
    it(`refuses a symbolic link at the target, to a file or dangling (secret: ${secret})`, () => {
      const dir = fresh();
      const linked = join(dir, 'linked');
      const outside = plantLink(linked);
      assert.throws(() => writeFileSafely(linked, 'x', { secret }), /is a symbolic link; refusing to follow it/);
      assertUntouched(linked, outside, true);
      const dangling = join(dir, 'dangling');
      const target = plantDangling(dangling);
      assert.throws(() => writeFileSafely(dangling, 'x', { secret }), /is a symbolic link; refusing to follow it/);
      assert.throws(() => writeFileSafely(dangling, 'x', { secret, exclusive: true }), /already exists/);
      assertUntouched(dangling, target, false);
      assertNoTemps(dir);
    });
  }

  it('refuses a folder at the target; exclusive refuses any file there', () => {
    const dir = fresh();
    mkdirSync(join(dir, 'sub'));
    assert.throws(() => writeFileSafely(join(dir, 'sub'), 'x'), /is not a regular file/);
    writeFileSync(join(dir, 'f'), 'kept\n');
    const taken = { code: 'EEXIST', message: /already exists/ };
    assert.throws(() => writeFileSafely(join(dir, 'f'), 'x', { exclusive: true }), taken);
    assert.equal(readFileSync(join(dir, 'f'), 'utf8'), 'kept\n');
    writeFileSafely(join(dir, 'new'), 'made\n', { exclusive: true });
    assert.equal(readFileSync(join(dir, 'new'), 'utf8'), 'made\n');
    assertNoTemps(dir);
  });

  it('writes large and binary data whole', () => {
    const dir = fresh();
    const data = Buffer.alloc(3 * 1024 * 1024 + 7, 0xa5);
    writeFileSafely(join(dir, 'big'), data);
    assert.ok(readFileSync(join(dir, 'big')).equals(data));
  });

  it('pathTaken sees a dangling link that existsSync misses', () => {
    const at = join(fresh(), 'l');
    plantDangling(at);
    assert.equal(existsSync(at), false);
    assert.equal(pathTaken(at), true);
  });
});

describe('files the commands write', () => {
  const project = mkdtempSync(join(process.cwd(), '.klw-test-files-'));
  cpSync(FIXTURE_FUNCTIONS, join(project, 'functions'), { recursive: true });
  writeFileSync(join(project, 'serverless.yml'), 'service: svc\n');
  after(() => rmSync(project, { recursive: true, force: true }));
  const BASE = ['--base-url', 'https://h.example.com'];
  const manifests = (state: string, ...more: string[]) =>
    runKlw('--root', project, 'manifests', ...BASE, '--path-secret', 'local', '--state-dir', state, ...more);

  it('klw manifests --path-secret local --out: 0600, an old 0644 file narrowed, a planted link refused', async () => {
    const dir = fresh();
    const state = join(dir, 'state');
    const out = join(dir, 'manifests.yaml');
    writeFileSync(out, 'old\n');
    chmodSync(out, 0o644);
    const run = await manifests(state, '--out', out);
    assert.equal(run.code, 0, run.stderr);
    assert.ok(readFileSync(out, 'utf8').includes(ensureLocalPathSecret(state).current), 'the URLs carry the secret');
    assert.equal(modeOf(out), PRIVATE_MODE);

    const linked = join(dir, 'linked.yaml');
    const outside = plantLink(linked);
    const refused = await manifests(state, '--out', linked);
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /is a symbolic link; refusing to follow it/);
    assertUntouched(linked, outside, true);
    const dangling = join(dir, 'dangling.yaml');
    const target = plantDangling(dangling);
    assert.equal((await manifests(state, '--out', dangling)).code, 1);
    assertUntouched(dangling, target, false);
    assertNoTemps(dir);
  });

  it('klw manifests --crd-patches: the patches carry the secret, so 0600, and a planted link is refused', async () => {
    const dir = fresh();
    const state = join(dir, 'state');
    const patches = join(dir, 'patches');
    mkdirSync(patches);
    const patch = join(patches, 'crontabs.example.com.conversion-patch.yaml');
    writeFileSync(patch, 'old\n');
    chmodSync(patch, 0o644);
    const run = await manifests(state, '--out', join(dir, 'm.yaml'), '--crd-patches', patches);
    assert.equal(run.code, 0, run.stderr);
    const secret = ensureLocalPathSecret(state).current;
    assert.ok(readFileSync(patch, 'utf8').includes(secret), 'the patch URL carries the secret');
    assert.equal(modeOf(patch), PRIVATE_MODE);

    rmSync(patch);
    const outside = plantLink(patch);
    assert.equal((await manifests(state, '--out', join(dir, 'm.yaml'), '--crd-patches', patches)).code, 1);
    assertUntouched(patch, outside, true);
    rmSync(patch);
    const target = plantDangling(patch);
    assert.equal((await manifests(state, '--out', join(dir, 'm.yaml'), '--crd-patches', patches)).code, 1);
    assertUntouched(patch, target, false);
  });

  it('klw manifests with the placeholder writes an ordinary file', async () => {
    const dir = fresh();
    const out = join(dir, 'm.yaml');
    const umask = process.umask(0o022);
    try {
      assert.equal((await runKlw('--root', project, 'manifests', ...BASE, '--out', out)).code, 0);
    } finally {
      process.umask(umask);
    }
    assert.equal(modeOf(out), 0o644);
  });

  it('klw auth-config: an old 0644 kubeconfig narrowed to 0600, a planted link refused', async () => {
    const dir = fresh();
    const kubeconfig = join(dir, 'webhook-kubeconfig.yaml');
    writeFileSync(kubeconfig, 'old\n');
    chmodSync(kubeconfig, 0o644);
    const auth = (outDir: string) =>
      runKlw('auth-config', '--url', 'https://127.0.0.1:3443', '--token', 'sekret', '--out-dir', outDir);
    const run = await auth(dir);
    assert.equal(run.code, 0, run.stderr);
    assert.match(readFileSync(kubeconfig, 'utf8'), /token: sekret/);
    assert.equal(modeOf(kubeconfig), PRIVATE_MODE);

    const linkedDir = fresh();
    const outside = plantLink(join(linkedDir, 'webhook-kubeconfig.yaml'));
    const refused = await auth(linkedDir);
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /is a symbolic link; refusing to follow it/);
    assertUntouched(join(linkedDir, 'webhook-kubeconfig.yaml'), outside, true);
    const danglingDir = fresh();
    const target = plantDangling(join(danglingDir, 'webhook-kubeconfig.yaml'));
    assert.throws(() => writeAuthConfig(danglingDir, 'https://h', 'sekret'), /symbolic link/);
    assertUntouched(join(danglingDir, 'webhook-kubeconfig.yaml'), target, false);
  });

  it('klw build refuses a link planted at a bundle or a zip', async () => {
    const { buildFunction, bundlePath, zipPath } = await import('../../infra/build.ts');
    const entry = { name: 'pod-policy', entry: join(project, 'functions', 'pod-policy', 'index.ts') };
    mkdirSync(join(project, 'dist', 'functions', 'pod-policy'), { recursive: true });
    const bundle = bundlePath(project, 'pod-policy');
    const outside = plantLink(bundle);
    await assert.rejects(buildFunction(project, entry), /is a symbolic link; refusing to follow it/);
    assertUntouched(bundle, outside, true);
    rmSync(bundle);
    const zip = zipPath(project, 'pod-policy');
    const target = plantDangling(zip);
    await assert.rejects(buildFunction(project, entry), /is a symbolic link; refusing to follow it/);
    assertUntouched(zip, target, false);
    rmSync(zip);
    const built = await buildFunction(project, entry);
    assert.ok(lstatSync(join(project, built.zip)).isFile());
  });

  it('klw new refuses a link planted where its test goes, dangling or not', async () => {
    const root = fresh();
    mkdirSync(join(root, 'test', 'functions'), { recursive: true });
    const testFile = join(root, 'test', 'functions', 'guard.test.ts');
    const target = plantDangling(testFile);
    const run = await runKlw('--root', root, 'new', 'validating', 'guard');
    assert.equal(run.code, 1);
    assert.match(run.stderr, /guard\.test\.ts already exists/);
    assertUntouched(testFile, target, false);
    assert.equal(existsSync(join(root, 'functions', 'guard')), false, 'nothing half-written');

    rmSync(testFile);
    const outside = plantLink(testFile);
    assert.equal((await runKlw('--root', root, 'new', 'validating', 'guard')).code, 1);
    assertUntouched(testFile, outside, true);
    rmSync(testFile);
    const made = await runKlw('--root', root, 'new', 'validating', 'guard');
    assert.equal(made.code, 0, made.stderr);
    assert.ok(lstatSync(testFile).isFile());
  });
});

describe('appendFileSafely (the emulator --log-file)', () => {
  it('appends, and refuses a planted link, dangling or not, and a FIFO', async () => {
    const { appendFileSafely } = await import('../../infra/files.ts');
    const { logSink } = await import('../../infra/local/output.ts');
    const dir = fresh();
    const log = join(dir, 'log.jsonl');
    const sink = logSink('json', log, () => {});
    sink('{"a":1}');
    sink('{"b":2}\n');
    assert.equal(readFileSync(log, 'utf8'), '{"a":1}\n{"b":2}\n');
    const linked = join(dir, 'linked.jsonl');
    const outside = plantLink(linked);
    assert.throws(() => logSink('json', linked, () => {})('{"c":3}'), /is a symbolic link; refusing to follow it/);
    assertUntouched(linked, outside, true);
    const dangling = join(dir, 'dangling.jsonl');
    const target = plantDangling(dangling);
    assert.throws(() => appendFileSafely(dangling, 'x\n'), /is a symbolic link/);
    assertUntouched(dangling, target, false);
    const { execFileSync } = await import('node:child_process');
    const fifo = join(dir, 'fifo');
    execFileSync('mkfifo', [fifo]);
    assert.throws(() => appendFileSafely(fifo, 'x\n'), /not a regular file/);
  });
});
