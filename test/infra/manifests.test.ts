import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { checkWebhookUrl, functionUrl, generateManifests } from '../../infra/manifests.ts';
import { loadFunctions } from '../../infra/functions.ts';
import { FIXTURE_PROJECT } from '../helpers.ts';

const root = FIXTURE_PROJECT;
const registrations = (await loadFunctions(root)).map((f) => f.registration);
const CA = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';

describe('klw manifests', () => {
  const { documents, crdPatches } = generateManifests(root, registrations, {
    baseUrl: 'https://hooks.example.com:8443/prod/',
    caBundlePem: CA,
  });
  const byKind = (kind: string) => documents.find((d) => d.kind === kind) as Record<string, any>;

  it('writes one configuration per kind with a webhook per function, each at <base>/<name>', () => {
    assert.deepEqual(
      documents.map((d) => d.kind),
      ['CustomResourceDefinition', 'MutatingWebhookConfiguration', 'ValidatingWebhookConfiguration'],
    );
    const mutating = byKind('MutatingWebhookConfiguration');
    const validating = byKind('ValidatingWebhookConfiguration');
    assert.equal(mutating.apiVersion, 'admissionregistration.k8s.io/v1');
    assert.deepEqual(
      mutating.webhooks.map((w: any) => w.clientConfig.url),
      ['https://hooks.example.com:8443/prod/pod-defaults'],
    );
    assert.deepEqual(
      validating.webhooks.map((w: any) => w.clientConfig.url),
      ['https://hooks.example.com:8443/prod/pod-policy'],
    );
    assert.equal(validating.webhooks[0].clientConfig.caBundle, Buffer.from(CA).toString('base64'));
  });

  it('applies the good-practice defaults', () => {
    const [mutating] = byKind('MutatingWebhookConfiguration').webhooks;
    const [validating] = byKind('ValidatingWebhookConfiguration').webhooks;
    for (const w of [mutating, validating]) {
      assert.deepEqual(w.admissionReviewVersions, ['v1', 'v1beta1']);
      assert.equal(w.sideEffects, 'None');
      assert.equal(w.timeoutSeconds, 5);
      assert.equal(w.matchPolicy, 'Equivalent');
      assert.deepEqual(w.namespaceSelector, {
        matchExpressions: [
          { key: 'kubernetes.io/metadata.name', operator: 'NotIn', values: ['kube-system', 'kube-node-lease'] },
        ],
      });
      assert.equal('matchConditions' in w, false);
    }
    assert.equal(mutating.failurePolicy, 'Ignore');
    assert.equal(mutating.reinvocationPolicy, 'IfNeeded');
    assert.equal(validating.failurePolicy, 'Fail');
    assert.equal('reinvocationPolicy' in validating, false);
  });

  it('merges the conversion into the shipped CRD and offers it as a patch', () => {
    const crd = byKind('CustomResourceDefinition');
    const expected = {
      strategy: 'Webhook',
      webhook: {
        conversionReviewVersions: ['v1', 'v1beta1'],
        clientConfig: {
          url: 'https://hooks.example.com:8443/prod/crontab-conversion',
          caBundle: Buffer.from(CA).toString('base64'),
        },
      },
    };
    assert.deepEqual(crd.spec.conversion, expected);
    assert.deepEqual(
      crd.spec.versions.map((v: any) => v.name),
      ['v1beta1', 'v1'],
    );
    assert.deepEqual(crdPatches, [{ crd: 'crontabs.example.com', patch: { spec: { conversion: expected } } }]);
  });

  it('takes one URL per function from a function URL list', () => {
    const urls = Object.fromEntries(
      registrations.map((r) => [r.name, `https://${r.name}.lambda-url.us-east-1.on.aws/`]),
    );
    const set = generateManifests(root, registrations, { functionUrls: urls });
    const validating = set.documents.find((d) => d.kind === 'ValidatingWebhookConfiguration') as any;
    assert.equal(validating.webhooks[0].clientConfig.url, 'https://pod-policy.lambda-url.us-east-1.on.aws/');
    assert.equal(validating.webhooks[0].clientConfig.caBundle, undefined);
    assert.throws(() => generateManifests(root, registrations, { functionUrls: {} }), /no URL for function/);
  });

  it('checks URLs by the API server rules, naming the rule', () => {
    assert.equal(checkWebhookUrl('https://a.example.com/x'), undefined);
    assert.match(checkWebhookUrl('http://a.example.com')!, /scheme must be https/);
    assert.match(checkWebhookUrl('https://user:pw@a.example.com')!, /user information/);
    assert.match(checkWebhookUrl('https://a.example.com/x?timeout=1')!, /query parameters/);
    assert.match(checkWebhookUrl('https://a.example.com/x#frag')!, /fragments/);
    assert.match(checkWebhookUrl('https://a.example.com:x')!, /not a valid URL/);
    assert.throws(() => functionUrl('f', { baseUrl: 'https://h.example.com/?x=1' }), /function f: .*query parameters/);
    assert.throws(() => functionUrl('f', {}), /--base-url/);
  });
});
