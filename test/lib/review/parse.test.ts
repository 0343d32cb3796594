// Tools read reviews at once, zod loaded with the module: well-formed ones as the fast readers
// read them, malformed ones worded by zod, never a promise.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { parseAdmissionReview, parseConversionReview } from '../../../lib/review/parse.ts';

const fixture = (name: string) =>
  JSON.parse(readFileSync(new URL(`../../events/reviews/${name}`, import.meta.url), 'utf8'));

describe('parseAdmissionReview and parseConversionReview', () => {
  it('read a well-formed review', () => {
    const admission = parseAdmissionReview(fixture('pod-create-v1.json'));
    assert.ok(admission.ok);
    assert.equal(admission.review.request.operation, 'CREATE');
    const conversion = parseConversionReview(fixture('conversion-v1beta1.json'));
    assert.ok(conversion.ok);
    assert.equal(conversion.review.apiVersion, 'apiextensions.k8s.io/v1beta1');
  });

  it('word a malformed review at once', () => {
    const admission = fixture('admission-v1beta1.json');
    admission.request.operation = 'PATCH';
    const read = parseAdmissionReview(admission);
    assert.ok(!(read instanceof Promise));
    assert.equal(read.ok, false);
    assert.match(read.ok ? '' : read.message, /^request\.operation: /);
    const conversion = fixture('conversion-v1.json');
    conversion.request.objects = [null];
    assert.deepEqual(parseConversionReview(conversion), {
      ok: false,
      message:
        'request.objects.0: expected an object with string apiVersion and kind, and string metadata.name, namespace and uid',
    });
    assert.deepEqual(parseConversionReview({ kind: 'ConversionReview', apiVersion: 'v1' }), {
      ok: false,
      message:
        'apiVersion: unsupported ConversionReview version "v1"; expected one of apiextensions.k8s.io/v1, apiextensions.k8s.io/v1beta1',
    });
  });
});
