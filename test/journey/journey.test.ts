// A new user's journey with nothing but the package tarball: klw init, npm install (the
// tarball and the registry), test, build, type-check, lint, start and Ctrl+C, klw new, test
// again, the user's own mistakes failing npm test, package; and a CommonJS project that builds
// and runs the conformance test.
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { after, before, describe, it } from 'node:test';

const repo = process.cwd();
// Outside the repository: nothing there may resolve to this checkout.
const scratch = mkdtempSync(join(tmpdir(), 'klw-journey-'));
const demo = join(scratch, 'demo');
let tarball = '';
let server: ChildProcess | undefined;

// The user's environment: no test-runner context, no loader options of this run. npm's default
// cache is shared with this repository's installs, so the registry is asked only for what it lacks.
const { NODE_TEST_CONTEXT: _context, NODE_OPTIONS: _options, ...baseEnv } = process.env;
const env = {
  ...baseEnv,
  npm_config_prefer_offline: 'true',
  npm_config_audit: 'false',
  npm_config_fund: 'false',
  npm_config_update_notifier: 'false',
  SLS_TELEMETRY_DISABLED: '1',
  SLS_NOTIFICATIONS_MODE: 'off',
};

/** Only stops a command that hangs: an npm install on a loaded machine may take minutes. */
const HANG_MS = 15 * 60_000;

/** Runs a command in a folder; fails the test with its output when it exits non-zero. */
function sh(cwd: string, command: string, ...args: string[]): string {
  const run = spawnSync(command, args, { cwd, env, encoding: 'utf8', timeout: HANG_MS });
  const out = `${run.stdout ?? ''}${run.stderr ?? ''}`;
  assert.equal(
    run.status,
    0,
    `${command} ${args.join(' ')} failed (${run.error?.message ?? `exit ${run.status}`}):\n${out}`,
  );
  return out;
}

before(() => {
  sh(repo, 'npm', 'pack', '--pack-destination', scratch);
  tarball = readdirSync(scratch).find((f) => f.endsWith('.tgz'))!;
  assert.ok(tarball, 'npm pack wrote no tarball');
});
/** Signals the process group of a detached child (npm and the klw it started); quiet when the group is gone. */
function signalGroup(child: ChildProcess | undefined, signal: NodeJS.Signals): void {
  if (!child?.pid) return;
  try {
    process.kill(-child.pid, signal);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
  }
}

/** Resolves with how a child ended: its exit code, or the signal that ended it. */
function ended(child: ChildProcess): Promise<number | NodeJS.Signals> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(child.exitCode ?? child.signalCode!);
  return new Promise((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal!)));
}

/**
 * Processes still running of npm start's process group or working in the demo project (a
 * worker that left the group still has its folder), as `pid command` lines; read from /proc.
 */
function leftOver(group: number): string[] {
  const found: string[] = [];
  for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    try {
      // Field 5 of /proc/<pid>/stat is the process group; the command (field 2) may hold spaces.
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const zombie = fields[0] === 'Z';
      const inGroup = Number(fields[2]) === group;
      const inDemo = readlinkSync(`/proc/${pid}/cwd`).startsWith(demo);
      if (!zombie && (inGroup || inDemo))
        found.push(`${pid} ${readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').trim()}`);
    } catch {
      // Gone while being read, or not ours to read.
    }
  }
  return found;
}

after(() => {
  // Whatever of npm start is left (a failed step stops before its own SIGINT).
  signalGroup(server, 'SIGKILL');
  rmSync(scratch, { recursive: true, force: true });
});

describe('a new project from the tarball', () => {
  it('npx klw init demo writes the project', () => {
    // The tarball as the user sees it, beside them: klw writes it relative to the new project.
    const out = sh(
      scratch,
      'npx',
      '--yes',
      '--package',
      `./${tarball}`,
      'klw',
      'init',
      'demo',
      '--package',
      `file:./${tarball}`,
    );
    assert.match(out, /created demo\/functions\/require-owner\/index\.ts/);
    for (const file of [
      'package.json',
      'tsconfig.json',
      'serverless.yml',
      '.gitignore',
      'README.md',
      'functions/require-owner/index.ts',
      'test/functions/require-owner.test.ts',
      'test/functions/conformance.test.ts',
      'test/functions/lint.test.ts',
    ]) {
      assert.ok(existsSync(join(demo, file)), `${file} missing`);
    }
    const pkg = JSON.parse(readFileSync(join(demo, 'package.json'), 'utf8'));
    assert.equal(pkg.type, 'module');
    assert.equal(pkg.dependencies['kube-lambda-webhooks'], `file:../${tarball}`);
    assert.deepEqual(Object.keys(pkg.scripts), ['start', 'test', 'build', 'lint', 'deploy']);
    assert.doesNotMatch(out, /^note:/m, 'no hint when --package is given');
  });

  it('npx klw init without --package, run from the tarball, says how to depend on it', () => {
    const out = sh(scratch, 'npx', '--yes', '--package', `./${tarball}`, 'klw', 'init', 'hinted');
    assert.match(
      out,
      new RegExp(
        `^note: this klw was installed from ${join(scratch, tarball).replaceAll('.', '\\.')};.*run klw init again with --package `,
        'm',
      ),
    );
    rmSync(join(scratch, 'hinted'), { recursive: true, force: true });
  });

  it('npm install, npm test, npm run build and npx tsc --noEmit succeed', () => {
    sh(demo, 'npm', 'install');
    assert.ok(
      existsSync(join(demo, 'node_modules', 'kube-lambda-webhooks', 'pkg', 'lib', 'index.js')),
      'the installed package is compiled JavaScript',
    );
    assert.ok(
      !existsSync(join(demo, 'node_modules', 'kube-lambda-webhooks', 'lib', 'index.ts')),
      'the package ships no TypeScript sources',
    );
    assert.match(sh(demo, 'npm', 'test'), /# pass [1-9]|ℹ pass [1-9]/);
    assert.match(sh(demo, 'npm', 'run', 'build'), /require-owner .* zip/);
    assert.ok(existsSync(join(demo, 'dist', 'functions', 'require-owner.zip')));
    sh(demo, 'npx', 'tsc', '--noEmit');
  });

  it('npx klw lint finds nothing to report in the new project', () => {
    assert.match(sh(demo, 'npx', 'klw', 'lint'), /^lint: no findings$/m);
  });

  it('npm start serves the function over HTTPS that verifies with the local CA, with manifests', async () => {
    server = spawn('npm', ['start', '--', '--port', '0'], {
      cwd: demo,
      env,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    const url = await new Promise<string>((resolve, reject) => {
      const onData = (chunk: Buffer) => {
        output += chunk.toString();
        const found = /serving \d+ functions? at (https:\/\/\S+)/.exec(output);
        if (found) resolve(found[1]!);
      };
      server!.stdout!.on('data', onData);
      server!.stderr!.on('data', onData);
      server!.on('exit', (code) => reject(new Error(`npm start exited (${code}):\n${output}`)));
    });
    const ca = readFileSync(join(demo, '.klw', 'local', 'ca.crt'));
    // The manifests point at the emulator (with its path secret, when one is configured).
    const target = /url: (https:\/\/\S+\/require-owner\S*)/.exec(
      readFileSync(join(demo, '.klw', 'local', 'manifests.yaml'), 'utf8'),
    )?.[1];
    assert.ok(target?.startsWith(`${url}/require-owner`), `manifests.yaml has no URL for require-owner at ${url}`);
    const review = {
      apiVersion: 'admission.k8s.io/v1',
      kind: 'AdmissionReview',
      request: {
        uid: 'journey-1',
        kind: { group: '', version: 'v1', kind: 'ConfigMap' },
        resource: { group: '', version: 'v1', resource: 'configmaps' },
        operation: 'CREATE',
        userInfo: { username: 'alice' },
        object: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm', namespace: 'default' } },
      },
    };
    const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = request(target!, { method: 'POST', ca, headers: { 'content-type': 'application/json' } }, (res) => {
        let body = '';
        res.on('data', (c: Buffer) => (body += c.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      });
      req.on('error', reject);
      req.end(JSON.stringify(review));
    });
    assert.equal(answer.status, 200, answer.body);
    const body = JSON.parse(answer.body);
    assert.equal(body.response.uid, 'journey-1');
    assert.equal(body.response.allowed, false, 'a configmap without an owner label is denied');
    assert.ok(
      leftOver(server.pid!).some((p) => /klw start/.test(p)),
      'the check sees npm start and the klw it runs',
    );
    // Ctrl+C: the terminal sends SIGINT to the whole foreground process group.
    signalGroup(server, 'SIGINT');
    assert.ok([0, 'SIGINT', 130].includes(await ended(server)), `npm start did not stop on SIGINT:\n${output}`);
    assert.deepEqual(leftOver(server.pid!), [], `processes left after Ctrl+C:\n${output}`);
  });

  it('npx klw new mutating add-team-label, then npm test again', () => {
    assert.match(
      sh(demo, 'npx', 'klw', 'new', 'mutating', 'add-team-label'),
      /created functions\/add-team-label\/index\.ts/,
    );
    const out = sh(demo, 'npm', 'test');
    assert.match(out, /add-team-label conformance/);
    assert.match(out, /require-owner conformance/);
    sh(demo, 'npx', 'tsc', '--noEmit');
  });

  it("npm test fails on the user's own mistakes, each with the file, the field and the fix", () => {
    const functions = {
      // A typo (container for containers) that throws on every review.
      'pod-resources': [
        "import { defineMutatingWebhook, type KubeObject } from 'kube-lambda-webhooks';",
        '',
        'type Pod = KubeObject & { spec?: { containers?: Array<{ resources?: object }> } };',
        '',
        'export default defineMutatingWebhook<Pod>({',
        "  name: 'pod-resources',",
        "  rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'], scope: 'Namespaced' }],",
        '  mutate: (pod) => {',
        '    (pod.spec as any).container.forEach((c: { resources?: object }) => {',
        '      c.resources ??= {};',
        '    });',
        '  },',
        '});',
      ],
      // A mutation that moves the object to another namespace.
      'move-namespace': [
        "import { defineMutatingWebhook } from 'kube-lambda-webhooks';",
        '',
        'export default defineMutatingWebhook({',
        "  name: 'move-namespace',",
        "  rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'], scope: 'Namespaced' }],",
        '  mutate: (object) => {',
        "    object.metadata = { ...object.metadata, namespace: 'elsewhere' };",
        '  },',
        '});',
      ],
      // A rule the API server never matches: resources are plural.
      'never-matches': [
        "import { allow, defineValidatingWebhook } from 'kube-lambda-webhooks';",
        '',
        'export default defineValidatingWebhook({',
        "  name: 'never-matches',",
        "  rules: [{ operations: ['CREATE'], apiGroups: ['apps'], apiVersions: ['v1'], resources: ['deployment'], scope: 'Namespaced' }],",
        '  validate: () => allow(),',
        '});',
      ],
    };
    for (const [name, lines] of Object.entries(functions)) {
      mkdirSync(join(demo, 'functions', name), { recursive: true });
      writeFileSync(join(demo, 'functions', name, 'index.ts'), `${lines.join('\n')}\n`);
    }
    try {
      const run = spawnSync('npm', ['test'], { cwd: demo, env, encoding: 'utf8', timeout: HANG_MS });
      const out = `${run.stdout ?? ''}${run.stderr ?? ''}`;
      assert.notEqual(run.status, 0, out);
      // The function that throws: its name, the review, the error, its own TypeScript line, the fix
      // (the generated Pod has no spec: the typo's line throws reading `container` of it).
      assert.match(
        out,
        /pod-resources: CREATE core\/v1 pods \(admission\.k8s\.io\/v1\): the function threw on the AdmissionReview/,
      );
      assert.match(
        out,
        /TypeError: Cannot read properties of undefined \(reading 'container'\)\n\s+at functions\/pod-resources\/index\.ts:9:\d+/,
      );
      assert.match(
        out,
        /failurePolicy is Ignore: the API server admits the request unchecked and unmutated\. Fix the function/,
      );
      // The mutation that moves the object: the API server's words, the field, the fix.
      assert.match(
        out,
        /move-namespace: CREATE core\/v1 configmaps .*the namespace of the provided object does not match the namespace sent on the request\. .*leave kind, apiVersion, metadata\.namespace/,
      );
      // The rule that never matches: the field, the fix, the file.
      assert.match(
        out,
        /rules\[0\]\.resources: group "apps" has no resource "deployment" .*did you mean "deployments"\?.*\(functions\/never-matches\/index\.ts\)/,
      );
    } finally {
      for (const name of Object.keys(functions))
        rmSync(join(demo, 'functions', name), { recursive: true, force: true });
    }
  });

  it('npx serverless package puts both functions in the CloudFormation template', () => {
    sh(demo, 'npm', 'run', 'build');
    sh(demo, 'npx', 'serverless', 'package');
    const template = JSON.parse(
      readFileSync(join(demo, '.serverless', 'cloudformation-template-update-stack.json'), 'utf8'),
    );
    const functions = Object.values(
      template.Resources as Record<string, { Type: string; Properties: { FunctionName?: string } }>,
    )
      .filter((r) => r.Type === 'AWS::Lambda::Function')
      .map((r) => r.Properties.FunctionName)
      .sort();
    assert.deepEqual(functions, ['demo-dev-add-team-label', 'demo-dev-require-owner']);
  });

  it('npx klw new policy, validating and --mutating: their tests pass and klw manifests writes them', () => {
    assert.match(
      sh(demo, 'npx', 'klw', 'new', 'policy', 'replica-owner', '--resource', 'deployments'),
      /created functions\/replica-owner\/index\.ts/,
    );
    assert.match(
      sh(demo, 'npx', 'klw', 'new', 'policy', 'managed-label', '--mutating'),
      /created functions\/managed-label\/index\.ts/,
    );
    for (const file of ['test/functions/replica-owner.test.ts', 'test/functions/managed-label.test.ts'])
      assert.ok(existsSync(join(demo, file)), `${file} missing`);
    const out = sh(
      demo,
      'npx',
      'klw',
      'test',
      'test/functions/replica-owner.test.ts',
      'test/functions/managed-label.test.ts',
    );
    assert.match(out, /ℹ pass [1-9]/);
    assert.match(out, /ℹ fail 0/);
    sh(demo, 'npx', 'tsc', '--noEmit');
    // Lint exits 0: no error (a warning may say that a mutating webhook fails closed).
    sh(demo, 'npx', 'klw', 'lint');
    const manifests = (version: string) =>
      sh(demo, 'npx', 'klw', 'manifests', '--kube-version', version, '--base-url', 'https://webhooks.example.com');
    // A cluster that evaluates both natively gets the policies and their bindings.
    const native = manifests('1.36');
    for (const [kind, name] of [
      ['MutatingAdmissionPolicy', 'managed-label'],
      ['MutatingAdmissionPolicyBinding', 'managed-label'],
      ['ValidatingAdmissionPolicy', 'replica-owner'],
      ['ValidatingAdmissionPolicyBinding', 'replica-owner'],
    ])
      assert.match(native, new RegExp(`^kind: ${kind}\\nmetadata:\\n  name: ${name}$`, 'm'));
    assert.doesNotMatch(native, /name: (replica-owner|managed-label)\.webhooks\.kube-lambda\.dev/);
    // An older one gets them as webhooks served from Lambda.
    const old = manifests('1.29');
    assert.match(old, /name: replica-owner\.webhooks\.kube-lambda\.dev/);
    assert.match(old, /name: managed-label\.webhooks\.kube-lambda\.dev/);
    assert.doesNotMatch(old, /kind: (Validating|Mutating)AdmissionPolicy/);
  });
});

describe('a CommonJS project using the package', () => {
  const cjs = join(scratch, 'cjs');

  it('type-checks a function against the package types and builds it with klw build', async () => {
    mkdirSync(join(cjs, 'functions', 'check'), { recursive: true });
    // tsx (the version klw init gives) runs the TypeScript conformance test below.
    const tsx = JSON.parse(readFileSync(join(demo, 'package.json'), 'utf8')).devDependencies.tsx as string;
    const pkg = {
      name: 'cjs',
      version: '1.0.0',
      private: true,
      type: 'commonjs',
      dependencies: { 'kube-lambda-webhooks': `file:../${tarball}` },
      devDependencies: { tsx },
    };
    writeFileSync(join(cjs, 'package.json'), JSON.stringify(pkg, null, 2));
    // A bundler-style tsconfig: types come from the package's `types` conditions whatever the project's type.
    const tsconfig = {
      compilerOptions: {
        module: 'preserve',
        moduleResolution: 'bundler',
        target: 'ES2022',
        strict: true,
        noEmit: true,
        types: [],
        skipLibCheck: false,
      },
      include: ['functions'],
    };
    writeFileSync(join(cjs, 'tsconfig.json'), JSON.stringify(tsconfig, null, 2));
    writeFileSync(
      join(cjs, 'functions', 'check', 'index.ts'),
      [
        "import { allow, defineValidatingWebhook, deny, type KubeObject } from 'kube-lambda-webhooks';",
        '',
        'export const webhook = defineValidatingWebhook<KubeObject>({',
        "  name: 'check',",
        "  rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'], scope: 'Namespaced' }],",
        "  validate: (review) => (review.object?.metadata?.labels?.owner ? allow() : deny('no owner')),",
        '});',
        'export const handler = webhook.handler;',
        'export default webhook;',
        '',
      ].join('\n'),
    );
    sh(cjs, 'npm', 'install');
    // This project has no TypeScript of its own; the demo project's compiler checks it.
    sh(cjs, process.execPath, join(demo, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', '.');
    assert.match(sh(cjs, 'npx', 'klw', 'build'), /check .* zip/);
    const bundle = join(cjs, 'dist', 'functions', 'check', 'index.mjs');
    assert.ok(existsSync(bundle), 'klw build writes an ES module bundle, whatever the project type');
    const loaded = (await import(pathToFileURL(bundle).href)) as { handler?: unknown };
    assert.equal(typeof loaded.handler, 'function');
  });

  it('runs the conformance test klw init writes, as CommonJS', () => {
    mkdirSync(join(cjs, 'test', 'functions'), { recursive: true });
    cpSync(
      join(demo, 'test', 'functions', 'conformance.test.ts'),
      join(cjs, 'test', 'functions', 'conformance.test.ts'),
    );
    const out = sh(cjs, 'npx', 'klw', 'test');
    assert.match(out, /check conformance/);
    assert.match(out, /ℹ pass [1-9]/);
    assert.match(out, /ℹ fail 0/);
  });
});
