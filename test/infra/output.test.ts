import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parse, parseAllDocuments } from 'yaml';
import { renderDocuments, toKubeYaml } from '../../infra/output.ts';

describe('manifests as YAML that Kubernetes reads back as written', () => {
  // Strings YAML 1.1 (what kubectl and the API server parse) or Go's number syntax would not keep as strings.
  const tricky = [
    'on',
    'off',
    'yes',
    'no',
    'y',
    'n',
    'Y',
    'NO',
    'On',
    'true',
    'null',
    '~',
    '0o17',
    '0x1F',
    '1_000',
    '012',
    '.5',
    '+1',
    '2001-12-14',
    '12:30',
  ];

  it('quotes every string a YAML 1.1 reader would turn into something else', () => {
    const doc = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'x', labels: { on: 'on', '80': 'yes' } },
      data: Object.fromEntries(tricky.map((t, i) => [`k${i}`, t])),
    };
    const text = renderDocuments([doc], 'yaml');
    // Read back with YAML 1.1 rules, as go-yaml v2 does.
    assert.deepEqual(parse(text, { version: '1.1' }), doc);
    assert.deepEqual(parse(text), doc);
    for (const t of tricky) assert.match(text, new RegExp(`: "${t.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}"$`, 'm'), t);
    // Ordinary strings, numbers and booleans stay plain.
    assert.match(toKubeYaml({ a: 'plain', b: 1, c: true, d: 'a:b' }), /^a: plain\nb: 1\nc: true\nd: a:b\n$/);
  });

  it('multi-document output reads back document by document', () => {
    const docs = [
      { apiVersion: 'v1', kind: 'A', metadata: { name: 'a', labels: { x: 'on' } } },
      { apiVersion: 'v1', kind: 'B', metadata: { name: 'b' } },
    ];
    assert.deepEqual(
      parseAllDocuments(renderDocuments(docs, 'yaml'), { version: '1.1' }).map((d) => (d as any).toJS()),
      docs,
    );
  });
});
