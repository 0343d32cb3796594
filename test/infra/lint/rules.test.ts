import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { stringify } from 'yaml';
import { valueAt } from '../../../infra/json.ts';
import { lintDocuments } from '../../../infra/lint.ts';
import { lintRuleResources, lintRulesForVersion, projectCrds, shippedCrds } from '../../../infra/lint/rules.ts';
import { runKlw } from '../../helpers.ts';
import {
  builtinResources,
  describeMinors,
  FIRST_TABLE_MINOR,
  LAST_TABLE_MINOR,
  tableMinor,
} from '../../../lib/k8s/resources.ts';

type Rule = { operations: string[]; apiGroups: string[]; apiVersions: string[]; resources: string[]; scope?: string };
const pods = (): Rule => ({
  operations: ['CREATE', 'UPDATE'],
  apiGroups: [''],
  apiVersions: ['v1'],
  resources: ['pods'],
  scope: 'Namespaced',
});
const config = (...rules: unknown[]) => ({
  apiVersion: 'admissionregistration.k8s.io/v1',
  kind: 'ValidatingWebhookConfiguration',
  metadata: { name: 'c' },
  webhooks: [{ name: 'w.example.com', rules }],
});
const widgets = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'widgets.example.com' },
  spec: {
    group: 'example.com',
    scope: 'Namespaced',
    names: { plural: 'widgets', singular: 'widget', kind: 'Widget' },
    versions: [
      { name: 'v1', served: true, storage: true, subresources: { status: {} } },
      { name: 'v1alpha1', served: false, storage: false },
    ],
  },
};
const check = (rule: unknown, ...extra: unknown[]) =>
  lintRuleResources([config(rule), ...(extra as Array<Record<string, unknown>>)]);
const only = (rule: unknown, ...extra: unknown[]) =>
  check(rule, ...extra).map((f) => `${f.level} ${f.rule}: ${f.message}`);
const with_ = (changes: Partial<Rule>) => ({ ...pods(), ...changes });

describe('the built-in resource table', () => {
  it('knows the core resources, their scope, subresources and operations', () => {
    const find = (group: string, version: string, resource: string, sub?: string) =>
      builtinResources().find(
        (r) => r.group === group && r.version === version && r.resource === resource && r.subresource === sub,
      );
    assert.deepEqual(find('', 'v1', 'pods')?.operations, ['CREATE', 'UPDATE', 'DELETE']);
    assert.equal(find('', 'v1', 'pods')?.kind, 'Pod');
    assert.equal(find('', 'v1', 'pods')?.namespaced, true);
    assert.equal(find('', 'v1', 'nodes')?.namespaced, false);
    assert.deepEqual(find('', 'v1', 'pods', 'exec')?.operations, ['CONNECT']);
    assert.deepEqual(find('', 'v1', 'pods', 'eviction')?.operations, ['CREATE']);
    assert.deepEqual(find('authentication.k8s.io', 'v1', 'tokenreviews')?.operations, ['CREATE']);
    // batch/v1beta1 CronJob was removed in 1.25 (Kubernetes' deprecated API migration guide).
    const cron = find('batch', 'v1beta1', 'cronjobs')!;
    assert.ok(cron.minors.has(24) && !cron.minors.has(25));
    assert.equal(FIRST_TABLE_MINOR, 18);
    assert.ok(LAST_TABLE_MINOR >= 34);
  });

  it('checks versions outside the table as its nearest end, and names ranges of minors', () => {
    assert.equal(tableMinor(16), FIRST_TABLE_MINOR);
    assert.equal(tableMinor(99), LAST_TABLE_MINOR);
    assert.equal(describeMinors(new Set([18, 19, 20, 22, 24, 25])), '1.18-1.20, 1.22, 1.24-1.25');
  });
});

describe('klw lint: rules against the resources they name', () => {
  it('finds nothing in good rules, wildcards and groups it does not know (CRDs installed otherwise)', () => {
    assert.deepEqual(only(pods()), []);
    assert.deepEqual(only({ operations: ['*'], apiGroups: ['*'], apiVersions: ['*'], resources: ['*/*'] }), []);
    assert.deepEqual(
      only({
        operations: ['CREATE', 'UPDATE'],
        apiGroups: ['apps'],
        apiVersions: ['*'],
        resources: ['deployments', 'deployments/scale', 'deployments/status'],
        scope: '*',
      }),
      [],
    );
    assert.deepEqual(
      only({ operations: ['CREATE'], apiGroups: ['stable.example.org'], apiVersions: ['v9'], resources: ['Anything'] }),
      [],
    );
    assert.deepEqual(only(with_({ operations: ['CONNECT'], resources: ['pods/exec', 'pods/attach'] })), []);
  });

  it('refuses "core" as a group and says the core group is ""', () => {
    const [finding, ...rest] = check(with_({ apiGroups: ['core'] }));
    assert.deepEqual(rest, []);
    assert.equal(finding?.level, 'error');
    assert.equal(finding?.subject, 'w.example.com');
    assert.match(finding!.message, /rules\[0\]\.apiGroups: "core" is no API group; .*apiGroups: \[""\]/);
  });

  it('refuses a group written with its version', () => {
    assert.match(
      only(with_({ apiGroups: ['apps/v1'], resources: ['deployments'] })).join(),
      /error rule-group: .*apiGroups: \["apps"\], apiVersions: \["v1"\]/,
    );
  });

  for (const [written, meant] of [
    ['Pods', 'pods'],
    ['Pod', 'pods'],
    ['pod', 'pods'],
    ['Pods/status', 'pods/status'],
  ] as const) {
    it(`suggests ${meant} for ${written}`, () => {
      const findings = only(with_({ resources: [written] }));
      assert.equal(findings.length, 1, findings.join('\n'));
      assert.match(
        findings[0]!,
        new RegExp(
          `error rule-resource: rules\\[0\\]\\.resources: the core group "" has no resource "${written.split('/')[0]}" .*did you mean "${meant}"`,
        ),
      );
    });
  }

  it('suggests the plural of kinds in other groups', () => {
    assert.match(
      only(with_({ apiGroups: ['networking.k8s.io'], resources: ['ingress'] })).join(),
      /did you mean "ingresses"/,
    );
    assert.match(
      only(with_({ apiGroups: ['networking.k8s.io'], resources: ['NetworkPolicy'] })).join(),
      /did you mean "networkpolicies"/,
    );
  });

  it('says which group a resource is in when the rule names another', () => {
    assert.match(
      only(with_({ resources: ['deployments'] })).join(),
      /has no resource "deployments".*"deployments" is in group "apps"/,
    );
  });

  it('refuses a version the group does not serve, and a resource the version does not serve', () => {
    assert.match(
      only(with_({ apiVersions: ['v2'] })).join(),
      /error rule-version: rules\[0\]\.apiVersions: the core group "" serves no version "v2"; it serves "v1"/,
    );
    assert.match(
      only({
        operations: ['CREATE'],
        apiGroups: ['apps'],
        apiVersions: ['v1'],
        resources: ['horizontalpodautoscalers'],
      }).join(),
      /has no resource "horizontalpodautoscalers".*is in group "autoscaling"/,
    );
    assert.match(
      only({ operations: ['CREATE'], apiGroups: ['batch'], apiVersions: ['v1beta1'], resources: ['jobs'] }).join(),
      /error rule-version: rules\[0\]: "jobs" is not served at "batch\/v1beta1"; it is at "batch\/v1"/,
    );
  });

  it('warns of a version later Kubernetes releases no longer serve, and refuses it for a version that does not', () => {
    const rule = {
      operations: ['CREATE'],
      apiGroups: ['batch'],
      apiVersions: ['v1beta1'],
      resources: ['cronjobs'],
      scope: 'Namespaced',
    };
    assert.match(
      only(rule).join(),
      /warning rule-removed: rules\[0\]: cronjobs at "v1beta1" is served by Kubernetes 1\.18-1\.24 only; later versions serve it at "batch\/v1"/,
    );
    assert.deepEqual(lintRulesForVersion([config(rule)], 24), []);
    const [finding] = lintRulesForVersion([config(rule)], 25);
    assert.equal(finding?.rule, 'kube-version-resource');
    assert.match(
      finding!.message,
      /Kubernetes 1\.25 does not serve cronjobs at "batch\/v1beta1" \(served by 1\.18-1\.24\)/,
    );
    assert.deepEqual(lintRulesForVersion([config(pods())], 25), []);
  });

  it('klw lint --kube-version refuses a rule that version does not serve', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'klw-lint-rules-'));
    after(() => rmSync(dir, { recursive: true, force: true }));
    const file = join(dir, 'webhooks.yaml');
    const webhook = {
      name: 'cron.example.com',
      clientConfig: { url: 'https://hooks.example.com/cron' },
      rules: [
        {
          operations: ['CREATE'],
          apiGroups: ['batch'],
          apiVersions: ['v1beta1'],
          resources: ['cronjobs'],
          scope: 'Namespaced',
        },
      ],
      namespaceSelector: {
        matchExpressions: [{ key: 'kubernetes.io/metadata.name', operator: 'NotIn', values: ['kube-system'] }],
      },
      sideEffects: 'None',
      admissionReviewVersions: ['v1'],
    };
    writeFileSync(
      file,
      stringify({
        apiVersion: 'admissionregistration.k8s.io/v1',
        kind: 'ValidatingWebhookConfiguration',
        metadata: { name: 'c' },
        webhooks: [webhook],
      }),
    );
    const old = await runKlw('lint', file, '--kube-version', '1.24');
    assert.equal(old.code, 0, old.stderr);
    assert.match(old.stderr, /warning rule-removed cron\.example\.com/);
    const newer = await runKlw('lint', file, '--kube-version', '1.25');
    assert.equal(newer.code, 1);
    assert.match(
      newer.stderr,
      /error kube-version-resource cron\.example\.com: rules\[0\]: Kubernetes 1\.25 does not serve cronjobs/,
    );
    const future = await runKlw('lint', file, '--kube-version', '2.0');
    assert.match(future.stderr, /Kubernetes after 1\.\d+ does not serve cronjobs/);
  });

  it('refuses a subresource the resource lacks, with the close one', () => {
    assert.match(
      only(with_({ operations: ['CONNECT'], resources: ['pods/logs'] })).join(),
      /error rule-subresource: .*"pods\/logs": pods has no subresource "logs"; did you mean "pods\/log"\? \(it has attach, binding, .*exec/,
    );
  });

  it('says CONNECT happens only on connect subresources', () => {
    assert.match(
      only(with_({ operations: ['CONNECT'] })).join(),
      /error rule-operations: rules\[0\]\.operations: CONNECT never happens on pods: CONNECT happens only on connect subresources \(pods\/attach, pods\/exec, pods\/portforward, pods\/proxy\)/,
    );
    // Another operation of the rule matches: a warning only.
    assert.match(only(with_({ operations: ['CREATE', 'CONNECT'] })).join(), /^warning rule-operations/);
    assert.match(
      only(with_({ operations: ['UPDATE'], resources: ['pods/exec'] })).join(),
      /error rule-operations: .*UPDATE never happens on pods\/exec: pods\/exec takes CONNECT/,
    );
    assert.match(
      only(with_({ operations: ['CREATE'], resources: ['componentstatuses'], scope: '*' })).join(),
      /it is read-only/,
    );
    // A resource none of the rule's operations happens on is dead weight in it.
    const scale = only({
      operations: ['CREATE'],
      apiGroups: ['apps'],
      apiVersions: ['v1'],
      resources: ['deployments', 'deployments/scale'],
    });
    assert.deepEqual(scale, [
      'warning rule-operations: rules[0].operations: CREATE never happens on deployments/scale: deployments/scale takes UPDATE',
    ]);
  });

  it('refuses a scope the resource does not have', () => {
    assert.match(
      only(with_({ scope: 'Cluster' })).join(),
      /error rule-scope: rules\[0\]\.scope: Cluster never matches pods, which is namespaced; scope: Namespaced/,
    );
    assert.match(
      only(with_({ resources: ['nodes'] })).join(),
      /error rule-scope: .*Namespaced never matches nodes, which is cluster-scoped; scope: Cluster/,
    );
  });

  it('checks a CRD the project ships against its own manifest', () => {
    const rule = (changes: Partial<Rule>) => ({
      operations: ['CREATE', 'UPDATE'],
      apiGroups: ['example.com'],
      apiVersions: ['v1'],
      resources: ['widgets'],
      scope: 'Namespaced',
      ...changes,
    });
    assert.deepEqual(only(rule({}), widgets), []);
    assert.deepEqual(only(rule({ operations: ['UPDATE'], resources: ['widgets/status'] }), widgets), []);
    assert.match(
      only(rule({ resources: ['Widget'] }), widgets).join(),
      /has no resource "Widget" \(checked against the CRD "widgets.example.com"\); did you mean "widgets"/,
    );
    assert.match(only(rule({ resources: ['widget'] }), widgets).join(), /did you mean "widgets"/);
    // v1alpha1 is not served.
    assert.match(
      only(rule({ apiVersions: ['v1alpha1'] }), widgets).join(),
      /serves no version "v1alpha1"; it serves "v1"/,
    );
    assert.match(
      only(rule({ resources: ['widgets/scale'] }), widgets).join(),
      /widgets has no subresource "scale" \(it has status\)/,
    );
    assert.match(only(rule({ scope: 'Cluster' }), widgets).join(), /error rule-scope/);
    assert.match(only(rule({ operations: ['CONNECT'] }), widgets).join(), /error rule-operations/);
    // Without the manifest the group is someone else's CRD.
    assert.deepEqual(only(rule({ resources: ['Widget'] })), []);
  });

  it('skips rules of the wrong shape (the shape check reports them) without throwing', () => {
    for (const bad of [
      null,
      'pods',
      [],
      { apiGroups: 'core' },
      { operations: ['CREATE'], apiGroups: [1], apiVersions: ['v1'], resources: ['pods'] },
    ]) {
      assert.deepEqual(check(bad), []);
    }
    assert.deepEqual(
      lintRuleResources([
        { kind: 'ValidatingWebhookConfiguration', webhooks: 'x' },
        { kind: 'ValidatingWebhookConfiguration', webhooks: [null, { rules: 'x' }] },
      ]),
      [],
    );
  });

  it('runs as part of lintDocuments', () => {
    assert.ok(
      lintDocuments([config(with_({ apiGroups: ['core'] }))]).some(
        (f) => f.rule === 'rule-group' && f.level === 'error',
      ),
    );
  });
});

describe('the CRDs a project ships', () => {
  const root = mkdtempSync(join(tmpdir(), 'klw-crds-'));
  after(() => rmSync(root, { recursive: true, force: true }));

  it('are read from YAML and JSON files, not from dependencies or build output; broken files are skipped', () => {
    const yaml = (name: string) =>
      `apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: ${name}\nspec:\n  group: example.com\n  names: { plural: x, kind: X }\n  scope: Namespaced\n  versions: [{ name: v1, served: true, storage: true }]\n`;
    mkdirSync(join(root, 'deploy', 'crds'), { recursive: true });
    mkdirSync(join(root, 'node_modules', 'dep'), { recursive: true });
    mkdirSync(join(root, 'dist'), { recursive: true });
    writeFileSync(join(root, 'deploy', 'crds', 'a.yaml'), `${yaml('a.example.com')}---\nkind: ConfigMap\n`);
    writeFileSync(
      join(root, 'deploy', 'b.json'),
      JSON.stringify({ kind: 'CustomResourceDefinition', metadata: { name: 'b.example.com' }, spec: {} }),
    );
    writeFileSync(join(root, 'node_modules', 'dep', 'c.yaml'), yaml('c.example.com'));
    writeFileSync(join(root, 'dist', 'd.yaml'), yaml('d.example.com'));
    // Nor from other build output, local state (.git, .klw, .serverless: dot folders) or too deep down.
    for (const folder of ['pkg', 'coverage', 'cdk.out', '.git', '.klw', '.serverless', 'a/b/c/d/e/f/g']) {
      mkdirSync(join(root, folder), { recursive: true });
      writeFileSync(join(root, folder, 'e.yaml'), yaml(`e.${folder.replace(/\W/g, '')}.example.com`));
    }
    // Six folders down is still the project's.
    writeFileSync(join(root, 'a/b/c/d/e/f', 'f.yaml'), yaml('f.example.com'));
    writeFileSync(join(root, 'deploy', 'broken.yaml'), 'kind: CustomResourceDefinition\n  : : [');
    // A planted symlink loop is not followed.
    symlinkSync(root, join(root, 'deploy', 'loop'));
    assert.deepEqual(
      projectCrds(root)
        .map((c) => valueAt(c, 'metadata', 'name'))
        .sort(),
      ['a.example.com', 'b.example.com', 'f.example.com'],
    );
    // Those already in the manifests are not added again; the others lose their conversion.
    const added = shippedCrds(root, [{ kind: 'CustomResourceDefinition', metadata: { name: 'a.example.com' } }]);
    assert.deepEqual(added.map((c) => valueAt(c, 'metadata', 'name')).sort(), ['b.example.com', 'f.example.com']);
    for (const crd of added) assert.equal(valueAt(crd, 'spec', 'conversion'), undefined);
  });
});
