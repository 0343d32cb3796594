// klw audit -o openreports: the audit as Report / ClusterReport objects (openreports.io/v1alpha1),
// each checked against the CRDs' schema in test/fixtures/openreports/crds.yaml as the API server
// checks a custom resource (types, enums, required fields; an unknown field refused, as
// kubectl's strict field validation refuses it).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';
import { parse } from 'yaml';
import type { AuditReport, AuditResult } from '../../../infra/audit/index.ts';
import { openReportResult, openReports } from '../../../infra/audit/openreports.ts';

const CRDS = parse(
  readFileSync(fileURLToPath(new URL('../../fixtures/openreports/crds.yaml', import.meta.url)), 'utf8'),
);
const schemaOf = (kind: string) =>
  CRDS.items.find((crd: any) => crd.spec.names.kind === kind).spec.versions[0].schema.openAPIV3Schema;

type Schema = {
  type?: string;
  enum?: unknown[];
  required?: string[];
  properties?: Record<string, Schema>;
  additionalProperties?: Schema;
  items?: Schema;
  format?: string;
};

/** Where `value` breaks `schema`: a wrong type, a value outside the enum, a missing required or an unknown field. */
export function schemaErrors(value: unknown, schema: Schema, path = ''): string[] {
  const at = path || '<root>';
  const type = Array.isArray(value)
    ? 'array'
    : value === null
      ? 'null'
      : Number.isInteger(value)
        ? 'integer'
        : typeof value;
  if (schema.type && type !== schema.type && !(schema.type === 'number' && type === 'integer'))
    return [`${at}: ${type}, not ${schema.type}`];
  if (schema.enum && !schema.enum.includes(value))
    return [`${at}: ${JSON.stringify(value)} is not one of ${schema.enum}`];
  if (schema.format === 'int32' && (Number(value) < -(2 ** 31) || Number(value) >= 2 ** 31))
    return [`${at}: out of int32`];
  const errors: string[] = [];
  if (type === 'array' && schema.items)
    for (const [i, item] of (value as unknown[]).entries())
      errors.push(...schemaErrors(item, schema.items, `${path}[${i}]`));
  if (type === 'object' && (schema.properties || schema.additionalProperties)) {
    const object = value as Record<string, unknown>;
    for (const name of schema.required ?? [])
      if (!(name in object)) errors.push(`${path ? `${path}.` : ''}${name}: required`);
    for (const [name, member] of Object.entries(object)) {
      const sub = schema.properties?.[name] ?? schema.additionalProperties;
      if (!sub) errors.push(`${path ? `${path}.` : ''}${name}: unknown field`);
      else errors.push(...schemaErrors(member, sub, `${path ? `${path}.` : ''}${name}`));
    }
  }
  return errors;
}

const result = (over: Partial<AuditResult>): AuditResult => ({
  function: 'pod-policy',
  webhook: 'pod-policy.klw.example.com',
  operation: 'UPDATE',
  apiVersion: 'v1',
  kind: 'Pod',
  resource: 'pods',
  namespace: 'shop',
  name: 'web-0',
  uid: '3b6f1c9e-5a0e-4a4e-9d51-7c2b8f0e1a22',
  result: 'allowed',
  enforcement: 'Deny',
  rejected: false,
  ...over,
});

const report: AuditReport = {
  auditor: { username: 'auditor' },
  summary: { denied: 2, warned: 1, audited: 1, patched: 1, allowed: 1, skipped: 1, error: 1 },
  problems: [],
  results: [
    result({ result: 'denied', rejected: true, message: 'container "app" is privileged' }),
    result({ function: 'image-policy', result: 'denied', rejected: true, enforcement: 'Warn', message: 'no tag' }),
    result({
      function: 'team-label',
      result: 'warned',
      enforcement: 'Warn',
      validationActions: ['Warn'],
      warnings: ["Validation failed for ValidatingAdmissionPolicy 'team-label' with binding 'team-label': no team"],
      message: "Validation failed for ValidatingAdmissionPolicy 'team-label' with binding 'team-label': no team",
    }),
    result({ function: 'limits', result: 'audited', enforcement: 'Audit', validationActions: ['Audit'], message: 'x' }),
    result({
      function: 'add-owner',
      result: 'patched',
      patch: [{ op: 'add', path: '/metadata/labels/owner', value: 'p' }],
    }),
    result({ function: 'defaults', result: 'skipped', message: 'matchConditions' }),
    result({ function: 'broken', result: 'error', rejected: true, message: 'boom (failurePolicy Fail)' }),
    result({ name: 'web-1', uid: undefined, namespace: 'shop' }),
    result({ apiVersion: 'v1', kind: 'Node', resource: 'nodes', namespace: undefined, name: 'node-1', uid: 'n-1' }),
  ],
};

const now = new Date('2026-11-28T01:02:03.456Z');

describe('klw audit -o openreports', () => {
  const reports = openReports(report, { now, cluster: 'prod' }) as any[];

  it('writes one report per object: Report in its namespace, ClusterReport for cluster-scoped objects', () => {
    assert.deepEqual(
      reports.map((r) => [r.kind, r.metadata.namespace, r.metadata.name, r.scope.kind, r.scope.name]),
      [
        ['Report', 'shop', 'klw-3b6f1c9e-5a0e-4a4e-9d51-7c2b8f0e1a22', 'Pod', 'web-0'],
        // No uid: the name is a digest of what names the object.
        ['Report', 'shop', reports[1].metadata.name, 'Pod', 'web-1'],
        ['ClusterReport', undefined, 'klw-n-1', 'Node', 'node-1'],
      ],
    );
    assert.match(reports[1].metadata.name, /^klw-[0-9a-f]{40}$/);
    assert.deepEqual(reports[0].summary, { pass: 0, fail: 1, warn: 4, error: 1, skip: 1 });
    assert.deepEqual(reports[1].summary, { pass: 1, fail: 0, warn: 0, error: 0, skip: 0 });
    assert.deepEqual(
      reports[0].results.map((r: any) => [r.policy, r.result]),
      [
        ['pod-policy', 'fail'],
        // Denied once enforced; admitted today with a warning.
        ['image-policy', 'warn'],
        ['team-label', 'warn'],
        ['limits', 'warn'],
        ['add-owner', 'warn'],
        ['defaults', 'skip'],
        ['broken', 'error'],
      ],
    );
    const first = reports[0].results[0];
    assert.deepEqual(first.timestamp, { seconds: Math.floor(now.getTime() / 1000), nanos: 0 });
    assert.equal(first.source, 'kube-lambda-webhooks');
    assert.equal(first.rule, 'pod-policy.klw.example.com');
    assert.deepEqual(first.properties, { cluster: 'prod', operation: 'UPDATE', enforcement: 'Deny' });
    assert.equal(reports[0].results[4].message, 'would change: add /metadata/labels/owner');
    assert.equal(reports[0].results[4].properties.patch, '[{"op":"add","path":"/metadata/labels/owner","value":"p"}]');
    assert.equal(reports[0].results[2].properties.validationActions, 'Warn');
  });

  it("is valid against the CRDs' schema", () => {
    for (const r of reports) assert.deepEqual(schemaErrors(r, schemaOf(r.kind)), [], `${r.kind} ${r.metadata.name}`);
  });

  it('the schema check refuses what the API server refuses', () => {
    const bad = structuredClone(reports[0]);
    bad.results[0].result = 'denied';
    bad.results[1].timestamp = { seconds: 1 };
    bad.results[2].properties.count = 3;
    delete bad.results[3].policy;
    bad.spec = {};
    assert.deepEqual(schemaErrors(bad, schemaOf('Report')), [
      'results[0].result: "denied" is not one of pass,fail,warn,error,skip',
      'results[1].timestamp.nanos: required',
      'results[2].properties.count: integer, not string',
      'results[3].policy: required',
      'spec: unknown field',
    ]);
  });

  it('maps every outcome', () => {
    const outcomes = (['allowed', 'skipped', 'error', 'warned', 'audited', 'patched'] as const).map((r) =>
      openReportResult(result({ result: r })),
    );
    assert.deepEqual(outcomes, ['pass', 'skip', 'error', 'warn', 'warn', 'warn']);
    assert.equal(openReportResult(result({ result: 'denied', enforcement: 'Deny' })), 'fail');
    assert.equal(openReportResult(result({ result: 'denied', enforcement: 'Audit' })), 'warn');
  });
});
