import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { allow, defineValidatingWebhook } from '../../../lib/index.ts';
import { parseGoDuration, readJsonBody, MAX_BODY_BYTES } from '../../../lib/gateway/http.ts';
import { detectSource, sourceNames } from '../../../lib/gateway/sources.ts';
import { createLogger } from '../../../lib/log.ts';
import { bodyOf, eventWith, fixture } from '../../helpers.ts';

const review = fixture('reviews/admission-v1');
const seen: Array<{ path: string; uid: string }> = [];
const webhook = defineValidatingWebhook({
  name: 'gateway-test',
  rules: [],
  validate: (request) => {
    seen.push({ path: 'called', uid: request.uid });
    return allow();
  },
});
const handler = webhook.withOptions({ logger: createLogger({ level: 'silent' }) });

describe('event sources', () => {
  it('recognises each fixture by its shape', () => {
    assert.equal(detectSource(fixture('rest/post'))?.name, 'rest');
    assert.equal(detectSource(fixture('http/post'))?.name, 'http');
    assert.equal(detectSource(fixture('url/post'))?.name, 'url');
    assert.equal(detectSource(fixture('alb/post'))?.name, 'alb');
    assert.equal(detectSource(fixture('alb/post-multi-value'))?.name, 'alb');
    assert.equal(detectSource({ Records: [] }), undefined);
    assert.equal(detectSource(null), undefined);
  });

  for (const source of sourceNames()) {
    it(`answers a review delivered by ${source}`, async () => {
      const result = await handler(eventWith(source, review));
      assert.equal(result.statusCode, 200);
      assert.equal((result as { headers: Record<string, string> }).headers['content-type'], 'application/json');
      assert.equal((result as { isBase64Encoded: boolean }).isBase64Encoded, false);
      assert.deepEqual(bodyOf(result).response, { uid: review.request.uid, allowed: true });
    });

    it(`decodes a base64 body from ${source}`, async () => {
      const event = eventWith(source, review, (e) => {
        e.body = Buffer.from(e.body).toString('base64');
        e.isBase64Encoded = true;
      });
      const result = await handler(event);
      assert.equal(result.statusCode, 200);
      assert.equal(bodyOf(result).response.uid, review.request.uid);
    });
  }

  it('reads REST multiValueHeaders and mixed-case names', async () => {
    const event = eventWith('rest', review, (e) => {
      e.headers = {};
      e.multiValueHeaders = { 'CONTENT-TYPE': ['Application/JSON; charset=utf-8'] };
    });
    assert.equal((await handler(event)).statusCode, 200);
  });

  it('reads the API server timeout from the query string', () => {
    assert.equal(parseGoDuration('5s'), 5000);
    assert.equal(parseGoDuration('1m0s'), 60000);
    assert.equal(parseGoDuration('2.5s'), 2500);
    assert.equal(parseGoDuration('750ms'), 750);
    assert.equal(parseGoDuration('5'), undefined);
    assert.equal(parseGoDuration('5s junk'), undefined);
    assert.equal(parseGoDuration(undefined), undefined);
  });
});

describe('requests that are not readable reviews', () => {
  const cases: Array<[string, (e: Record<string, any>) => void, number, RegExp]> = [
    [
      'wrong method (REST)',
      (e) => {
        e.httpMethod = 'GET';
      },
      405,
      /method GET not allowed/,
    ],
    [
      'wrong content type',
      (e) => {
        e.headers['Content-Type'] = 'text/plain';
        e.multiValueHeaders['Content-Type'] = ['text/plain'];
      },
      415,
      /content type "text\/plain"/,
    ],
    [
      'no content type',
      (e) => {
        delete e.headers['Content-Type'];
        delete e.multiValueHeaders['Content-Type'];
      },
      415,
      /content type null/,
    ],
    [
      'empty body',
      (e) => {
        e.body = null;
      },
      400,
      /body is empty/,
    ],
    [
      'bad JSON',
      (e) => {
        e.body = '{"apiVersion":';
      },
      400,
      /not valid JSON/,
    ],
    [
      'bad base64',
      (e) => {
        e.body = '***not base64***';
        e.isBase64Encoded = true;
      },
      400,
      /not valid base64/,
    ],
    [
      'JSON that is not an object',
      (e) => {
        e.body = '[1,2]';
      },
      400,
      /not a AdmissionReview object/,
    ],
    [
      'a ConversionReview sent to an admission webhook',
      (e) => {
        e.body = JSON.stringify(fixture('reviews/conversion-v1'));
      },
      400,
      /kind: expected "AdmissionReview"/,
    ],
    [
      'an unknown review version',
      (e) => {
        e.body = JSON.stringify({ ...review, apiVersion: 'admission.k8s.io/v2' });
      },
      400,
      /unsupported AdmissionReview version "admission.k8s.io\/v2"/,
    ],
    [
      'a missing uid',
      (e) => {
        const r = fixture('reviews/admission-v1');
        delete r.request.uid;
        e.body = JSON.stringify(r);
      },
      400,
      /^request\.uid: /,
    ],
    [
      'an empty uid',
      (e) => {
        const r = fixture('reviews/admission-v1');
        r.request.uid = '';
        e.body = JSON.stringify(r);
      },
      400,
      /request\.uid: uid must not be empty/,
    ],
    [
      'an unknown operation',
      (e) => {
        const r = fixture('reviews/admission-v1');
        r.request.operation = 'PATCH';
        e.body = JSON.stringify(r);
      },
      400,
      /^request\.operation: /,
    ],
  ];
  for (const [name, change, status, message] of cases) {
    it(`answers ${status} for ${name}`, async () => {
      const before = seen.length;
      const result = await handler(eventWith('rest', review, change));
      assert.equal(result.statusCode, status);
      const body = bodyOf(result);
      assert.deepEqual(Object.keys(body), ['error']);
      assert.match(body.error, message);
      assert.equal(seen.length, before, 'the user function must not run');
    });
  }

  it('sends Allow: POST with a 405 (HTTP API)', async () => {
    const result = await handler(
      eventWith('http', review, (e) => {
        e.requestContext.http.method = 'PUT';
      }),
    );
    assert.equal(result.statusCode, 405);
    assert.equal((result as { headers: Record<string, string> }).headers.allow, 'POST');
  });

  it('answers 413 for a body over the limit, before decoding it', async () => {
    const small = webhook.withOptions({ logger: createLogger({ level: 'silent' }), maxBodyBytes: 4096 });
    const padded = { ...review, padding: 'x'.repeat(5000) };
    assert.equal((await small(eventWith('http', padded))).statusCode, 413);
    const encoded = eventWith('http', padded, (e) => {
      e.body = Buffer.from(e.body).toString('base64');
      e.isBase64Encoded = true;
    });
    assert.equal((await small(encoded)).statusCode, 413);
    assert.equal((await small(eventWith('http', review))).statusCode, 200);
  });

  it('limits bodies to the Lambda payload size by default', () => {
    assert.equal(MAX_BODY_BYTES, 6 * 1024 * 1024);
    const req = {
      source: 'http' as const,
      method: 'POST',
      path: '/',
      headers: { 'content-type': 'application/json' },
      query: {},
      body: 'x'.repeat(MAX_BODY_BYTES + 1),
      isBase64Encoded: false,
      requestId: undefined,
    };
    const out = readJsonBody(req);
    assert.equal(out.ok ? 0 : out.error.status, 413);
  });

  it('answers 400 in the HTTP API shape for an event from no known source', async () => {
    const result = await handler({ Records: [{ body: '{}' }] });
    assert.equal(result.statusCode, 400);
    assert.match(
      bodyOf(result).error,
      /no known source; expected one of: Lambda function URL; .*Application Load Balancer/,
    );
  });
});
