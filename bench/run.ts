// Benchmarks: each figure is a ratio against a baseline measured in the same run, so the
// numbers mean the same on any machine. They print a table; they never fail on a timing.
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { buildAll, bundleOptions, bundlePath } from '../infra/build.ts';
import { buildWithPrecompiledCel } from '../infra/build-cel.ts';
import { loadFunctions } from '../infra/functions.ts';
import { policyOf } from '../infra/policies/registration.ts';
import { deploymentOf, functionDefinition, pluginParams } from '../infra/deploy/index.ts';
import type { WebhookHandler } from '../lib/webhook.ts';
import { conversionReview, toEvent } from '../lib/testing/index.ts';
import { allow } from '../lib/admission/decision.ts';
import { root, rows, extra, log, compare, table, podReview, pairedColdStarts } from './measure.ts';
import { throughput, memory } from './servers.ts';
import { celSpeed } from './cel-speed.ts';
import { POLICY_COLD_RATIO, validatingPolicies } from './policies.ts';
import { mutatingPolicySpeed } from './mutating-policy.ts';

/** The floor of any webhook: decode the body, parse it, serialise an answer of the same size. */
function floorFor(event: { body: string }): () => unknown {
  return () => JSON.stringify(JSON.parse(Buffer.from(event.body, 'base64').toString('utf8')));
}

export async function warmInvocations(functions: Awaited<ReturnType<typeof loadFunctions>>): Promise<void> {
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

/** A function measured for cold start and bundle size, with its size goal in KB and cold-start goal. */
interface Measured {
  name: string;
  bundle: string;
  maxKB: number;
  maxRatio: number;
}

/**
 * Bundle goal of the plain functions, which carry no CEL engine: what a webhook needs (the review
 * readers, JSON patch, logs and metrics, the path secret) fits in 66 KB once the event sources and
 * fleet code a deployment does not use are left out; zod, which reads only malformed reviews, is a
 * chunk beside the bundle, loaded when one comes.
 */
const PLAIN_BUNDLE_KB = 66;
/** Cold-start goal of the plain functions, over an empty process. */
const PLAIN_COLD_RATIO = 1.25;

/**
 * Bundle goal of a function that enforces matchConditions itself: the plain goal plus the CEL
 * engine (@marcbachmann/cel-js, about 90 KB minified) and what answering exactly as the API server
 * needs: the Kubernetes CEL libraries (quantity, strings by code point, format, sets, ip and cidr,
 * semver, lists, authorizer selectors), Go's time and number rules, cel-go's checker words, parser
 * limits and validators. The RE2 engine (re2js, about 150 KB minified, most of it Unicode tables)
 * is a chunk of its own, loaded only when a condition uses a regular expression: not counted here.
 */
const CEL_BUNDLE_KB = 350;
/** Cold-start goal of a function enforcing four typical conditions, none with a regular expression. */
const CEL_COLD_RATIO = 1.35;

/**
 * Bundles a fixture function that enforces matchConditions (bench/fixtures, not a deployed
 * function) with the production options, into .klw/bench: `match-conditions-plain` (four typical
 * conditions, no regular expression) and `match-conditions` (one condition with `matches`, whose
 * RE2 chunk its cold start loads).
 */
async function matchConditionsFixture(name: string, maxRatio: number): Promise<Measured> {
  const entry = join(root, 'bench', 'fixtures', name, 'index.ts');
  const outdir = join(root, '.klw', 'bench', name);
  // Deployed as the plain functions are here: behind an HTTP API, without a fleet.
  const deployment = { sources: ['http' as const], fleet: false };
  // Built as buildFunction builds a function: its conditions precompiled.
  await buildWithPrecompiledCel({ ...bundleOptions(root, { name, entry }, undefined, deployment), outdir });
  return {
    name: `${name} (enforceMatchConditions, bench fixture)`,
    bundle: join(outdir, 'index.mjs'),
    maxKB: CEL_BUNDLE_KB,
    maxRatio,
  };
}

/** A bundle and the files it imports statically, transitively (relative imports only). */
function staticClosure(bundle: string): string[] {
  const seen = [bundle];
  for (let i = 0; i < seen.length; i++) {
    const text = readFileSync(seen[i]!, 'utf8');
    for (const m of text.matchAll(
      /(?:^|[;}\s])(?:import|export)\s*(?:[\w$*{},\s]*from\s*)?["'](\.{1,2}\/[^"']+)["']/g,
    )) {
      const file = join(dirname(seen[i]!), m[1]!);
      if (!seen.includes(file)) seen.push(file);
    }
  }
  return seen;
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
  // A policy's function carries the CEL engine: the cold-start goal of the policy bench
  // (bench/policies.ts) and the bundle goal of CEL. A mutating policy's also holds the merge
  // schemas of the built-in kinds (a generated table of about 190 KB): its size is measured only.
  const measured: Measured[] = functions.map((fn) => {
    const policy = policyOf(fn.registration);
    const goals = !policy
      ? { maxKB: PLAIN_BUNDLE_KB, maxRatio: PLAIN_COLD_RATIO }
      : policy.kind === 'MutatingAdmissionPolicy'
        ? { maxKB: Number.POSITIVE_INFINITY, maxRatio: POLICY_COLD_RATIO }
        : { maxKB: CEL_BUNDLE_KB, maxRatio: POLICY_COLD_RATIO };
    return { name: fn.name, bundle: bundlePath(root, fn.name), ...goals };
  });
  measured.push(await matchConditionsFixture('match-conditions-plain', CEL_COLD_RATIO));
  // With a regular expression the RE2 chunk loads too: measured, its goal the plain one of CEL.
  measured.push(await matchConditionsFixture('match-conditions', Number.POSITIVE_INFINITY));
  for (const fn of measured) {
    const url = pathToFileURL(fn.bundle).href;
    const cold = [
      '--input-type=module',
      '-e',
      `${reader}const {handler}=await import(${JSON.stringify(url)});const r=await handler(e);if(typeof r.statusCode!=='number')process.exit(1);`,
    ];
    const measured = await pairedColdStarts(cold, empty, event);
    rows.push({
      benchmark: `cold start: ${fn.name} (fresh process, import + one review)`,
      ...measured,
      target: Number.isFinite(fn.maxRatio) ? `≤ ${fn.maxRatio}x` : 'measured',
      met: measured.ratio <= fn.maxRatio,
    });
    // What a cold start loads: the bundle and the chunks it imports statically (code shared with a
    // chunk loaded on demand is one of those); the chunks only a dynamic import reaches are apart.
    const loaded = staticClosure(fn.bundle);
    const bytes = loaded.reduce((sum, f) => sum + statSync(f).size, 0);
    const limitKB = Number.isFinite(fn.maxKB) ? fn.maxKB : CEL_BUNDLE_KB;
    rows.push({
      benchmark: `bundle size (with the chunks it imports statically): ${fn.name}`,
      measured: `${(bytes / 1024).toFixed(1)} KB`,
      baseline: `${limitKB} KB`,
      ratio: bytes / (limitKB * 1024),
      target: Number.isFinite(fn.maxKB) ? '≤ 1x' : 'measured',
      met: bytes <= fn.maxKB * 1024,
    });
    const chunks = join(dirname(fn.bundle), 'chunks');
    if (existsSync(chunks)) {
      const total = readdirSync(chunks)
        .filter((f) => f.endsWith('.mjs') && !loaded.includes(join(chunks, f)))
        .reduce((sum, f) => sum + statSync(join(chunks, f)).size, bytes);
      rows.push({
        benchmark: `bundle size with its chunks (loaded on demand: zod, RE2, CEL libraries): ${fn.name}`,
        measured: `${(total / 1024).toFixed(1)} KB`,
        baseline: `${limitKB} KB`,
        ratio: total / (limitKB * 1024),
        target: 'measured',
        met: true,
      });
    }
    log(`cold start ${fn.name}: ${measured.ratio.toFixed(2)}x`);
  }
}

/**
 * The CEL specification's conformance cases of the Kubernetes sections on the matchConditions
 * environment: met when exactly the known differences fail (packages/kube-cel/test/conformance-known.ts).
 */
async function celConformance(): Promise<void> {
  const { conformanceCases, KUBERNETES_SECTIONS, runConformance } = await import(
    '../packages/kube-cel/test/conformance-suite.ts'
  );
  const { exclusionOf } = await import('../packages/kube-cel/test/conformance-exclusions.ts');
  const { KNOWN_DIFFERENCES } = await import('../packages/kube-cel/test/conformance-known.ts');
  const { matchConditions } = await import('../packages/kube-cel/test/engines.ts');
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
// Each bundle as `serverless deploy` builds it for this project (an HTTP API route, no function
// URL, no fleet file): without the event sources and the fleet code its deployment does not use.
const params = pluginParams({}, 'bench');
const registrations = new Map(functions.map((fn) => [fn.name, fn.registration]));
await buildAll(root, functions, undefined, undefined, (name) =>
  deploymentOf(functionDefinition(registrations.get(name)!, { service: 'bench', stage: 'bench' }, params)),
);
const only = process.argv.slice(2).filter((a) => !a.startsWith('--'));
const sections: Array<[string, () => Promise<void>]> = [
  ['warm', () => warmInvocations(functions)],
  ['warnings', warningsOneByOne],
  ['cold', () => coldStarts(functions)],
  ['throughput', throughput],
  ['memory', memory],
  ['cel', celConformance],
  ['cel-speed', celSpeed],
  ['vap', validatingPolicies],
  ['mutating-policy', mutatingPolicySpeed],
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
