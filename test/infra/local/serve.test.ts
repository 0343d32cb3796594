// Local development against any cluster: certificate names, public URL in the manifests, recorded
// --apply removed again (fake kubectl), env files, readable output, runtime parity, invoke's
// stdout, source-mapped stacks and watch picking up a new function.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { parse } from 'yaml';
import { startApi } from '../../../infra/local/api.ts';
import {
  appliedNote,
  applyRecorded,
  leftoverNotice,
  manualRemoval,
  readRecord,
  unregister,
  type Kubectl,
} from '../../../infra/local/apply.ts';
import { ensureLocalCertificates, serverNames } from '../../../infra/local/certs.ts';
import { localInvoke } from '../../../infra/local/back/invoke.ts';
import { logSink, readableLine } from '../../../infra/local/output.ts';
import { unreachableWarning } from '../../../infra/local/serve.ts';
import { lambdaEnvironment, RESERVED_VARIABLES } from '../../../infra/local/back/environment.ts';
import { configuredRuntime, envVarsFor, readEnvVars, runtimeMismatch } from '../../../infra/local/back/project.ts';
import { sampleReview } from '../../../infra/local/sample.ts';
import { loadFunctions } from '../../../infra/functions.ts';
import { admissionReview } from '../../../lib/harness/reviews.ts';
import type { ConversionRegistration } from '../../../lib/registration.ts';
import { FIXTURE_FUNCTIONS, ManualTimer } from '../../helpers.ts';
import { withKeptCertificates } from '../../kept-certs.ts';

/** The functions' timeouts never run out: a cold start on a loaded machine takes as long as it takes. */
const never = new ManualTimer().timer;

const root = process.cwd();
const work = mkdtempSync(join(root, '.klw-test-localdev-'));
cpSync(FIXTURE_FUNCTIONS, join(work, 'functions'), { recursive: true });
after(() => rmSync(work, { recursive: true, force: true }));

const sans = (pem: string) => new X509Certificate(pem).subjectAltName ?? '';

describe('--public-url and --host', () => {
  it('warns when the public URL names another host while the emulator listens on loopback only', () => {
    assert.match(
      unreachableWarning('127.0.0.1', 'https://host.docker.internal:3443')!,
      /names host\.docker\.internal but the emulator listens on 127\.0\.0\.1 \(loopback\) only.*unless a tunnel forwards/,
    );
    assert.match(unreachableWarning('::1', 'https://10.0.0.9:3443')!, /names 10\.0\.0\.9/);
    assert.equal(unreachableWarning('0.0.0.0', 'https://host.docker.internal:3443'), undefined, 'listening everywhere');
    assert.equal(unreachableWarning('172.17.0.1', 'https://172.17.0.1:3443'), undefined);
    assert.equal(unreachableWarning('127.0.0.1', 'https://localhost:3443'), undefined);
    assert.equal(unreachableWarning('127.0.0.1', 'https://[::1]:3443'), undefined);
    assert.equal(unreachableWarning('127.0.0.1', undefined), undefined);
  });
});

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
    assert.ok(
      new X509Certificate(second.certPem).verify(new X509Certificate(second.caPem).publicKey),
      'signed by the same CA',
    );
    assert.throws(() => serverNames(['not a name!']));
  });

  it('writes the public URL into the manifests and the certificate', async () => {
    // The kept CA: the names asked for here are not the kept certificate's, so a new one is issued from it.
    const stateDir = await withKeptCertificates(join(work, '.state-public'));
    const api = await startApi({
      root: work,
      port: 0,
      stateDir,
      log: () => {},
      functionLog: () => {},
      publicUrl: 'https://host.minikube.internal:8443',
      san: ['10.0.0.9'],
      invocationTimer: never,
    });
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

/** RFC 7386 JSON Merge Patch: nested maps merge, null removes a field. */
function mergePatch(target: unknown, patch: unknown): unknown {
  if (typeof patch !== 'object' || patch === null || Array.isArray(patch)) return patch;
  const out: Record<string, unknown> =
    typeof target === 'object' && target !== null && !Array.isArray(target)
      ? { ...(target as Record<string, unknown>) }
      : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = mergePatch(out[k], v);
  }
  return out;
}

/** RFC 6902 JSON Patch (add, replace, remove on object members); replace and remove need the member to exist. */
function jsonPatch(
  target: Record<string, unknown>,
  ops: Array<{ op: string; path: string; value?: unknown }>,
): Record<string, unknown> {
  const doc = structuredClone(target);
  for (const { op, path, value } of ops) {
    const keys = path
      .split('/')
      .slice(1)
      .map((k) => k.replaceAll('~1', '/').replaceAll('~0', '~'));
    const last = keys.pop()!;
    let parent = doc as Record<string, unknown>;
    for (const k of keys) parent = parent[k] as Record<string, unknown>;
    if (typeof parent !== 'object' || parent === null) throw new Error(`path ${path} does not exist`);
    if (op !== 'add' && !(last in parent)) throw new Error(`path ${path} does not exist`);
    if (op === 'remove') delete parent[last];
    else if (op === 'add' || op === 'replace') parent[last] = structuredClone(value);
    else throw new Error(`unsupported op ${op}`);
  }
  return doc;
}

/** What the API server says of a CRD's spec.conversion, or undefined when it is valid. */
function conversionProblem(obj: Record<string, unknown>): string | undefined {
  if (obj.kind !== 'CustomResourceDefinition') return undefined;
  const conversion = (
    obj.spec as { conversion?: { strategy?: string; webhook?: { clientConfig?: Record<string, unknown> } } }
  ).conversion;
  if (!conversion) return undefined;
  if (conversion.strategy !== 'Webhook')
    return conversion.webhook
      ? 'spec.conversion.webhook: Forbidden: should not be set when strategy is not set to Webhook'
      : undefined;
  const config = conversion.webhook?.clientConfig ?? {};
  if ('url' in config === 'service' in config)
    return 'spec.conversion.webhook.clientConfig: Required value: exactly one of url or service is required';
  return undefined;
}

/**
 * A fake cluster behind an injected kubectl: objects by `kind/name`, every call recorded.
 * Patches are real (`--type merge` is RFC 7386, `--type json` RFC 6902) and a CRD whose
 * conversion the API server would refuse is refused; `failing` names objects whose every
 * change fails.
 */
function fakeKubectl(
  objects: Map<string, Record<string, unknown>>,
  calls: string[][],
  failing = new Set<string>(),
): Kubectl {
  return async (args, input) => {
    calls.push(args);
    const [verb, resource, name] = args;
    const kind = String(resource).split('.')[0];
    const key = (k: string, n: string) => `${k.toLowerCase()}/${n}`;
    const refused = (message: string) => ({
      code: 1,
      stdout: '',
      stderr: `The CustomResourceDefinition "${name}" is invalid: ${message}`,
    });
    if (verb === 'get') {
      const found = objects.get(key(kind!, name!));
      return { code: 0, stdout: found ? JSON.stringify(found) : '', stderr: '' };
    }
    if (verb === 'apply') {
      const file = args[2]!;
      for (const doc of readFileSync(file, 'utf8')
        .split(/^---$/m)
        .map((d) => parse(d))
        .filter(Boolean)) {
        const problem = conversionProblem(doc);
        if (problem) return refused(problem);
        objects.set(key(doc.kind, doc.metadata.name), doc);
      }
      return { code: 0, stdout: 'applied', stderr: '' };
    }
    if (failing.has(key(kind!, name!)))
      return { code: 1, stdout: '', stderr: `Error from server (InternalError): ${name} is stuck` };
    if (verb === 'delete') {
      objects.delete(key(kind!, name!));
      return { code: 0, stdout: '', stderr: '' };
    }
    if (verb === 'patch') {
      const obj = objects.get(key(kind!, name!));
      if (!obj) return { code: 1, stdout: '', stderr: `Error from server (NotFound): ${name} not found` };
      const type = args[args.indexOf('--type') + 1];
      const body = JSON.parse(args[args.indexOf('-p') + 1]!);
      let next: Record<string, unknown>;
      try {
        next =
          type === 'json'
            ? jsonPatch(obj, body)
            : type === 'merge'
              ? (mergePatch(obj, body) as Record<string, unknown>)
              : obj;
      } catch (err) {
        return { code: 1, stdout: '', stderr: `The request is invalid: ${(err as Error).message}` };
      }
      if (type !== 'json' && type !== 'merge') return { code: 1, stdout: '', stderr: `unexpected patch type ${type}` };
      const problem = conversionProblem(next);
      if (problem) return refused(problem);
      objects.set(key(kind!, name!), next);
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

const CRD = 'crontabs.stable.example.com';
/** Manifests as klw writes them: the CRD (conversion by URL) first, then both configurations. */
function writeApplyManifests(stateDir: string): string {
  mkdirSync(stateDir, { recursive: true });
  const manifests = join(stateDir, 'manifests.yaml');
  writeFileSync(
    manifests,
    [
      `apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: ${CRD}\nspec:\n  conversion:\n    strategy: Webhook\n    webhook:\n      clientConfig:\n        url: https://127.0.0.1:3443/crontab-conversion/secret\n        caBundle: Q0E=\n      conversionReviewVersions: [v1]\n`,
      'apiVersion: admissionregistration.k8s.io/v1\nkind: MutatingWebhookConfiguration\nmetadata:\n  name: pod-defaults\nwebhooks: []\n',
      'apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingWebhookConfiguration\nmetadata:\n  name: pod-policy\nwebhooks: []\n',
    ].join('---\n'),
  );
  return manifests;
}
const crdWith = (conversion: unknown) => ({
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: CRD },
  spec: { group: 'stable.example.com', conversion },
});
const conversionOf = (objects: Map<string, Record<string, unknown>>) =>
  (objects.get(`customresourcedefinition/${CRD}`) as { spec: { conversion: unknown } }).spec.conversion;

describe('klw start --apply records what it registered', () => {
  it("removes created configurations and restores a CRD's previous conversion, from the record alone (as after a kill)", async () => {
    const stateDir = join(work, '.state-apply');
    const manifests = writeApplyManifests(stateDir);
    const before = {
      strategy: 'Webhook',
      webhook: { clientConfig: { url: 'https://old.example.com/convert' }, conversionReviewVersions: ['v1'] },
    };
    const objects = new Map<string, Record<string, unknown>>([[`customresourcedefinition/${CRD}`, crdWith(before)]]);
    const calls: string[][] = [];
    const kubectl = fakeKubectl(objects, calls);
    await applyRecorded(kubectl, manifests, stateDir);
    assert.ok(objects.has('validatingwebhookconfiguration/pod-policy'));
    const record = readRecord(stateDir)!;
    assert.deepEqual(
      record.objects.map((o) => o.name),
      [CRD, 'pod-defaults', 'pod-policy'],
    );
    // The emulator dies here; the next start (or klw local unregister) reads the record.
    const lines: string[] = [];
    assert.equal(await unregister(kubectl, stateDir, (l) => lines.push(l)), true);
    assert.ok(!objects.has('validatingwebhookconfiguration/pod-policy'), 'the created configuration is deleted');
    assert.deepEqual(conversionOf(objects), before);
    assert.equal(readRecord(stateDir), undefined, 'the record is gone');
    assert.equal(await unregister(kubectl, stateDir), false, 'nothing left to remove');
  });

  it('restores a previous conversion by service exactly (no url left beside it), and deletes both configurations first', async () => {
    const stateDir = join(work, '.state-apply-service');
    const manifests = writeApplyManifests(stateDir);
    const before = {
      strategy: 'Webhook',
      webhook: {
        clientConfig: {
          service: { namespace: 'crons', name: 'converter', path: '/convert', port: 443 },
          caBundle: 'T0xE',
        },
        conversionReviewVersions: ['v1', 'v1beta1'],
      },
    };
    const objects = new Map<string, Record<string, unknown>>([[`customresourcedefinition/${CRD}`, crdWith(before)]]);
    const calls: string[][] = [];
    const kubectl = fakeKubectl(objects, calls);
    await applyRecorded(kubectl, manifests, stateDir);
    assert.match(JSON.stringify(conversionOf(objects)), /"url":"https:\/\/127\.0\.0\.1:3443/);
    const printed = manualRemoval(readRecord(stateDir)!);
    assert.equal(printed.length, 3);
    assert.match(
      printed[2]!,
      /^kubectl patch crd crontabs\.stable\.example\.com --type json -p '\[\{"op":"replace","path":"\/spec\/conversion","value":\{"strategy":"Webhook","webhook":\{"clientConfig":\{"service"/,
      'the printed hint replaces the conversion whole, after the configurations',
    );
    calls.length = 0;
    await unregister(kubectl, stateDir, () => {});
    assert.deepEqual(conversionOf(objects), before, 'the conversion is exactly what it was');
    assert.ok(!objects.has('validatingwebhookconfiguration/pod-policy'));
    assert.ok(!objects.has('mutatingwebhookconfiguration/pod-defaults'));
    assert.deepEqual(
      calls.map((c) => c[0]),
      ['delete', 'delete', 'patch'],
      'configurations before the CRD',
    );
    assert.equal(readRecord(stateDir), undefined);
  });

  it('goes on past a failure, keeps only what failed in the record and names it', async () => {
    const stateDir = join(work, '.state-apply-failing');
    const manifests = writeApplyManifests(stateDir);
    const before = { strategy: 'None' };
    const objects = new Map<string, Record<string, unknown>>([[`customresourcedefinition/${CRD}`, crdWith(before)]]);
    const failing = new Set(['mutatingwebhookconfiguration/pod-defaults']);
    const kubectl = fakeKubectl(objects, [], failing);
    await applyRecorded(kubectl, manifests, stateDir);
    await assert.rejects(
      unregister(kubectl, stateDir, () => {}),
      /could not remove MutatingWebhookConfiguration pod-defaults \(kept in .*applied\.json/,
    );
    assert.ok(!objects.has('validatingwebhookconfiguration/pod-policy'), 'the other configuration is deleted');
    assert.deepEqual(conversionOf(objects), before, 'the CRD is restored');
    assert.deepEqual(
      readRecord(stateDir)!.objects.map((o) => o.name),
      ['pod-defaults'],
      'only the failed object stays recorded',
    );
    failing.clear();
    assert.equal(await unregister(kubectl, stateDir, () => {}), true, 'a second run removes the rest');
    assert.ok(!objects.has('mutatingwebhookconfiguration/pod-defaults'));
    assert.equal(readRecord(stateDir), undefined);
  });

  it('says truthfully what happens to each object on stop, and a plain start names a leftover registration', async () => {
    assert.equal(
      appliedNote({
        apiVersion: 'apiextensions.k8s.io/v1',
        kind: 'CustomResourceDefinition',
        name: CRD,
        existed: false,
      }),
      'created; kept on stop, its conversion set to None',
    );
    assert.equal(
      appliedNote({
        apiVersion: 'apiextensions.k8s.io/v1',
        kind: 'CustomResourceDefinition',
        name: CRD,
        existed: true,
      }),
      'conversion changed; restored on stop',
    );
    assert.equal(
      appliedNote({
        apiVersion: 'admissionregistration.k8s.io/v1',
        kind: 'ValidatingWebhookConfiguration',
        name: 'pod-policy',
      }),
      'created; removed on stop',
    );
    const stateDir = join(work, '.state-leftover');
    const manifests = writeApplyManifests(stateDir);
    await applyRecorded(fakeKubectl(new Map(), []), manifests, stateDir);
    assert.deepEqual(leftoverNotice(stateDir), [], 'not while the emulator that applied it runs');
    // A record left by an emulator that is gone (pid 2^22 + 1 is past Linux's largest pid).
    const file = join(stateDir, 'applied.json');
    writeFileSync(file, JSON.stringify({ ...JSON.parse(readFileSync(file, 'utf8')), pid: 4194305 }));
    const notice = leftoverNotice(stateDir, 'tmp/state').join('\n');
    assert.match(
      notice,
      /stopped without removing what it registered: CustomResourceDefinition crontabs\.stable\.example\.com, MutatingWebhookConfiguration pod-defaults, ValidatingWebhookConfiguration pod-policy/,
    );
    assert.match(notice, /klw local unregister --state-dir tmp\/state/);
  });
});

describe('readable output', () => {
  const review = JSON.stringify({
    time: '2026-11-23T00:01:02.345Z',
    msg: 'review',
    webhook: 'pod-policy',
    operation: 'CREATE',
    kind: 'Pod',
    namespace: 'default',
    name: 'web',
    decision: 'denied',
    durationMs: 1.234,
    warnings: 2,
  });
  it('prints one line per review with time, function, operation, object, decision, duration and warnings', () => {
    assert.equal(readableLine(review), '00:01:02.345  pod-policy  CREATE  Pod  default/web  denied  1.2ms  2 warnings');
    assert.equal(
      readableLine(JSON.stringify({ msg: 'request', function: 'pod-policy', status: 200, outcome: 'result' })),
      undefined,
      'a good request line is left to the review line',
    );
    assert.equal(readableLine('plain text'), 'plain text');
  });
  it("shows a denial's message, a would-deny's (Warn, Audit) and a failed conversion's, on one line and cut when long", () => {
    const line = (fields: Record<string, unknown>) =>
      readableLine(
        JSON.stringify({
          time: '2026-11-23T00:01:02.345Z',
          msg: 'review',
          webhook: 'pod-policy',
          operation: 'CREATE',
          kind: 'v1/Pod',
          namespace: 'default',
          name: 'web',
          durationMs: 1.234,
          ...fields,
        }),
      );
    assert.equal(
      line({ decision: 'denied', message: 'pod "web" is not allowed: spec.hostNetwork is true' }),
      '00:01:02.345  pod-policy  CREATE  v1/Pod  default/web  denied: pod "web" is not allowed: spec.hostNetwork is true  1.2ms',
    );
    assert.equal(
      line({
        decision: 'allowed',
        enforcement: 'Warn',
        wouldDeny: true,
        wouldDenyMessage: 'no host network',
        warnings: 1,
      }),
      '00:01:02.345  pod-policy  CREATE  v1/Pod  default/web  would deny: no host network  1.2ms  1 warning',
    );
    assert.equal(
      line({ decision: 'allowed', enforcement: 'Audit', wouldDeny: true, wouldDenyMessage: 'no host network' }),
      '00:01:02.345  pod-policy  CREATE  v1/Pod  default/web  would deny: no host network  1.2ms',
    );
    assert.equal(
      readableLine(
        JSON.stringify({
          time: '2026-11-23T00:01:02.345Z',
          msg: 'review',
          webhook: 'crontab-conversion',
          desiredAPIVersion: 'example.com/v1',
          result: 'Failed',
          message: 'hostPort could not be parsed',
        }),
      ),
      '00:01:02.345  crontab-conversion  example.com/v1  -  Failed: hostPort could not be parsed',
    );
    const long = line({ decision: 'denied', message: `first line\n\tsecond ${'x'.repeat(400)}` })!;
    assert.match(long, /denied: first line second x+… {2}1\.2ms$/, long);
    assert.ok(long.length < 260, `${long.length} characters`);
  });

  it('shows what the function logged for a denial and for a denial Warn admitted', async () => {
    const pod = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'web', namespace: 'default' },
      spec: { hostNetwork: true, containers: [{ name: 'c', image: 'nginx:1.27' }] },
    };
    const reviewLine = async (envVars: Record<string, Record<string, string>>) => {
      const lines: string[] = [];
      await localInvoke({
        root: work,
        name: 'pod-policy',
        review: JSON.stringify(admissionReview(pod, { resource: 'pods' })),
        envVars,
        stateDir: join(work, '.state-readable'),
        say: () => {},
        functionLog: (l) => lines.push(l),
        invocationTimer: never,
      });
      const review = lines.find((l) => l.includes('"msg":"review"'));
      assert.ok(review, lines.join('\n'));
      return readableLine(review)!;
    };
    assert.match(
      await reviewLine({}),
      /default\/web {2}denied: pod "web" is not allowed: spec\.hostNetwork is true {2}/,
    );
    assert.match(
      await reviewLine({ 'pod-policy': { KLW_ENFORCEMENT: 'Warn' } }),
      /default\/web {2}would deny: pod "web" is not allowed: spec\.hostNetwork is true {2}/,
    );
  });

  it('writes JSON lines as they come in json format, and every line to the log file', () => {
    const file = join(work, 'log.jsonl');
    const out: string[] = [];
    logSink('json', file, (t) => out.push(t))(review);
    assert.deepEqual(out, [`${review}\n`]);
    const text: string[] = [];
    logSink('text', file, (t) => text.push(t))(review);
    assert.match(text[0]!, /pod-policy {2}CREATE/);
    assert.deepEqual(
      readFileSync(file, 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l).webhook),
      ['pod-policy', 'pod-policy'],
    );
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

/** Runs `klw local start-lambda` in `cwd` until it says where it serves, then stops it; resolves with its stderr. */
function startLambdaOutput(cwd: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [join(root, 'infra', 'bin', 'klw.mjs'), 'local', 'start-lambda', '--port', '0'],
      { cwd, env: { ...process.env, NODE_TEST_CONTEXT: undefined }, stdio: ['ignore', 'ignore', 'pipe'] },
    );
    let stderr = '';
    child.stderr!.on('data', (c: Buffer) => {
      stderr += c.toString();
      if (/Lambda Invoke API at/.test(stderr)) child.kill('SIGTERM');
    });
    child.on('error', reject);
    child.on('close', () => resolve(stderr));
  });
}

describe('runtime parity of klw local start-lambda', () => {
  it('warns on stderr, as start and invoke do, when the configured Lambda runtime is not the Node major it runs', async () => {
    const dir = mkdtempSync(join(work, 'lambda-rt-'));
    mkdirSync(join(dir, 'functions', 'plain'), { recursive: true });
    writeFileSync(
      join(dir, 'functions', 'plain', 'index.ts'),
      "export const handler = async () => ({ statusCode: 200, body: '{}' });\nexport default { registration: { type: 'validating', name: 'plain', path: '/plain', webhookName: 'plain.example.com', rules: [], namespaceSelector: {}, failurePolicy: 'Ignore', matchPolicy: 'Equivalent', sideEffects: 'None', timeoutSeconds: 5, admissionReviewVersions: ['v1'], auth: 'none', lambda: {} }, handler };\n",
    );
    // A runtime other than the one running these tests.
    const other = process.versions.node.startsWith('20.') ? 'nodejs22.x' : 'nodejs20.x';
    writeFileSync(join(dir, 'serverless.yml'), `service: x\nprovider:\n  name: aws\n  runtime: ${other}\n`);
    const stderr = await startLambdaOutput(dir);
    assert.match(stderr, /Lambda Invoke API at/, stderr);
    assert.match(
      stderr,
      new RegExp(
        `configured for Lambda ${other.replace('.', '\\.')} \\(Node \\d+\\) but the emulator runs Node ${process.versions.node.split('.')[0]}`,
      ),
      stderr,
    );
  });
});

describe('klw local generate-review for a conversion function', () => {
  it("names the kind, group and versions as the function's CRD manifest does", async () => {
    // Every function, as the emulator above loaded them: the loader's answer for this project is reused.
    const fn = (await loadFunctions(work)).find((f) => f.name === 'crontab-conversion');
    const reg = fn!.registration as ConversionRegistration;
    type Review = { request: { desiredAPIVersion: string; objects: Array<{ apiVersion: string; kind: string }> } };
    const review = sampleReview(reg, { root: work }) as Review;
    assert.equal(review.request.objects[0]!.kind, 'CronTab', 'names.kind of crd.yaml, not a guess from the plural');
    assert.equal(review.request.objects[0]!.apiVersion, 'example.com/v1beta1');
    assert.equal(review.request.desiredAPIVersion, 'example.com/v1');
    // Without crdManifest in the registration, functions/<name>/crd.yaml is read.
    const { crdManifest: _manifest, ...bare } = reg;
    assert.equal((sampleReview(bare, { root: work }) as Review).request.objects[0]!.kind, 'CronTab');
  });
});

describe('env files', () => {
  it('gives a function Parameters, then its own entry over them', () => {
    assert.deepEqual(envVarsFor({ Parameters: { A: '1', B: 2 }, 'pod-defaults': { B: 'own' } }, 'pod-defaults'), {
      A: '1',
      B: 'own',
    });
  });
  it('warns of each variable Lambda reserves, whose value the function does not get', () => {
    const file = join(work, 'env-reserved.json');
    writeFileSync(
      file,
      JSON.stringify({
        Parameters: { AWS_LAMBDA_FUNCTION_NAME: 'other', LOG_LEVEL: 'debug' },
        'pod-policy': { _HANDLER: 'x.y', TZ: 'Europe/Paris', AWS_REGION: 'eu-west-1' },
      }),
    );
    const warnings: string[] = [];
    readEnvVars(file, (m) => warnings.push(m));
    assert.equal(warnings.length, 2, warnings.join('\n'));
    assert.match(
      warnings[0]!,
      /Parameters\.AWS_LAMBDA_FUNCTION_NAME is ignored: Lambda reserves AWS_LAMBDA_FUNCTION_NAME/,
    );
    assert.match(warnings[1]!, /pod-policy\._HANDLER is ignored/);
    const env = lambdaEnvironment({
      name: 'pod-policy',
      bundle: '/b/index.mjs',
      env: envVarsFor(readEnvVars(file), 'pod-policy'),
      memoryMb: 128,
      timeoutMs: 1000,
      concurrency: 1,
    });
    assert.equal(env.AWS_LAMBDA_FUNCTION_NAME, 'pod-policy', "a reserved variable is Lambda's");
    assert.equal(env._HANDLER, 'index.handler');
    assert.equal(env.TZ, 'Europe/Paris', "TZ is the function's to set, as in Lambda");
    assert.equal(env.AWS_REGION, 'eu-west-1');
    assert.equal(env.LOG_LEVEL, 'debug');
    // Every name warned of is one the function's own value cannot change.
    const own = Object.fromEntries(RESERVED_VARIABLES.map((name) => [name, 'own']));
    const set = lambdaEnvironment({
      name: 'f',
      bundle: '/b/index.mjs',
      env: own,
      memoryMb: 128,
      timeoutMs: 1000,
      concurrency: 1,
    });
    for (const name of RESERVED_VARIABLES) assert.notEqual(set[name], 'own', name);
  });
  it("--env-vars reaches the function over its registration's environment, with Lambda's variables", async () => {
    const pod = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'p', namespace: 'default' },
      spec: { containers: [{ name: 'c', image: 'nginx' }] },
    };
    const outcome = await localInvoke({
      root: work,
      name: 'pod-defaults',
      review: JSON.stringify(admissionReview(pod, { resource: 'pods' })),
      envVars: { 'pod-defaults': { DEFAULT_CPU_LIMIT: '2' } },
      stateDir: join(work, '.state-env'),
      say: () => {},
      functionLog: () => {},
      invocationTimer: never,
    });
    assert.equal(outcome.kind, 'result', JSON.stringify(outcome));
    const body = JSON.parse((outcome as { result: { body: string } }).result.body);
    const patch = JSON.parse(Buffer.from(body.response.patch, 'base64').toString());
    assert.match(JSON.stringify(patch), /"cpu":"2"/);
  });
});
