import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import * as esbuild from 'esbuild';
import { bundleOptions } from '../../../infra/build.ts';
import { keptBuild } from '../../../infra/build-kept.ts';
import { httpFromResult } from '../../../infra/local/front/results.ts';
import {
  describeSources,
  detectSource,
  type EventSource,
  type GatewaySource,
  type HttpRequestInput,
  SOURCE_TOOLS,
  SOURCES,
  sourceNames,
  albSource,
} from '../../../lib/gateway/sources.ts';
import { proxyResult, isRecord, stringMap } from '../../../lib/gateway/sources/fields.ts';
import { eventFromHttp } from '../../../lib/harness/events.ts';
import { allow, defineValidatingWebhook } from '../../../lib/index.ts';
import { createLogger } from '../../../lib/log.ts';
import type { AdmissionReview } from '../../../lib/review/schemas.ts';
import { invoke, toEvent } from '../../../lib/testing/index.ts';
import { bodyOf, EVERY_REQUEST, FIXTURE_PROJECT, fixture } from '../../helpers.ts';

const review = fixture('reviews/admission-v1');
const webhook = defineValidatingWebhook({ name: 'sources-test', rules: EVERY_REQUEST, validate: () => allow() });
const handler = webhook.withOptions({ logger: createLogger({ level: 'silent' }) });

const request: HttpRequestInput = {
  method: 'POST',
  path: '/pod-policy',
  rawQuery: 'timeout=5s',
  headers: [
    ['Content-Type', 'application/json'],
    ['X-Tag', 'a'],
    ['X-Tag', 'b'],
  ],
  body: JSON.stringify(review),
  requestId: '0b7c3f8e-4d1a-4c2b-9e8f-123456789abc',
  now: new Date(Date.UTC(2024, 5, 17, 15, 52, 39)),
};

/** How each source joins a header sent twice (`a`, then `b`). */
const REPEATED: Record<EventSource, string> = {
  rest: 'a, b', // multiValueHeaders, joined the HTTP way
  http: 'a,b', // API Gateway joins repeats with commas
  url: 'a,b',
  alb: 'b', // without multi-value headers, the load balancer keeps the last
};

describe('the source lists', () => {
  it('name every source once, the handler list and the tools list alike', () => {
    const names = SOURCES.map((s) => s.name);
    assert.equal(new Set(names).size, names.length);
    assert.deepEqual([...names].sort(), [...sourceNames()].sort());
    for (const name of sourceNames()) assert.equal(SOURCE_TOOLS[name].source.name, name);
    for (const source of SOURCES) assert.ok(source.describe.length > 0, source.name);
    assert.equal(sourceNames()[0], 'http', 'the default comes first');
    assert.match(describeSources(), /^http \(API Gateway HTTP API.*alb \(Application Load Balancer/);
  });

  it('try the more specific shapes first, so each sample is read by its own source', () => {
    for (const name of sourceNames()) {
      const event = eventFromHttp(name, request);
      const readers = SOURCES.filter((s) => s.detect(event)).map((s) => s.name);
      assert.equal(readers[0], name, `${name} is tried before ${readers.slice(1).join(', ')}`);
      assert.equal(detectSource(event)?.name, name);
    }
  });

  it('refuses an unknown format by name', () => {
    assert.throws(() => eventFromHttp('sqs' as EventSource, request), /unknown event source "sqs"/);
    assert.throws(() => eventFromHttp('toString' as EventSource, request), /unknown event source "toString"/);
    assert.throws(() => httpFromResult('__proto__' as EventSource, {}), /unknown event source "__proto__"/);
  });
});

describe('every source reads what it samples and answers in its own shape', () => {
  for (const name of sourceNames()) {
    const tools = SOURCE_TOOLS[name];

    it(`${name}: method, path, headers, query and body survive sample then read`, () => {
      const req = tools.source.read(tools.sample(request));
      assert.equal(req.source, name);
      assert.equal(req.method, 'POST');
      assert.equal(req.path, '/pod-policy');
      assert.equal(req.headers['content-type'], 'application/json');
      assert.equal(req.headers['x-tag'], REPEATED[name]);
      assert.equal(req.query.timeout, '5s');
      const body = req.isBase64Encoded ? Buffer.from(req.body!, 'base64').toString() : req.body;
      assert.deepEqual(JSON.parse(body!), review);
    });

    it(`${name}: a binary or forced base64 body round-trips`, () => {
      const bytes = Buffer.from([0, 255, 1, 254]);
      const event = tools.sample({ ...request, headers: [['content-type', 'application/octet-stream']], body: bytes });
      const forced = tools.source.read(tools.sample({ ...request, base64: true }));
      assert.equal(forced.isBase64Encoded, true);
      assert.deepEqual(JSON.parse(Buffer.from(forced.body!, 'base64').toString()), review);
      const read = tools.source.read(event);
      if (name === 'rest') assert.equal(read.isBase64Encoded, false, 'REST without binary media types');
      else assert.deepEqual(Buffer.from(read.body!, 'base64'), bytes);
    });

    it(`${name}: the handler answers its sample, and the answer reads back as HTTP`, async () => {
      const event = tools.sample(request);
      const result = await handler(event);
      const response = tools.respond(result, event);
      assert.equal(response.status, 200);
      assert.equal(response.headers['content-type'], 'application/json');
      assert.equal(JSON.parse(response.body.toString()).response.uid, review.request.uid);
      assert.deepEqual(httpFromResult(name, result, event), response, 'the emulator uses the same reader');
    });

    it(`${name}: toEvent wraps a review in this source's event, and invoke sends one`, async () => {
      const event = toEvent(review, { format: name, timeout: '5s' });
      assert.equal(detectSource(event)?.name, name);
      assert.equal(bodyOf(await handler(event)).response.allowed, true);
      assert.equal((await invoke(webhook, review as AdmissionReview, { format: name })).allowed, true);
    });

    it(`${name}: reads hostile field types without throwing`, () => {
      const event = tools.sample(request) as Record<string, any>;
      for (const key of ['headers', 'multiValueHeaders', 'queryStringParameters', 'multiValueQueryStringParameters'])
        if (key in event) event[key] = { a: 1, b: null, c: ['x', 2], d: { e: 'f' } };
      event.body = 42;
      const req = tools.source.read(event);
      assert.equal(req.body, undefined);
      assert.equal(req.headers.a, undefined);
    });
  }
});

describe('the Application Load Balancer source', () => {
  const multi = () => fixture('alb/post-multi-value');

  it('reads the multi-value event of a target group with multi-value headers on', () => {
    const req = albSource.read(multi());
    assert.equal(req.multiValue, true);
    assert.equal(req.query.timeout, '5s');
    assert.equal(req.requestId, 'Root=1-66705bc7-2b4257df30cbee696ef2cf28');
    assert.equal(albSource.read(fixture('alb/post')).multiValue, false);
  });

  it('answers a multi-value event with multiValueHeaders and a status line', async () => {
    const event = multi();
    event.body = JSON.stringify(review);
    const result = await handler(event);
    assert.equal(result.statusCode, 200);
    assert.equal(result.statusDescription, '200 OK');
    assert.deepEqual(result.multiValueHeaders, { 'content-type': ['application/json'] });
    assert.deepEqual(result.headers, {});
    const response = httpFromResult('alb', result, event);
    assert.equal(response.headers['content-type']?.[0], 'application/json');
    const refused = await handler({ ...event, body: '' });
    assert.equal(refused.statusCode, 400);
    assert.equal(refused.statusDescription, '400 Bad Request');
    assert.deepEqual(refused.multiValueHeaders, { 'content-type': ['application/json'] });
  });

  it('answers a single-value event with headers only', async () => {
    const event = fixture('alb/post');
    event.body = JSON.stringify(review);
    const result = await handler(event);
    assert.equal(result.headers['content-type'], 'application/json');
    assert.equal(result.multiValueHeaders, undefined);
  });

  it('samples multi-value maps when asked, keeping every value', () => {
    const event = SOURCE_TOOLS.alb.sample({ ...request, rawQuery: 'x=1&x=2', multiValue: true }) as Record<string, any>;
    assert.deepEqual(event.multiValueHeaders['x-tag'], ['a', 'b']);
    assert.deepEqual(event.multiValueQueryStringParameters, { x: ['1', '2'] });
    assert.equal(event.headers, undefined);
    assert.equal(event.queryStringParameters, undefined);
    assert.equal(albSource.read(event).headers['x-tag'], 'a, b');
  });

  it('passes query values percent-encoded and decodes them on reading', () => {
    const event = SOURCE_TOOLS.alb.sample({ ...request, rawQuery: 'timeout=%35s&q=a+b%20c&bad=%zz' }) as Record<
      string,
      any
    >;
    assert.deepEqual(event.queryStringParameters, { timeout: '%35s', q: 'a+b%20c', bad: '%zz' });
    assert.deepEqual(albSource.read(event).query, { timeout: '5s', q: 'a b c', bad: '%zz' });
  });

  it('sends JSON, XML and text bodies as they are, anything else base64', () => {
    const encoded = (type: string) =>
      (SOURCE_TOOLS.alb.sample({ ...request, headers: [['content-type', type]] }) as Record<string, any>)
        .isBase64Encoded;
    assert.deepEqual(
      ['application/json; charset=utf-8', 'text/plain', 'application/xml', 'application/javascript'].map(encoded),
      [false, false, false, false],
    );
    assert.deepEqual(['application/octet-stream', 'application/merge-patch+json', ''].map(encoded), [true, true, true]);
    const empty = SOURCE_TOOLS.alb.sample({ ...request, body: undefined }) as Record<string, any>;
    assert.deepEqual([empty.body, empty.isBase64Encoded], ['', false]);
  });

  it('turns results into responses by the load balancer rules', () => {
    const bad = httpFromResult('alb', { body: 'no status' });
    assert.equal(bad.status, 502);
    assert.match(bad.body.toString(), /502 Bad Gateway/);
    assert.equal(httpFromResult('alb', 'bare').status, 502, 'no bare values, unlike the 2.0 format');
    const result = { statusCode: 201, headers: { A: 'b' }, multiValueHeaders: { C: ['d', 'e'] }, body: 'hi' };
    assert.deepEqual(httpFromResult('alb', result, fixture('alb/post')).headers, { a: 'b' });
    assert.deepEqual(httpFromResult('alb', result, multi()).headers, { c: ['d', 'e'] });
    const binary = httpFromResult('alb', { statusCode: 200, body: 'aGk=', isBase64Encoded: true });
    assert.equal(binary.body.toString(), 'hi');
  });

  it('is not taken for a REST event, nor a REST event for it', () => {
    assert.equal(albSource.detect(fixture('rest/post')), false);
    assert.equal(detectSource(fixture('alb/post'))?.name, 'alb');
    assert.equal(albSource.detect({ requestContext: { elb: 'x' } }), false);
  });
});

describe('a new source is one module', () => {
  // A VPC Lattice-like source written the way the modules under lib/gateway/sources are.
  const lattice: GatewaySource = {
    name: 'lattice' as EventSource,
    describe: 'VPC Lattice service',
    detect: (event) => isRecord(event) && isRecord(event.requestContext) && 'serviceNetworkArn' in event.requestContext,
    read: (event) => {
      const e = event as Record<string, any>;
      return {
        source: 'lattice' as EventSource,
        method: String(e.method),
        path: String(e.raw_path),
        headers: stringMap(e.headers, true),
        query: {},
        body: e.body,
        isBase64Encoded: e.is_base64_encoded === true,
        requestId: undefined,
      };
    },
    write: proxyResult,
  };
  const event = {
    requestContext: { serviceNetworkArn: 'arn:aws:vpc-lattice:us-east-1:123456789012:servicenetwork/sn-1' },
    method: 'POST',
    raw_path: '/pod-policy',
    headers: { 'Content-Type': 'application/json' },
    body: '{}',
    is_base64_encoded: false,
  };

  it('is found by the detector once it is in the list', () => {
    assert.equal(detectSource(event), undefined);
    const extended = [lattice, ...SOURCES];
    assert.equal(detectSource(event, extended)?.name, 'lattice');
    assert.equal(detectSource(fixture('alb/post'), extended)?.name, 'alb', 'the others still read theirs');
    const req = detectSource(event, extended)!.read(event);
    assert.deepEqual([req.method, req.path, req.headers['content-type']], ['POST', '/pod-policy', 'application/json']);
  });
});

describe('function bundles', () => {
  it('leave every source tool (samples, result readers) out', async () => {
    const options = bundleOptions(FIXTURE_PROJECT, {
      name: 'pod-policy',
      entry: join(FIXTURE_PROJECT, 'functions', 'pod-policy', 'index.ts'),
    });
    // The build itself is not under test: under npm test it is kept by content (infra/build-kept.ts).
    const unminified = {
      ...options,
      absWorkingDir: FIXTURE_PROJECT,
      outdir: options.outdir!,
      write: false,
      minify: false,
    };
    const out = await keptBuild(unminified, () => esbuild.build(unminified));
    const code = out.map((f) => Buffer.from(f.contents).toString('utf8')).join('');
    assert.match(code, /Application Load Balancer target group/, 'the handler side of the sources is there');
    // Strings only the tools hold: the emulator's API id, ALB's error page, API Gateway's 502 message.
    for (const marker of ['klwlocal01', '502 Bad Gateway', 'Internal server error', 'targetgroup/'])
      assert.ok(!code.includes(marker), `tool code in the bundle: ${marker}`);
  });
});
