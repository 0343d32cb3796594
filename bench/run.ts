// Benchmarks: each figure is a ratio against a baseline measured in the same run, so the
// numbers mean the same on any machine. They print a table; they never fail on a timing.
import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import * as esbuild from 'esbuild';
import { buildAll, bundleOptions, bundlePath } from '../infra/build.ts';
import { loadFunctions } from '../infra/functions.ts';
import { ensureLocalCertificates, startApi } from '../infra/local/index.ts';
import type { WebhookHandler } from '../lib/webhook.ts';
import { admissionReview, conversionReview, toEvent } from '../lib/testing/index.ts';
import { allow } from '../lib/admission/decision.ts';

const root = fileURLToPath(new URL('..', import.meta.url));
const quick = process.argv.includes('--quick');

/** One row of the results table. */
interface Row {
  benchmark: string;
  measured: string;
  baseline: string;
  ratio: number;
  target: string;
  met: boolean;
  min?: number;
  max?: number;
}
const rows: Row[] = [];
const extra: Record<string, unknown> = {};

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

function log(line: string): void {
  process.stderr.write(`${line}\n`);
}

/** Nanoseconds per call of `fn` over one sample of `iterations` calls. */
async function sample(fn: () => unknown | Promise<unknown>, iterations: number): Promise<number> {
  const start = process.hrtime.bigint();
  for (let i = 0; i < iterations; i++) await fn();
  return Number(process.hrtime.bigint() - start) / iterations;
}

/**
 * Measures `subject` against `floor` in many short pairs, alternating which runs first, and
 * takes the median of the per-pair ratios: a slow moment of the machine hits both sides of a
 * pair alike, so the ratio holds steady where absolute times drift.
 */
async function compare(
  benchmark: string,
  subject: () => unknown,
  floor: () => unknown,
  iterations: number,
  target: number,
  per = 1,
): Promise<void> {
  for (let i = 0; i < 3; i++) {
    await sample(floor, iterations);
    await sample(subject, iterations);
  }
  const a: number[] = [];
  const b: number[] = [];
  const pairs = quick ? 11 : 31;
  for (let round = 0; round < pairs; round++) {
    if (round % 2) {
      a.push(await sample(subject, iterations));
      b.push(await sample(floor, iterations));
    } else {
      b.push(await sample(floor, iterations));
      a.push(await sample(subject, iterations));
    }
  }
  const ratios = a.map((v, i) => v / b[i]!);
  const ratio = median(ratios);
  const sorted = [...ratios].sort((x, y) => x - y);
  rows.push({
    benchmark,
    measured: `${(median(a) / 1000 / per).toFixed(2)} µs${per > 1 ? '/object' : ''}`,
    baseline: `${(median(b) / 1000 / per).toFixed(2)} µs${per > 1 ? '/object' : ''}`,
    ratio,
    // The middle half of the pairs: the spread a reader can expect between runs.
    min: sorted[Math.floor(sorted.length / 4)]!,
    max: sorted[Math.floor((sorted.length * 3) / 4)]!,
    target: `≤ ${target}x`,
    met: ratio <= target,
  });
  log(`${benchmark}: ${ratio.toFixed(2)}x`);
}

/** The floor of any webhook: decode the body, parse it, serialise an answer of the same size. */
function floorFor(event: { body: string }): () => unknown {
  return () => JSON.stringify(JSON.parse(Buffer.from(event.body, 'base64').toString('utf8')));
}

const podReview = JSON.parse(readFileSync(join(root, 'test/events/reviews/pod-create-v1.json'), 'utf8'));

async function warmInvocations(functions: Awaited<ReturnType<typeof loadFunctions>>): Promise<void> {
  // The built bundles are what Lambda runs. Their log line is formatted as in production;
  // only the write to stdout is dropped while timing.
  const bundles = new Map<string, WebhookHandler>();
  for (const fn of functions)
    bundles.set(fn.name, (await import(pathToFileURL(bundlePath(root, fn.name)).href)).handler);
  const write = process.stdout.write;
  const quiet = (run: () => Promise<void>) => async () => {
    process.stdout.write = (() => true) as typeof process.stdout.write;
    try {
      await run();
    } finally {
      process.stdout.write = write;
    }
  };
  const handler = (name: string): WebhookHandler => bundles.get(name)!;
  const context = { awsRequestId: 'bench', getRemainingTimeInMillis: () => 5000 };
  const podEvent = toEvent(podReview, { base64: true, path: '/pod-policy', timeout: '5s' }) as { body: string };
  // Short samples: many pairs fit in a moment of steady machine.
  extra.podReviewBytes = Buffer.from(podEvent.body, 'base64').length;

  const validating = handler('pod-policy');
  await quiet(() =>
    compare(
      'warm: validating (pod-policy), HTTP API event → result',
      () => validating(podEvent, context),
      floorFor(podEvent),
      500,
      1.5,
    ),
  )();
  const mutating = handler('pod-defaults');
  await quiet(() =>
    compare(
      'warm: mutating with a patch (pod-defaults)',
      () => mutating(podEvent, context),
      floorFor(podEvent),
      500,
      2.5,
    ),
  )();

  const objects = Array.from({ length: 100 }, (_, i) => ({
    apiVersion: 'example.com/v1beta1',
    kind: 'CronTab',
    metadata: {
      name: `crontab-${i}`,
      namespace: 'default',
      uid: `uid-${i}`,
      resourceVersion: String(1000 + i),
      labels: { app: 'cron' },
    },
    hostPort: `host-${i}.example.com:${1000 + i}`,
  }));
  const convEvent = toEvent(conversionReview(objects, 'example.com/v1'), {
    base64: true,
    path: '/crontab-conversion',
  }) as { body: string };
  const conversion = handler('crontab-conversion');
  await quiet(() =>
    compare(
      'warm: conversion of 100 objects (crontab-conversion)',
      () => conversion(convEvent, context),
      floorFor(convEvent),
      50,
      2,
      100,
    ),
  )();
}

/**
 * 32,000 warnings added by one `withWarnings` call each, against the same warnings given as one
 * list: the size at which a decision that copied its warnings on every call took seconds. What
 * is left is the cost of a call and of a decision per kept warning, the same at any size.
 */
async function warningsOneByOne(): Promise<void> {
  const warnings = Array.from({ length: 32_000 }, (_, i) => `container "c${i}" uses image "nginx" without a tag`);
  const oneByOne = () => {
    let decision = allow();
    for (const warning of warnings) decision = decision.withWarnings(warning);
    return decision.warnings;
  };
  const asList = () => allow(warnings).warnings;
  await compare('warnings: 32,000 added one withWarnings call each, against one list', oneByOne, asList, 1, 50);
}

/** Wall time of a fresh Node process, in ms. */
function runProcess(args: string[], input?: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    const child = spawn(process.execPath, args, {
      stdio: ['pipe', 'ignore', 'inherit'],
      env: { ...process.env, KLW_LOG_LEVEL: 'silent' },
    });
    child.on('error', reject);
    child.on('exit', (code) =>
      code === 0 ? resolve(Number(process.hrtime.bigint() - started) / 1e6) : reject(new Error(`exit ${code}`)),
    );
    child.stdin!.end(input ?? '');
  });
}

/** A function measured for cold start and bundle size, with its size goal in KB. */
interface Measured {
  name: string;
  bundle: string;
  maxKB: number;
}

/** Bundle goal of the plain functions, which carry no CEL engine. */
const PLAIN_BUNDLE_KB = 100;

/**
 * Bundle goal of a function that enforces matchConditions itself: the plain goal plus the
 * CEL engine (@marcbachmann/cel-js, about 90 KB minified) and the RE2 regular expression
 * engine (re2js, about 150 KB minified, most of it Unicode tables), which no smaller
 * linear-time engine replaces, plus the Kubernetes CEL libraries the API server declares
 * (quantity, strings by code point, format, sets, ip and cidr, semver, lists: about 35 KB more).
 * The engine and RE2 alone fit 350 KB; the libraries exactness needs take it past that, so the
 * bound is 450 KB, which still loads in a few milliseconds.
 */
const CEL_BUNDLE_KB = 450;

/**
 * Bundles the fixture function that enforces matchConditions (bench/fixtures, not a
 * deployed function) with the production options, into .klw/bench.
 */
async function matchConditionsFixture(): Promise<Measured> {
  const name = 'match-conditions';
  const entry = join(root, 'bench', 'fixtures', name, 'index.ts');
  const outfile = join(root, '.klw', 'bench', name, 'index.mjs');
  await esbuild.build({ ...bundleOptions(root, { name, entry }), outfile });
  return { name: `${name} (enforceMatchConditions, bench fixture)`, bundle: outfile, maxKB: CEL_BUNDLE_KB };
}

async function coldStarts(functions: Awaited<ReturnType<typeof loadFunctions>>): Promise<void> {
  const event = JSON.stringify(toEvent(podReview, { path: '/pod-policy' }));
  // Both read the event from stdin and answer it; the baseline's handler does nothing else.
  const reader = "let d='';for await (const c of process.stdin) d+=c;const e=JSON.parse(d);";
  const empty = [
    '--input-type=module',
    '-e',
    `${reader}const handler=async()=>({statusCode:200,body:'{}'});const r=await handler(e);if(r.statusCode!==200)process.exit(1);`,
  ];
  const measured: Measured[] = functions.map((fn) => ({
    name: fn.name,
    bundle: bundlePath(root, fn.name),
    maxKB: PLAIN_BUNDLE_KB,
  }));
  measured.push(await matchConditionsFixture());
  for (const fn of measured) {
    const url = pathToFileURL(fn.bundle).href;
    const cold = [
      '--input-type=module',
      '-e',
      `${reader}const {handler}=await import(${JSON.stringify(url)});const r=await handler(e);if(typeof r.statusCode!=='number')process.exit(1);`,
    ];
    const a: number[] = [];
    const b: number[] = [];
    for (let i = 0; i < (quick ? 5 : 21); i++) {
      b.push(await runProcess(empty, event));
      a.push(await runProcess(cold, event));
    }
    const ratios = a.map((v, i) => v / b[i]!).sort((x, y) => x - y);
    const ratio = median(ratios);
    const spread = { min: ratios[Math.floor(ratios.length / 4)]!, max: ratios[Math.floor((ratios.length * 3) / 4)]! };
    rows.push({
      benchmark: `cold start: ${fn.name} (fresh process, import + one review)`,
      measured: `${median(a).toFixed(1)} ms`,
      baseline: `${median(b).toFixed(1)} ms`,
      ratio,
      ...spread,
      target: '≤ 1.25x',
      met: ratio <= 1.25,
    });
    const bytes = statSync(fn.bundle).size;
    rows.push({
      benchmark: `bundle size: ${fn.name}`,
      measured: `${(bytes / 1024).toFixed(1)} KB`,
      baseline: `${fn.maxKB} KB`,
      ratio: bytes / (fn.maxKB * 1024),
      target: '≤ 1x',
      met: bytes <= fn.maxKB * 1024,
    });
    log(`cold start ${fn.name}: ${ratio.toFixed(2)}x`);
  }
}

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

async function throughput(): Promise<void> {
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

async function memory(): Promise<void> {
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

function table(): string {
  const lines = [
    '| benchmark | measured | baseline | ratio (spread) | target | met |',
    '| --- | --- | --- | --- | --- | --- |',
  ];
  for (const r of rows) {
    const spread = r.min !== undefined ? ` (${r.min.toFixed(2)}–${r.max!.toFixed(2)})` : '';
    lines.push(
      `| ${r.benchmark} | ${r.measured} | ${r.baseline} | ${r.ratio.toFixed(2)}x${spread} | ${r.target} | ${r.met ? 'yes' : '**no**'} |`,
    );
  }
  return lines.join('\n');
}

/**
 * The CEL specification's conformance cases of the Kubernetes sections on the matchConditions
 * environment: met when exactly the known differences fail (test/cel/conformance-known.ts).
 */
async function celConformance(): Promise<void> {
  const { conformanceCases, KUBERNETES_SECTIONS, runConformance } = await import('../test/cel/conformance-suite.ts');
  const { exclusionOf } = await import('../test/cel/conformance-exclusions.ts');
  const { KNOWN_DIFFERENCES } = await import('../test/cel/conformance-known.ts');
  const { matchConditions } = await import('../test/cel/engines.ts');
  const sections = new Set<string>(KUBERNETES_SECTIONS);
  const cases = conformanceCases().filter((c) => sections.has(c.section) && !exclusionOf(c));
  const { failed } = runConformance(matchConditions, cases);
  const passed = cases.length - failed.size;
  const known = Object.keys(KNOWN_DIFFERENCES).length;
  rows.push({
    benchmark: 'CEL conformance: Kubernetes sections, protobuf cases excluded (matchConditions environment)',
    measured: `${passed} passed`,
    baseline: `${cases.length} cases`,
    ratio: passed / cases.length,
    target: `${known} known differences`,
    met: failed.size === known,
  });
  log(`CEL conformance: ${passed}/${cases.length}`);
}

const functions = await loadFunctions(root);
log('building bundles');
await buildAll(root, functions);
const only = process.argv.slice(2).filter((a) => !a.startsWith('--'));
const sections: Array<[string, () => Promise<void>]> = [
  ['warm', () => warmInvocations(functions)],
  ['warnings', warningsOneByOne],
  ['cold', () => coldStarts(functions)],
  ['throughput', throughput],
  ['memory', memory],
  ['cel', celConformance],
];
for (const [name, run] of sections) if (!only.length || only.includes(name)) await run();

const markdown = table();
process.stdout.write(`${markdown}\n`);
mkdirSync(join(root, 'bench', 'results'), { recursive: true });
writeFileSync(
  join(root, 'bench', 'results', 'latest.json'),
  `${JSON.stringify(
    {
      date: new Date().toISOString(),
      node: process.version,
      cpus: (await import('node:os')).cpus().length,
      rows,
      ...extra,
    },
    null,
    2,
  )}\n`,
);
