import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  allow,
  defineConversionWebhook,
  defineMutatingWebhook,
  defineValidatingWebhook,
  deny,
  ConversionError,
} from '../../lib/index.ts';
import { createLogger } from '../../lib/log.ts';
import { createHandler, type HandlerOptions, type WebhookHandler } from '../../lib/webhook.ts';
import {
  ADMISSION_METRICS,
  CONVERSION_METRICS,
  DEFAULT_METRICS_NAMESPACE,
  REQUEST_METRICS,
} from '../../lib/metrics.ts';
import { admissionReview, conversionReview, toEvent } from '../../lib/testing/index.ts';
import { lambdaContext } from '../../lib/harness/events.ts';
import { emfProblems } from './emf.ts';

/** Runs one review and returns the raw `review` log line. */
async function reviewLine(
  webhook: { withOptions: (o: HandlerOptions) => WebhookHandler },
  body: unknown,
  env: NodeJS.ProcessEnv = {},
  timeout = '5s',
): Promise<{ raw: string; line: Record<string, any> }> {
  const lines: string[] = [];
  const handler = webhook.withOptions({
    env,
    logger: createLogger({ level: 'info', sink: (l) => lines.push(l), base: { webhook: 'base-value' } }),
  });
  await handler(toEvent(body, { path: '/x', timeout }), lambdaContext());
  const raw = lines.find((l) => JSON.parse(l).msg === 'review');
  assert.ok(raw, `no review line in ${lines.join('\n')}`);
  return { raw, line: JSON.parse(raw) };
}

const pod = (name: string) =>
  admissionReview({ apiVersion: 'v1', kind: 'Pod', metadata: { name } }, { operation: 'UPDATE' });
const decisions = ['Allowed', 'Denied', 'Patched', 'Errored', 'TimedOut'] as const;

describe('EMF metrics in the review line', () => {
  const validating = defineValidatingWebhook({
    name: 'gate',
    failurePolicy: 'Fail',
    rules: [],
    validate: async (request) => {
      const name = (request.object as { metadata: { name: string } }).metadata.name;
      if (name === 'deny') return deny('no');
      if (name === 'throw') throw new Error('boom');
      if (name === 'slow') await new Promise(() => {});
      return allow();
    },
  });
  const mutating = defineMutatingWebhook({
    name: 'defaults',
    rules: [],
    mutate: (object: any) => ({ ...object, metadata: { ...object.metadata, labels: { a: 'b' } } }),
  });

  for (const [name, webhook, expected, timeout] of [
    ['allow', validating, 'Allowed', '5s'],
    ['deny', validating, 'Denied', '5s'],
    ['throw', validating, 'Errored', '5s'],
    ['slow', validating, 'TimedOut', '150ms'],
    ['patch', mutating, 'Patched', '5s'],
  ] as const) {
    it(`counts ${expected} once, valid by the EMF specification, per webhook and operation`, async () => {
      const { raw, line } = await reviewLine(webhook, pod(name), {}, timeout);
      assert.deepEqual(emfProblems(raw), []);
      for (const metric of decisions) assert.equal(line[metric], metric === expected ? 1 : 0, metric);
      assert.equal(line.WouldDeny, 0);
      assert.equal(line.Duration, line.durationMs);
      assert.equal(
        line.webhook,
        webhook.registration.name,
        'the dimension names the webhook, whatever the logger base says',
      );
      assert.equal(line.operation, 'UPDATE');
      const directive = line._aws.CloudWatchMetrics[0];
      assert.equal(directive.Namespace, DEFAULT_METRICS_NAMESPACE);
      assert.deepEqual(directive.Dimensions, [['webhook', 'operation'], ['webhook']]);
      assert.deepEqual(
        directive.Metrics.map((m: { Name: string }) => m.Name),
        [...ADMISSION_METRICS],
      );
      assert.equal(directive.Metrics.find((m: { Name: string }) => m.Name === 'Duration').Unit, 'Milliseconds');
      assert.ok(Math.abs(line._aws.Timestamp - Date.now()) < 60_000, 'timestamp is now, in milliseconds');
    });
  }

  it('counts conversions: objects and failures', async () => {
    const conv = defineConversionWebhook({
      name: 'conv',
      crd: 'x.example.com',
      convert: (o) => {
        if ((o.metadata as { name?: string })?.name === 'bad') throw new ConversionError('cannot');
        return { ...o, apiVersion: 'example.com/v2' };
      },
    });
    const objects = (names: string[]) =>
      names.map((n) => ({ apiVersion: 'example.com/v1', kind: 'X', metadata: { name: n, uid: n } }));
    const ok = await reviewLine(conv, conversionReview(objects(['a', 'b', 'c']), 'example.com/v2'));
    assert.deepEqual(emfProblems(ok.raw), []);
    assert.deepEqual([ok.line.Objects, ok.line.Failures, ok.line.Errored], [3, 0, 0]);
    assert.deepEqual(
      ok.line._aws.CloudWatchMetrics[0].Metrics.map((m: { Name: string }) => m.Name),
      [...CONVERSION_METRICS],
    );
    assert.deepEqual(ok.line._aws.CloudWatchMetrics[0].Dimensions, [['webhook']]);
    const bad = await reviewLine(conv, conversionReview(objects(['a', 'bad']), 'example.com/v2'));
    assert.deepEqual(emfProblems(bad.raw), []);
    assert.deepEqual([bad.line.Objects, bad.line.Failures], [2, 1]);
  });

  it('uses KLW_METRICS_NAMESPACE, and writes none when it is off', async () => {
    const named = await reviewLine(validating, pod('allow'), { KLW_METRICS_NAMESPACE: 'Team/Webhooks' });
    assert.equal(named.line._aws.CloudWatchMetrics[0].Namespace, 'Team/Webhooks');
    const off = await reviewLine(validating, pod('allow'), { KLW_METRICS_NAMESPACE: 'off' });
    assert.equal(off.line._aws, undefined);
    assert.equal(off.line.Allowed, undefined);
  });

  it('counts an adapter fault (HTTP 500 internal error) as AdapterFault, valid by the EMF specification', async () => {
    const lines: string[] = [];
    const registration = validating.registration;
    // An engine that fails outside any user function: only a fault of the adapter itself does that.
    const broken = {
      parse: () => ({ ok: true as const, review: {} }),
      run: () => Promise.reject(new TypeError('adapter bug')),
      unsendable: () => ({ body: {}, fields: {} }),
    };
    const handler = createHandler(registration, broken, {
      env: {},
      logger: createLogger({ level: 'info', sink: (l) => lines.push(l) }),
    });
    const result = await handler(toEvent(pod('x'), { path: '/x' }), lambdaContext());
    assert.equal(result.statusCode, 500);
    const raw = lines.find((l) => JSON.parse(l).msg === 'adapter fault');
    assert.ok(raw, lines.join('\n'));
    assert.deepEqual(emfProblems(raw), []);
    const line = JSON.parse(raw);
    assert.equal(line.AdapterFault, 1);
    assert.equal(line.webhook, 'gate');
    assert.deepEqual(line._aws.CloudWatchMetrics[0].Dimensions, [['webhook']]);
    assert.deepEqual(
      line._aws.CloudWatchMetrics[0].Metrics.map((m: { Name: string }) => m.Name),
      ['AdapterFault'],
    );
    // Every request metric the log lines carry is one of REQUEST_METRICS (the alarms read those).
    assert.ok(
      line._aws.CloudWatchMetrics[0].Metrics.every((m: { Name: string }) =>
        (REQUEST_METRICS as readonly string[]).includes(m.Name),
      ),
    );
  });

  it('the validator catches each broken rule of the specification', () => {
    const valid = {
      _aws: {
        Timestamp: 1,
        CloudWatchMetrics: [{ Namespace: 'N', Dimensions: [['d']], Metrics: [{ Name: 'M', Unit: 'Count' }] }],
      },
      d: 'x',
      M: 1,
    };
    assert.deepEqual(emfProblems(JSON.stringify(valid)), []);
    const broken = (change: (o: any) => void) => {
      const copy = structuredClone(valid) as any;
      change(copy);
      return emfProblems(JSON.stringify(copy));
    };
    assert.match(broken((o) => delete o._aws).join(), /_aws/);
    assert.match(broken((o) => (o._aws.Timestamp = 1.5)).join(), /Timestamp/);
    assert.match(broken((o) => (o._aws.Timestamp = '1')).join(), /Timestamp/);
    assert.match(broken((o) => (o._aws.CloudWatchMetrics[0].Namespace = '')).join(), /Namespace/);
    assert.match(broken((o) => (o._aws.CloudWatchMetrics[0].Dimensions = [])).join(), /Dimensions/);
    assert.match(broken((o) => (o.d = 1)).join(), /dimension d/);
    assert.match(broken((o) => delete o.M).join(), /metric M/);
    assert.match(broken((o) => (o.M = '1')).join(), /metric M/);
    assert.match(broken((o) => (o._aws.CloudWatchMetrics[0].Metrics[0].Unit = 'ms')).join(), /invalid unit/);
    assert.match(
      broken(
        (o) => (o._aws.CloudWatchMetrics[0].Metrics = Array.from({ length: 101 }, (_, i) => ({ Name: `m${i}` }))),
      ).join(),
      /at most 100/,
    );
    assert.match(
      broken((o) => (o._aws.CloudWatchMetrics[0].Dimensions = [Array.from({ length: 31 }, () => 'd')])).join(),
      /at most 30/,
    );
    assert.match(broken((o) => (o._aws.Extra = 1)).join(), /does not define: Extra/);
    assert.deepEqual(emfProblems('prefix {}'), ['the log event is not a JSON object with nothing before or after it']);
  });
});
