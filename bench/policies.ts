// Validating policies served from Lambda: the warm in-function evaluation of a policy with three
// validations against the same checks written as a TypeScript validating function, and the cold
// start of the policy's function against an empty process; both bundled from bench/fixtures with
// the production options, measured in the same run as their baselines.
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { bundleOptions } from '../infra/build.ts';
import { buildWithPrecompiledCel } from '../infra/build-cel.ts';
import { toEvent } from '../lib/testing/index.ts';
import type { WebhookHandler } from '../lib/webhook.ts';
import { compare, log, pairedColdStarts, podReview, root, rows } from './measure.ts';

/** Warm goal: the policy's evaluation at most twice the TypeScript function's. */
const WARM_RATIO = 2;
/** Cold-start goal of a policy's function, over an empty process. */
export const POLICY_COLD_RATIO = 1.5;

/** Bundles a fixture into .klw/bench/<name>; the bundle's path. */
async function bundle(name: string): Promise<string> {
  const outdir = join(root, '.klw', 'bench', name);
  // Built as buildFunction builds a function: its expressions precompiled.
  await buildWithPrecompiledCel({
    ...bundleOptions(root, { name, entry: join(root, 'bench', 'fixtures', name, 'index.ts') }),
    outdir,
  });
  return join(outdir, 'index.mjs');
}

/** The warm and cold rows of the validating policy (`npm run bench -- vap`). */
export async function validatingPolicies(): Promise<void> {
  const policyBundle = await bundle('vap-policy');
  const functionBundle = await bundle('vap-function');
  const policy: WebhookHandler = (await import(pathToFileURL(policyBundle).href)).handler;
  const typescript: WebhookHandler = (await import(pathToFileURL(functionBundle).href)).handler;
  const context = { awsRequestId: 'bench', getRemainingTimeInMillis: () => 5000 };
  const event = toEvent(podReview, { base64: true, path: '/vap-bench', timeout: '5s' });
  const write = process.stdout.write;
  process.stdout.write = (() => true) as typeof process.stdout.write;
  try {
    const answer = await policy(event, context);
    if (!JSON.parse(answer.body as string).response.allowed) throw new Error('the bench pod must be admitted');
    await compare(
      'warm: validating policy, three validations in-function, against the same checks in TypeScript',
      () => policy(event, context),
      () => typescript(event, context),
      300,
      WARM_RATIO,
    );
  } finally {
    process.stdout.write = write;
  }
  await coldStart(policyBundle);
}

/** The policy function's cold start (a fresh process: import, one review) against an empty process. */
async function coldStart(bundlePath: string): Promise<void> {
  const input = JSON.stringify(toEvent(podReview, { path: '/vap-bench' }));
  const reader = "let d='';for await (const c of process.stdin) d+=c;const e=JSON.parse(d);";
  const empty = [
    '--input-type=module',
    '-e',
    `${reader}const handler=async()=>({statusCode:200,body:'{}'});const r=await handler(e);if(r.statusCode!==200)process.exit(1);`,
  ];
  const cold = [
    '--input-type=module',
    '-e',
    `${reader}const {handler}=await import(${JSON.stringify(pathToFileURL(bundlePath).href)});const r=await handler(e);if(!JSON.parse(r.body).response.allowed)process.exit(1);`,
  ];
  const measured = await pairedColdStarts(cold, empty, input);
  rows.push({
    benchmark: 'cold start: validating policy, three validations (fresh process, import + one review)',
    ...measured,
    target: `≤ ${POLICY_COLD_RATIO}x`,
    met: measured.ratio <= POLICY_COLD_RATIO,
  });
  log(`cold start vap-policy: ${measured.ratio.toFixed(2)}x`);
}
