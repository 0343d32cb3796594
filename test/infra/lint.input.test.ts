import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { stringify } from 'yaml';
import { lintFiles } from '../../infra/lint.ts';
import { stringAt } from '../../infra/json.ts';
import { parseDocuments } from '../../infra/output.ts';
import { runKlw } from '../helpers.ts';

const dir = mkdtempSync(join(tmpdir(), 'klw-lint-input-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const webhook = {
  name: 'good.webhooks.example.com',
  clientConfig: { url: 'https://hooks.example.com/good' },
  rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'], scope: 'Namespaced' }],
  namespaceSelector: {
    matchExpressions: [{ key: 'kubernetes.io/metadata.name', operator: 'NotIn', values: ['kube-system'] }],
  },
  sideEffects: 'None',
  timeoutSeconds: 5,
  admissionReviewVersions: ['v1'],
};
const configuration = (name: string, hook: Record<string, unknown> = webhook) => ({
  apiVersion: 'admissionregistration.k8s.io/v1',
  kind: 'ValidatingWebhookConfiguration',
  metadata: { name },
  webhooks: [hook],
});
const file = (name: string, text: string) => {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
};

/** Runs `klw lint <files>`; returns the exit code and what went to stderr. */
const lint = (...files: string[]) => runKlw('lint', ...files);

describe('klw lint: what it cannot read is an error naming the file', () => {
  const unreadable: Array<[string, string, string, RegExp]> = [
    ['broken YAML', 'broken.yaml', 'kind: [ValidatingWebhookConfiguration\nwebhooks: {', /not valid YAML or JSON/],
    ['broken JSON', 'broken.json', '{"apiVersion": "v1", "kind": ', /not valid YAML or JSON/],
    ['random text', 'notes.txt', 'these are just some words, not manifests', /not a Kubernetes object .*got string/],
    ['an empty file', 'empty.yaml', '', /holds no Kubernetes objects/],
    ['only comments and separators', 'comments.yaml', '# nothing here\n---\n---\n', /holds no Kubernetes objects/],
    [
      'package.json',
      'package.json',
      JSON.stringify({ name: 'x', version: '1.0.0', dependencies: {} }, null, 2),
      /not a Kubernetes object: no apiVersion or kind/,
    ],
    [
      'a document without kind',
      'nokind.yaml',
      `${stringify(configuration('a'))}---\napiVersion: v1\nmetadata: {name: x}\n`,
      /document 2: not a Kubernetes object: no kind/,
    ],
    ['a document without apiVersion', 'noversion.yaml', 'kind: ConfigMap\nmetadata: {name: x}\n', /no apiVersion/],
    ['a list of scalars', 'list.yaml', '- a\n- b\n', /got a list/],
    [
      'a List with a bad item',
      'badlist.json',
      JSON.stringify({ apiVersion: 'v1', kind: 'List', items: [configuration('a'), 42] }),
      /items\[1\]: not a Kubernetes object .*got number 42/,
    ],
  ];
  for (const [what, name, text, reason] of unreadable) {
    it(what, async () => {
      const path = file(name, text);
      const { code, stderr } = await lint(path);
      assert.equal(code, 1, stderr);
      assert.match(stderr, new RegExp(`^error unreadable ${path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: `, 'm'));
      assert.match(stderr, reason);
      assert.doesNotMatch(stderr, /no findings/);
    });
  }

  it('a missing file and a directory', async () => {
    mkdirSync(join(dir, 'adir'), { recursive: true });
    const findings = lintFiles([join(dir, 'missing.yaml'), join(dir, 'adir')]);
    assert.deepEqual(
      findings.map((f) => [f.rule, f.subject, f.message]),
      [
        ['unreadable', join(dir, 'missing.yaml'), 'not found'],
        ['unreadable', join(dir, 'adir'), 'is a directory'],
      ],
    );
  });

  it('reports every unreadable file, and still lints the readable ones', async () => {
    const bad = file(
      'bad-url.yaml',
      stringify(configuration('a', { ...webhook, clientConfig: { url: 'https:///prod' } })),
    );
    const empty = file('empty2.yaml', '');
    const { code, stderr } = await lint(bad, empty);
    assert.equal(code, 1);
    assert.match(stderr, /error client-config-url good\.webhooks\.example\.com: .*host must be provided/);
    assert.match(stderr, /error unreadable .*empty2\.yaml: holds no Kubernetes objects/);
  });
});

describe('klw lint: fields of the wrong type are errors, never a crash or a pass', () => {
  const cases: Array<[string, Record<string, unknown>, RegExp]> = [
    [
      'a null webhook',
      { ...configuration('a'), webhooks: [null] },
      /error shape ValidatingWebhookConfiguration a webhooks\[0\]: must be a mapping, got null/,
    ],
    [
      'webhooks as a string',
      { ...configuration('a'), webhooks: 'oops' },
      /error shape ValidatingWebhookConfiguration a: webhooks must be a list, got string/,
    ],
    [
      'clientConfig as a string',
      configuration('a', { ...webhook, clientConfig: 'https://x' }),
      /error shape good\.webhooks\.example\.com: clientConfig must be a mapping, got string/,
    ],
    ['a rule as a number', configuration('a', { ...webhook, rules: [7] }), /rules\[0\] must be a mapping, got number/],
    [
      'rule resources as a string',
      configuration('a', { ...webhook, rules: [{ ...webhook.rules[0], resources: 'pods' }] }),
      /rules\[0\]\.resources must be a list, got string/,
    ],
    [
      'a selector expression as a string',
      configuration('a', { ...webhook, namespaceSelector: { matchExpressions: ['x'] } }),
      /namespaceSelector\.matchExpressions\[0\] must be a mapping, got string/,
    ],
    [
      'timeoutSeconds as a string',
      configuration('a', { ...webhook, timeoutSeconds: '5' }),
      /timeoutSeconds must be a number, got string/,
    ],
    [
      'a CRD whose spec is a number',
      {
        apiVersion: 'apiextensions.k8s.io/v1',
        kind: 'CustomResourceDefinition',
        metadata: { name: 'crontabs.example.com' },
        spec: 5,
      },
      /error shape crontabs\.example\.com: spec must be a mapping, got number/,
    ],
    [
      'a CRD whose conversion webhook is a list',
      {
        apiVersion: 'apiextensions.k8s.io/v1',
        kind: 'CustomResourceDefinition',
        metadata: { name: 'c.example.com' },
        spec: { conversion: { strategy: 'Webhook', webhook: [] } },
      },
      /spec\.conversion\.webhook must be a mapping, got array/,
    ],
  ];
  for (const [what, doc, expected] of cases) {
    it(what, async () => {
      const { code, stderr } = await lint(file(`shape-${what.replace(/\W+/g, '-')}.yaml`, stringify(doc)));
      assert.equal(code, 1, stderr);
      assert.match(stderr, expected);
    });
  }

  it('a List whose items are not a list is unreadable', async () => {
    const path = file('items-map.json', JSON.stringify({ apiVersion: 'v1', kind: 'List', items: {} }));
    const { code, stderr } = await lint(path);
    assert.equal(code, 1, stderr);
    assert.match(stderr, /error unreadable .*items-map\.json: a List whose items are not a list, got object/);
  });
});

describe('klw lint: what it can read still passes', () => {
  it('multi-document YAML with a trailing separator', async () => {
    const path = file('multi.yaml', `${stringify(configuration('a'))}---\n${stringify(configuration('b'))}---\n`);
    assert.equal(
      parseDocuments(`${stringify(configuration('a'))}---\n${stringify(configuration('b'))}---\n`).length,
      2,
    );
    const { code, stderr } = await lint(path);
    assert.equal(code, 0, stderr);
    assert.match(stderr, /lint: no findings/);
  });

  it('a JSON List (what klw manifests --format json writes) and a typed list', async () => {
    const list = file(
      'list.json',
      JSON.stringify({ apiVersion: 'v1', kind: 'List', items: [configuration('a'), configuration('b')] }),
    );
    const typed = file(
      'typed.json',
      JSON.stringify({
        apiVersion: 'admissionregistration.k8s.io/v1',
        kind: 'ValidatingWebhookConfigurationList',
        items: [configuration('c')],
      }),
    );
    const { code, stderr } = await lint(list, typed);
    assert.equal(code, 0, stderr);
    assert.deepEqual(
      parseDocuments(JSON.stringify({ apiVersion: 'v1', kind: 'List', items: [configuration('a')] })).map((d) =>
        stringAt(d, 'metadata', 'name'),
      ),
      ['a'],
    );
  });

  it('objects lint does not check (a ConfigMap) are read, not refused', () => {
    assert.deepEqual(lintFiles([file('cm.yaml', 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n')]), []);
  });
});
