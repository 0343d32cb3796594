// Benchmarks of the emulator as a server: requests per second through the local HTTPS API against
// a minimal server, and the memory a warm function holds.
import { execFileSync, spawn } from 'node:child_process';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { bundlePath } from '../infra/build.ts';
import { ensureLocalCertificates, startApi } from '../infra/local/index.ts';
import { admissionReview, toEvent } from '../lib/testing/index.ts';
import { root, quick, rows, extra, median, log, podReview } from './measure.ts';

/** Runs the load generator in its own process: keep-alive HTTPS POSTs for a while. */
function load(
  url: string,
  ca: string,
  connections: number,
  seconds: number,
  body: string,
): Promise<{ rps: number; p50: number; p99: number; errors: number }> {
  const script = join(root, 'bench', 'load.mjs');
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [script, url, String(connections), String(seconds)], {
      stdio: ['pipe', 'pipe', 'inherit'],
      env: { ...process.env, BENCH_CA: ca },
    });
    let out = '';
    child.stdout!.on('data', (c) => (out += c));
    child.on('exit', (code) =>
      code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`load generator exit ${code}`)),
    );
    child.stdin!.end(body);
  });
}

/** A minimal HTTPS server that only parses the review and answers it: the baseline. */
async function minimalServer(key: string, cert: string): Promise<{ url: string; close: () => Promise<void> }> {
  const server = createHttpsServer({ key, cert }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const review = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      const body = JSON.stringify({
        apiVersion: review.apiVersion,
        kind: 'AdmissionReview',
        response: { uid: review.request.uid, allowed: true },
      });
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
      res.end(body);
    });
  });
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return {
    url: `https://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    close: () =>
      new Promise((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

export async function throughput(): Promise<void> {
  const stateDir = join(root, '.klw', 'bench');
  const certs = await ensureLocalCertificates(stateDir);
  const body = JSON.stringify(podReview);
  const seconds = quick ? 2 : 5;
  for (const connections of [16, 64]) {
    const baseline = await minimalServer(certs.keyPem, certs.certPem);
    const base = await load(baseline.url, certs.caPem, connections, seconds, body);
    await baseline.close();
    for (const [label, workers, target] of [
      ['one worker', 1, 0.8],
      ['pool on both cores', 2, 1],
    ] as const) {
      const api = await startApi({
        root,
        port: 0,
        stateDir,
        build: false,
        concurrency: workers,
        log: () => {},
        functionLog: () => {},
      });
      const run = await load(api.functionUrl('pod-policy'), certs.caPem, connections, seconds, body);
      await api.close();
      const ratio = run.rps / base.rps;
      const met = workers === 1 ? ratio >= target : ratio > target;
      rows.push({
        benchmark: `start-api, ${connections} connections, ${label} (req/s; p50/p99 ms)`,
        measured: `${run.rps.toFixed(0)} (${run.p50.toFixed(1)}/${run.p99.toFixed(1)})${run.errors ? `, ${run.errors} errors` : ''}`,
        baseline: `${base.rps.toFixed(0)} (${base.p50.toFixed(1)}/${base.p99.toFixed(1)})`,
        ratio,
        target: workers === 1 ? `≥ ${target}x` : `> ${target}x`,
        met,
      });
      log(`throughput ${connections} connections ${label}: ${ratio.toFixed(2)}x`);
    }
  }
}

export async function memory(): Promise<void> {
  // A ConfigMap of 1 MiB as object and oldObject: a 2 MiB review, the largest kind of object etcd keeps.
  const data: Record<string, string> = {};
  for (let i = 0; i < 64; i++) data[`key-${i}`] = 'x'.repeat(16 * 1024);
  const configMap = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'big', namespace: 'default' }, data };
  const event = JSON.stringify(
    toEvent(admissionReview(configMap, { oldObject: configMap, resource: 'configmaps' }), { path: '/pod-defaults' }),
  );
  extra.memoryEventBytes = event.length;
  const reader = "let d='';for await (const c of process.stdin) d+=c;const e=JSON.parse(d);d='';";
  for (const name of ['pod-policy', 'pod-defaults']) {
    const url = `file://${bundlePath(root, name)}`;
    const script = `${reader}const {handler}=await import(${JSON.stringify(url)});const r=await handler(e);if(r.statusCode!==200)process.exit(1);process.stdout.write(String(process.resourceUsage().maxRSS));`;
    const peaks: number[] = [];
    for (let i = 0; i < 3; i++) {
      const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], {
        input: event,
        env: { ...process.env, KLW_LOG_LEVEL: 'silent' },
        maxBuffer: 1 << 20,
      });
      peaks.push(Number(out.toString()) / 1024);
    }
    const mb = median(peaks);
    rows.push({
      benchmark: `peak RSS: ${name}, 1 MiB ConfigMap as object and oldObject`,
      measured: `${mb.toFixed(1)} MB`,
      baseline: '128 MB',
      ratio: mb / 128,
      target: '≤ 1x',
      met: mb <= 128,
    });
    log(`memory ${name}: ${mb.toFixed(1)} MB`);
  }
}
