// A function evaluating CEL in-function is built with its expressions precompiled: the build loads
// the bundle as Lambda does, learns what it compiles, and bundles those forms, which the function
// then loads without reading the expressions again. A bundle that fails, stalls or has no CEL is
// built as before.
// klw-test: no-tsx (what it imports at run time are the bundles it builds)
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { after, describe, it } from 'node:test';
import * as esbuild from 'esbuild';
import { bundleOptions, buildFunction, bundlePath } from '../../infra/build.ts';
import { recordedForms } from '../../infra/build-cel.ts';
import { PENDING_KEY, RECORDED_KEY } from '../../packages/kube-cel/src/bundling.ts';
import type { KubeObject } from '../../lib/index.ts';
import { admissionReview, toEvent } from '../../lib/testing/index.ts';
import { buildsForReal } from '../kept-builds.ts';

// A project inside the repository, so `kube-lambda-webhooks` resolves to this package.
// What these tests check is the build itself: made every run, never a kept one.
buildsForReal();
const work = mkdtempSync(join(process.cwd(), '.klw-test-build-cel-'));
after(() => rmSync(work, { recursive: true, force: true }));

const CONDITION = "object.metadata.name.startsWith('web-')";
/** A function enforcing one condition; `prelude` runs first when it loads. */
const source = (name: string, prelude = '') => `${prelude}
import { deny, defineValidatingWebhook } from 'kube-lambda-webhooks';
import { enforceMatchConditions } from 'kube-lambda-webhooks/matchconditions';
const webhook = defineValidatingWebhook(enforceMatchConditions({
  name: '${name}',
  auth: 'none' as const,
  rules: [{ operations: ['CREATE' as const], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'] }],
  matchConditions: [{ name: 'web', expression: ${JSON.stringify(CONDITION)} }],
  validate: () => deny('frozen'),
}));
export const handler = webhook.handler;
export default webhook;
`;
/** The validation of both policies of `vars`, naming no library function. */
const SAME = 'variables.a == variables.b';
/**
 * Two policies of one validation text: the first's variables hold plain values, the second's IPs
 * (equal for a pod named with one character). In Lambda the first compiles first, and the form of
 * the validation is recorded once, from it.
 */
const varsSource = (variables: string) => `import { defineValidatingPolicy } from 'kube-lambda-webhooks/policies';
const spec = (name: string, a: string, b: string) => ({
  name,
  auth: 'none' as const,
  matchConstraints: { resourceRules: [{ operations: ['CREATE' as const], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'] }] },
  variables: [{ name: 'a', expression: a }, { name: 'b', expression: b }],
  validations: [{ expression: ${JSON.stringify(SAME)}, message: 'apart' }],
});
defineValidatingPolicy(spec('plain-vars', 'dyn(1)', 'dyn(1)'));
const policy = defineValidatingPolicy(spec('ip-vars', ${variables}));
export const handler = policy.handler;
export default policy;
`;
/** A mutating policy (type-checked in-function, compiled when loaded outside Lambda). */
const mutatingSource = `import { Deployment, on } from 'kube-lambda-webhooks';
import { defineMutatingPolicy } from 'kube-lambda-webhooks/policies';
const policy = defineMutatingPolicy({
  name: 'team',
  auth: 'none' as const,
  matchConstraints: { resourceRules: [on(Deployment).create()] },
  mutations: [{ patchType: 'ApplyConfiguration', applyConfiguration: { expression: 'Object{metadata: Object.metadata{labels: {"team": "a"}}}' } }],
});
export const handler = policy.handler;
export default policy;
`;
const functions: Record<string, string> = {
  mutating: mutatingSource,
  gate: source('gate'),
  vars: varsSource(`"ip('10.0.0.1')", "ip('10.0.0.' + string(size(object.metadata.name)))"`),
  // Loads elsewhere, fails where Lambda loads it: built, without forms.
  'lambda-fails': source('lambda-fails', "if (process.env.AWS_LAMBDA_FUNCTION_NAME) throw new Error('no');"),
  plain: `import { allow, defineValidatingWebhook } from 'kube-lambda-webhooks';
export default defineValidatingWebhook({ name: 'plain', auth: 'none' as const,
  rules: [{ operations: ['CREATE' as const], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'] }],
  validate: () => allow() });
`,
};
for (const [name, text] of Object.entries(functions)) {
  mkdirSync(join(work, 'functions', name), { recursive: true });
  writeFileSync(join(work, 'functions', name, 'index.ts'), text);
}
const entry = (name: string) => ({ name, entry: join(work, 'functions', name, 'index.ts') });
/** A form in the bundle's text: its JSON, in a string literal of the bundle (escaped or not). */
const formOf = (text: string, expression: string) =>
  [
    `"expression":${JSON.stringify(expression)}`,
    JSON.stringify(`"expression":${JSON.stringify(expression)}`).slice(1, -1),
  ].some((f) => text.includes(f));
/** A function's bundle and its chunks, as text: the package's code may sit in a chunk the bundle imports. */
const bundleText = (name: string) => {
  const chunks = join(dirname(bundlePath(work, name)), 'chunks');
  const files = existsSync(chunks) ? readdirSync(chunks).filter((f) => f.endsWith('.mjs')) : [];
  return [
    readFileSync(bundlePath(work, name), 'utf8'),
    ...files.map((f) => readFileSync(join(chunks, f), 'utf8')),
  ].join('\n');
};
const hasForms = (text: string) => text.includes('"form":"') || text.includes('\\"form\\":');
const pod = (name: string) =>
  admissionReview({ apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'default' } } as KubeObject, {
    namespace: 'default',
  });

describe('precompiled CEL in bundles', () => {
  it('carries the forms of what the function compiles at load, and compiles nothing itself', async () => {
    await buildFunction(work, entry('gate'));
    const index = bundleText('gate');
    assert.ok(formOf(index, CONDITION) && hasForms(index), 'the bundle carries the form of its condition');
    // Loaded as Lambda loads it, the built bundle records nothing: it loaded its forms.
    assert.deepEqual(await recordedForms(bundlePath(work, 'gate')), []);
    // The same bundle without its forms compiles its condition when it loads.
    const outdir = join(work, 'unprecompiled');
    await esbuild.build({ ...bundleOptions(work, entry('gate')), outdir });
    const recorded = (await recordedForms(join(outdir, 'index.mjs'))) as Array<{ expression: string }>;
    assert.deepEqual(
      recorded.map((f) => f.expression),
      [CONDITION],
    );
  });

  it('answers reviews as the condition says', async () => {
    process.env.KLW_LOG_LEVEL = 'silent';
    try {
      const mod = await import(pathToFileURL(bundlePath(work, 'gate')).href);
      const ran = JSON.parse((await mod.handler(toEvent(pod('web-1')))).body);
      assert.equal(ran.response.allowed, false);
      assert.equal(ran.response.status.message, 'frozen');
      const skipped = JSON.parse((await mod.handler(toEvent(pod('db-1')))).body);
      assert.equal(skipped.response.allowed, true);
    } finally {
      delete process.env.KLW_LOG_LEVEL;
    }
  });

  it('loads the engine only where a precompiled tree leaves an evaluation to it', () => {
    // The bundle without its engine chunk: what the trees answer needs none of it.
    const copy = join(work, 'no-engine');
    cpSync(dirname(bundlePath(work, 'gate')), copy, { recursive: true });
    const engine = readdirSync(join(copy, 'chunks')).filter((f) => /^compile-.*\.mjs$/.test(f));
    assert.equal(engine.length, 1, 'the engine is a chunk of its own');
    rmSync(join(copy, 'chunks', engine[0]!));
    // A pod without a name: the condition's read of it fails, in the engine's words.
    const nameless = admissionReview({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { namespace: 'default' },
    } as KubeObject);
    const answers = (bundle: string, reviews: unknown[]) => {
      const script = `const { handler } = await import(process.env.BUNDLE);
const out = [];
for (const review of JSON.parse(process.env.REVIEWS)) {
  try { out.push(JSON.parse((await handler(review)).body).response); } catch (err) { out.push({ thrown: String(err) }); }
}
process.stdout.write(JSON.stringify(out));`;
      const env = { ...process.env, BUNDLE: pathToFileURL(bundle).href, REVIEWS: JSON.stringify(reviews) };
      const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
        env: { ...env, KLW_LOG_LEVEL: 'silent', AWS_LAMBDA_FUNCTION_NAME: 'gate' },
        encoding: 'utf8',
      });
      assert.equal(run.status, 0, run.stderr);
      return JSON.parse(run.stdout) as Array<{ allowed?: boolean; status?: { message?: string }; thrown?: string }>;
    };
    // In one process, in this order: the first two reviews answered before anything needs the engine.
    const [ran, skipped, failed] = answers(join(copy, 'index.mjs'), [
      toEvent(pod('web-1')),
      toEvent(pod('db-1')),
      toEvent(nameless),
    ]);
    assert.equal(ran!.allowed, false);
    assert.equal(ran!.status?.message, 'frozen');
    assert.equal(skipped!.allowed, true);
    // Left to the engine: without its chunk the review fails; with it, as a bundle without trees answers.
    assert.notEqual(failed!.allowed, true, JSON.stringify(failed));
    const [byTree] = answers(bundlePath(work, 'gate'), [toEvent(nameless)]);
    const [byEngine] = answers(join(work, 'unprecompiled', 'index.mjs'), [toEvent(nameless)]);
    assert.deepEqual(byTree, byEngine);
    assert.match(byTree!.status?.message ?? '', /no such key: name/);
  });

  it('loads in Lambda for a fleet of other Kubernetes versions, whose expressions have no forms', () => {
    const script = `const { handler } = await import(process.env.BUNDLE);
process.stdout.write(typeof handler);`;
    const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
      env: {
        ...process.env,
        KLW_LOG_LEVEL: 'silent',
        AWS_LAMBDA_FUNCTION_NAME: 'gate',
        KLW_FLEET: JSON.stringify({ old: { kubeVersion: '1.28' } }),
        BUNDLE: pathToFileURL(bundlePath(work, 'gate')).href,
      },
      encoding: 'utf8',
    });
    assert.equal(run.status, 0, run.stderr);
    assert.equal(run.stdout, 'function');
  });

  it('loads a mutating policy outside Lambda, its engine chunk loaded for the first review', async () => {
    await buildFunction(work, entry('mutating'));
    const deployment = admissionReview(
      { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'd', namespace: 'default' } } as KubeObject,
      { namespace: 'default' },
    );
    const script = `const { handler } = await import(process.env.BUNDLE);
process.stdout.write((await handler(JSON.parse(process.env.EVENT))).body);`;
    const { AWS_LAMBDA_FUNCTION_NAME: _, ...env } = process.env;
    const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
      env: {
        ...env,
        KLW_LOG_LEVEL: 'silent',
        BUNDLE: pathToFileURL(bundlePath(work, 'mutating')).href,
        EVENT: JSON.stringify(toEvent(deployment)),
      },
      encoding: 'utf8',
    });
    assert.equal(run.status, 0, run.stderr);
    const { response } = JSON.parse(run.stdout);
    assert.equal(response.allowed, true, run.stdout);
    assert.match(Buffer.from(response.patch, 'base64').toString(), /"team":"a"|team/);
  });

  it('compiles with the libraries a validation reading IPs through variables, its form made without', async () => {
    await buildFunction(work, entry('vars'));
    assert.ok(formOf(bundleText('vars'), SAME), 'the bundle carries the form of the validation');
    assert.deepEqual(await recordedForms(bundlePath(work, 'vars')), [], 'the built bundle loads its forms');
    process.env.KLW_LOG_LEVEL = 'silent';
    process.env.AWS_LAMBDA_FUNCTION_NAME = 'vars';
    try {
      const mod = await import(pathToFileURL(bundlePath(work, 'vars')).href);
      const same = JSON.parse((await mod.handler(toEvent(pod('a')))).body);
      assert.equal(same.response.allowed, true, JSON.stringify(same.response));
      const apart = JSON.parse((await mod.handler(toEvent(pod('ab')))).body);
      assert.equal(apart.response.allowed, false, JSON.stringify(apart.response));
      assert.match(apart.response.status.message, /apart$/);
    } finally {
      delete process.env.KLW_LOG_LEVEL;
      delete process.env.AWS_LAMBDA_FUNCTION_NAME;
    }
  });

  it('builds without forms a function that fails to load as in Lambda, and one without CEL', async () => {
    for (const name of ['lambda-fails', 'plain']) {
      await buildFunction(work, entry(name));
      assert.ok(!hasForms(bundleText(name)), name);
    }
  });

  it('learns nothing from a bundle that stalls, exits or prints nonsense', async () => {
    const dir = join(work, 'odd');
    mkdirSync(dir, { recursive: true });
    const bundles = {
      stalls: 'await new Promise(() => setInterval(() => {}, 1000));',
      exits: 'process.exit(3);',
      nonsense: "globalThis[Symbol.for('kube-cel.precompiled')] = 'not a list';",
      items: "globalThis[Symbol.for('kube-cel.precompiled')] = [null, 1, 'x'];",
    };
    for (const [name, text] of Object.entries(bundles)) {
      writeFileSync(join(dir, `${name}.mjs`), text);
      assert.deepEqual(await recordedForms(join(dir, `${name}.mjs`), 2000), [], name);
    }
  });

  it('learns nothing from a bundle that prints more than the bound', async () => {
    const dir = join(work, 'big');
    mkdirSync(dir, { recursive: true });
    const file = join(dir, 'big.mjs');
    // Well-formed forms, 10 KB of them: kept under the default bound, refused past a bound of 1 KB.
    const forms = Array.from({ length: 100 }, (_, i) => ({ expression: `${'x'.repeat(80)} == ${i}` }));
    writeFileSync(file, `globalThis[Symbol.for(${JSON.stringify(RECORDED_KEY)})] = ${JSON.stringify(forms)};`);
    assert.equal((await recordedForms(file)).length, 100);
    assert.deepEqual(await recordedForms(file, 30_000, 1024), []);
  });

  it('waits for the chunks a bundle loads, and for what compiles once they have', async () => {
    const dir = join(work, 'pending');
    mkdirSync(dir, { recursive: true });
    const file = join(dir, 'pending.mjs');
    // A load that ends later than any fixed wait would: after a second of timers.
    writeFileSync(
      file,
      `const key = Symbol.for(${JSON.stringify(RECORDED_KEY)});
const load = new Promise((r) => { let n = 0; const t = setInterval(() => { if (++n === 100) { clearInterval(t); r(); } }, 10); });
(globalThis[Symbol.for(${JSON.stringify(PENDING_KEY)})] ??= []).push(load);
load.then(() => { globalThis[key] = [{ expression: 'late' }]; });
`,
    );
    assert.deepEqual(await recordedForms(file), [{ expression: 'late' }]);
  });

  it('reads its keys from a module of the package that imports nothing', () => {
    const text = readFileSync(join(process.cwd(), 'packages', 'kube-cel', 'src', 'precompiled.ts'), 'utf8');
    assert.ok(!/^import\b/m.test(text), 'precompiled.ts imports nothing');
  });
});
