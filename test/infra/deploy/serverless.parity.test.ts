// Parity: the same bundles under `serverless offline` (serverless-offline, run by osls, the
// Serverless Framework this toolkit deploys with) and under `klw local start-api` give the
// same answers.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { stringify } from 'yaml';
import { startApi, type RunningApi } from '../../../infra/local/api.ts';
import { serverlessBin } from '../../../infra/deploy/serverless.ts';
import { admissionReview } from '../../../lib/testing/index.ts';
import { freePort } from '../../e2e/cluster.ts';
import { fixture, FIXTURE_FUNCTIONS, ManualTimer, PATIENCE_MS } from '../../helpers.ts';
import { withKeptCertificates } from '../../kept-certs.ts';

/** The functions' timeouts never run out: a cold start on a loaded machine takes as long as it takes. */
const never = new ManualTimer().timer;

const root = process.cwd();
const work = mkdtempSync(join(root, '.klw-test-'));
cpSync(FIXTURE_FUNCTIONS, join(work, 'functions'), { recursive: true });
let offline: ChildProcess | undefined;
let offlinePort = 0;
let api: RunningApi;

before(async () => {
  api = await startApi({
    root: work,
    port: 0,
    stateDir: await withKeptCertificates(join(work, '.state')),
    log: () => {},
    functionLog: () => {},
    invocationTimer: never,
  });
  // The functions the emulator loaded for itself: the same project, not loaded a second time.
  const functions = api.project.functions;
  offlinePort = await freePort();
  // The same bundles, described for serverless-offline (which runs handlers from files, not zips).
  writeFileSync(
    join(work, 'serverless.yml'),
    stringify({
      service: 'klw-parity',
      plugins: ['serverless-offline'],
      // The same local path secret the emulator gives its functions, in the same place in the URL.
      provider: {
        name: 'aws',
        runtime: 'nodejs24.x',
        environment: { KLW_LOG_LEVEL: 'silent', KLW_PATH_SECRET: api.pathSecret },
      },
      functions: Object.fromEntries(
        functions.map((f) => [
          f.name,
          {
            handler: `dist/functions/${f.name}/index.handler`,
            // Far past any cold start: the answers never depend on it (the functions' own time
            // budget comes from their timeoutSeconds, the same on both sides).
            timeout: 300,
            environment: f.registration.lambda.environment ?? {},
            events: [{ httpApi: { method: 'POST', path: `${f.registration.path}/{secret}` } }],
          },
        ]),
      ),
      custom: {
        'serverless-offline': { httpPort: offlinePort, lambdaPort: await freePort(), noPrependStageInUrl: true },
      },
    }),
  );
  offline = spawn(serverlessBin(root), ['offline', 'start'], {
    cwd: work,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, SLS_TELEMETRY_DISABLED: '1', SLS_NOTIFICATIONS_MODE: 'off' },
  });
  let output = '';
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`serverless offline did not start:\n${output}`)), PATIENCE_MS);
    const onData = (chunk: Buffer) => {
      output += chunk;
      if (output.includes('Server ready')) {
        clearTimeout(timer);
        resolve();
      }
    };
    offline!.stdout!.on('data', onData);
    offline!.stderr!.on('data', onData);
    offline!.on('exit', (code) => reject(new Error(`serverless offline exited with ${code}:\n${output}`)));
  });
});

after(async () => {
  if (offline && offline.exitCode === null) {
    const exited = new Promise((r) => offline!.once('exit', r));
    offline.kill('SIGTERM');
    const timer = setTimeout(() => offline!.kill('SIGKILL'), 5000);
    await exited;
    clearTimeout(timer);
  }
  await api?.close();
  rmSync(work, { recursive: true, force: true });
});

interface Answer {
  status: number;
  body: unknown;
}

function send(url: string, body: string, contentType: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const secure = url.startsWith('https:');
    const options = {
      method: 'POST',
      headers: { 'content-type': contentType },
      ...(secure ? { ca: readFileSync(api.caPath) } : {}),
    };
    const req = (secure ? httpsRequest : httpRequest)(url, options, (res) => {
      let text = '';
      res.on('data', (c) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

const pod = (spec: Record<string, unknown>) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'web', namespace: 'shop' },
  spec: { containers: [{ name: 'app', image: 'nginx:1.25' }], ...spec },
});

describe('parity with serverless offline', () => {
  const cases: Array<[string, string, unknown, string?]> = [
    ['pod-policy allows a compliant pod (v1)', 'pod-policy', admissionReview(pod({}), { uid: 'u1' })],
    [
      'pod-policy denies a privileged pod (v1beta1)',
      'pod-policy',
      admissionReview(pod({ hostPID: true }), { uid: 'u2', version: 'v1beta1' }),
    ],
    [
      'pod-policy warns on an untagged image',
      'pod-policy',
      admissionReview(pod({ containers: [{ name: 'a', image: 'nginx' }] }), { uid: 'u3' }),
    ],
    ['pod-defaults patches a new pod', 'pod-defaults', fixture('reviews/pod-create-v1')],
    ['crontab-conversion answers the reference review', 'crontab-conversion', fixture('reviews/conversion-v1')],
    [
      'crontab-conversion fails on a bad hostPort',
      'crontab-conversion',
      {
        ...fixture<Record<string, unknown>>('reviews/conversion-v1beta1'),
        request: {
          uid: 'u4',
          desiredAPIVersion: 'example.com/v1',
          objects: [{ apiVersion: 'example.com/v1beta1', kind: 'CronTab', metadata: { name: 'x' }, hostPort: 'bad' }],
        },
      },
    ],
    ['a bad body gets the same 400', 'pod-policy', '{"apiVersion":'],
    ['a wrong content type gets the same 415', 'pod-policy', admissionReview(pod({})), 'text/plain'],
  ];
  for (const [name, fn, review, contentType] of cases) {
    it(name, async () => {
      const body = typeof review === 'string' ? review : JSON.stringify(review);
      const local = await send(api.functionUrl(fn), body, contentType ?? 'application/json');
      const offlineAnswer = await send(
        `http://127.0.0.1:${offlinePort}/${fn}/${api.pathSecret}`,
        body,
        contentType ?? 'application/json',
      );
      assert.deepEqual(local, offlineAnswer);
      if (!contentType && typeof review !== 'string') assert.equal(local.status, 200);
    });
  }
});
