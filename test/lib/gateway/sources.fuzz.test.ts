import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import {
  allow,
  defineConversionWebhook,
  defineMutatingWebhook,
  defineValidatingWebhook,
  deny,
  type KubeObject,
} from '../../../lib/index.ts';
import { sourceNames } from '../../../lib/gateway/sources.ts';
import { createLogger } from '../../../lib/log.ts';
import { admissionReview, conversionReview, toEvent } from '../../../lib/testing/index.ts';
import { fixture, FUZZ_RUNS } from '../../helpers.ts';

const silent = { logger: createLogger({ level: 'silent' }) };
const validating = defineValidatingWebhook({
  name: 'fuzz-v',
  rules: [],
  validate: (r) => (r.object?.metadata?.name?.startsWith('x') ? deny('x') : allow()),
}).withOptions(silent);
const mutating = defineMutatingWebhook<KubeObject & { spec?: any }>({
  name: 'fuzz-m',
  rules: [],
  mutate: (o) => {
    o.metadata = { ...o.metadata, labels: { ...o.metadata?.labels, fuzzed: 'true' } };
  },
}).withOptions(silent);
const conversion = defineConversionWebhook({
  name: 'fuzz-c',
  crd: 'x.example.com',
  convert: (o, d) => ({ ...o, apiVersion: d }),
}).withOptions(silent);
const handlers = [validating, mutating, conversion];

/** A valid Lambda HTTP result: an integer status, a JSON body, a JSON content type. */
function assertHttpResult(result: unknown): { statusCode: number; body: any } {
  const r = result as { statusCode: unknown; body: unknown; headers: Record<string, string> };
  assert.ok(Number.isInteger(r.statusCode) && (r.statusCode as number) >= 200 && (r.statusCode as number) < 600);
  assert.equal(typeof r.body, 'string');
  assert.equal(r.headers['content-type'], 'application/json');
  const body = JSON.parse(r.body as string);
  if (r.statusCode !== 200) {
    assert.deepEqual(Object.keys(body), ['error']);
    assert.doesNotMatch(body.error, /\n\s+at /, 'no stack in a response');
  }
  return { statusCode: r.statusCode as number, body };
}

const anyJson = fc.jsonValue({ maxDepth: 4 });
const sources = fc.constantFrom(...sourceNames());

describe('fuzz: the handlers never throw and always answer HTTP', () => {
  it('random values as events', async () => {
    await fc.assert(
      fc.asyncProperty(fc.anything(), fc.constantFrom(...handlers), async (event, handler) => {
        assertHttpResult(await handler(event));
      }),
      { numRuns: FUZZ_RUNS },
    );
  });

  it('random JSON bodies in every event format', async () => {
    await fc.assert(
      fc.asyncProperty(
        anyJson,
        sources,
        fc.boolean(),
        fc.constantFrom(...handlers),
        async (body, format, base64, handler) => {
          const result = assertHttpResult(await handler(toEvent(body, { format, base64 })));
          assert.ok(result.statusCode === 400 || result.statusCode === 200);
        },
      ),
      { numRuns: FUZZ_RUNS },
    );
  });

  it('random strings as bodies, with random methods and content types', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.string({ maxLength: 200 }),
        fc.constantFrom('POST', 'GET', 'PUT', 'post', ''),
        fc.constantFrom('application/json', 'text/plain', 'application/json; charset=utf-8', ''),
        fc.boolean(),
        sources,
        async (body, method, contentType, base64, format) => {
          const event = toEvent(body, { format, method, headers: { 'content-type': contentType }, base64 });
          assertHttpResult(await validating(event));
        },
      ),
      { numRuns: FUZZ_RUNS },
    );
  });

  /** Replaces the value at a random path of a JSON document with a random value. */
  function mutateAt(doc: any, path: number[], value: unknown): any {
    const copy = structuredClone(doc);
    let node = copy;
    for (const [i, step] of path.entries()) {
      if (typeof node !== 'object' || node === null) break;
      const keys = Object.keys(node);
      if (!keys.length) break;
      const key = keys[step % keys.length]!;
      if (i === path.length - 1 || typeof node[key] !== 'object' || node[key] === null) {
        if (value === undefined) delete node[key];
        else node[key] = value;
        break;
      }
      node = node[key];
    }
    return copy;
  }

  it('mutated real reviews: a 200 answer is always a well-formed review in the request version', async () => {
    const seeds = [
      fixture('reviews/admission-v1'),
      fixture('reviews/admission-v1beta1'),
      fixture('reviews/pod-create-v1'),
      admissionReview({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' } }, { version: 'v1beta1' }),
    ];
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...seeds),
        fc.array(fc.nat(), { minLength: 1, maxLength: 5 }),
        fc.oneof(anyJson, fc.constant(undefined)),
        fc.constantFrom(validating, mutating),
        async (seed, path, value, handler) => {
          const review = mutateAt(seed, path, value);
          const result = assertHttpResult(await handler(toEvent(review)));
          if (result.statusCode === 200) {
            assert.equal(result.body.apiVersion, review.apiVersion);
            assert.equal(result.body.kind, 'AdmissionReview');
            assert.equal(result.body.response.uid, review.request.uid);
            assert.equal(typeof result.body.response.allowed, 'boolean');
          }
        },
      ),
      { numRuns: FUZZ_RUNS },
    );
  });

  it('mutated ConversionReviews: Success keeps count and order, else Failed with a message', async () => {
    const seeds = [
      fixture('reviews/conversion-v1'),
      fixture('reviews/conversion-v1beta1'),
      conversionReview([], 'example.com/v1'),
    ];
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...seeds),
        fc.array(fc.nat(), { minLength: 1, maxLength: 5 }),
        fc.oneof(anyJson, fc.constant(undefined)),
        async (seed, path, value) => {
          const review = mutateAt(seed, path, value);
          const result = assertHttpResult(await conversion(toEvent(review)));
          if (result.statusCode !== 200) return;
          const response = result.body.response;
          assert.equal(result.body.apiVersion, review.apiVersion);
          assert.equal(response.uid, review.request.uid);
          if (response.result.status === 'Success') {
            assert.equal(response.convertedObjects.length, review.request.objects.length);
            response.convertedObjects.forEach((o: KubeObject, i: number) => {
              assert.equal(o.apiVersion, review.request.desiredAPIVersion);
              assert.equal(o.metadata?.name, review.request.objects[i].metadata?.name);
            });
          } else {
            assert.equal(response.result.status, 'Failed');
            assert.equal(typeof response.result.message, 'string');
          }
        },
      ),
      { numRuns: FUZZ_RUNS },
    );
  });
});
