// zod reads only malformed reviews: in a function's bundle it is a chunk of its own that a
// well-formed review never loads, and a malformed one loads to get the answer it always got.
// klw-test: no-tsx (what it imports at run time is the JavaScript it built)
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { after, describe, it } from 'node:test';
import { buildFunction, bundlePath } from '../../infra/build.ts';
import { parseAdmissionReview } from '../../lib/review/parse.ts';
import { toEvent } from '../../lib/testing/index.ts';
import { extractZip } from '../zip.ts';
import { buildsForReal } from '../kept-builds.ts';

// What these tests check is the build itself: made every run, never a kept one.
buildsForReal();

// A project inside the repository, so `kube-lambda-webhooks` resolves to this package.
const work = mkdtempSync(join(process.cwd(), '.klw-test-zod-chunk-'));
// Unpacked where no node_modules is reachable: only what the zip carries can load.
const unpacked = mkdtempSync(join(tmpdir(), 'klw-zod-chunk-'));
after(() => {
  rmSync(work, { recursive: true, force: true });
  rmSync(unpacked, { recursive: true, force: true });
});

const name = 'pod-gate';
mkdirSync(join(work, 'functions', name), { recursive: true });
writeFileSync(
  join(work, 'functions', name, 'index.ts'),
  `import { allow, deny, defineValidatingWebhook } from 'kube-lambda-webhooks';
const webhook = defineValidatingWebhook({
  name: '${name}',
  auth: 'none' as const,
  rules: [{ operations: ['CREATE' as const], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'] }],
  validate: (request) => (request.name === 'bad' ? deny('bad name') : allow()),
});
export const handler = webhook.handler;
export default webhook;
`,
);

/** A string only zod's code holds (the name of its base schema class). */
const ZOD_MARKER = '$ZodType';
const review = () =>
  JSON.parse(readFileSync(join(import.meta.dirname, '../events/reviews/pod-create-v1.json'), 'utf8'));

/** The function's answer to `body`, from the bundle unpacked into `dir`. */
async function answer(dir: string, body: unknown): Promise<{ statusCode: number; body: any }> {
  process.env.KLW_LOG_LEVEL = 'silent';
  try {
    const mod = await import(pathToFileURL(join(dir, 'index.mjs')).href);
    const result = await mod.handler(toEvent(body as never));
    return { statusCode: result.statusCode, body: JSON.parse(result.body) };
  } finally {
    delete process.env.KLW_LOG_LEVEL;
  }
}

describe('the zod chunk', () => {
  let zip: string;

  it('is left out of the bundle a function loads, and carried beside it', async () => {
    zip = join(work, (await buildFunction(work, { name, entry: join(work, 'functions', name, 'index.ts') })).zip);
    assert.ok(!readFileSync(bundlePath(work, name), 'utf8').includes(ZOD_MARKER), 'index.mjs holds zod');
    const chunks = join(dirname(bundlePath(work, name)), 'chunks');
    const mjs = readdirSync(chunks).filter((f) => f.endsWith('.mjs'));
    assert.deepEqual(
      mjs.map((f) => readFileSync(join(chunks, f), 'utf8').includes(ZOD_MARKER)),
      [true],
      'one chunk, holding zod',
    );
  });

  it('is never loaded for a well-formed review: the function answers without it', async () => {
    const dir = join(unpacked, 'without-chunks');
    extractZip(zip, dir);
    rmSync(join(dir, 'chunks'), { recursive: true });
    const allowed = await answer(dir, review());
    assert.equal(allowed.statusCode, 200);
    assert.equal(allowed.body.response.allowed, true);
    const bad = review();
    bad.request.name = 'bad';
    const denied = await answer(dir, bad);
    assert.equal(denied.body.response.allowed, false);
    assert.equal(denied.body.response.status.message, 'bad name');
  });

  it('is loaded for a malformed review, which gets the answer zod words', async () => {
    const dir = join(unpacked, 'with-chunks');
    extractZip(zip, dir);
    const body = review();
    body.request.uid = '';
    const expected = parseAdmissionReview(body);
    assert.equal(expected.ok, false);
    const refused = await answer(dir, body);
    assert.equal(refused.statusCode, 400);
    assert.deepEqual(refused.body, { error: expected.ok ? '' : expected.message });
    assert.equal(refused.body.error, 'request.uid: uid must not be empty');
  });
});
