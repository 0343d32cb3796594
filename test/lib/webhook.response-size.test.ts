import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { allow, defineConversionWebhook, defineValidatingWebhook, deny, type KubeObject } from '../../lib/index.ts';
import { MAX_BODY_BYTES } from '../../lib/gateway/http.ts';
import { admissionReview, conversionReview } from '../../lib/testing/index.ts';
import { invokeRaw } from '../../lib/harness/invoke.ts';
import { resultBytes } from '../../lib/webhook.ts';
import { captureLogger, eventWith } from '../helpers.ts';

// Characters that JSON escapes: inside the result the body's own escapes are escaped again,
// so each of these takes 3 or 4 bytes of the result for 2 of the body.
const ESCAPING = '"\\\n';
/** About `bytes` characters of text made of characters that JSON escapes. */
const escaping = (bytes: number) => ESCAPING.repeat(Math.ceil(bytes / ESCAPING.length));

const widget = (): KubeObject => ({
  apiVersion: 'example.com/v1beta1',
  kind: 'Widget',
  metadata: { name: 'w', namespace: 'default', uid: 'u1' },
});

describe('the size of what Lambda returns', () => {
  it('counts the whole serialized result, the body escaped inside it', () => {
    const result = {
      statusCode: 200,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ s: escaping(1000) }),
      isBase64Encoded: false,
    };
    assert.equal(resultBytes(result, 100), Buffer.byteLength(JSON.stringify(result)));
    assert.ok(resultBytes(result, 100) > Buffer.byteLength(result.body) * 1.5);
    // Far below the limit nothing is counted.
    assert.equal(resultBytes(result, MAX_BODY_BYTES), 0);
  });

  it('answers Failed for converted objects whose 4.3 MB body becomes a result past 6 MB', async () => {
    const { logger, lines } = captureLogger();
    const w = defineConversionWebhook({
      name: 'escapes',
      crd: 'widgets.example.com',
      convert: (o, to) => ({ ...o, apiVersion: to, blob: escaping(2_150_000) }),
    });
    const raw = await invokeRaw(w, conversionReview([widget()], 'example.com/v1'), { handlerOptions: { logger } });
    assert.equal(raw.statusCode, 200);
    // The body alone (about 4.3 MB) is under the limit; the result as Lambda returns it is not.
    const successBody = JSON.stringify({ convertedObjects: [{ blob: escaping(2_150_000) }] });
    assert.ok(Buffer.byteLength(successBody) > 4_200_000 && Buffer.byteLength(successBody) < MAX_BODY_BYTES);
    const response = JSON.parse(raw.body).response;
    assert.equal(response.result.status, 'Failed');
    assert.match(
      response.result.message,
      /converted objects \(\d+ bytes as Lambda returns them\) are larger than Lambda can return/,
    );
    assert.equal(lines.find((l) => l.msg === 'review')?.result, 'Failed');
  });

  it('answers a denial whose 4.3 MB message would make the result too large by failurePolicy', async () => {
    const w = defineValidatingWebhook({ name: 'long-denial', rules: [], validate: () => deny(escaping(2_150_000)) });
    const { logger } = captureLogger();
    const handler = w.withOptions({ logger });
    const result = await handler(eventWith('http', admissionReview(widget())), {
      awsRequestId: 'r',
      getRemainingTimeInMillis: () => 30_000,
    });
    assert.ok(Buffer.byteLength(JSON.stringify(result)) <= MAX_BODY_BYTES);
    const response = JSON.parse(result.body).response;
    assert.equal(response.allowed, false);
    assert.equal(response.status.code, 500);
    assert.match(response.status.message, /internal error in webhook/);
  });

  it('returns a result of just under 6 MB as it is', async () => {
    const w = defineValidatingWebhook({
      name: 'plain-denial',
      rules: [],
      validate: () => deny('x'.repeat(MAX_BODY_BYTES - 2000)),
    });
    const raw = await invokeRaw(w, admissionReview(widget()));
    const response = JSON.parse(raw.body).response;
    assert.equal(response.status.message.length, MAX_BODY_BYTES - 2000);
  });

  it('leaves small answers alone', async () => {
    const w = defineValidatingWebhook({ name: 'small', rules: [], validate: () => allow() });
    const raw = await invokeRaw(w, admissionReview(widget()));
    assert.equal(JSON.parse(raw.body).response.allowed, true);
  });
});
