import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import {
  allow,
  ConversionError,
  defineConversionWebhook,
  defineMutatingWebhook,
  defineValidatingWebhook,
  hubAndSpoke,
  type AdmissionWebhook,
  type WebhookHandler,
} from '../../../lib/index.ts';
import { expectConformance } from '../../../lib/testing/index.ts';
import { conformanceChecks, readCrds } from '../../../lib/testing/conformance.ts';
import { kindOf } from '../../../lib/harness/reviews.ts';
import { sampleFromSchema } from '../../../lib/testing/conformance.ts';
import { FIXTURE_PROJECT } from '../../helpers.ts';
import { crontab, podDefaults, podPolicy } from '../../fixtures/functions.ts';

const configMaps = [
  {
    operations: ['CREATE' as const, 'UPDATE' as const],
    apiGroups: [''],
    apiVersions: ['v1'],
    resources: ['configmaps'],
  },
];
const scratch = mkdtempSync(join(FIXTURE_PROJECT, '..', '.klw-test-conformance-'));
after(() => rmSync(scratch, { recursive: true, force: true }));

/** A webhook whose answers are rewritten by `change` (a webhook that breaks the API server's rules). */
function tampered(webhook: AdmissionWebhook, change: (body: any) => void): AdmissionWebhook {
  const wrap =
    (handler: WebhookHandler): WebhookHandler =>
    async (event, context) => {
      const result = await handler(event, context);
      const body = JSON.parse(result.body);
      change(body);
      return { ...result, body: JSON.stringify(body) };
    };
  return { ...webhook, handler: wrap(webhook.handler), withOptions: (options) => wrap(webhook.withOptions(options)) };
}

describe('conformance checks', () => {
  it('pass for well-behaved validating, mutating and conversion webhooks', async () => {
    for (const webhook of [podPolicy, podDefaults, crontab])
      await expectConformance(webhook, { root: FIXTURE_PROJECT });
    assert.deepEqual(
      conformanceChecks(podDefaults).map((c) => c.name),
      [
        'answers v1 and v1beta1 reviews of what its rules match, as the API server requires',
        'is idempotent: a second call on its own result patches nothing',
      ],
    );
  });

  it('fail when the uid is not echoed, naming the request', async () => {
    const base = defineValidatingWebhook({ name: 'liar', rules: configMaps, validate: () => allow() });
    const liar = tampered(base, (body) => (body.response.uid = 'someone-else'));
    await assert.rejects(
      expectConformance(liar),
      /liar: CREATE core\/v1 configmaps \(admission\.k8s\.io\/v1\): .*uid must echo the request uid/,
    );
    // Every failure says how to send an object of one's own.
    await assert.rejects(
      expectConformance(liar),
      /describeConformance\(\{ samples: \{ "liar": \{ apiVersion, kind, metadata, \.\.\. \} \} \}\)/,
    );
  });

  it('fail when a v1beta1 answer comes back as v1', async () => {
    const base = defineValidatingWebhook({ name: 'upgrader', rules: configMaps, validate: () => allow() });
    const upgrader = tampered(base, (body) => (body.apiVersion = 'admission.k8s.io/v1'));
    await assert.rejects(expectConformance(upgrader), /admission\.k8s\.io\/v1beta1\): .*apiVersion must match/);
  });

  it('fail for a mutation that is not idempotent', async () => {
    const counter = defineMutatingWebhook({
      name: 'counter',
      rules: configMaps,
      mutate: (object) => {
        const annotations = ((object.metadata ??= {}).annotations ??= {});
        annotations.count = String(Number(annotations.count ?? 0) + 1);
      },
    });
    await assert.rejects(expectConformance(counter), /counter: CREATE configmaps: not idempotent/);
  });

  it('fail for rules that match nothing with an object', async () => {
    const connectOnly = defineValidatingWebhook({
      name: 'exec-only',
      rules: [{ operations: ['CONNECT'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods/exec'] }],
      validate: () => allow(),
    });
    await assert.rejects(expectConformance(connectOnly), /exec-only: its rules match no CREATE, UPDATE or DELETE/);
  });

  it('fail for a conversion that loses a field on the way back', async () => {
    const lossy = defineConversionWebhook({
      name: 'lossy',
      crd: 'widgets.example.com',
      versions: ['v1alpha1', 'v1'],
      convert: hubAndSpoke({
        hub: 'v1',
        spokes: {
          v1alpha1: {
            toHub: (o) => o,
            fromHub: ({ metadata, ...rest }) => ({ ...rest, metadata: { ...metadata, labels: { lost: 'no' } } }),
          },
        },
      }),
    });
    await assert.rejects(expectConformance(lossy), /changed the object/);
  });

  it('fail for a conversion that declares no versions, saying how to declare them', async () => {
    const vague = defineConversionWebhook({ name: 'vague', crd: 'widgets.example.com', convert: (o) => o });
    await assert.rejects(expectConformance(vague), /vague: declares no versions: give the registration `versions`/);
  });

  it('fail when the CRD manifest is missing', async () => {
    const missing = defineConversionWebhook({
      name: 'missing',
      crd: 'widgets.example.com',
      crdManifest: 'functions/missing/crd.yaml',
      convert: (o) => o,
    });
    await assert.rejects(
      expectConformance(missing, { root: scratch }),
      /missing: crdManifest functions\/missing\/crd\.yaml not found/,
    );
  });

  it('read versions and kind from the CRD manifest', async () => {
    writeFileSync(
      join(scratch, 'crd.yaml'),
      'apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nspec:\n  names: { kind: Gadget }\n  versions: [{ name: v2, served: true }, { name: v3, served: true }, { name: v0, served: false }]\n',
    );
    const seen: string[] = [];
    const recorder = defineConversionWebhook({
      name: 'recorder',
      crd: 'gadgets.example.com',
      crdManifest: 'crd.yaml',
      convert: (o, to) => {
        seen.push(`${o.kind} ${o.apiVersion}->${to}`);
        return { ...o, apiVersion: to };
      },
    });
    await expectConformance(recorder, { root: scratch });
    assert.ok(seen.includes('Gadget example.com/v2->example.com/v3'), seen.join(', '));
    assert.ok(!seen.some((s) => s.includes('/v0')), 'a version no longer served is not converted to');
  });

  it('send the sample given instead of the generated object', async () => {
    const seen: unknown[] = [];
    const recorder = defineValidatingWebhook({
      name: 'recorder',
      rules: configMaps,
      validate: (request) => (seen.push(request.object), allow()),
    });
    await expectConformance(recorder, {
      sample: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'mine', namespace: 'team' } },
    });
    assert.deepEqual(seen[0], { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'mine', namespace: 'team' } });
  });
});

describe('conformance of a conversion function that refuses what it cannot parse', () => {
  // v1alpha1 keeps `size` as "<w>x<h>", v1 as { width, height }: a size that does not parse is refused, rightly.
  const crd = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: { name: boards.example.com }
spec:
  group: example.com
  names: { kind: Board, plural: boards }
  scope: Namespaced
  versions:
  - name: v1alpha1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        required: [size]
        properties:
          size: { type: string }
  - name: v1
    served: true
    storage: false
    schema:
      openAPIV3Schema:
        type: object
        required: [size]
        properties:
          size: { type: object, required: [width, height], properties: { width: { type: integer, minimum: 1 }, height: { type: integer, minimum: 1 } } }
`;
  const seen: unknown[] = [];
  const boards = defineConversionWebhook({
    name: 'boards',
    crd: 'boards.example.com',
    crdManifest: 'boards-crd.yaml',
    convert: hubAndSpoke({
      hub: 'v1',
      spokes: {
        v1alpha1: {
          toHub: ({ size, ...rest }) => {
            seen.push(size);
            const match = /^(\d+)x(\d+)$/.exec(String(size));
            if (!match) throw new ConversionError(`size ${JSON.stringify(size)} is not <width>x<height>`);
            return { ...rest, size: { width: Number(match[1]), height: Number(match[2]) } };
          },
          fromHub: ({ size, ...rest }) => ({ ...rest, size: `${(size as any).width}x${(size as any).height}` }),
        },
      },
    }),
  });

  it('passes the protocol check on a refused generated object, and asks for a sample to round-trip', async () => {
    writeFileSync(join(scratch, 'boards-crd.yaml'), crd);
    seen.length = 0;
    const skipped = await expectConformance(boards, { root: scratch });
    assert.ok(
      seen.includes('conformance'),
      `the generated object carries the required size of the schema's type: ${JSON.stringify(seen)}`,
    );
    assert.equal(skipped.length, 1, 'only the round trip needs a sample');
    assert.match(
      skipped[0]!,
      /^boards: the generated Board at example\.com\/v1alpha1 could not be converted to example\.com\/v1 \("size \\"conformance\\" is not <width>x<height>"\), so the round trip needs an object it converts/,
    );
    assert.match(skipped[0]!, /describeConformance\(\{ samples: \{ "boards": /);
  });

  it('round-trips the sample given, and fails naming the sample hint when the function refuses it', async () => {
    writeFileSync(join(scratch, 'boards-crd.yaml'), crd);
    const sample = {
      apiVersion: 'example.com/v1alpha1',
      kind: 'Board',
      metadata: { name: 'b', namespace: 'default' },
      size: '3x4',
    };
    assert.deepEqual(await expectConformance(boards, { root: scratch, sample }), []);
    await assert.rejects(
      expectConformance(boards, { root: scratch, sample: { ...sample, size: 'big' } }),
      (err: Error) => {
        assert.match(
          err.message,
          /boards: example\.com\/v1alpha1 → example\.com\/v1 \(apiextensions\.k8s\.io\/v1\) failed: size "big" is not <width>x<height>/,
        );
        assert.match(err.message, /describeConformance\(\{ samples/);
        return true;
      },
    );
  });

  it('still fails a refusal that breaks the protocol', async () => {
    writeFileSync(join(scratch, 'boards-crd.yaml'), crd);
    const wrap =
      (handler: WebhookHandler): WebhookHandler =>
      async (event, context) => {
        const result = await handler(event, context);
        const body = JSON.parse(result.body);
        body.response.uid = 'someone-else';
        return { ...result, body: JSON.stringify(body) };
      };
    const liar = { ...boards, handler: wrap(boards.handler), withOptions: (o: never) => wrap(boards.withOptions(o)) };
    await assert.rejects(expectConformance(liar, { root: scratch }), /uid must echo the request uid/);
  });
});

describe('conformance of an admission function on a CRD the project ships', () => {
  it("sends objects of the CRD's kind, scope, version and schema", async () => {
    const crd = {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      spec: {
        group: 'example.com',
        scope: 'Cluster',
        names: { plural: 'gadgets', kind: 'Gadget' },
        versions: [
          { name: 'v1alpha1', served: false },
          {
            name: 'v2',
            served: true,
            schema: {
              openAPIV3Schema: {
                type: 'object',
                required: ['spec'],
                properties: {
                  spec: {
                    type: 'object',
                    required: ['color'],
                    properties: { color: { type: 'string', enum: ['red', 'blue'] } },
                  },
                },
              },
            },
          },
        ],
      },
    };
    const seen: unknown[] = [];
    const gadgets = defineValidatingWebhook({
      name: 'gadgets',
      rules: [{ operations: ['CREATE'], apiGroups: ['example.com'], apiVersions: ['*'], resources: ['gadgets'] }],
      validate: (request) => (seen.push(request.object), allow()),
    });
    await expectConformance(gadgets, { crds: [crd] });
    assert.deepEqual(seen[0], {
      spec: { color: 'red' },
      apiVersion: 'example.com/v2',
      kind: 'Gadget',
      metadata: { name: 'conformance', uid: '5f7b1d5e-0000-4000-8000-000000000001' },
    });
    seen.length = 0;
    await expectConformance(gadgets);
    assert.deepEqual((seen[0] as any).kind, 'Gadget', 'without the CRD: the kind guessed from the plural');
    assert.equal((seen[0] as any).spec, undefined);
  });
});

describe('the CRDs read from a manifest file', () => {
  it('are the CustomResourceDefinitions among its documents; a file not YAML or not there gives none', async () => {
    const shipped = await readCrds(join(FIXTURE_PROJECT, 'functions/crontab-conversion/crd.yaml'));
    assert.deepEqual(
      shipped.map((c: any) => c.metadata.name),
      ['crontabs.example.com'],
    );
    const mixed = join(scratch, 'mixed.yaml');
    writeFileSync(
      mixed,
      'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n---\n---\n' +
        'apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: b.example.com}\n',
    );
    assert.deepEqual(
      (await readCrds(mixed)).map((c: any) => c.metadata.name),
      ['b.example.com'],
    );
    const broken = join(scratch, 'broken.yaml');
    writeFileSync(broken, 'kind: [unclosed\n');
    assert.deepEqual(await readCrds(broken), []);
    assert.deepEqual(await readCrds(join(scratch, 'missing.yaml')), []);
  });

  it('give an admission function on the shipped CRD objects of its kind, group and served version', async () => {
    const crds = await readCrds(join(FIXTURE_PROJECT, 'functions/crontab-conversion/crd.yaml'));
    const seen: any[] = [];
    const crontabs = defineValidatingWebhook({
      name: 'crontabs',
      rules: [{ operations: ['CREATE'], apiGroups: ['example.com'], apiVersions: ['*'], resources: ['crontabs'] }],
      validate: (request) => (seen.push(request.object), allow()),
    });
    await expectConformance(crontabs, { crds });
    assert.equal(seen[0].kind, 'CronTab');
    assert.match(seen[0].apiVersion, /^example\.com\/v1(beta1)?$/);
    assert.ok(seen[0].metadata.namespace, 'CronTab is namespaced: the sample has a namespace');
  });
});

describe('samples generated from a CRD schema', () => {
  it('hold every required field, of its type, enum, format and bounds', () => {
    const schema = {
      type: 'object',
      required: ['spec', 'kindOf'],
      properties: {
        optional: { type: 'string' },
        kindOf: { type: 'string', enum: ['Blue', 'Green'] },
        spec: {
          type: 'object',
          required: ['when', 'replicas', 'ratio', 'on', 'tags', 'port', 'labels', 'id', 'short', 'long', 'ip'],
          properties: {
            when: { type: 'string', format: 'date-time' },
            replicas: { type: 'integer', minimum: 3 },
            ratio: { type: 'number', maximum: 0.5 },
            on: { type: 'boolean' },
            tags: { type: 'array', minItems: 2, items: { type: 'string' } },
            port: { 'x-kubernetes-int-or-string': true },
            labels: { type: 'object', additionalProperties: { type: 'string' } },
            id: { type: 'string', format: 'uuid' },
            short: { type: 'string', maxLength: 3 },
            long: { type: 'string', minLength: 20 },
            ip: { type: 'string', format: 'ipv4', default: '10.0.0.1' },
          },
        },
      },
    };
    const sample = sampleFromSchema(schema) as any;
    assert.deepEqual(Object.keys(sample).sort(), ['kindOf', 'spec'], 'only required fields');
    assert.equal(sample.kindOf, 'Blue');
    assert.equal(sample.spec.when, '2020-01-01T00:00:00Z');
    assert.equal(sample.spec.replicas, 3);
    assert.equal(sample.spec.ratio, 0.5);
    assert.equal(sample.spec.on, false);
    assert.deepEqual(sample.spec.tags, ['conformance', 'conformance1']);
    assert.equal(sample.spec.port, 1);
    assert.deepEqual(sample.spec.labels, {});
    assert.match(sample.spec.id, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    assert.equal(sample.spec.short, 'con');
    assert.equal(sample.spec.long.length, 20);
    assert.equal(sample.spec.ip, '10.0.0.1', 'the default');
  });

  it('stop at a bounded depth on a hostile schema, and ignore what is not a schema', () => {
    let deep: Record<string, unknown> = { type: 'string' };
    for (let i = 0; i < 10_000; i++) deep = { type: 'object', required: ['x'], properties: { x: deep } };
    let sample = sampleFromSchema(deep) as any;
    let depth = 0;
    while (sample && typeof sample === 'object' && 'x' in sample) (sample = sample.x), depth++;
    assert.ok(depth <= 40, `${depth} levels`);
    for (const junk of [
      null,
      42,
      'object',
      [],
      { type: 'object', required: 'spec' },
      { type: 'array', minItems: 1e9, items: { type: 'string' } },
    ]) {
      const value = sampleFromSchema(junk);
      assert.ok(value === undefined || JSON.stringify(value).length < 10_000, JSON.stringify(junk));
    }
  });
});

describe('conversion registration versions', () => {
  it('are kept, and must be distinct version names', () => {
    assert.deepEqual(
      defineConversionWebhook({ name: 'c', crd: 'as.example.com', versions: ['v1beta1', 'v1'], convert: (o) => o })
        .registration.versions,
      ['v1beta1', 'v1'],
    );
    for (const versions of [[], ['v1', 'v1'], ['V1']]) {
      assert.throws(
        () => defineConversionWebhook({ name: 'c', crd: 'as.example.com', versions, convert: (o) => o }),
        /versions must be distinct version names/,
      );
    }
  });
});

describe('conversion registration crd', () => {
  it("must be the CRD's name, <plural>.<group> with a dotted group, naming the function and the fix", () => {
    const define = (crd: unknown) => defineConversionWebhook({ name: 'c', crd: crd as string, convert: (o) => o });
    assert.equal(define('crontabs.stable.example.com').registration.crd, 'crontabs.stable.example.com');
    // Missing (JavaScript, a cast, a misspelled key), a bare plural, a dotless group, a kind, a URL.
    for (const crd of [undefined, '', 'crontabs', 'crontabs.example', 'CronTab.example.com', 'https://a.b.c', 42]) {
      assert.throws(() => define(crd), {
        name: 'TypeError',
        message:
          'function c: crd must name the CustomResourceDefinition it converts, <plural>.<group> ' +
          `(crontabs.stable.example.com, its metadata.name), got ${JSON.stringify(crd)}`,
      });
    }
  });
});

describe('kindOf', () => {
  it('names the kind of a plural resource', () => {
    assert.deepEqual(['pods', 'configmaps', 'networkpolicies', 'widgets', 'policies', 'classes'].map(kindOf), [
      'Pod',
      'ConfigMap',
      'NetworkPolicy',
      'Widget',
      'Policy',
      'Class',
    ]);
  });
});
