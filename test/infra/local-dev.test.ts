// Local development against any cluster: certificate names, public URL in the manifests, recorded
// --apply removed again (fake kubectl), env files, readable output, runtime parity, invoke's
// stdout, source-mapped stacks and watch picking up a new function.
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { parse } from 'yaml';
import { startApi } from '../../infra/local/api.ts';
import { applyRecorded, readRecord, unregister, type Kubectl } from '../../infra/local/apply.ts';
import { ensureLocalCertificates, serverNames } from '../../infra/local/certs.ts';
import { localInvoke } from '../../infra/local/invoke.ts';
import { logSink, readableLine } from '../../infra/local/output.ts';
import { configuredRuntime, envVarsFor, runtimeMismatch } from '../../infra/local/project.ts';
import { admissionReview } from '../../lib/harness/reviews.ts';
import { FIXTURE_FUNCTIONS } from '../helpers.ts';

const root = process.cwd();
const work = mkdtempSync(join(root, '.klw-test-localdev-'));
cpSync(FIXTURE_FUNCTIONS, join(work, 'functions'), { recursive: true });
after(() => rmSync(work, { recursive: true, force: true }));

const sans = (pem: string) => new X509Certificate(pem).subjectAltName ?? '';

describe('server certificate names', () => {
  it('re-issues the certificate from the same CA when the names change', async () => {
    const dir = join(work, '.certs');
    const first = await ensureLocalCertificates(dir, () => {});
    assert.doesNotMatch(sans(first.certPem), /host\.docker\.internal/);
    const second = await ensureLocalCertificates(dir, () => {}, serverNames(['host.docker.internal', '172.17.0.1']));
    assert.equal(second.caPem, first.caPem, 'the CA stays');
    assert.match(sans(second.certPem), /DNS:host\.docker\.internal/);
    assert.match(sans(second.certPem), /IP Address:172\.17\.0\.1/);
    assert.match(sans(second.certPem), /DNS:localhost/);
    assert.ok(new X509Certificate(second.certPem).verify(new X509Certificate(second.caPem).publicKey), 'signed by the same CA');
    assert.throws(() => serverNames(['not a name!']));
  });

  it('writes the public URL into the manifests and the certificate', async () => {
    const stateDir = join(work, '.state-public');
    const api = await startApi({ root: work, port: 0, stateDir, log: () => {}, functionLog: () => {}, publicUrl: 'https://host.minikube.internal:8443', san: ['10.0.0.9'] });
    try {
      assert.equal(api.url, 'https://host.minikube.internal:8443');
      const text = readFileSync(api.manifestsPath, 'utf8');
      assert.match(text, /url: https:\/\/host\.minikube\.internal:8443\/pod-policy\//);
      assert.doesNotMatch(text, /127\.0\.0\.1/);
      const cert = readFileSync(join(stateDir, 'server.crt'), 'utf8');
      assert.match(sans(cert), /DNS:host\.minikube\.internal/);
      assert.match(sans(cert), /IP Address:10\.0\.0\.9/);
    } finally {
      await api.close();
    }
  });
});

/** A fake cluster behind an injected kubectl: objects by `kind/name`, every call recorded. */
function fakeKubectl(objects: Map<string, Record<string, unknown>>, calls: string[][]): Kubectl {
  return async (args, input) => {
    calls.push(args);
    const [verb, resource, name] = args;
    const kind = String(resource).split('.')[0];
    const key = (k: string, n: string) => `${k.toLowerCase()}/${n}`;
    if (verb === 'get') {
      const found = objects.get(key(kind!, name!));
      return { code: 0, stdout: found ? JSON.stringify(found) : '', stderr: '' };
    }
    if (verb === 'apply') {
      const file = args[2]!;
      for (const doc of readFileSync(file, 'utf8').split(/^---$/m).map((d) => parse(d)).filter(Boolean)) objects.set(key(doc.kind, doc.metadata.name), doc);
      return { code: 0, stdout: 'applied', stderr: '' };
    }
    if (verb === 'delete') {
      objects.delete(key(kind!, name!));
      return { code: 0, stdout: '', stderr: '' };
    }
    if (verb === 'patch') {
      const obj = objects.get(key(kind!, name!)) as { spec: Record<string, unknown> };
      obj.spec = { ...obj.spec, ...(JSON.parse(args[args.length - 1]!) as { spec: Record<string, unknown> }).spec };
      return { code: 0, stdout: '', stderr: '' };
    }
    if (verb === 'replace') {
      const obj = JSON.parse(input!) as { kind: string; metadata: { name: string } };
      objects.set(key(obj.kind, obj.metadata.name), obj);
      return { code: 0, stdout: '', stderr: '' };
    }
    return { code: 1, stdout: '', stderr: `unexpected ${args.join(' ')}` };
  };
}

describe('klw start --apply records what it registered', () => {
  it('removes created configurations and restores a CRD\'s previous conversion, from the record alone (as after a kill)', async () => {
    const stateDir = join(work, '.state-apply');
    mkdirSync(stateDir, { recursive: true });
    const manifests = join(stateDir, 'manifests.yaml');
    writeFileSync(
      manifests,
      [
        'apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingWebhookConfiguration\nmetadata:\n  name: pod-policy\nwebhooks: []\n',
        'apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: crontabs.stable.example.com\nspec:\n  conversion:\n    strategy: Webhook\n    webhook: {}\n',
      ].join('---\n'),
    );
    const before = { strategy: 'Webhook', webhook: { clientConfig: { url: 'https://old.example.com/convert' } } };
    const objects = new Map<string, Record<string, unknown>>([['customresourcedefinition/crontabs.stable.example.com', { apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', metadata: { name: 'crontabs.stable.example.com' }, spec: { conversion: before } }]]);
    const calls: string[][] = [];
    const kubectl = fakeKubectl(objects, calls);
    await applyRecorded(kubectl, manifests, stateDir);
    assert.ok(objects.has('validatingwebhookconfiguration/pod-policy'));
    const record = readRecord(stateDir)!;
    assert.deepEqual(record.objects.map((o) => o.name), ['pod-policy', 'crontabs.stable.example.com']);
    // The emulator dies here; the next start (or klw local unregister) reads the record.
    const lines: string[] = [];
    assert.equal(await unregister(kubectl, stateDir, (l) => lines.push(l)), true);
    assert.ok(!objects.has('validatingwebhookconfiguration/pod-policy'), 'the created configuration is deleted');
    assert.deepEqual((objects.get('customresourcedefinition/crontabs.stable.example.com') as { spec: { conversion: unknown } }).spec.conversion, before);
    assert.equal(readRecord(stateDir), undefined, 'the record is gone');
    assert.equal(await unregister(kubectl, stateDir), false, 'nothing left to remove');
  });
});

describe('readable output', () => {
  const review = JSON.stringify({ time: '2026-11-23T00:01:02.345Z', msg: 'review', webhook: 'pod-policy', operation: 'CREATE', kind: 'Pod', namespace: 'default', name: 'web', decision: 'denied', durationMs: 1.234, warnings: 2 });
  it('prints one line per review with time, function, operation, object, decision, duration and warnings', () => {
    assert.equal(readableLine(review), '00:01:02.345  pod-policy  CREATE  Pod  default/web  denied  1.2ms  2 warnings');
    assert.equal(readableLine(JSON.stringify({ msg: 'request', function: 'pod-policy', status: 200, outcome: 'result' })), undefined, 'a good request line is left to the review line');
    assert.equal(readableLine('plain text'), 'plain text');
  });
  it('writes JSON lines as they come in json format, and every line to the log file', () => {
    const file = join(work, 'log.jsonl');
    const out: string[] = [];
    logSink('json', file, (t) => out.push(t))(review);
    assert.deepEqual(out, [`${review}\n`]);
    const text: string[] = [];
    logSink('text', file, (t) => text.push(t))(review);
    assert.match(text[0]!, /pod-policy {2}CREATE/);
    assert.deepEqual(readFileSync(file, 'utf8').trim().split('\n').map((l) => JSON.parse(l).webhook), ['pod-policy', 'pod-policy']);
  });
});

describe('runtime parity', () => {
  it('warns when the Node major differs from the configured Lambda runtime', () => {
    assert.match(runtimeMismatch('nodejs24.x', '20.11.0')!, /nodejs24\.x \(Node 24\).*Node 20/);
    assert.equal(runtimeMismatch('nodejs20.x', '20.11.0'), undefined);
  });
  it('reads the runtime from the registration, then serverless.yml', () => {
    const dir = mkdtempSync(join(work, 'rt-'));
    writeFileSync(join(dir, 'serverless.yml'), 'service: x\nprovider:\n  name: aws\n  runtime: nodejs22.x\n');
    assert.equal(configuredRuntime(dir), 'nodejs22.x');
    assert.equal(configuredRuntime(dir, { lambda: { runtime: 'nodejs20.x' } } as never), 'nodejs20.x');
  });
});

describe('env files', () => {
  it('gives a function Parameters, then its own entry over them', () => {
    assert.deepEqual(envVarsFor({ Parameters: { A: '1', B: 2 }, 'pod-defaults': { B: 'own' } }, 'pod-defaults'), { A: '1', B: 'own' });
  });
  it('--env-vars reaches the function over its registration\'s environment, with Lambda\'s variables', async () => {
    const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'default' }, spec: { containers: [{ name: 'c', image: 'nginx' }] } };
    const outcome = await localInvoke({ root: work, name: 'pod-defaults', review: JSON.stringify(admissionReview(pod, { resource: 'pods' })), envVars: { 'pod-defaults': { DEFAULT_CPU_LIMIT: '2' } }, stateDir: join(work, '.state-env'), say: () => {}, functionLog: () => {} });
    assert.equal(outcome.kind, 'result', JSON.stringify(outcome));
    const body = JSON.parse((outcome as { result: { body: string } }).result.body);
    const patch = JSON.parse(Buffer.from(body.response.patch, 'base64').toString());
    assert.match(JSON.stringify(patch), /"cpu":"2"/);
  });
});
