import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync, cpSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { parse } from 'yaml';
import {
  forKubeVersion,
  knowsWebhookField,
  kubeTargetFrom,
  parseFeatureGates,
  parseKubeVersion,
  type KubeTarget,
} from '../../infra/kube-versions.ts';
import { lintWebhook } from '../../infra/lint.ts';
import { FIXTURE_FUNCTIONS, runKlw } from '../helpers.ts';
import { keptProject } from '../kept-projects.ts';

const target = (version: string, featureGates: Record<string, boolean> = {}): KubeTarget => ({
  version: parseKubeVersion(version),
  featureGates,
});

function configuration(webhook: Record<string, unknown> = {}) {
  return {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingWebhookConfiguration',
    metadata: { name: 'kube-lambda-webhooks' },
    webhooks: [
      {
        name: 'a.webhooks.kube-lambda.dev',
        matchConditions: [{ name: 'not-system', expression: "request.namespace != 'kube-system'" }],
        namespaceSelector: {
          matchExpressions: [{ key: 'kubernetes.io/metadata.name', operator: 'NotIn', values: ['kube-system'] }],
        },
        ...webhook,
      },
    ],
  };
}

describe('manifests for a Kubernetes version', () => {
  it('leaves matchConditions out before 1.28, and says what that loses', () => {
    const out = forKubeVersion([configuration()], target('1.20'));
    assert.equal('matchConditions' in (out.documents[0]!.webhooks as object[])[0]!, false);
    const field = out.findings.find((f) => f.rule === 'kube-version-field')!;
    assert.equal(field.level, 'warning');
    assert.equal(field.subject, 'a.webhooks.kube-lambda.dev');
    assert.match(
      field.message,
      /^matchConditions left out: 1\.20 does not know the field, which needs Kubernetes 1\.28\+ \(1\.27 with --feature-gates AdmissionWebhookMatchConditions=true\); the API server calls the webhook for everything/,
    );
  });

  it('says when the function enforces the conditions itself', () => {
    const out = forKubeVersion([configuration()], target('1.25'), new Set(['a.webhooks.kube-lambda.dev']));
    assert.match(out.findings[0]!.message, /the function enforces them itself/);
  });

  it('keeps matchConditions from 1.28, and on 1.27 only with the feature gate', () => {
    for (const [t, kept] of [
      [target('1.28'), true],
      [target('v1.30.2'), true],
      [target('2.0'), true],
      [target('1.27'), false],
      [target('1.27', { AdmissionWebhookMatchConditions: true }), true],
      [target('1.27', { AdmissionWebhookMatchConditions: false }), false],
      [target('1.26', { AdmissionWebhookMatchConditions: true }), false],
    ] as const) {
      const out = forKubeVersion([configuration()], t);
      assert.equal('matchConditions' in (out.documents[0]!.webhooks as object[])[0]!, kept, JSON.stringify(t));
      assert.equal(knowsWebhookField(t, 'matchConditions'), kept);
      assert.equal(
        out.findings.some((f) => f.rule === 'kube-version-field'),
        !kept,
      );
    }
  });

  it('does not change the documents it is given', () => {
    const doc = configuration();
    forKubeVersion([doc], target('1.20'));
    assert.ok('matchConditions' in doc.webhooks[0]!);
  });

  it('warns that 1.20 namespaces lack the kubernetes.io/metadata.name label the default selector uses', () => {
    assert.ok(
      forKubeVersion([configuration()], target('1.20')).findings.some((f) => f.rule === 'kube-version-namespace-label'),
    );
    assert.ok(
      !forKubeVersion([configuration()], target('1.21')).findings.some(
        (f) => f.rule === 'kube-version-namespace-label',
      ),
    );
    assert.ok(
      !forKubeVersion([configuration({ namespaceSelector: {} })], target('1.20')).findings.some(
        (f) => f.rule === 'kube-version-namespace-label',
      ),
    );
  });

  it('refuses versions without the v1 APIs', () => {
    const crd = {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: 'crontabs.stable.example.com' },
    };
    const out = forKubeVersion([configuration(), crd], target('1.15'));
    assert.deepEqual(
      out.findings.filter((f) => f.level === 'error').map((f) => f.subject),
      ['kube-lambda-webhooks', 'crontabs.stable.example.com'],
    );
  });

  it('parses versions and feature gates, and rejects anything else', () => {
    assert.deepEqual(parseKubeVersion('v1.20.2'), { major: 1, minor: 20 });
    assert.throws(() => parseKubeVersion('twenty'), /give a Kubernetes version such as 1\.28/);
    assert.throws(() => parseKubeVersion('1'), /give a Kubernetes version/);
    assert.deepEqual(parseFeatureGates('A=true, B=false'), { A: true, B: false });
    assert.throws(() => parseFeatureGates('A=yes'), /is not Name=true or Name=false/);
    assert.equal(kubeTargetFrom({}), undefined);
    assert.throws(() => kubeTargetFrom({ featureGates: 'A=true' }), /--feature-gates needs --kube-version/);
  });
});

describe('lint of matchConditions', () => {
  const webhook = (matchConditions: unknown) => ({ ...configuration().webhooks[0], matchConditions });
  it('rejects an expression that does not compile, with the expression and the position', () => {
    const findings = lintWebhook(
      webhook([{ name: 'x', expression: 'object.metadata.name ==' }]),
      'ValidatingWebhookConfiguration',
    );
    const f = findings.find((x) => x.rule === 'match-conditions-compile')!;
    assert.equal(f.level, 'error');
    assert.match(
      f.message,
      /matchCondition "x": "object\.metadata\.name ==": compilation failed: ERROR: <input>:1:\d+:/,
    );
  });
  it('rejects a non-boolean result', () => {
    const findings = lintWebhook(
      webhook([{ name: 'x', expression: 'object.metadata.name' }]),
      'ValidatingWebhookConfiguration',
    );
    assert.deepEqual(
      findings.filter((f) => f.rule.startsWith('match-conditions')).map((f) => [f.level, f.rule]),
      [['error', 'match-conditions-type']],
    );
  });
  it('accepts valid conditions', () => {
    const findings = lintWebhook(
      webhook([{ name: 'example.com/ok', expression: "object.metadata.name.startsWith('a')" }]),
      'ValidatingWebhookConfiguration',
    );
    assert.deepEqual(
      findings.filter((f) => f.rule.startsWith('match-conditions')),
      [],
    );
  });
});

describe('klw manifests --kube-version and klw lint', () => {
  // Scratch files of the tests; the projects are kept by content across runs (test/kept-projects.ts),
  // so their functions' load builds are too, and the tests never write into them.
  const work = mkdtempSync(join(process.cwd(), '.klw-test-versions-'));
  after(() => rmSync(work, { recursive: true, force: true }));
  const HAS_TEAM = `"has(object.metadata.labels) && 'team' in object.metadata.labels"`;
  const teamPods = (hasTeam: string) => `import { deny, defineValidatingWebhook } from 'kube-lambda-webhooks';
import { enforceMatchConditions } from 'kube-lambda-webhooks/matchconditions';
export default defineValidatingWebhook(enforceMatchConditions({
  name: 'team-pods',
  rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'] }],
  matchConditions: [
    { name: 'has-team', expression: ${hasTeam} },
    { name: 'not-breakglass', expression: "!authorizer.group('').resource('pods').check('breakglass').allowed()" },
  ],
  validate: () => deny('team pods are frozen'),
}));
`;
  /** A project inside the repository (so `kube-lambda-webhooks` resolves to this package). */
  const project = (name: string, hasTeam: string) =>
    keptProject(name, (dir) => {
      mkdirSync(join(dir, 'functions', 'team-pods'), { recursive: true });
      cpSync(join(FIXTURE_FUNCTIONS, 'pod.ts'), join(dir, 'functions', 'pod.ts'));
      writeFileSync(join(dir, 'functions', 'team-pods', 'index.ts'), teamPods(hasTeam));
    });
  let root = '';
  before(async () => {
    root = await project('versions', HAS_TEAM);
  });
  const klw = (...args: string[]) => runKlw('--root', root, ...args);
  const conditionsIn = (file: string) => parse(readFileSync(file, 'utf8')).webhooks[0].matchConditions;

  it('writes matchConditions only for versions that know them', async () => {
    const out = join(work, 'm.yaml');
    const old = await klw(
      'manifests',
      '--kube-version',
      '1.20',
      '--base-url',
      'https://hooks.example.com',
      '--out',
      out,
    );
    assert.equal(old.code, 0, old.stderr);
    assert.equal(conditionsIn(out), undefined);
    assert.match(
      old.stderr,
      /warning kube-version-field team-pods\.webhooks\.kube-lambda\.dev: matchConditions left out: 1\.20 .*the function enforces them itself/,
    );
    assert.equal(
      (await klw('manifests', '--kube-version', '1.28', '--base-url', 'https://hooks.example.com', '--out', out)).code,
      0,
    );
    assert.equal(conditionsIn(out).length, 2);
    assert.equal(
      (await klw('manifests', '--kube-version', '1.27', '--base-url', 'https://hooks.example.com', '--out', out)).code,
      0,
    );
    assert.equal(conditionsIn(out), undefined);
    assert.equal(
      (
        await klw(
          'manifests',
          '--kube-version',
          '1.27',
          '--feature-gates',
          'AdmissionWebhookMatchConditions=true',
          '--base-url',
          'https://hooks.example.com',
          '--out',
          out,
        )
      ).code,
      0,
    );
    assert.equal(conditionsIn(out).length, 2);
    assert.equal((await klw('manifests', '--base-url', 'https://hooks.example.com', '--out', out)).code, 0);
    assert.equal(conditionsIn(out).length, 2, 'without --kube-version everything is written');
  });

  it('fails on a version without the v1 APIs, and on a malformed version', async () => {
    const old = await klw(
      'manifests',
      '--kube-version',
      '1.15',
      '--base-url',
      'https://hooks.example.com',
      '--out',
      join(work, 'x.yaml'),
    );
    assert.equal(old.code, 1);
    assert.match(old.stderr, /error kube-version-api .* needs Kubernetes 1\.16 or later/);
    const bad = await klw('manifests', '--kube-version', 'latest', '--base-url', 'https://hooks.example.com');
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /give a Kubernetes version/);
  });

  it('lint says which conditions the function cannot enforce, and what a version loses', async () => {
    const plain = await klw('lint');
    assert.equal(plain.code, 0, plain.stderr);
    assert.match(
      plain.stderr,
      /warning match-conditions-authorizer-in-function team-pods\.webhooks\.kube-lambda\.dev: matchCondition "not-breakglass" uses authorizer/,
    );
    assert.doesNotMatch(plain.stderr, /kube-version-field/);
    const old = await klw('lint', '--kube-version', '1.20');
    assert.equal(old.code, 0, old.stderr);
    assert.match(
      old.stderr,
      /warning kube-version-field team-pods\.webhooks\.kube-lambda\.dev: matchConditions left out/,
    );
  });

  it('lint of manifest files takes --kube-version too', async () => {
    const file = join(work, 'config.yaml');
    writeFileSync(
      file,
      JSON.stringify(
        configuration({
          clientConfig: { url: 'https://hooks.example.com/a' },
          sideEffects: 'None',
          admissionReviewVersions: ['v1'],
          rules: [],
        }),
      ),
    );
    const result = await klw('lint', '--kube-version', '1.27', file);
    assert.equal(result.code, 0, result.stderr);
    assert.match(
      result.stderr,
      /warning kube-version-field a\.webhooks\.kube-lambda\.dev: matchConditions left out: 1\.27/,
    );
  });

  it('lint rejects a condition the API server would reject', async () => {
    const rejected = await project('versions-rejected', '"object.metadata.labels"');
    const result = await runKlw('--root', rejected, 'lint');
    assert.equal(result.code, 1);
    assert.match(
      result.stderr,
      /error match-conditions-type team-pods\.webhooks\.kube-lambda\.dev: matchCondition "has-team": "object\.metadata\.labels": must evaluate to bool but got dyn/,
    );
  });
});
