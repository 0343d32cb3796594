// The emulator's private keys: created owner-only, never through a planted symbolic link,
// never left readable by others on reuse.
import assert from 'node:assert/strict';
import fs, {
  chmodSync,
  existsSync,
  lstatSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { generateKeyPairSync } from 'node:crypto';
import { syncBuiltinESMExports } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { ensureLocalCertificates, readPrivate, writePrivate } from '../../../infra/local/certs.ts';
import { withKeptCertificates } from '../../kept-certs.ts';

const dirs: string[] = [];
const temp = () => {
  const dir = mkdtempSync(join(tmpdir(), 'klw-keys-'));
  dirs.push(dir);
  return dir;
};
after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
const mode = (file: string) => statSync(file).mode & 0o777;

describe('local key files', () => {
  it('creates both keys 0600 even under a permissive umask, and leaves no temp files', async () => {
    const dir = temp();
    const old = process.umask(0);
    try {
      await ensureLocalCertificates(join(dir, 'state'), () => {});
    } finally {
      process.umask(old);
    }
    assert.equal(mode(join(dir, 'state', 'ca.key')), 0o600);
    assert.equal(mode(join(dir, 'state', 'server.key')), 0o600);
    assert.equal(mode(join(dir, 'state')) & 0o077, 0, 'state dir is owner-only');
    assert.deepEqual(
      readdirSync(join(dir, 'state')).filter((f) => f.endsWith('.tmp')),
      [],
    );
  });

  it('opens a new key file 0600 from its first byte (the mode is given to open, not set afterwards)', () => {
    const dir = temp();
    const file = join(dir, 'k.key');
    // Watch the file system calls: the file must be created exclusively, never through a link,
    // and already be 0600 when the first byte of the key is written to it.
    const opened: Array<{ path: string; flags: number; mode: number | undefined }> = [];
    const modeAtFirstWrite = new Map<number, number>();
    const { openSync, writeSync } = fs;
    fs.openSync = ((path: fs.PathLike, flags: number, mode?: number) => {
      const fd = openSync(path, flags, mode);
      opened.push({ path: String(path), flags, mode });
      return fd;
    }) as typeof fs.openSync;
    fs.writeSync = ((fd: number, ...rest: unknown[]) => {
      if (!modeAtFirstWrite.has(fd)) modeAtFirstWrite.set(fd, fs.fstatSync(fd).mode & 0o777);
      return (writeSync as (...args: unknown[]) => number)(fd, ...rest);
    }) as typeof fs.writeSync;
    syncBuiltinESMExports();
    const old = process.umask(0);
    try {
      writePrivate(file, 'secret');
    } finally {
      process.umask(old);
      fs.openSync = openSync;
      fs.writeSync = writeSync;
      syncBuiltinESMExports();
    }
    assert.equal(opened.length, 1, 'one file opened');
    const [open] = opened;
    assert.ok(open!.path.startsWith(`${file}.`), 'a temp file beside the key, renamed over it');
    for (const flag of ['O_CREAT', 'O_EXCL', 'O_NOFOLLOW'] as const)
      assert.ok(open!.flags & fs.constants[flag], `opened with ${flag}`);
    assert.equal(open!.mode, 0o600, 'the mode is given to open');
    assert.deepEqual([...modeAtFirstWrite.values()], [0o600], 'the file is 0600 before its first byte');
    assert.equal(mode(file), 0o600);
    assert.equal(readFileSync(file, 'utf8'), 'secret');
  });

  it('refuses a symbolic link planted at ca.key and leaves its target untouched', async () => {
    const dir = temp();
    const state = join(dir, 'state');
    const target = join(dir, 'victim.txt');
    writeFileSync(target, 'do not overwrite');
    await ensureLocalCertificates(state, () => {}).then(() => undefined);
    rmSync(join(state, 'ca.key'));
    rmSync(join(state, 'ca.crt'));
    symlinkSync(target, join(state, 'ca.key'));
    await assert.rejects(
      ensureLocalCertificates(state, () => {}),
      /ca\.key is a symbolic link/,
    );
    assert.equal(readFileSync(target, 'utf8'), 'do not overwrite');
    assert.ok(lstatSync(join(state, 'ca.key')).isSymbolicLink(), 'the link is not replaced either');
  });

  it('refuses a symbolic link at ca.key on reuse (does not read the key through it)', async () => {
    const dir = temp();
    const state = join(dir, 'state');
    await ensureLocalCertificates(state, () => {});
    const real = join(dir, 'elsewhere.key');
    writeFileSync(real, readFileSync(join(state, 'ca.key')), { mode: 0o600 });
    rmSync(join(state, 'ca.key'));
    symlinkSync(real, join(state, 'ca.key'));
    await assert.rejects(
      ensureLocalCertificates(state, () => {}),
      /symbolic link/,
    );
  });

  it('refuses a symbolic link planted at server.key', async () => {
    const dir = temp();
    const state = join(dir, 'state');
    await ensureLocalCertificates(state, () => {});
    const target = join(dir, 'victim.txt');
    writeFileSync(target, 'keep');
    rmSync(join(state, 'server.key'));
    rmSync(join(state, 'server.crt'));
    symlinkSync(target, join(state, 'server.key'));
    await assert.rejects(
      ensureLocalCertificates(state, () => {}),
      /server\.key is a symbolic link/,
    );
    assert.equal(readFileSync(target, 'utf8'), 'keep');
  });

  it('narrows group- or world-readable keys to 0600 on reuse and says so', async () => {
    const dir = temp();
    const state = join(dir, 'state');
    await ensureLocalCertificates(state, () => {});
    chmodSync(join(state, 'ca.key'), 0o644);
    chmodSync(join(state, 'server.key'), 0o640);
    const warnings: string[] = [];
    const again = await ensureLocalCertificates(state, (m) => warnings.push(m));
    assert.equal(again.created, false);
    assert.equal(mode(join(state, 'ca.key')), 0o600);
    assert.equal(mode(join(state, 'server.key')), 0o600);
    assert.equal(warnings.length, 2);
    assert.match(warnings[0]!, /ca\.key was readable by others \(mode 644\)/);
  });

  it('refuses to read a key that is not a regular file', () => {
    const dir = temp();
    assert.throws(() => readPrivate(dir), /not a regular file/);
    assert.ok(existsSync(dir));
  });
});

/** A new PEM private key (PKCS #8): an EC key on `curve`, or an Ed25519 or RSA key. */
function keyPem(kind: 'ed25519' | 'rsa' | { curve: string }): string {
  const { privateKey } =
    kind === 'ed25519'
      ? generateKeyPairSync('ed25519')
      : kind === 'rsa'
        ? generateKeyPairSync('rsa', { modulusLength: 1024 })
        : generateKeyPairSync('ec', { namedCurve: kind.curve });
  return String(privateKey.export({ type: 'pkcs8', format: 'pem' }));
}

describe('a reused CA key that is not usable', () => {
  // What is found at ca.key beside a good ca.crt: each is refused, naming the file and the fix,
  // and nothing is signed with it (a server certificate from another key would not verify).
  const cases: Array<[string, () => string]> = [
    ['garbage', () => 'not a key\n'],
    ['an empty file', () => ''],
    ['a truncated key', () => keyPem({ curve: 'prime256v1' }).slice(0, 90)],
    ['an Ed25519 key', () => keyPem('ed25519')],
    ['a P-384 key', () => keyPem({ curve: 'secp384r1' })],
    ['an RSA key', () => keyPem('rsa')],
    ['a P-256 key that is not the one of ca.crt', () => keyPem({ curve: 'prime256v1' })],
  ];
  for (const [what, make] of cases) {
    it(`refuses ${what} at ca.key and says to delete the CA`, async () => {
      const state = await withKeptCertificates(join(temp(), 'state'));
      // The server certificate is re-issued (new names), so the CA key would be used to sign.
      rmSync(join(state, 'server.names'));
      writeFileSync(join(state, 'ca.key'), make(), { mode: 0o600 });
      const ca = readFileSync(join(state, 'ca.crt'), 'utf8');
      const server = readFileSync(join(state, 'server.crt'), 'utf8');
      await assert.rejects(
        ensureLocalCertificates(state, () => {}),
        (err: Error) => {
          assert.ok(err.message.startsWith(`${join(state, 'ca.key')} `), err.message);
          assert.match(err.message, /is not the private key of .*ca\.crt/);
          assert.match(err.message, /delete .*ca\.crt and .*ca\.key/);
          return true;
        },
      );
      assert.equal(readFileSync(join(state, 'ca.crt'), 'utf8'), ca, 'the CA clusters trust is left alone');
      assert.equal(readFileSync(join(state, 'server.crt'), 'utf8'), server, 'nothing was signed with it');
    });
  }

  it('makes a new CA once both files are deleted, as the error says', async () => {
    const state = await withKeptCertificates(join(temp(), 'state'));
    const before = readFileSync(join(state, 'ca.crt'), 'utf8');
    writeFileSync(join(state, 'ca.key'), 'not a key\n', { mode: 0o600 });
    await assert.rejects(ensureLocalCertificates(state, () => {}));
    rmSync(join(state, 'ca.crt'));
    rmSync(join(state, 'ca.key'));
    const again = await ensureLocalCertificates(state, () => {});
    assert.equal(again.created, true);
    assert.notEqual(again.caPem, before);
  });
});
