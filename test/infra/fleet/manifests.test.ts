// A fleet cluster's Kubernetes version checks the functions' matchConditions: lint and manifests.
import assert from 'node:assert/strict';
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { loadFunctions } from '../../../infra/functions.ts';
import { CLUSTER_CONDITION_RULE, clusterConditionFindings } from '../../../infra/fleet/manifests.ts';
import { parseFleet } from '../../../infra/fleet/file.ts';
import { FIXTURE_FUNCTIONS, runKlw } from '../../helpers.ts';

const work = mkdtempSync(join(process.cwd(), '.klw-test-fleet-versions-'));
after(() => rmSync(work, { recursive: true, force: true }));
cpSync(FIXTURE_FUNCTIONS, join(work, 'functions'), { recursive: true });
mkdirSync(join(work, 'functions', 'ip-policy'));
// isIP: the ip library, from Kubernetes 1.30 (so configurations created on 1.31).
writeFileSync(
  join(work, 'functions', 'ip-policy', 'index.ts'),
  `import { defineValidatingWebhook, deny } from 'kube-lambda-webhooks';
export default defineValidatingWebhook({
  name: 'ip-policy',
  rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'] }],
  matchConditions: [
    { name: 'plain', expression: 'true' },
    { name: 'by-address', expression: "isIP('10.0.0.1')" },
  ],
  validate: () => deny('no'),
});
`,
);
writeFileSync(join(work, 'serverless.yml'), 'service: svc\n');
const fleetFile = (old: string) =>
  `clusters:\n  - name: old\n    kubeVersion: "${old}"\n  - name: new\n    kubeVersion: "1.34"\n  - name: any\n`;
const registrations = (await loadFunctions(work)).map((f) => f.registration);

describe("a cluster's Kubernetes version and the functions' matchConditions", () => {
  it('a condition newer than a cluster is an error naming function, condition, cluster and version', () => {
    const fleet = parseFleet(fleetFile('1.29'), 'clusters.yaml', registrations);
    const [old, recent, any] = fleet.clusters;
    const findings = clusterConditionFindings(old!, registrations);
    assert.equal(findings.length, 1, JSON.stringify(findings));
    const [finding] = findings;
    assert.equal(finding!.level, 'error');
    assert.equal(finding!.rule, CLUSTER_CONDITION_RULE);
    assert.equal(finding!.subject, 'ip-policy');
    assert.match(
      finding!.message,
      /^cluster old runs Kubernetes 1\.29: matchCondition "by-address" is not available in Kubernetes 1\.29/,
    );
    assert.deepEqual(clusterConditionFindings(recent!, registrations), []);
    assert.deepEqual(clusterConditionFindings(any!, registrations), [], 'no version: nothing to check against');
  });

  it('a cluster that drops matchConditions (1.26) is not checked unless the function enforces them itself', () => {
    const fleet = parseFleet(fleetFile('1.26'), 'clusters.yaml', registrations);
    assert.deepEqual(clusterConditionFindings(fleet.clusters[0]!, registrations), []);
    const enforcing = registrations.map((r) => (r.name === 'ip-policy' ? { ...r, enforceMatchConditions: true } : r));
    const findings = clusterConditionFindings(fleet.clusters[0]!, enforcing);
    assert.equal(findings.length, 1);
    assert.match(findings[0]!.message, /cluster old runs Kubernetes 1\.26: .*by-address/);
  });

  it('klw lint and klw manifests --cluster fail on it; the other cluster is written', async () => {
    writeFileSync(join(work, 'clusters.yaml'), fleetFile('1.29'));
    const lint = await runKlw('--root', work, 'lint');
    assert.equal(lint.code, 1, lint.stderr);
    assert.match(
      lint.stderr,
      /error fleet-match-conditions-version ip-policy: cluster old runs Kubernetes 1\.29: matchCondition "by-address"/,
    );
    const base = [
      '--root',
      work,
      'manifests',
      '--base-url',
      'https://hooks.example.com',
      '--out',
      join(work, 'm.yaml'),
    ];
    const old = await runKlw(...base, '--cluster', 'old');
    assert.equal(old.code, 1);
    assert.match(old.stderr, /cluster old runs Kubernetes 1\.29: matchCondition "by-address" is not available/);
    assert.equal((await runKlw(...base, '--cluster', 'new')).code, 0);
    writeFileSync(join(work, 'clusters.yaml'), fleetFile('1.31'));
    const fixed = await runKlw('--root', work, 'lint');
    assert.doesNotMatch(fixed.stderr, /fleet-match-conditions-version/);
  });
});
