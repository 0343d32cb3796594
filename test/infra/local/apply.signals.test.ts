// klw start --apply against a fake kubectl on PATH: what it registered is removed on SIGINT, and
// after a SIGKILL by the next start (or klw local unregister).
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { FIXTURE_FUNCTIONS, klwInProcess } from '../../helpers.ts';
import { withKeptCertificates } from '../../kept-certs.ts';

const root = process.cwd();
const work = mkdtempSync(join(root, '.klw-test-applysig-'));
cpSync(join(FIXTURE_FUNCTIONS, 'pod-policy'), join(work, 'functions', 'pod-policy'), { recursive: true });
cpSync(join(FIXTURE_FUNCTIONS, 'pod.ts'), join(work, 'functions', 'pod.ts'));
const bin = join(work, 'bin');
const calls = join(work, 'kubectl-calls.log');
mkdirSync(bin);
// A kubectl that finds nothing, applies and deletes anything, and logs its arguments.
writeFileSync(
  join(bin, 'kubectl'),
  `#!/bin/sh\necho "$*" >> '${calls}'\ncase " $* " in *" get "*) exit 0;; esac\nexit 0\n`,
);
chmodSync(join(bin, 'kubectl'), 0o755);
const env = { ...process.env, NODE_TEST_CONTEXT: undefined, PATH: `${bin}${delimiter}${process.env.PATH}` };
const children: ChildProcess[] = [];
// klw start's state folder holds the kept certificates: the first start makes none (certs.test.ts tests that).
before(() => withKeptCertificates(join(work, '.klw', 'local')));
after(() => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  rmSync(work, { recursive: true, force: true });
});

/** Starts `klw start --apply` and resolves once it says it is ready. */
function start(): Promise<{ child: ChildProcess; output: () => string }> {
  const child = spawn(process.execPath, [join(root, 'infra', 'bin', 'klw.mjs'), 'start', '--apply', '--port', '0'], {
    cwd: work,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let out = '';
  return new Promise((resolve, reject) => {
    const on = (c: Buffer) => {
      out += c.toString();
      if (/press Ctrl\+C to stop/.test(out)) resolve({ child, output: () => out });
    };
    child.stdout!.on('data', on);
    child.stderr!.on('data', on);
    child.on('exit', (code) => reject(new Error(`klw start exited (${code}):\n${out}`)));
  });
}
const exited = (child: ChildProcess) =>
  new Promise<number | null>((r) =>
    child.exitCode !== null || child.signalCode !== null ? r(child.exitCode) : child.on('exit', (code) => r(code)),
  );
const kubectlCalls = () => (existsSync(calls) ? readFileSync(calls, 'utf8').trim().split('\n') : []);
const record = join(work, '.klw', 'local', 'applied.json');

describe('klw start --apply', () => {
  it('removes what it registered on SIGINT', async () => {
    const { child, output } = await start();
    assert.match(output(), /REGISTERED with the cluster/);
    assert.ok(
      kubectlCalls().some((c) => /^apply -f .*manifests\.yaml/.test(c)),
      kubectlCalls().join('\n'),
    );
    assert.ok(existsSync(record));
    child.kill('SIGINT');
    assert.equal(await exited(child), 0, output());
    assert.ok(
      kubectlCalls().some((c) =>
        /^delete validatingwebhookconfiguration\.admissionregistration\.k8s\.io \S+ --ignore-not-found/.test(c),
      ),
      kubectlCalls().join('\n'),
    );
    assert.ok(!existsSync(record), 'the record is removed');
  });

  it('after a SIGKILL, the next start removes what the killed one registered; klw local unregister does it too', async () => {
    rmSync(calls, { force: true });
    const first = await start();
    first.child.kill('SIGKILL');
    await exited(first.child);
    assert.ok(existsSync(record), 'the record outlives the kill');
    assert.ok(!kubectlCalls().some((c) => c.startsWith('delete')));
    const second = await start();
    assert.match(second.output(), /stopped without removing what it registered; removing it now/);
    const deletes = kubectlCalls().filter((c) => c.startsWith('delete'));
    assert.equal(deletes.length, 1, kubectlCalls().join('\n'));
    second.child.kill('SIGKILL');
    await exited(second.child);
    rmSync(calls, { force: true });
    // What unregister does, not how a process runs it (the starts above are processes): in this one,
    // with the fake kubectl first on PATH while it runs.
    const path = process.env.PATH;
    process.env.PATH = env.PATH;
    const unregister = await klwInProcess('--root', work, 'local', 'unregister').finally(() => {
      process.env.PATH = path;
    });
    assert.equal(unregister.code, 0, unregister.stderr);
    assert.ok(
      kubectlCalls().some((c) => c.startsWith('delete validatingwebhookconfiguration')),
      kubectlCalls().join('\n'),
    );
    assert.ok(!existsSync(record));
  });
});
