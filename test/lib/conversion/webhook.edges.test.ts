import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  defineConversionWebhook,
  defineMutatingWebhook,
  defineValidatingWebhook,
  allow,
  type ConvertFn,
  type KubeObject,
} from '../../../lib/index.ts';
import { cloneJson, nestingDepth } from '../../../lib/json.ts';
import { conversionReview, invoke } from '../../../lib/testing/index.ts';
import { captureLogger, eventWith } from '../../helpers.ts';

const widget = (name: string, extra: Record<string, unknown> = {}) => ({
  apiVersion: 'example.com/v1beta1',
  kind: 'Widget',
  metadata: { name, namespace: 'default', uid: `uid-${name}`, labels: { a: 'b' } },
  ...extra,
});

const converter = (convert: ConvertFn) =>
  defineConversionWebhook({ name: 'edges', crd: 'widgets.example.com', convert });

describe('converted objects as the API server checks them', () => {
  it('answers Failed naming the object when a converted object has no metadata', async () => {
    const w = converter((o, to) => {
      const { metadata: _dropped, ...rest } = o;
      return { ...rest, apiVersion: to };
    });
    const result = await invoke(w, conversionReview([widget('first'), widget('second')], 'example.com/v1'));
    assert.equal(result.status, 'Failed');
    assert.match(result.message!, /object 0 \(Widget default\/first\) has no metadata/);
    assert.match(result.message!, /missing metadata in converted object/);
  });

  for (const [what, metadata, pattern] of [
    ['null metadata', null, /metadata that is null, not an object/],
    ['metadata that is a string', 'x', /metadata that is a string, not an object/],
    [
      'labels that are an array',
      { name: 'w', namespace: 'default', uid: 'uid-w', labels: ['a'] },
      /metadata\.labels that is an array/,
    ],
    [
      'an annotation that is a number',
      { name: 'w', namespace: 'default', uid: 'uid-w', annotations: { n: 1 } },
      /metadata\.annotations\["n"\] that is a number, not a string/,
    ],
  ] as const) {
    it(`answers Failed for ${what}`, async () => {
      const w = converter((o, to) => ({ ...o, apiVersion: to, metadata: metadata as never }));
      const result = await invoke(w, conversionReview([widget('w')], 'example.com/v1'));
      assert.equal(result.status, 'Failed');
      assert.match(result.message!, pattern);
    });
  }

  const withMetadata = (change: (meta: Record<string, any>) => void) =>
    converter((o, to) => {
      const metadata: Record<string, any> = {
        ...o.metadata,
        labels: { ...o.metadata?.labels },
        annotations: { ...o.metadata?.annotations },
      };
      change(metadata);
      return { ...o, apiVersion: to, metadata };
    });
  const refused: Array<[string, (meta: Record<string, any>) => void, RegExp]> = [
    [
      'a label key with a space',
      (m) => (m.labels['bad key'] = 'x'),
      /metadata\.labels the API server refuses: key "bad key": name part must consist/,
    ],
    [
      'a label key with an upper-case prefix',
      (m) => (m.labels['Example.com/team'] = 'x'),
      /key "Example\.com\/team": prefix part/,
    ],
    ['a label key of two slashes', (m) => (m.labels['a/b/c'] = 'x'), /key "a\/b\/c": a qualified name/],
    ['a label name part of 64 characters', (m) => (m.labels['n'.repeat(64)] = 'x'), /no more than 63 characters/],
    [
      'a label value of 64 characters',
      (m) => (m.labels.a = 'v'.repeat(64)),
      /value of key "a": must be no more than 63 characters/,
    ],
    ['a label value ending in a dash', (m) => (m.labels.a = 'b-'), /value of key "a": must consist/],
    [
      'an annotation key with an empty prefix',
      (m) => (m.annotations['/x'] = 'y'),
      /metadata\.annotations the API server refuses: key "\/x": prefix part must be non-empty/,
    ],
    [
      'annotations over 256 KiB',
      (m) => (m.annotations.big = 'x'.repeat(256 * 1024)),
      /annotations the API server refuses: keys and values take 262147 bytes, more than 262144/,
    ],
    // 131,072 two-byte characters: 262,144 bytes as Go counts them, though half as many UTF-16 units.
    ['annotations over 256 KiB in UTF-8', (m) => (m.annotations.k = '\u00e9'.repeat(128 * 1024)), /take 262145 bytes/],
  ];
  for (const [what, change, pattern] of refused) {
    it(`answers Failed naming the object and key for ${what}`, async () => {
      const result = await invoke(withMetadata(change), conversionReview([widget('w')], 'example.com/v1'));
      assert.equal(result.status, 'Failed');
      assert.match(result.message!, /object 0 \(Widget default\/w\)/);
      assert.match(result.message!, pattern);
    });
  }

  it('accepts changed labels and annotations the API server accepts', async () => {
    const w = withMetadata((m) => {
      m.labels['example.com/team'] = 'a_b.c-1';
      m.labels.empty = '';
      m.annotations['Example.com/MixedCase'] = 'any value at all: \n spaces';
      // All ASCII: the annotations take exactly 256 KiB.
      const taken = Object.entries(m.annotations as Record<string, string>).reduce(
        (n, [k, v]) => n + k.length + v.length,
        0,
      );
      m.annotations.sized = 'x'.repeat(256 * 1024 - taken - 'sized'.length);
    });
    const result = await invoke(w, conversionReview([widget('w')], 'example.com/v1'));
    assert.equal(result.status, 'Success', result.message);
    assert.equal(result.convertedObjects[0]!.metadata!.labels!['example.com/team'], 'a_b.c-1');
  });

  it('checks labels changed in place on the object the converter was given', async () => {
    const w = converter((o, to) => {
      o.metadata!.labels!['bad key'] = 'x';
      o.apiVersion = to;
      return o;
    });
    const result = await invoke(w, conversionReview([widget('w')], 'example.com/v1'));
    assert.equal(result.status, 'Failed');
    assert.match(result.message!, /key "bad key"/);
  });

  it('checks a map only when the converter changed it, and then all of it, as the API server does', async () => {
    const legacy = widget('w', {
      metadata: {
        name: 'w',
        namespace: 'default',
        uid: 'uid-w',
        labels: { 'bad key': 'x' },
        annotations: { '-bad': 'y' },
      },
    });
    const untouched = await invoke(
      converter((o, to) => ({ ...o, apiVersion: to })),
      conversionReview([legacy], 'example.com/v1'),
    );
    assert.equal(untouched.status, 'Success', untouched.message);
    const relabelled = await invoke(
      withMetadata((m) => (m.labels.team = 'a')),
      conversionReview([legacy], 'example.com/v1'),
    );
    assert.equal(relabelled.status, 'Failed');
    assert.match(relabelled.message!, /metadata\.labels the API server refuses: key "bad key"/);
  });

  it('drops null labels and keeps the rest of the original metadata', async () => {
    const w = converter((o, to) => ({
      ...o,
      apiVersion: to,
      metadata: { ...o.metadata, labels: null as never, annotations: { x: 'y' } },
    }));
    const result = await invoke(w, conversionReview([widget('w')], 'example.com/v1'));
    assert.equal(result.status, 'Success');
    assert.deepEqual(result.convertedObjects[0]!.metadata, {
      name: 'w',
      namespace: 'default',
      uid: 'uid-w',
      annotations: { x: 'y' },
    });
  });
});

/** JSON text of an object nested `depth` levels deep, built as text (cloning it would overflow the stack). */
function nested(depth: number): string {
  return `${'{"a":'.repeat(depth)}{}${'}'.repeat(depth)}`;
}

function conversionBody(spec: string): string {
  const object = `{"apiVersion":"example.com/v1beta1","kind":"Widget","metadata":{"name":"deep","namespace":"default","uid":"u"},"spec":${spec}}`;
  return `{"apiVersion":"apiextensions.k8s.io/v1","kind":"ConversionReview","request":{"uid":"deep-uid","desiredAPIVersion":"example.com/v1","objects":[${object}]}}`;
}

function admissionBody(spec: string): string {
  const object = `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"deep","namespace":"default"},"data":{},"spec":${spec}}`;
  return `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"deep-uid","kind":{"group":"","version":"v1","kind":"ConfigMap"},"resource":{"group":"","version":"v1","resource":"configmaps"},"operation":"CREATE","userInfo":{},"object":${object}}}`;
}

const context = { awsRequestId: 'r', getRemainingTimeInMillis: () => 30_000 };

describe('objects nested thousands of levels deep', () => {
  for (const depth of [5_000, 9_999]) {
    it(`answers a ConversionReview with an object ${depth} levels deep Failed, naming the object, not HTTP 500`, async () => {
      const { logger, lines } = captureLogger();
      const w = converter((o, to) => ({ ...o, apiVersion: to }));
      const result = await w.withOptions({ logger })(eventWith('http', conversionBody(nested(depth))), context);
      assert.equal(result.statusCode, 200);
      const response = JSON.parse(result.body).response;
      assert.equal(response.uid, 'deep-uid');
      assert.equal(response.result.status, 'Failed');
      assert.match(response.result.message, /converted object 0 \(Widget default\/deep\) is nested \d+ levels deep/);
      assert.deepEqual(
        lines.filter((l) => l.msg === 'adapter fault'),
        [],
      );
    });
  }

  it('still converts an object nested 1,000 levels deep', async () => {
    const w = converter((o, to) => ({ ...o, apiVersion: to }));
    const result = await w.withOptions({ logger: captureLogger().logger })(
      eventWith('http', conversionBody(nested(1_000))),
      context,
    );
    const response = JSON.parse(result.body).response;
    assert.equal(response.result.status, 'Success');
    assert.equal(nestingDepth(response.convertedObjects[0].spec), 1_001);
  });

  it('gives a mutating function its private copy of a 9,999-level object and patches it', async () => {
    const w = defineMutatingWebhook<KubeObject>({
      name: 'deep-mutate',
      rules: [],
      failurePolicy: 'Fail',
      mutate: (o) => void ((o.metadata!.labels ??= {}).seen = 'yes'),
    });
    const result = await w.withOptions({ logger: captureLogger().logger })(
      eventWith('http', admissionBody(nested(9_999))),
      context,
    );
    const response = JSON.parse(result.body).response;
    assert.equal(response.allowed, true);
    const patch = JSON.parse(Buffer.from(response.patch, 'base64').toString('utf8'));
    assert.deepEqual(patch, [{ op: 'add', path: '/metadata/labels', value: { seen: 'yes' } }]);
  });

  it('lets a validating function see a 9,999-level object', async () => {
    const w = defineValidatingWebhook({
      name: 'deep-validate',
      rules: [],
      validate: (r) => allow(`depth ${nestingDepth(r.object)}`),
    });
    const result = await w.withOptions({ logger: captureLogger().logger })(
      eventWith('http', admissionBody(nested(9_999))),
      context,
    );
    assert.deepEqual(JSON.parse(result.body).response.warnings, ['depth 10001']);
  });
});

describe('cloneJson', () => {
  it('copies values of any depth without sharing them', () => {
    const deep = JSON.parse(`{"list":[1,{"x":${nested(20_000)}}],"__proto__":{"p":1}}`);
    const copy = cloneJson(deep);
    assert.equal(nestingDepth(copy), nestingDepth(deep));
    assert.notEqual(copy.list[1].x, deep.list[1].x);
    assert.equal(Object.getPrototypeOf(copy), Object.prototype);
    assert.deepEqual(Object.keys(copy), ['list', '__proto__']);
    let a = copy.list[1].x;
    let b = deep.list[1].x;
    for (let i = 0; i < 20_000; i++) {
      assert.notEqual(a, b);
      a = a.a;
      b = b.a;
    }
    assert.deepEqual(a, {});
  });
});
