import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { allow, defineConversionWebhook, defineMutatingWebhook, defineValidatingWebhook, hubAndSpoke, type AdmissionWebhook, type WebhookHandler } from '../../lib/index.ts';
import { conformanceChecks, expectConformance, kindOf } from '../../lib/testing/index.ts';
import { FIXTURE_PROJECT } from '../helpers.ts';
import crontab from '../fixtures/project/functions/crontab-conversion/index.ts';
import podDefaults from '../fixtures/project/functions/pod-defaults/index.ts';
import podPolicy from '../fixtures/project/functions/pod-policy/index.ts';

const configMaps = [{ operations: ['CREATE' as const, 'UPDATE' as const], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'] }];
const scratch = mkdtempSync(join(FIXTURE_PROJECT, '..', '.conformance-'));
after(() => rmSync(scratch, { recursive: true, force: true }));

/** A webhook whose answers are rewritten by `change` (a webhook that breaks the API server's rules). */
function tampered(webhook: AdmissionWebhook, change: (body: any) => void): AdmissionWebhook {
  const wrap = (handler: WebhookHandler): WebhookHandler => async (event, context) => {
    const result = await handler(event, context);
    const body = JSON.parse(result.body);
    change(body);
    return { ...result, body: JSON.stringify(body) };
  };
  return { ...webhook, handler: wrap(webhook.handler), withOptions: (options) => wrap(webhook.withOptions(options)) };
}

describe('conformance checks', () => {
  it('pass for well-behaved validating, mutating and conversion webhooks', async () => {
    for (const webhook of [podPolicy, podDefaults, crontab]) await expectConformance(webhook, { root: FIXTURE_PROJECT });
    assert.deepEqual(conformanceChecks(podDefaults).map((c) => c.name), [
      'answers v1 and v1beta1 reviews of what its rules match, as the API server requires',
      'is idempotent: a second call on its own result patches nothing',
    ]);
  });

  it('fail when the uid is not echoed, naming the request', async () => {
    const base = defineValidatingWebhook({ name: 'liar', rules: configMaps, validate: () => allow() });
    const liar = tampered(base, (body) => (body.response.uid = 'someone-else'));
    await assert.rejects(expectConformance(liar), /liar: CREATE core\/v1 configmaps \(admission\.k8s\.io\/v1\): .*uid must echo the request uid/);
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
    const connectOnly = defineValidatingWebhook({ name: 'exec-only', rules: [{ operations: ['CONNECT'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods/exec'] }], validate: () => allow() });
    await assert.rejects(expectConformance(connectOnly), /exec-only: its rules match no CREATE, UPDATE or DELETE/);
  });

  it('fail for a conversion that loses a field on the way back', async () => {
    const lossy = defineConversionWebhook({
      name: 'lossy',
      crd: 'widgets.example.com',
      versions: ['v1alpha1', 'v1'],
      convert: hubAndSpoke({ hub: 'v1', spokes: { v1alpha1: { toHub: (o) => o, fromHub: ({ metadata, ...rest }) => ({ ...rest, metadata: { ...metadata, labels: { lost: 'no' } } }) } } }),
    });
    await assert.rejects(expectConformance(lossy), /changed the object/);
  });

  it('fail for a conversion that declares no versions, saying how to declare them', async () => {
    const vague = defineConversionWebhook({ name: 'vague', crd: 'widgets.example.com', convert: (o) => o });
    await assert.rejects(expectConformance(vague), /vague: declares no versions: give the registration `versions`/);
  });

  it('fail when the CRD manifest is missing', async () => {
    const missing = defineConversionWebhook({ name: 'missing', crd: 'widgets.example.com', crdManifest: 'functions/missing/crd.yaml', convert: (o) => o });
    await assert.rejects(expectConformance(missing, { root: scratch }), /missing: crdManifest functions\/missing\/crd\.yaml not found/);
  });

  it('read versions and kind from the CRD manifest', async () => {
    writeFileSync(join(scratch, 'crd.yaml'), 'apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nspec:\n  names: { kind: Gadget }\n  versions: [{ name: v2, served: true }, { name: v3, served: true }, { name: v0, served: false }]\n');
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
    const recorder = defineValidatingWebhook({ name: 'recorder', rules: configMaps, validate: (request) => (seen.push(request.object), allow()) });
    await expectConformance(recorder, { sample: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'mine', namespace: 'team' } } });
    assert.deepEqual(seen[0], { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'mine', namespace: 'team' } });
  });
});

describe('conversion registration versions', () => {
  it('are kept, and must be distinct version names', () => {
    assert.deepEqual(defineConversionWebhook({ name: 'c', crd: 'a.b', versions: ['v1beta1', 'v1'], convert: (o) => o }).registration.versions, ['v1beta1', 'v1']);
    for (const versions of [[], ['v1', 'v1'], ['V1']]) {
      assert.throws(() => defineConversionWebhook({ name: 'c', crd: 'a.b', versions, convert: (o) => o }), /versions must be distinct version names/);
    }
  });
});

describe('kindOf', () => {
  it('names the kind of a plural resource', () => {
    assert.deepEqual(['pods', 'configmaps', 'networkpolicies', 'widgets', 'policies', 'classes'].map(kindOf), ['Pod', 'ConfigMap', 'NetworkPolicy', 'Widget', 'Policy', 'Class']);
  });
});
