import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { cloneJson, parseJson, setMember } from '../../lib/json.ts';
import { checkPatch, diffPatch } from '../../lib/admission/patch.ts';
import { defineConversionWebhook, hubAndSpoke, withoutFields } from '../../lib/conversion/webhook.ts';
import { defineMutatingWebhook, defineValidatingWebhook } from '../../lib/admission/webhook.ts';
import { allow, patched } from '../../lib/admission/decision.ts';
import { readAdmissionReviewFast } from '../../lib/review/fast.ts';
import { AdmissionReviewSchema } from '../../lib/review/schemas.ts';
import { captureLogger, eventWith } from '../helpers.ts';

// `__proto__` as a member at several depths: top level, metadata, labels, annotations, deep in
// spec, in arrays, next to a member called `constructor`. JSON allows them; the API server keeps them.
const OBJECT_TEXT =
  '{"apiVersion":"example.com/v1","kind":"CronTab","__proto__":{"top":1},' +
  '"metadata":{"name":"a","namespace":"d","uid":"u","__proto__":{"m":[2]},' +
  '"labels":{"__proto__":"l","x":"y"},"annotations":{"__proto__":"an"}},' +
  '"spec":{"constructor":{"prototype":1},"__proto__":{"deep":{"__proto__":[{"__proto__":null},{"k":"__proto__"}]}}}}';

/** A conversion review holding the object twice, as the API server sends it: JSON text. */
function conversionBody(objectText: string): string {
  return (
    '{"apiVersion":"apiextensions.k8s.io/v1","kind":"ConversionReview",' +
    `"request":{"uid":"c1","desiredAPIVersion":"example.com/v2","objects":[${objectText},${objectText}]}}`
  );
}

/** An admission review of the object as JSON text, with `__proto__` in userInfo, extra and options too. */
function admissionBody(objectText: string): string {
  return (
    '{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"a1",' +
    '"kind":{"group":"example.com","version":"v1","kind":"CronTab"},' +
    '"resource":{"group":"example.com","version":"v1","resource":"crontabs"},' +
    '"namespace":"d","operation":"CREATE",' +
    '"userInfo":{"username":"u","__proto__":{"x":1},"extra":{"__proto__":["p"],"z":["q"]}},' +
    `"object":${objectText},"oldObject":null,"dryRun":false,"options":{"__proto__":{"o":1},"kind":"CreateOptions"}}}`
  );
}

/** Applies add, replace and remove as the API server's json-patch does: `__proto__` is a member like any other. */
type Operation = { op: string; path: string; value?: unknown };

function applyAsApiServer(document: unknown, operations: Operation[]): unknown {
  for (const { op, path, value } of operations) {
    const tokens = path
      .split('/')
      .slice(1)
      .map((t) => t.replace(/~1/g, '/').replace(/~0/g, '~'));
    const last = tokens.pop()!;
    let parent = document as Record<string, unknown>;
    for (const t of tokens) {
      assert.ok(Object.hasOwn(parent, t), `${path}: no member ${t}`);
      parent = parent[t] as Record<string, unknown>;
    }
    if (op === 'remove') {
      assert.ok(Object.hasOwn(parent, last));
      delete parent[last];
    } else if (Array.isArray(parent)) {
      if (op === 'add') parent.splice(last === '-' ? parent.length : Number(last), 0, value);
      else parent[Number(last)] = value;
    } else {
      if (op === 'replace') assert.ok(Object.hasOwn(parent, last), `${path}: nothing to replace`);
      setMember(parent, last, cloneJson(value));
    }
  }
  return document;
}

/** The answer of a webhook's handler (quiet) to a review sent as JSON text, parsed. */
const invoke = async (webhook: { withOptions(options: object): unknown }, body: string) => {
  type Handler = (event: unknown, context: unknown) => Promise<{ statusCode: number; body: string }>;
  const handler = webhook.withOptions({ logger: captureLogger().logger }) as Handler;
  const result = await handler(eventWith('http', body), { awsRequestId: 'r', getRemainingTimeInMillis: () => 10_000 });
  assert.equal(result.statusCode, 200, result.body);
  return JSON.parse(result.body);
};

describe('__proto__ members', () => {
  it('survive conversion byte for byte with an identity converter, in place or copied', async () => {
    const expected = OBJECT_TEXT.replace('"example.com/v1"', '"example.com/v2"');
    const converters = {
      'in place': (o: any, v: string) => ((o.apiVersion = v), o),
      spread: (o: any, v: string) => ({ ...o, apiVersion: v }),
      withoutFields: (o: any, v: string) => {
        const rest = withoutFields(o, 'apiVersion');
        // A new first member, then the rest as it came: the text order of the original.
        return JSON.parse(JSON.stringify({ apiVersion: v, ...rest }));
      },
      'hub and spoke': hubAndSpoke({
        hub: 'v2',
        spokes: { v1: { toHub: (o: any) => ({ ...o }), fromHub: (o: any) => ({ ...o }) } },
      }),
    };
    for (const [label, convert] of Object.entries(converters)) {
      const crd = 'crontabs.example.com';
      const webhook = defineConversionWebhook({ name: 'crontab-conversion', crd, convert: convert as never });
      const answer = await invoke(webhook, conversionBody(OBJECT_TEXT));
      assert.equal(answer.response.result.status, 'Success', `${label}: ${JSON.stringify(answer.response.result)}`);
      for (const converted of answer.response.convertedObjects) {
        const text = JSON.stringify(converted);
        assert.equal(text, expected, label);
      }
    }
  });

  it('withoutFields keeps a top-level __proto__ as a member, as object rest does', () => {
    const object = JSON.parse(OBJECT_TEXT);
    const { spec: _spec, ...rest } = object;
    const kept = withoutFields(object, 'spec');
    assert.equal(JSON.stringify(kept), JSON.stringify(rest));
    assert.equal(Object.getPrototypeOf(kept), Object.prototype);
    assert.deepEqual((kept as any).__proto__, { top: 1 });
  });

  it('survive admission: the patch of a mutation turns the original into the result byte for byte', async () => {
    const seen: string[] = [];
    const webhook = defineMutatingWebhook<any>({
      name: 'proto-mutator',
      rules: [],
      mutate: (object) => {
        seen.push(JSON.stringify(object));
        object.metadata.labels.added = 'yes';
        object.metadata.__proto__.m.push(3);
        object.spec.__proto__.deep.__proto__[0].__proto__ = 'now a string';
        // New __proto__ members where there was none, as JSON.parse makes them.
        setMember(object.metadata.annotations, 'other', 'x');
        setMember(object.spec.__proto__.deep, 'extra', JSON.parse('{"__proto__":{"n":1}}'));
        setMember(object.status ?? (object.status = {}), '__proto__', { s: true });
        return object;
      },
    });
    const answer = await invoke(webhook, admissionBody(OBJECT_TEXT));
    assert.equal(answer.response.allowed, true, JSON.stringify(answer.response));
    assert.equal(seen[0], OBJECT_TEXT, 'the function sees the object as sent');
    const operations = JSON.parse(Buffer.from(answer.response.patch, 'base64').toString('utf8'));
    const expected = JSON.parse(OBJECT_TEXT);
    expected.metadata.labels.added = 'yes';
    expected.metadata.__proto__.m.push(3);
    expected.spec.__proto__.deep.__proto__[0].__proto__ = 'now a string';
    setMember(expected.metadata.annotations, 'other', 'x');
    setMember(expected.spec.__proto__.deep, 'extra', JSON.parse('{"__proto__":{"n":1}}'));
    expected.status = JSON.parse('{"__proto__":{"s":true}}');
    assert.equal(JSON.stringify(applyAsApiServer(JSON.parse(OBJECT_TEXT), operations)), JSON.stringify(expected));
  });

  it('accepts a returned patch that names __proto__ members, and refuses one that does not apply', async () => {
    const operations = [
      { op: 'replace' as const, path: '/metadata/__proto__/m/0', value: 9 },
      { op: 'add' as const, path: '/spec/constructor/prototype', value: 2 },
      { op: 'add' as const, path: '/metadata/labels/__proto__', value: 'l2' },
    ];
    const webhook = defineMutatingWebhook<any>({ name: 'proto-patcher', rules: [], mutate: () => patched(operations) });
    const answer = await invoke(webhook, admissionBody(OBJECT_TEXT));
    assert.equal(answer.response.allowed, true, JSON.stringify(answer.response));
    const sent = JSON.parse(Buffer.from(answer.response.patch, 'base64').toString('utf8'));
    assert.deepEqual(sent, operations);
    const original = JSON.parse(OBJECT_TEXT);
    // Members a plain object inherits are not there unless the object has them.
    const problem = (document: object, op: Operation) => checkPatch(document, [op]) ?? '';
    assert.match(problem(original, { op: 'replace', path: '/status/__proto__', value: 1 }), /PATH_UNRESOLVABLE/);
    assert.match(problem(original, { op: 'replace', path: '/metadata/constructor', value: 1 }), /PATH_UNRESOLVABLE/);
    assert.match(problem({}, { op: 'add', path: '/__proto__/polluted', value: 1 }), /OPERATION_PATH_CANNOT_ADD/);
    assert.equal(({} as Record<string, unknown>).polluted, undefined, 'Object.prototype untouched');
    const deep = '/spec/__proto__/deep/__proto__/0/__proto__';
    assert.equal(problem(original, { op: 'test', path: deep, value: null }), '');
  });

  it('a diff between copies that keep them has no operation at all', () => {
    const original = parseJson(OBJECT_TEXT) as object;
    assert.deepEqual(diffPatch(original, cloneJson(original)), []);
  });

  it('are kept in userInfo, userInfo.extra and options by the fast readers and by zod alike', async () => {
    const body = JSON.parse(admissionBody(OBJECT_TEXT));
    const fast = readAdmissionReviewFast(body)!;
    const zod = AdmissionReviewSchema.safeParse(body);
    assert.ok(zod.success);
    for (const review of [fast, zod.data]) {
      const userInfo = '{"username":"u","extra":{"__proto__":["p"],"z":["q"]},"__proto__":{"x":1}}';
      assert.equal(JSON.stringify(review.request.userInfo), userInfo);
      assert.equal(JSON.stringify(review.request.options), '{"__proto__":{"o":1},"kind":"CreateOptions"}');
      assert.equal(JSON.stringify(review.request.object), OBJECT_TEXT);
    }
    let user: unknown;
    const validate = (request: { userInfo: unknown }) => ((user = request.userInfo), allow());
    const webhook = defineValidatingWebhook({ name: 'who', rules: [], validate });
    await invoke(webhook, admissionBody(OBJECT_TEXT));
    assert.deepEqual(Object.keys((user as { extra: object }).extra), ['__proto__', 'z']);
  });

  it('are named as such when they are invalid', async () => {
    const body = admissionBody(OBJECT_TEXT).replace('"extra":{"__proto__":["p"]', '"extra":{"__proto__":"p"');
    const webhook = defineValidatingWebhook({ name: 'who', rules: [], validate: () => allow() });
    const handler = webhook.withOptions({ logger: captureLogger().logger });
    const result = (await handler(eventWith('http', body), {} as never)) as { statusCode: number; body: string };
    assert.equal(result.statusCode, 400);
    assert.match(JSON.parse(result.body).error, /^request\.userInfo\.extra\.__proto__: /);
  });
});

describe('the test kit reads a patch naming __proto__ members as the API server applies it', () => {
  it('readAnswer gives the mutated object with its __proto__ members', async () => {
    const { admissionReview, readAnswer } = await import('../../lib/testing/index.ts');
    const { invokeRaw } = await import('../../lib/harness/invoke.ts');
    const webhook = defineMutatingWebhook<any>({
      name: 'proto-kit',
      rules: [],
      mutate: (object) => {
        object.metadata.__proto__.m.push(3);
        setMember(object.metadata.labels, 'added', 'yes');
        setMember(object, 'status', parseJson('{"__proto__":{"big":12345678901234567890}}'));
        return object;
      },
    });
    const review = admissionReview(parseJson(OBJECT_TEXT) as never);
    const raw = await invokeRaw(webhook, review, { handlerOptions: { logger: captureLogger().logger } });
    const result = readAnswer('mutating', review, raw);
    const expected = JSON.parse(OBJECT_TEXT);
    expected.metadata.__proto__.m.push(3);
    expected.metadata.labels.added = 'yes';
    assert.equal(JSON.stringify(withoutFields(result.object as never, 'status')), JSON.stringify(expected));
    assert.deepEqual(Object.keys((result.object as any).status), ['__proto__']);
    assert.equal(Object.getPrototypeOf((result.object as any).status), Object.prototype);
    assert.deepEqual((result.object as any).status.__proto__, { big: 12345678901234567890n });
  });
});
