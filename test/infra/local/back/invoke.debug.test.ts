// Debugging and project-following in the local emulator: stack lines at the TypeScript source,
// Lambda's variables, invoke's stdout carrying only the result, generate-review, and --watch
// serving a function added while it runs.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { get } from 'node:http';
import { request } from 'node:https';
import { createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { startApi } from '../../../../infra/local/api.ts';
import { startLambda } from '../../../../infra/local/lambda-api.ts';
import { localInvoke } from '../../../../infra/local/back/invoke.ts';
import { klwInProcess, ManualTimer, PATIENCE_MS, until } from '../../../helpers.ts';
import { withKeptCertificates } from '../../../kept-certs.ts';

const root = process.cwd();
const work = mkdtempSync(join(root, '.klw-test-localdebug-'));
after(() => rmSync(work, { recursive: true, force: true }));
/** Timeouts that never run out: a cold start takes as long as it takes. */
const never = new ManualTimer().timer;

/**
 * A raw-handler function (no path secret) whose body says what it saw; it throws on {"throw":true}, at THROW_LINE.
 * Its 30 s timeout covers a cold start on a loaded machine where `klw` runs it on the wall clock.
 */
function rawFunction(name: string): string {
  return `export const handler = async (event: { body?: string }) => {
  console.log('handling', '${name}');
  if (JSON.parse(event.body ?? '{}').throw) throw new Error('boom');
  const env = Object.fromEntries(['AWS_LAMBDA_FUNCTION_NAME', 'AWS_REGION', 'AWS_LAMBDA_FUNCTION_MEMORY_SIZE', 'AWS_LAMBDA_FUNCTION_VERSION', '_HANDLER'].map((k) => [k, process.env[k]]));
  return { statusCode: 200, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name: '${name}', env }) };
};
export default { registration: { type: 'validating', name: '${name}', path: '/${name}', webhookName: '${name}.example.com', rules: [], namespaceSelector: {}, failurePolicy: 'Ignore', matchPolicy: 'Equivalent', sideEffects: 'None', timeoutSeconds: 30, admissionReviewVersions: ['v1'], auth: 'none', lambda: {} }, handler };
`;
}
/** The line of `throw` in rawFunction's source. */
const THROW_LINE = 3;
const addFunction = (name: string) => {
  mkdirSync(join(work, 'functions', name), { recursive: true });
  writeFileSync(join(work, 'functions', name, 'index.ts'), rawFunction(name));
};
addFunction('echo');

/** Runs klw in a process of its own, from the project folder, as a user would. */
function klw(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [join(root, 'infra', 'bin', 'klw.mjs'), ...args],
      { cwd: work, encoding: 'utf8', env: { ...process.env, NODE_TEST_CONTEXT: undefined } },
      (err, stdout, stderr) =>
        resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

describe('klw local invoke', { timeout: PATIENCE_MS }, () => {
  it('points stack lines at the TypeScript source', async () => {
    const outcome = await localInvoke({
      root: work,
      name: 'echo',
      event: JSON.stringify({ body: '{"throw":true}' }),
      say: () => {},
      functionLog: () => {},
      invocationTimer: never,
    });
    assert.equal(outcome.kind, 'error', JSON.stringify(outcome));
    const stack = (outcome as { error: { stackTrace: string[] } }).error.stackTrace.join('\n');
    assert.match(stack, new RegExp(`functions/echo/index\\.ts:${THROW_LINE}\\b`), stack);
  });

  it('sets the variables Lambda sets', async () => {
    const outcome = await localInvoke({
      root: work,
      name: 'echo',
      event: '{}',
      say: () => {},
      functionLog: () => {},
      invocationTimer: never,
    });
    const env = JSON.parse((outcome as { result: { body: string } }).result.body).env;
    assert.equal(env.AWS_LAMBDA_FUNCTION_NAME, 'echo');
    assert.equal(env._HANDLER, 'index.handler');
    for (const k of ['AWS_REGION', 'AWS_LAMBDA_FUNCTION_MEMORY_SIZE', 'AWS_LAMBDA_FUNCTION_VERSION'])
      assert.ok(env[k], `${k} is set`);
  });

  it('prints only the result on stdout, logs on stderr, and rebuilds a bundle older than its sources', async () => {
    writeFileSync(join(work, 'event.json'), '{}');
    const first = await klw(['local', 'invoke', 'echo', '--event', 'event.json']);
    assert.equal(first.code, 0, first.stderr);
    assert.equal(JSON.parse(first.stdout).statusCode, 200);
    assert.match(first.stderr, /handling echo/);
    // An edit after the build: the next invoke runs the new code without --build.
    writeFileSync(
      join(work, 'functions', 'echo', 'index.ts'),
      rawFunction('echo').replace("name: 'echo', env", "name: 'edited', env"),
    );
    // The rebuild is klw's, not the process's: in this process.
    const second = await klwInProcess('--root', work, 'local', 'invoke', 'echo', '--event', join(work, 'event.json'));
    assert.equal(JSON.parse(JSON.parse(second.stdout).body).name, 'edited', second.stderr);
    assert.match(second.stderr, /newer than the bundle; rebuilding/);
    writeFileSync(join(work, 'functions', 'echo', 'index.ts'), rawFunction('echo'));
  });

  // In this process: what generate-review prints, not how a process prints it (the test above).
  const generateReview = (...args: string[]) => klwInProcess('--root', work, 'local', 'generate-review', ...args);

  it('generate-review prints a review built from the rules, or an event', async () => {
    const review = await generateReview('echo', '--version', 'v1beta1');
    assert.equal(review.code, 0, review.stderr);
    assert.equal(JSON.parse(review.stdout).apiVersion, 'admission.k8s.io/v1beta1');
    const event = await generateReview('echo', '--event-format', 'rest');
    const parsed = JSON.parse(event.stdout);
    assert.equal(parsed.path, '/echo');
    assert.equal(JSON.parse(parsed.body).kind, 'AdmissionReview');
  });

  it('gives --event one meaning: an event file to invoke, never a format', async () => {
    const old = await generateReview('echo', '--event', 'rest');
    assert.equal(old.code, 1);
    assert.match(
      old.stderr,
      /generate-review writes events, it reads none: --event-format rest prints the review wrapped in an event \(--event names an event file, in klw local invoke\)/,
    );
    const help = await generateReview('--help');
    assert.match(help.stdout, /--event-format <format>/);
    assert.doesNotMatch(help.stdout, /--event </);
    // The choices are the event sources' names, from their list.
    assert.match(help.stdout.replace(/\s+/g, ' '), /choices: "http", "rest", "url", "alb"/);
    const alb = await generateReview('echo', '--event-format', 'alb');
    assert.deepEqual(Object.keys(JSON.parse(alb.stdout).requestContext), ['elb'], alb.stderr);
  });
});

describe('klw local start-api --watch', { timeout: PATIENCE_MS }, () => {
  it('serves a function added while it runs, rewrites manifests for a changed registration, drops a removed function', async () => {
    const applied: string[] = [];
    const api = await startApi({
      root: work,
      port: 0,
      stateDir: await withKeptCertificates(join(work, '.state')),
      watch: true,
      log: () => {},
      functionLog: () => {},
      onManifests: (path) => void applied.push(path),
      invocationTimer: never,
    });
    try {
      addFunction('late');
      // Watch events are asynchronous: wait for the project to pick the function up.
      await until(() => api.functions.includes('late'), 'the new function to be served');
      const ca = readFileSync(api.caPath);
      const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
        const req = request(
          api.functionUrl('late'),
          { method: 'POST', ca, headers: { 'content-type': 'application/json' } },
          (res) => {
            let body = '';
            res.on('data', (c: Buffer) => (body += c.toString()));
            res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
          },
        );
        req.on('error', reject);
        req.end('{}');
      });
      assert.equal(answer.status, 200, answer.body);
      assert.equal(JSON.parse(answer.body).name, 'late');
      assert.match(readFileSync(api.manifestsPath, 'utf8'), /\/late\b/, 'the manifests were rewritten');
      // A changed registration: manifests rewritten and handed to onManifests (--apply re-applies there).
      const before = applied.length;
      writeFileSync(
        join(work, 'functions', 'late', 'index.ts'),
        rawFunction('late').replace("failurePolicy: 'Ignore'", "failurePolicy: 'Fail'"),
      );
      await until(() => applied.length > before, 'onManifests to be called again');
      assert.match(readFileSync(api.manifestsPath, 'utf8'), /failurePolicy: Fail/);
      // A removed function is no longer served.
      rmSync(join(work, 'functions', 'late'), { recursive: true });
      await until(() => !api.functions.includes('late'), 'the removed function to be dropped');
    } finally {
      await api.close();
    }
  });
});

/** A port nothing listens on now. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((r) => server.close(() => r()));
  return port;
}

/** POSTs a body to a function URL of a running emulator. */
function post(url: string, ca: Buffer, body: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'POST', ca, headers: { 'content-type': 'application/json' } }, (res) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

describe('klw local start-api --inspect', { timeout: PATIENCE_MS }, () => {
  it('runs the function worker under a debugger listening on the given port', async () => {
    const port = await freePort();
    const logs: string[] = [];
    const api = await startApi({
      root: work,
      port: 0,
      stateDir: await withKeptCertificates(join(work, '.state-inspect')),
      inspectPort: port,
      log: (l) => logs.push(l),
      functionLog: () => {},
      invocationTimer: never,
    });
    try {
      const answer = await post(api.functionUrl('echo'), readFileSync(api.caPath), '{}');
      assert.equal(answer.status, 200, answer.body);
      const targets = await new Promise<string>((resolve, reject) => {
        get(`http://127.0.0.1:${port}/json/list`, (res) => {
          let text = '';
          res.on('data', (c: Buffer) => (text += c.toString()));
          res.on('end', () => resolve(text));
        }).on('error', reject);
      });
      assert.match(JSON.parse(targets)[0].webSocketDebuggerUrl, new RegExp(`127\\.0\\.0\\.1:${port}/`));
      assert.ok(
        logs.some((l) => l.includes('"debugger"') && l.includes(`127.0.0.1:${port}`)),
        logs.join('\n'),
      );
    } finally {
      await api.close();
    }
  });
});

/** Two neighbouring ports nothing listens on now (the first two functions' debugger ports). */
async function freePortPair(): Promise<number> {
  for (let i = 0; i < 50; i++) {
    const port = await freePort();
    const next = createServer();
    const free = await new Promise<boolean>((r) => {
      next.once('error', () => r(false));
      next.listen(port + 1, '127.0.0.1', () => r(true));
    });
    if (free) {
      await new Promise<void>((r) => next.close(() => r()));
      return port;
    }
  }
  throw new Error('no two free neighbouring ports');
}

/** The debugger targets listed on a port (`/json/list`), or undefined when nothing answers there. */
function inspectorTargets(port: number): Promise<Array<{ id: string; webSocketDebuggerUrl: string }> | undefined> {
  return new Promise((resolve) => {
    get(`http://127.0.0.1:${port}/json/list`, (res) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += c.toString()));
      res.on('end', () => resolve(JSON.parse(text)));
    }).on('error', () => resolve(undefined));
  });
}

/** Asks a debugger port until it lists a target other than `notId` (workers start asynchronously). */
async function awaitTarget(port: number, notId?: string): Promise<{ id: string; webSocketDebuggerUrl: string }> {
  let found: { id: string; webSocketDebuggerUrl: string } | undefined;
  await until(
    async () => {
      const [target] = (await inspectorTargets(port)) ?? [];
      if (target && target.id !== notId) found = target;
      return found !== undefined;
    },
    `a debugger target on ${port}${notId ? ` other than ${notId}` : ''}`,
  );
  return found!;
}

describe('klw local start-api --inspect --watch', { timeout: PATIENCE_MS }, () => {
  it('each debugger port listens from the start, still after a registration change, and a function added while running gets the next one', async () => {
    const dir = join(work, 'inspect-project');
    const write = (name: string, source = rawFunction(name)) => {
      mkdirSync(join(dir, 'functions', name), { recursive: true });
      writeFileSync(join(dir, 'functions', name, 'index.ts'), source);
    };
    write('echo');
    const port = await freePortPair();
    const logs: string[] = [];
    let manifests = 0;
    const api = await startApi({
      root: dir,
      port: 0,
      stateDir: await withKeptCertificates(join(dir, '.state')),
      inspectPort: port,
      watch: true,
      log: (l) => logs.push(l),
      functionLog: () => {},
      onManifests: () => void manifests++,
      invocationTimer: never,
    });
    try {
      // No request has been sent: the worker is already there, under the debugger.
      const first = await awaitTarget(port);
      assert.ok(first, `nothing listens on ${port} before the first request`);
      assert.match(first.webSocketDebuggerUrl, new RegExp(`127\\.0\\.0\\.1:${port}/`));
      assert.ok(
        logs.some((l) => l.includes('"debugger"') && l.includes(`127.0.0.1:${port}`)),
        logs.join('\n'),
      );

      // A changed registration swaps the worker: the new one listens on the same port.
      const before = manifests;
      write('echo', rawFunction('echo').replace("failurePolicy: 'Ignore'", "failurePolicy: 'Fail'"));
      await until(() => manifests > before, 'the registration change to be picked up');
      await api.project.settled();
      const second = await awaitTarget(port, first.id);
      assert.ok(second, `after the registration change nothing new listens on ${port}`);

      // The worker under the debugger still answers (it loads the bundle at its first invocation).
      const answer = await post(api.functionUrl('echo'), readFileSync(api.caPath), '{}');
      assert.equal(answer.status, 200, answer.body);
      assert.equal(JSON.parse(answer.body).name, 'echo');

      // A function added while running gets the next port, listening before any request.
      write('added');
      await until(() => api.functions.includes('added'), 'the added function to be served');
      assert.equal(api.project.inspectPort('added'), port + 1);
      assert.ok(await awaitTarget(port + 1), `the added function's debugger does not listen on ${port + 1}`);
    } finally {
      await api.close();
    }
    assert.equal(await inspectorTargets(port), undefined, 'the debugger port is closed with the emulator');
  });
});

describe('klw local start-lambda --watch', { timeout: PATIENCE_MS }, () => {
  it('invokes a function added while it runs', async () => {
    const lambda = await startLambda({
      root: work,
      port: 0,
      stateDir: join(work, '.state-lambda'),
      watch: true,
      log: () => {},
      functionLog: () => {},
      invocationTimer: never,
    });
    try {
      addFunction('later');
      await until(() => lambda.pools.has('later'), 'the added function to be served');
      const outcome = await lambda.pools.get('later')!.invoke({});
      assert.equal(outcome.kind, 'result', JSON.stringify(outcome));
    } finally {
      await lambda.close();
      rmSync(join(work, 'functions', 'later'), { recursive: true, force: true });
    }
  });
});
