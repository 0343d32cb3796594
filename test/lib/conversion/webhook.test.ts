import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  ConversionError,
  defineConversionWebhook,
  hubAndSpoke,
  type ConvertibleObject,
  type KubeObject,
} from '../../../lib/index.ts';
import { conversionReview, expectRoundTrip, invoke } from '../../../lib/testing/index.ts';
import { invokeRaw } from '../../../lib/harness/invoke.ts';
import { captureLogger, fixture, hostileThrowables } from '../../helpers.ts';

/** The reference document's CronTab: v1beta1 `hostPort` <-> v1 `host` + `port`. */
const crontab = defineConversionWebhook({
  name: 'crontab-test',
  crd: 'crontabs.example.com',
  convert: hubAndSpoke({
    hub: 'v1',
    spokes: {
      v1beta1: {
        toHub: ({ hostPort, ...rest }) => {
          const parts = String(hostPort).split(':');
          if (parts.length !== 2)
            throw new ConversionError('hostPort could not be parsed into a separate host and port');
          return { ...rest, host: parts[0], port: parts[1] } as KubeObject;
        },
        fromHub: ({ host, port, ...rest }) => ({ ...rest, hostPort: `${host}:${port}` }) as KubeObject,
      },
    },
  }),
});

const ct = (apiVersion: string, name: string, fields: Record<string, unknown>): ConvertibleObject => ({
  apiVersion,
  kind: 'CronTab',
  metadata: { name, namespace: 'default', uid: `uid-${name}`, resourceVersion: '1', labels: { a: 'b' } },
  ...fields,
});

describe('conversion webhooks', () => {
  it('answers the reference request with the reference response', async () => {
    const raw = await invokeRaw(crontab, fixture('reviews/conversion-v1'));
    assert.equal(raw.statusCode, 200);
    assert.deepEqual(JSON.parse(raw.body), fixture('reviews/conversion-v1-response'));
  });

  it('answers a v1beta1 ConversionReview in v1beta1', async () => {
    const raw = await invokeRaw(crontab, fixture('reviews/conversion-v1beta1'));
    const body = JSON.parse(raw.body);
    assert.equal(body.apiVersion, 'apiextensions.k8s.io/v1beta1');
    assert.equal(body.kind, 'ConversionReview');
    assert.deepEqual(body.response, fixture('reviews/conversion-v1-response').response);
  });

  it('keeps order and count of a mixed-version list, passing through objects already at the desired version', async () => {
    const objects = [
      ct('example.com/v1beta1', 'a', { hostPort: 'h1:1' }),
      ct('example.com/v1', 'b', { host: 'h2', port: '2', extra: { kept: true } }),
      ct('example.com/v1beta1', 'c', { hostPort: 'h3:3' }),
    ];
    const result = await invoke(crontab, conversionReview(objects, 'example.com/v1'));
    assert.equal(result.status, 'Success');
    assert.deepEqual(
      result.convertedObjects.map((o) => o.metadata?.name),
      ['a', 'b', 'c'],
    );
    assert.ok(result.convertedObjects.every((o) => o.apiVersion === 'example.com/v1'));
    assert.deepEqual(result.convertedObjects[1], objects[1]);
    assert.deepEqual(result.convertedObjects[2], { ...ct('example.com/v1', 'c', {}), host: 'h3', port: '3' });
  });

  it('converts both ways and round-trips', async () => {
    await expectRoundTrip(
      crontab,
      ct('example.com/v1beta1', 'rt', { hostPort: 'example.com:2345', spec: { cronSpec: '* * * * */5' } }),
      ['example.com/v1beta1', 'example.com/v1'],
    );
    await expectRoundTrip(crontab, ct('example.com/v1', 'rt2', { host: 'localhost', port: '80' }), [
      'example.com/v1',
      'example.com/v1beta1',
    ]);
  });

  it('fails with the converter message for a value that does not convert', async () => {
    const result = await invoke(
      crontab,
      conversionReview([ct('example.com/v1beta1', 'bad', { hostPort: 'no-port' })], 'example.com/v1', {
        version: 'v1beta1',
      }),
    );
    assert.equal(result.status, 'Failed');
    assert.equal(result.message, 'hostPort could not be parsed into a separate host and port');
    assert.equal(result.review.response.convertedObjects, undefined);
    assert.equal(result.review.apiVersion, 'apiextensions.k8s.io/v1beta1');
  });

  it('answers 400 for objects whose identity fields are not strings', async () => {
    for (const [field, value] of [
      ['name', {}],
      ['namespace', 3],
      ['uid', []],
    ] as const) {
      const review = fixture('reviews/conversion-v1');
      review.request.objects[1].metadata[field] = value;
      const raw = await invokeRaw(crontab, review);
      assert.equal(raw.statusCode, 400);
      assert.match(
        JSON.parse(raw.body).error,
        /^request\.objects\.1: expected an object with string apiVersion and kind, and string metadata\.name, namespace and uid$/,
      );
    }
    const noKind = fixture('reviews/conversion-v1');
    delete noKind.request.objects[0].kind;
    assert.equal((await invokeRaw(crontab, noKind)).statusCode, 400);
  });

  it('answers an empty list with an empty list', async () => {
    const result = await invoke(crontab, conversionReview([], 'example.com/v1'));
    assert.equal(result.status, 'Success');
    assert.deepEqual(result.convertedObjects, []);
  });

  it('fails on an unknown version, naming it', async () => {
    const result = await invoke(
      crontab,
      conversionReview([ct('example.com/v1beta1', 'x', { hostPort: 'a:1' })], 'example.com/v2'),
    );
    assert.equal(result.status, 'Failed');
    assert.match(result.message!, /unsupported version "v2"/);
  });
});

describe('conversion warnings', () => {
  /** A converter calling ctx.warn `calls` times per object, cycling through `distinct` messages. */
  const warner = (calls: number, distinct: number, text = (i: number) => `warning ${i}`) =>
    defineConversionWebhook({
      name: 'warner',
      crd: 'crontabs.example.com',
      convert: (o, to, ctx) => {
        for (let i = 0; i < calls; i++) ctx.warn(text(i % distinct));
        return { ...o, apiVersion: to };
      },
    });

  async function convert(webhook: ReturnType<typeof warner>, objects = 1) {
    const { logger, lines } = captureLogger();
    const review = conversionReview(
      Array.from({ length: objects }, (_, i) => ct('example.com/v1beta1', `w${i}`, {})),
      'example.com/v1',
    );
    const result = await invoke(webhook, review, { handlerOptions: { logger } });
    return { result, lines, summaries: lines.filter((l) => l.msg === 'conversion warnings') };
  }

  it('logs 200,000 warnings (100 distinct) as one summary line: the count, the first 50 distinct, the calls not listed', async () => {
    const { result, lines, summaries } = await convert(warner(200_000, 100));
    assert.equal(result.status, 'Success');
    assert.equal(lines.length, 2, `${lines.length} log lines`);
    assert.equal(summaries.length, 1);
    const summary = summaries[0]!;
    assert.equal(summary.level, 'warn');
    assert.equal(summary.count, 200_000);
    assert.deepEqual(
      summary.warnings,
      Array.from({ length: 50 }, (_, i) => `warning ${i}`),
    );
    // Messages 50 to 99, 2,000 calls each.
    assert.equal(summary.unlisted, 100_000);
  });

  it('counts the warnings of every object in the one line, repeats listed once', async () => {
    const { summaries } = await convert(warner(3, 2), 4);
    assert.equal(summaries.length, 1);
    assert.equal(summaries[0]!.count, 12);
    assert.deepEqual(summaries[0]!.warnings, ['warning 0', 'warning 1']);
    assert.equal(summaries[0]!.unlisted, 0);
  });

  it('cuts a listed warning to 512 characters, and writes no line without warnings', async () => {
    const { summaries } = await convert(warner(1, 1, () => 'x'.repeat(100_000)));
    assert.deepEqual(summaries[0]!.warnings, ['x'.repeat(512)]);
    assert.equal((await convert(warner(0, 1))).summaries.length, 0);
  });
});

describe('conversion output checks', () => {
  const broken = (change: (o: any) => void) =>
    defineConversionWebhook({
      name: 'broken',
      crd: 'things.example.com',
      convert: (object, desired) => {
        const out: any = { ...object, apiVersion: desired };
        change(out);
        return out;
      },
    });
  const input = () => [ct('example.com/v1beta1', 'keep', { hostPort: 'a:1' })];

  const rules: Array<[string, (o: any) => void, RegExp]> = [
    [
      'apiVersion',
      (o) => {
        o.apiVersion = 'example.com/v1beta1';
      },
      /object 0 \(CronTab default\/keep\) has apiVersion "example.com\/v1beta1", expected "example.com\/v1"/,
    ],
    [
      'kind',
      (o) => {
        o.kind = 'Other';
      },
      /changed kind from "CronTab" to "Other"/,
    ],
    [
      'metadata.name',
      (o) => {
        o.metadata = { ...o.metadata, name: 'renamed' };
      },
      /changed metadata\.name from "keep" to "renamed"/,
    ],
    [
      'metadata.namespace',
      (o) => {
        o.metadata = { ...o.metadata, namespace: 'other' };
      },
      /changed metadata\.namespace/,
    ],
    [
      'metadata.uid',
      (o) => {
        o.metadata = { ...o.metadata, uid: 'new' };
      },
      /changed metadata\.uid/,
    ],
  ];
  for (const [field, change, message] of rules) {
    it(`reports a changed ${field} as a converter bug`, async () => {
      const result = await invoke(broken(change), conversionReview(input(), 'example.com/v1'));
      assert.equal(result.status, 'Failed');
      assert.match(result.message!, message);
    });
  }

  it('takes only labels and annotations from returned metadata', async () => {
    const w = broken((o) => {
      o.metadata = {
        ...o.metadata,
        resourceVersion: '999',
        generation: 7,
        labels: { new: 'label' },
        annotations: { added: 'yes' },
      };
    });
    const result = await invoke(w, conversionReview(input(), 'example.com/v1'));
    assert.equal(result.status, 'Success');
    const meta = result.convertedObjects[0]!.metadata!;
    assert.equal(meta.resourceVersion, '1');
    assert.equal((meta as Record<string, unknown>).generation, undefined);
    assert.deepEqual(meta.labels, { new: 'label' });
    assert.deepEqual(meta.annotations, { added: 'yes' });
  });

  it('drops labels a converter removed', async () => {
    const w = broken((o) => {
      const { labels: _labels, ...rest } = o.metadata;
      o.metadata = rest;
    });
    const result = await invoke(w, conversionReview(input(), 'example.com/v1'));
    assert.equal(result.convertedObjects[0]!.metadata!.labels, undefined);
  });

  it('reports a converter that returns nothing', async () => {
    const w = defineConversionWebhook({ name: 'nothing', crd: 'x.example.com', convert: () => undefined as never });
    const result = await invoke(w, conversionReview(input(), 'example.com/v1'));
    assert.equal(result.status, 'Failed');
    assert.match(result.message!, /returned no object for object 0/);
  });

  it('answers a throwing converter with Failed and an error id, without the error text', async () => {
    const { logger, lines } = captureLogger();
    const w = defineConversionWebhook({
      name: 'throws',
      crd: 'x.example.com',
      convert: () => {
        throw new RangeError('internal detail');
      },
    });
    const raw = await invokeRaw(w, conversionReview(input(), 'example.com/v1'), { handlerOptions: { logger } });
    const response = JSON.parse(raw.body).response;
    assert.equal(response.result.status, 'Failed');
    assert.match(
      response.result.message,
      /^internal error converting object 0 \(CronTab default\/keep\) \(error id [0-9a-f]{8}\)$/,
    );
    assert.doesNotMatch(raw.body, /internal detail/);
    assert.ok(lines.some((l) => l.level === 'error' && /internal detail/.test(l.stack)));
  });

  for (const [what, thrown] of hostileThrowables()) {
    it(`answers a converter that throws ${what} with Failed and an error id`, async () => {
      const { logger, lines } = captureLogger();
      const w = defineConversionWebhook({
        name: 'throws-odd',
        crd: 'x.example.com',
        convert: () => {
          throw thrown;
        },
      });
      const raw = await invokeRaw(w, conversionReview(input(), 'example.com/v1'), { handlerOptions: { logger } });
      assert.equal(raw.statusCode, 200, raw.body);
      const response = JSON.parse(raw.body).response;
      assert.equal(response.result.status, 'Failed');
      const id = /^internal error converting object 0 \(CronTab default\/keep\) \(error id ([0-9a-f]{8})\)$/.exec(
        response.result.message,
      )?.[1];
      assert.ok(id, response.result.message);
      assert.equal(
        typeof lines.find((l) => l.errorId === id)?.error,
        'string',
        'the failure is logged with a description',
      );
    });
  }

  it('answers a slow converter with Failed before the deadline', async () => {
    const w = defineConversionWebhook({
      name: 'slow',
      crd: 'x.example.com',
      timeoutSeconds: 1,
      // Never answers: whatever answer comes is the deadline's.
      convert: () => new Promise<never>(() => {}),
    });
    const result = await invoke(w, conversionReview(input(), 'example.com/v1'), { expectFailure: true });
    assert.equal(result.status, 'Failed');
    assert.match(result.message!, /did not finish within 800 ms/);
  });

  it('answers Failed when the converted objects would exceed the response limit', async () => {
    const w = broken((o) => {
      o.blob = 'x'.repeat(8000);
    });
    const raw = await invokeRaw(w, conversionReview(input(), 'example.com/v1'), {
      handlerOptions: { maxBodyBytes: 4096 },
    });
    const response = JSON.parse(raw.body).response;
    assert.equal(response.result.status, 'Failed');
    assert.match(response.result.message, /larger than Lambda can return/);
  });
});

describe('hubAndSpoke', () => {
  // Three versions of a Widget: v1alpha1 { size: "3" }, v1 (hub) { size: 3 }, v2 { dimensions: { size: 3 } }.
  const steps: string[] = [];
  const convert = hubAndSpoke({
    hub: 'v1',
    spokes: {
      v1alpha1: {
        toHub: (o) => (steps.push('alpha->hub'), { ...o, size: Number(o.size) }),
        fromHub: (o) => (steps.push('hub->alpha'), { ...o, size: String(o.size) }),
      },
      v2: {
        toHub: ({ dimensions, ...o }) => (steps.push('v2->hub'), { ...o, size: (dimensions as { size: number }).size }),
        fromHub: ({ size, ...o }) => (steps.push('hub->v2'), { ...o, dimensions: { size } }),
      },
    },
  });
  const widgets = defineConversionWebhook({ name: 'widgets', crd: 'widgets.example.com', convert });
  const alpha = { apiVersion: 'example.com/v1alpha1', kind: 'Widget', metadata: { name: 'w', uid: 'u' }, size: '3' };

  it('goes spoke -> hub -> spoke, setting apiVersion at each step', async () => {
    steps.length = 0;
    const result = await invoke(widgets, conversionReview([alpha], 'example.com/v2'));
    assert.deepEqual(steps, ['alpha->hub', 'hub->v2']);
    assert.deepEqual(result.convertedObjects[0], {
      apiVersion: 'example.com/v2',
      kind: 'Widget',
      metadata: { name: 'w', uid: 'u' },
      dimensions: { size: 3 },
    });
  });

  it('round-trips through all three versions', async () => {
    await expectRoundTrip(widgets, alpha, ['example.com/v1alpha1', 'example.com/v1', 'example.com/v2']);
  });

  it('refuses to convert across groups', async () => {
    const result = await invoke(widgets, conversionReview([alpha], 'other.io/v1'));
    assert.equal(result.status, 'Failed');
    assert.match(result.message!, /between groups/);
  });
});
