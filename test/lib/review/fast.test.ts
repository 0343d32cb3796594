import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { readAdmissionReviewFast, readConversionReviewFast } from '../../../lib/review/fast.ts';
import { AdmissionReviewSchema, ConversionReviewSchema } from '../../../lib/review/schemas.ts';
import { FUZZ_RUNS } from '../../helpers.ts';

const fixture = (name: string) =>
  JSON.parse(readFileSync(new URL(`../../events/reviews/${name}`, import.meta.url), 'utf8'));

/** Member names at every level, in order: deepEqual does not compare the order of keys. */
function shape(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(shape);
  if (typeof v !== 'object' || v === null) return v;
  return Object.keys(v).map((k) => [k, shape((v as Record<string, unknown>)[k])]);
}

function sameAsZod(
  schema: { safeParse(v: unknown): { success: boolean; data?: unknown } },
  fast: (b: Record<string, unknown>) => unknown,
  body: Record<string, unknown>,
): unknown {
  const zod = schema.safeParse(body);
  const mine = fast(body);
  if (!zod.success) {
    assert.equal(mine, undefined, 'the fast reader leaves an invalid review to zod');
    return undefined;
  }
  if (mine === undefined) return undefined;
  assert.deepEqual(mine, zod.data);
  assert.deepEqual(shape(mine), shape(zod.data));
  return mine;
}

describe('fast review readers', () => {
  it('read admission reviews exactly as the zod schema does', () => {
    const base = fixture('pod-create-v1.json');
    const variants: Array<(r: Record<string, any>) => void> = [
      () => {},
      (r) => (r.userInfo.extra = { 'iam.example/arn': ['a', 'b'], '1': ['x'] }),
      (r) => (r.userInfo.extra = { a: ['b'], __proto__: ['p'] }),
      (r) => (r.userInfo.extra = JSON.parse('{"__proto__":["p"],"z":[]}')),
      (r) => (r.userInfo.unknown = { a: 1 }),
      (r) => (r.extraTop = 1),
      (r) => ((r.object = null), (r.oldObject = null)),
      (r) => (r.options = { kind: 'CreateOptions', apiVersion: 'meta.k8s.io/v1' }),
      (r) => (r.options = null),
      (r) => ((r.dryRun = true), (r.subResource = 'status'), (r.requestSubResource = 'status')),
      (r) => ((r.name = undefined), (r.requestKind = undefined)),
      (r) => delete r.requestKind,
      (r) => (r.operation = 'UPDATE'),
      // Invalid: zod must decide.
      (r) => (r.uid = ''),
      (r) => (r.operation = 'PATCH'),
      (r) => (r.kind.group = 1),
      (r) => (r.userInfo.groups = ['a', 2]),
      (r) => (r.userInfo.extra = { a: 'b' }),
      (r) => (r.object = []),
      (r) => (r.options = []),
      (r) => (r.dryRun = 'yes'),
      (r) => delete r.userInfo,
      (r) => (r.requestResource = { group: '', version: 'v1' }),
    ];
    let read = 0;
    for (const change of variants) {
      const body = structuredClone(base);
      change(body.request);
      const got = sameAsZod(AdmissionReviewSchema, readAdmissionReviewFast, body) as
        | { request: { object?: unknown } }
        | undefined;
      if (got) {
        read++;
        assert.equal(got.request.object, body.request.object, 'embedded objects are the request’s own');
      }
    }
    // Every valid variant: all but the ten invalid ones and the `extra` with an array for prototype, which zod refuses.
    assert.equal(read, variants.length - 11);
    for (const name of ['admission-v1.json', 'admission-v1beta1.json'])
      assert.ok(sameAsZod(AdmissionReviewSchema, readAdmissionReviewFast, fixture(name)));
  });

  it('read conversion reviews exactly as the zod schema does', () => {
    const base = fixture('conversion-v1.json');
    const variants: Array<(r: Record<string, any>) => void> = [
      () => {},
      (r) => (r.extra = 1),
      (r) => (r.objects = []),
      (r) => (r.desiredAPIVersion = 'v1'),
      (r) => r.objects.push({ apiVersion: 'a/v1', kind: 'K' }),
      (r) =>
        r.objects.push({ apiVersion: 'a/v1', kind: 'K', metadata: { name: 'n', uid: 'u', namespace: 'd', other: 1 } }),
      (r) => (r.desiredAPIVersion = 'a/b/c'),
      (r) => r.objects.push({ apiVersion: '', kind: 'K' }),
      (r) => r.objects.push({ apiVersion: 'a/v1', kind: 'K', metadata: { name: 1 } }),
      (r) => r.objects.push(null),
      (r) => (r.uid = 7),
    ];
    let read = 0;
    for (const change of variants) {
      const body = structuredClone(base);
      change(body.request);
      const got = sameAsZod(ConversionReviewSchema, readConversionReviewFast, body) as
        | { request: { objects: unknown[] } }
        | undefined;
      if (got) {
        read++;
        got.request.objects.forEach((o, i) => assert.equal(o, body.request.objects[i]));
      }
    }
    assert.equal(read, 6);
    assert.ok(sameAsZod(ConversionReviewSchema, readConversionReviewFast, fixture('conversion-v1beta1.json')));
  });

  // Any field of a request replaced by any JSON value, or removed: whatever the fast reader
  // accepts, zod accepts and builds the same; whatever zod refuses, the fast reader leaves to it.
  const anyJson = fc.oneof(
    fc.constant(undefined),
    fc.jsonValue({ maxDepth: 2 }),
    fc.string(),
    fc.array(fc.string(), { maxLength: 3 }),
    fc.dictionary(fc.string({ maxLength: 4 }), fc.array(fc.string(), { maxLength: 2 }), { maxKeys: 3 }),
    fc.record({ group: fc.string(), version: fc.string(), kind: fc.string() }),
    fc.record({ group: fc.string(), version: fc.string(), resource: fc.string() }),
    fc.constantFrom('CREATE', 'UPDATE', 'DELETE', 'CONNECT', 'PATCH', ''),
  );
  const requestKeys = [
    'uid',
    'kind',
    'resource',
    'subResource',
    'requestKind',
    'requestResource',
    'requestSubResource',
    'name',
    'namespace',
    'operation',
    'userInfo',
    'object',
    'oldObject',
    'dryRun',
    'options',
    'extra',
  ];
  const userInfoKeys = ['username', 'uid', 'groups', 'extra', 'other'];

  /**
   * One value of each shape the readers tell apart: absent, null, scalars, arrays of strings and
   * of other things, maps of lists, group/version records with a member missing or mistyped,
   * the operations. Every field takes each of them in turn below; the properties mix them.
   */
  const SHAPES: unknown[] = [
    undefined,
    null,
    '',
    'x',
    'example.com/v1',
    0,
    1.5,
    true,
    [],
    [''],
    [0],
    [null],
    [[]],
    {},
    { a: ['b'] },
    { a: 'b' },
    { a: [0] },
    { group: '', version: '', kind: '' },
    { group: '', version: '', resource: '' },
    { group: '', version: '' },
    { group: 0, version: '', kind: '' },
    { name: 'n', namespace: 1 },
    'CREATE',
    'UPDATE',
    'PATCH',
  ];

  /** `body` with `path` (dotted) set to `value`, or removed when it is undefined. */
  function changed(body: Record<string, any>, path: string, value: unknown): Record<string, any> {
    const copy = structuredClone(body);
    const keys = path.split('.');
    let target = copy;
    for (const k of keys.slice(0, -1)) target = target[k];
    if (value === undefined) delete target[keys.at(-1)!];
    else target[keys.at(-1)!] = value;
    return copy;
  }

  it('agree with zod on admission reviews with any one field of each shape', () => {
    const base = fixture('pod-create-v1.json');
    let read = 0;
    const fields = [...requestKeys, ...userInfoKeys.map((k) => `userInfo.${k}`)];
    for (const field of fields)
      for (const value of SHAPES)
        if (sameAsZod(AdmissionReviewSchema, readAdmissionReviewFast, changed(base, `request.${field}`, value))) read++;
    assert.ok(read > fields.length, `the fast reader read ${read}`);
  });

  it('agree with zod on conversion reviews with any one field of each shape, objects included', () => {
    const base = fixture('conversion-v1.json');
    const object = { apiVersion: 'example.com/v1', kind: 'K', metadata: { name: 'n', namespace: 'd', uid: 'u' } };
    let read = 0;
    for (const value of SHAPES) {
      for (const field of ['uid', 'desiredAPIVersion', 'objects', 'extra'])
        if (sameAsZod(ConversionReviewSchema, readConversionReviewFast, changed(base, `request.${field}`, value)))
          read++;
      const objects = [
        value,
        ...['apiVersion', 'kind', 'metadata', 'metadata.name', 'metadata.namespace', 'metadata.uid'].map((field) =>
          changed(object, field, value),
        ),
      ];
      for (const added of objects) {
        const body = structuredClone(base);
        body.request.objects.push(added);
        if (sameAsZod(ConversionReviewSchema, readConversionReviewFast, body)) read++;
      }
    }
    assert.ok(read > 4, `the fast reader read ${read}`);
  });

  it('agree with zod on admission reviews with random fields (property)', () => {
    const base = fixture('pod-create-v1.json');
    let read = 0;
    fc.assert(
      fc.property(
        fc.array(
          fc.tuple(fc.constantFrom(...requestKeys, ...userInfoKeys.map((k) => `userInfo.${k}`)), anyJson, fc.boolean()),
          { maxLength: 4 },
        ),
        (changes) => {
          const body = structuredClone(base);
          for (const [key, value, remove] of changes) {
            const [target, field] = key.startsWith('userInfo.')
              ? [body.request.userInfo, key.slice(9)]
              : [body.request, key];
            if (typeof target !== 'object' || target === null) continue;
            if (remove) delete target[field];
            else target[field] = value;
          }
          if (sameAsZod(AdmissionReviewSchema, readAdmissionReviewFast, body) !== undefined) read++;
        },
      ),
      { numRuns: FUZZ_RUNS },
    );
    // Far more read (a tenth to a half): a fortieth or fewer would mean the reader is hardly reached.
    assert.ok(read > FUZZ_RUNS / 40, `the fast reader read ${read} of ${FUZZ_RUNS}`);
  });

  it('agree with zod on conversion reviews with random fields and objects (property)', () => {
    const base = fixture('conversion-v1.json');
    let read = 0;
    const object = fc.oneof(
      anyJson,
      fc.record(
        {
          apiVersion: fc.oneof(fc.string(), fc.constant('example.com/v1')),
          kind: fc.string(),
          metadata: fc.oneof(anyJson, fc.record({ name: anyJson, namespace: anyJson, uid: anyJson })),
        },
        { requiredKeys: [] },
      ),
    );
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.constantFrom('uid', 'desiredAPIVersion', 'objects', 'extra'), anyJson, fc.boolean()), {
          maxLength: 3,
        }),
        fc.array(object, { maxLength: 3 }),
        (changes, objects) => {
          const body = structuredClone(base);
          body.request.objects.push(...objects);
          for (const [key, value, remove] of changes) {
            if (remove) delete body.request[key];
            else body.request[key] = value;
          }
          if (sameAsZod(ConversionReviewSchema, readConversionReviewFast, body) !== undefined) read++;
        },
      ),
      { numRuns: FUZZ_RUNS },
    );
    // Far more read (a tenth to a half): a fortieth or fewer would mean the reader is hardly reached.
    assert.ok(read > FUZZ_RUNS / 40, `the fast reader read ${read} of ${FUZZ_RUNS}`);
  });
});
