// A function reads well-formed reviews at once, without zod; zod (a chunk of its own in a bundle,
// test/infra/build.zod-chunk.test.ts) is loaded only for a malformed review, which gets the same
// answer as when zod was loaded with the module.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { readAdmissionReview, readConversionReview } from '../../../lib/review/envelope.ts';
import { parseAdmissionReview, parseConversionReview } from '../../../lib/review/parse.ts';
import { FUZZ_RUNS } from '../../helpers.ts';

const fixture = (name: string) =>
  JSON.parse(readFileSync(new URL(`../../events/reviews/${name}`, import.meta.url), 'utf8'));

describe('reading reviews with zod loaded on demand', () => {
  it('reads a well-formed review at once, as zod reads it', () => {
    for (const name of ['pod-create-v1.json', 'admission-v1.json', 'admission-v1beta1.json']) {
      const read = readAdmissionReview(fixture(name));
      assert.ok(!(read instanceof Promise), `${name} is read without loading zod`);
      assert.deepEqual(read, parseAdmissionReview(fixture(name)));
    }
    for (const name of ['conversion-v1.json', 'conversion-v1beta1.json']) {
      const read = readConversionReview(fixture(name));
      assert.ok(!(read instanceof Promise), `${name} is read without loading zod`);
      assert.deepEqual(read, parseConversionReview(fixture(name)));
    }
  });

  it('answers a wrong kind or version at once, without zod', () => {
    const cases: Array<[unknown, string]> = [
      [[], 'body is not a AdmissionReview object'],
      [{ ...fixture('pod-create-v1.json'), kind: 'Pod' }, 'kind: expected "AdmissionReview", got "Pod"'],
      [
        { ...fixture('pod-create-v1.json'), apiVersion: 'admission.k8s.io/v2' },
        'apiVersion: unsupported AdmissionReview version "admission.k8s.io/v2"; expected one of admission.k8s.io/v1, admission.k8s.io/v1beta1',
      ],
    ];
    for (const [body, message] of cases) {
      const read = readAdmissionReview(body);
      assert.ok(!(read instanceof Promise));
      assert.deepEqual(read, { ok: false, message });
    }
  });

  it('words a malformed review as zod does, once zod is loaded', async () => {
    const cases: Array<[(r: Record<string, any>) => void, string]> = [
      [(r) => (r.uid = ''), 'request.uid: uid must not be empty'],
      [(r) => (r.object = []), 'request.object: expected a JSON object'],
      [(r) => (r.userInfo.groups = ['a', 2]), 'request.userInfo.groups.1: Invalid input'],
    ];
    for (const [change, message] of cases) {
      const body = fixture('pod-create-v1.json');
      change(body.request);
      const read = readAdmissionReview(body);
      assert.ok(read instanceof Promise, message);
      assert.deepEqual(await read, { ok: false, message });
      assert.deepEqual(parseAdmissionReview(body), { ok: false, message });
    }
    const conversion = fixture('conversion-v1.json');
    conversion.request.desiredAPIVersion = 'a/b/c';
    const read = readConversionReview(conversion);
    assert.ok(read instanceof Promise);
    assert.deepEqual(await read, parseConversionReview(conversion));
    assert.equal((await read).ok, false);
  });

  // Any request field replaced by any JSON value or removed: the same answer, loaded or not.
  it('gives the answer zod gives when loaded with the module, for random requests', async () => {
    const base = fixture('pod-create-v1.json');
    const keys = Object.keys(base.request).concat(['subResource', 'dryRun', 'options']);
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...keys),
        fc.oneof(fc.constant(undefined), fc.jsonValue({ maxDepth: 2 })),
        async (key, value) => {
          const body = structuredClone(base);
          if (value === undefined) delete body.request[key];
          else body.request[key] = value;
          assert.deepEqual(await readAdmissionReview(body), parseAdmissionReview(body));
        },
      ),
      { numRuns: FUZZ_RUNS },
    );
  });
});
