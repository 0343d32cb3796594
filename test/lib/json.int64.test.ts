import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import {
  allow,
  defineConversionWebhook,
  defineMutatingWebhook,
  defineValidatingWebhook,
  patched,
  type KubeObject,
} from '../../lib/index.ts';
import { checkPatch } from '../../lib/admission/patch.ts';
import { needsExactParse, parseJson, parseJsonExactly, stringifyJson, wholeDoubleKeys } from '../../lib/json.ts';
import { invoke } from '../../lib/testing/index.ts';
import { invokeRaw } from '../../lib/harness/invoke.ts';
import { EVERY_REQUEST, FUZZ_RUNS } from '../helpers.ts';

// Integers a JavaScript number cannot hold: 2^53 + 1, int64's largest and smallest.
const BIG = ['9007199254740993', '9223372036854775807', '-9223372036854775808'] as const;

const spec = `{"replicas":3,"a":${BIG[0]},"b":${BIG[1]},"c":${BIG[2]},"list":[${BIG[1]},1.5,"${BIG[0]}"],"small":9007199254740991}`;

function conversionBody(objects: string[]): string {
  return `{"apiVersion":"apiextensions.k8s.io/v1","kind":"ConversionReview","request":{"uid":"u1","desiredAPIVersion":"example.com/v1","objects":[${objects.join(',')}]}}`;
}
const widget = (name: string, body: string) =>
  `{"apiVersion":"example.com/v1beta1","kind":"Widget","metadata":{"name":"${name}","namespace":"default","uid":"uid-${name}"},"spec":${body}}`;

function admissionBody(object: string): string {
  return `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u2","kind":{"group":"example.com","version":"v1","kind":"Widget"},"resource":{"group":"example.com","version":"v1","resource":"widgets"},"operation":"CREATE","userInfo":{},"object":${object}}}`;
}

/** The decoded JSONPatch text of a raw admission answer. */
const patchText = (raw: { body: string }) =>
  Buffer.from(JSON.parse(raw.body).response.patch ?? '', 'base64').toString('utf8');

describe('int64 numbers through conversion', () => {
  it('returns every number it did not change with the same digits', async () => {
    const seen: unknown[] = [];
    const w = defineConversionWebhook({
      name: 'int64-convert',
      crd: 'widgets.example.com',
      convert: (o, to) => {
        seen.push((o as any).spec.b);
        return { ...o, apiVersion: to, spec: { ...(o as any).spec, converted: true } };
      },
    });
    const raw = await invokeRaw(w, conversionBody([widget('one', spec), widget('two', `{"n":${BIG[2]}}`)]));
    for (const digits of BIG)
      assert.ok(raw.body.includes(`:${digits}`) || raw.body.includes(`[${digits}`), `${digits} in ${raw.body}`);
    assert.ok(raw.body.includes(`"list":[${BIG[1]},1.5,"${BIG[0]}"],"small":9007199254740991`));
    const response = (parseJson(raw.body) as any).response;
    assert.equal(response.result.status, 'Success');
    assert.deepEqual(response.convertedObjects[0].spec, {
      replicas: 3,
      a: 9007199254740993n,
      b: 9223372036854775807n,
      c: -9223372036854775808n,
      list: [9223372036854775807n, 1.5, BIG[0]],
      small: 9007199254740991,
      converted: true,
    });
    assert.equal(response.convertedObjects[1].spec.n, -9223372036854775808n);
    // The converter sees the exact value, as a bigint.
    assert.deepEqual(seen, [9223372036854775807n, undefined]);
  });

  it('reports converted objects with their exact values through the test kit', async () => {
    const w = defineConversionWebhook({
      name: 'int64-kit',
      crd: 'widgets.example.com',
      convert: (o, to) => ({ ...o, apiVersion: to }),
    });
    const result = await invoke(w, parseJson(conversionBody([widget('kit', spec)])) as never);
    assert.equal(result.status, 'Success');
    assert.equal((result.convertedObjects[0] as any).spec.b, 9223372036854775807n);
  });

  it('writes a bigint the converter sets with its exact digits', async () => {
    const w = defineConversionWebhook({
      name: 'int64-set',
      crd: 'widgets.example.com',
      convert: (o, to) => ({ ...o, apiVersion: to, spec: { next: (o as any).spec.b - 1n } }),
    });
    const raw = await invokeRaw(w, conversionBody([widget('set', spec)]));
    assert.match(raw.body, /"spec":\{"next":9223372036854775806\}/);
  });
});

describe('int64 numbers through mutation', () => {
  it('patches around them without rewriting them', async () => {
    const w = defineMutatingWebhook<KubeObject>({
      name: 'int64-mutate',
      rules: EVERY_REQUEST,
      mutate: (o) => void ((o.metadata!.labels ??= {}).seen = 'yes'),
    });
    const raw = await invokeRaw(w, admissionBody(widget('m', spec)));
    assert.equal(patchText(raw), '[{"op":"add","path":"/metadata/labels","value":{"seen":"yes"}}]');
  });

  it('patches a changed one with exact digits, and leaves an unchanged copy alone', async () => {
    const w = defineMutatingWebhook<KubeObject & { spec?: any }>({
      name: 'int64-change',
      rules: EVERY_REQUEST,
      mutate: (o) => {
        o.spec = structuredClone(o.spec); // a copy with the same values changes nothing
        // An odd number past 2^53: a double cannot hold it (it would be written ...808).
        o.spec.b = o.spec.b - 2n;
      },
    });
    const raw = await invokeRaw(w, admissionBody(widget('c', spec)));
    assert.equal(patchText(raw), '[{"op":"replace","path":"/spec/b","value":9223372036854775805}]');
    const result = await invoke(w, parseJson(admissionBody(widget('c', spec))) as never);
    assert.equal((result.object as any).spec.a, 9007199254740993n);
    assert.equal((result.object as any).spec.b, 9223372036854775805n);
  });

  it('checks raw patches on objects that hold them', async () => {
    const w = defineMutatingWebhook<KubeObject>({
      name: 'int64-patched',
      rules: EVERY_REQUEST,
      mutate: () => patched([{ op: 'replace', path: '/spec/b', value: 9223372036854775806n as never }]),
    });
    const raw = await invokeRaw(w, admissionBody(widget('p', spec)));
    assert.equal(patchText(raw), '[{"op":"replace","path":"/spec/b","value":9223372036854775806}]');
  });

  it('checks a raw test operation against the exact value, as the API server compares the numbers written', () => {
    const original = parseJson(widget('t', spec)) as object;
    const test = (path: string, value: unknown) => checkPatch(original, [{ op: 'test', path, value: value as never }]);
    assert.equal(test('/spec/b', 9223372036854775807n), undefined);
    // Differs only past 2^53: both would be the same double.
    assert.match(test('/spec/b', 9223372036854775806n) ?? '', /TEST_OPERATION_FAILED/);
    assert.match(test('/spec/c', -9223372036854775807n) ?? '', /TEST_OPERATION_FAILED/);
    assert.match(test('/spec/list', [9223372036854775806n, 1.5, BIG[0]]) ?? '', /TEST_OPERATION_FAILED/);
    assert.equal(test('/spec/list', [9223372036854775807n, 1.5, BIG[0]]), undefined);
    // A number is written as JSON.stringify writes it: 9223372036854775807 is the double ...808.
    assert.match(test('/spec/b', 9223372036854775807) ?? '', /TEST_OPERATION_FAILED/);
    assert.equal(test('/spec/a', 9007199254740993n), undefined);
    assert.equal(
      checkPatch({ n: 9007199254740994n, s: 3 }, [
        { op: 'test', path: '/n', value: 9007199254740994 },
        { op: 'test', path: '/s', value: 3n as never },
      ]),
      undefined,
    );
    assert.match(
      checkPatch({ n: 9007199254740994n }, [{ op: 'test', path: '/n', value: `${9007199254740994n}` }]) ?? '',
      /TEST_OPERATION_FAILED/,
    );
  });

  it('refuses a raw patch whose test fails only past 2^53, and sends one whose test holds', async () => {
    const webhook = (value: bigint) =>
      defineMutatingWebhook<KubeObject>({
        name: 'int64-test',
        rules: EVERY_REQUEST,
        failurePolicy: 'Fail',
        mutate: () =>
          patched([
            { op: 'test', path: '/spec/b', value: value as never },
            { op: 'replace', path: '/spec/replicas', value: 4 },
          ]),
      });
    const refused = JSON.parse(
      (await invokeRaw(webhook(9223372036854775806n), admissionBody(widget('t', spec)))).body,
    ).response;
    assert.equal(refused.allowed, false);
    assert.equal(refused.status.code, 500);
    const sent = await invokeRaw(webhook(9223372036854775807n), admissionBody(widget('t', spec)));
    assert.equal(
      patchText(sent),
      '[{"op":"test","path":"/spec/b","value":9223372036854775807},{"op":"replace","path":"/spec/replicas","value":4}]',
    );
  });

  it('shows validating functions the exact value', async () => {
    const w = defineValidatingWebhook<KubeObject & { spec?: any }>({
      name: 'int64-validate',
      rules: EVERY_REQUEST,
      validate: (r) => allow(`b=${r.object!.spec.b} ${typeof r.object!.spec.b}`),
    });
    const raw = await invokeRaw(w, admissionBody(widget('v', spec)));
    assert.deepEqual(JSON.parse(raw.body).response.warnings, ['b=9223372036854775807 bigint']);
  });
});

/**
 * What a value is once written and read back: a bigint in the safe range comes back as a
 * number, and a whole double beyond it (written in full below 1e21) as a bigint; -0 as 0.
 */
function expected(v: unknown): unknown {
  if (typeof v === 'bigint') return Number.isSafeInteger(Number(v)) ? Number(v) : v;
  if (typeof v === 'number')
    return Number.isInteger(v) && !Number.isSafeInteger(v) && Math.abs(v) < 1e21 ? BigInt(String(v)) : v === 0 ? 0 : v;
  if (Array.isArray(v)) return v.map(expected);
  if (typeof v === 'object' && v !== null) {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v))
      Object.defineProperty(out, k, { value: expected(x), enumerable: true, writable: true, configurable: true });
    return out;
  }
  return v;
}

/**
 * Strings and keys: any, or one that ends in backslashes or holds an escaped quote, where a
 * reader that miscounts escapes loses track of where a string ends.
 */
const anyText = (maxLength?: number) =>
  fc.oneof(fc.string(maxLength === undefined ? {} : { maxLength }), fc.constantFrom('\\', 'x\\\\', '\\"1'));

describe('parseJson and stringifyJson', () => {
  it('round-trip int64 values inside any JSON, digit for digit', () => {
    const int64 = fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n });
    const value = fc.letrec((tie) => ({
      node: fc.oneof(
        { depthSize: 'small' },
        int64,
        fc.double({ noNaN: true, noDefaultInfinity: true }),
        anyText(),
        fc.boolean(),
        fc.constant(null),
        fc.array(tie('node'), { maxLength: 4 }),
        fc.dictionary(anyText(4), tie('node'), { maxKeys: 4 }),
      ),
    })).node;
    fc.assert(
      fc.property(value, (v) => {
        const text = stringifyJson(v);
        assert.equal(stringifyJson(parseJson(text)), text);
        assert.deepEqual(parseJson(text), expected(v));
      }),
      { numRuns: FUZZ_RUNS },
    );
  });

  it('leave digits inside strings, escapes included, and floats as JSON.parse reads them', () => {
    const text = `{"s":"\\"${BIG[1]}\\\\","f":1.2345678901234567890,"e":12345678901234567e3,"n":${BIG[1]}}`;
    assert.deepEqual(parseJson(text), {
      s: `"${BIG[1]}\\`,
      f: 1.2345678901234567,
      e: 1.2345678901234567e19,
      n: 9223372036854775807n,
    });
  });

  it('give JSON.parse errors for invalid text, long numbers or not', () => {
    for (const bad of [`{"a":0${BIG[1]}}`, `{"a":${BIG[1]}`, `[${BIG[1]},]`]) {
      assert.throws(() => parseJson(bad), SyntaxError, bad);
    }
  });

  it('look for exact numbers outside strings only: string lookalikes take JSON.parse', () => {
    // Strings that look like the numbers the exact path is for: UUIDs (`7e4`), versions, doubles,
    // 16-digit runs, escaped quotes before them.
    const lookalike = fc.oneof(
      fc.uuid(),
      fc.constantFrom('1e5', '1.0', '2.5E1', '12345678901234567890', '\\"1.0', '\\', 'nginx:1.14.0', '10.0.0.1'),
      fc.string(),
    );
    const text = fc.array(lookalike, { maxLength: 6 }).map((parts) => parts.join(''));
    const plain = fc.letrec((tie) => ({
      node: fc.oneof(
        { depthSize: 'small' },
        text,
        fc.integer(),
        fc.boolean(),
        fc.constant(null),
        fc.array(tie('node'), { maxLength: 4 }),
        fc.dictionary(text, tie('node'), { maxKeys: 4 }),
      ),
    })).node;
    fc.assert(
      fc.property(plain, (v) => {
        const json = JSON.stringify(v);
        assert.equal(needsExactParse(json), false, json);
        assert.equal(needsExactParse(JSON.stringify(v, null, 2)), false, json);
      }),
      { numRuns: FUZZ_RUNS },
    );
    const uid = `{"uid":"0e4c7f6e-1e2d-4a1b-9e8f-7e6d5c4b3a21","kind":{"version":"v1.0"},"n":1}`;
    assert.equal(needsExactParse(uid), false);
  });

  it('read every number as the exact path reads it, big ints and whole doubles included', () => {
    const literal = fc.oneof(
      fc.bigInt({ min: -(2n ** 70n), max: 2n ** 70n }).map(String),
      fc.integer().map((n) => `${n}.0`),
      fc.integer({ min: 1, max: 99 }).map((n) => `${n}e${n % 5}`),
      fc.double({ noNaN: true, noDefaultInfinity: true }).map((n) => JSON.stringify(n)),
      fc.constantFrom('1.00000000000000001', '-0.0', '5E-1', '0.5', '1e400'),
    );
    const node = fc.letrec((tie) => ({
      node: fc.oneof(
        { depthSize: 'small' },
        literal,
        fc.oneof(fc.uuid(), anyText()).map((s) => JSON.stringify(s)),
        fc.array(tie('node'), { maxLength: 4 }).map((items) => `[${items.join(',')}]`),
        fc
          .array(fc.tuple(anyText(4), tie('node')), { maxLength: 4 })
          .map((members) => `{${members.map(([k, v]) => `${JSON.stringify(k)}: ${v}`).join(',')}}`),
      ),
    })).node;
    fc.assert(
      fc.property(node, (json) => {
        const exact = parseJsonExactly(json);
        const read = parseJson(json);
        assert.deepEqual(read, exact, json);
        assert.deepEqual(wholeDoublesOf(read), wholeDoublesOf(exact), json);
        // The fast path is only ever taken where it reads the same as JSON.parse.
        if (!needsExactParse(json)) assert.deepEqual(exact, JSON.parse(json), json);
      }),
      { numRuns: FUZZ_RUNS },
    );
    for (const json of ['{"a":1.0}', '[1e3]', '{"s":"1e3","n":12345678901234567}', '{"a":"\\"","b":-2.0}'])
      assert.equal(needsExactParse(json), true, json);
  });
});

/** Every path to a whole double in a parsed value, for comparing two reads of one text. */
function wholeDoublesOf(value: unknown, path = '$'): string[] {
  if (typeof value !== 'object' || value === null) return [];
  const here = [...(wholeDoubleKeys(value) ?? [])].map((k) => `${path}.${k}`);
  return here.concat(...Object.entries(value).map(([k, v]) => wholeDoublesOf(v, `${path}.${k}`)));
}
