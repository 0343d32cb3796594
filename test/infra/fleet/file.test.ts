import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { fleetFromEnv, FLEET_ENV, MAX_CLUSTERS } from '../../../lib/handler/fleet.ts';
import {
  FLEET_FILE,
  FLEET_FILE_MAX_BYTES,
  fleetEnvValue,
  FleetFileError,
  loadFleet,
  parseFleet,
  selectClusters,
  type KnownFunctions,
} from '../../../infra/fleet/file.ts';

const functions: KnownFunctions = [
  { name: 'pod-policy', type: 'validating' },
  { name: 'add-labels', type: 'mutating' },
  { name: 'widget-convert', type: 'conversion' },
];

const GOOD = `clusters:
  - name: prod-eu
    kubeVersion: "1.29"
    context: prod-eu-admin
    labels: { env: prod, example.com/region: eu }
    enforcement:
      pod-policy: Deny
  - name: staging
    kubeVersion: v1.27.3
    featureGates: { AdmissionWebhookMatchConditions: true }
    enforcement: { pod-policy: Warn, add-labels: Audit }
`;

/** The single problem a fleet text has: its path, line and message, the fix present. */
function problemOf(text: string): { path: string; line?: number; message: string; fix: string } {
  try {
    parseFleet(text, FLEET_FILE, functions);
  } catch (err) {
    assert.ok(err instanceof FleetFileError, String(err));
    assert.equal(err.problems.length, 1, err.message);
    const [p] = err.problems;
    assert.ok(p!.fix.length > 5, 'a fix is given');
    assert.match(err.message, new RegExp(`^${FLEET_FILE}:\\d+: `));
    return p!;
  }
  assert.fail('accepted');
}

const cluster = (body: string) => `clusters:\n  - name: a\n${body}`;

describe('fleet file', () => {
  it('reads every setting of every cluster, in order', () => {
    const fleet = parseFleet(GOOD, FLEET_FILE, functions);
    assert.deepEqual(
      fleet.clusters.map((c) => c.name),
      ['prod-eu', 'staging'],
    );
    const [eu, staging] = fleet.clusters;
    assert.deepEqual(eu!.kubeVersion, { text: '1.29', version: { major: 1, minor: 29 } });
    assert.equal(eu!.context, 'prod-eu-admin');
    assert.deepEqual(eu!.labels, { env: 'prod', 'example.com/region': 'eu' });
    assert.deepEqual(staging!.enforcement, { 'pod-policy': 'Warn', 'add-labels': 'Audit' });
    assert.equal(staging!.kubeVersion!.text, '1.27');
    assert.deepEqual(staging!.featureGates, { AdmissionWebhookMatchConditions: true });
  });

  it('says, per field, what is wrong, where, and the fix', () => {
    const cases: Array<[string, string, RegExp]> = [
      ['clusters:\n  - name: Prod_EU\n', 'clusters[0].name', /not a DNS-1123 label/],
      ['clusters:\n  - name: unknown\n', 'clusters[0].name', /reserved/],
      ['clusters:\n  - name: a\n  - name: a\n', 'clusters[1].name', /also the name of clusters\[0\]/],
      ['clusters:\n  - context: x\n', 'clusters[0]', /has no name/],
      [`clusters:\n  - name: ${'a'.repeat(64)}\n`, 'clusters[0].name', /DNS-1123/],
      [cluster('    kubeVersion: 1.30\n'), 'clusters[0].kubeVersion', /number \(YAML reads 1\.30 as 1\.3\)/],
      [cluster('    kubeVersion: "one"\n'), 'clusters[0].kubeVersion', /not a Kubernetes version/],
      [cluster('    kubeVersion: "1.15"\n'), 'clusters[0].kubeVersion', /1\.16 or later/],
      [cluster('    featureGates: [x]\n'), 'clusters[0].featureGates', /not a mapping/],
      [
        cluster('    featureGates: { Bad-Gate: true }\n'),
        'clusters[0].featureGates.Bad-Gate',
        /not a feature gate name/,
      ],
      [cluster('    featureGates: { Gate: "yes" }\n'), 'clusters[0].featureGates.Gate', /not true or false/],
      [cluster('    enforcement: Warn\n'), 'clusters[0].enforcement', /not a mapping/],
      [cluster('    enforcement: { nope: Warn }\n'), 'clusters[0].enforcement.nope', /no function is named "nope"/],
      [
        cluster('    enforcement: { widget-convert: Warn }\n'),
        'clusters[0].enforcement.widget-convert',
        /conversion function/,
      ],
      [
        cluster('    enforcement: { pod-policy: warn }\n'),
        'clusters[0].enforcement.pod-policy',
        /"warn" is not an enforcement/,
      ],
      [cluster('    labels: [a]\n'), 'clusters[0].labels', /not a mapping/],
      [cluster('    labels: { "bad key!": x }\n'), 'clusters[0].labels.bad key!', /key "bad key!"/],
      [cluster('    labels: { tier: 3 }\n'), 'clusters[0].labels.tier', /not a string/],
      [cluster('    labels: { tier: "-x-" }\n'), 'clusters[0].labels.tier', /value "-x-"/],
      [cluster('    context: ""\n'), 'clusters[0].context', /not a kubeconfig context name/],
      [cluster('    context: "a\\nb"\n'), 'clusters[0].context', /not a kubeconfig context name/],
      [cluster('    contxt: prod\n'), 'clusters[0].contxt', /unknown key "contxt"/],
      ['clusters:\n  - name: a\nextra: 1\n', 'extra', /unknown key "extra"/],
      ['clusters:\n  - prod\n', 'clusters[0]', /not a mapping/],
      ['clusters: []\n', 'clusters', /no clusters/],
      ['other: 1\n', '(top)', /no clusters|unknown key/],
      ['- a\n', '(top)', /not a mapping/],
      ['clusters: [\n', '(top)', /not valid YAML/],
      ['clusters:\n  - name: a\n    name: b\n', 'clusters[0].name', /not valid YAML: the key "name" is repeated/],
    ];
    for (const [text, path, message] of cases) {
      let p;
      try {
        p = problemOf(text);
      } catch (err) {
        // `other: 1` has two problems (unknown key, no clusters): both are reported.
        if (text !== 'other: 1\n') throw err;
        assert.match((err as Error).message, /unknown key "other"[\s\S]*no clusters/);
        continue;
      }
      assert.equal(p.path, path, text);
      assert.match(p.message, message, text);
    }
  });

  it('points at the line of the problem and reports every problem at once', () => {
    const text = 'clusters:\n  - name: ok\n  - name: Bad\n    enforcement:\n      nope: Warn\n';
    assert.throws(
      () => parseFleet(text, FLEET_FILE, functions),
      (err: FleetFileError) => {
        assert.deepEqual(
          err.problems.map((p) => [p.path, p.line]),
          [
            ['clusters[1].name', 3],
            ['clusters[1].enforcement.nope', 5],
          ],
        );
        assert.match(
          err.message,
          /clusters\.yaml:3: clusters\[1\]\.name: "Bad" is not a DNS-1123 label; use at most 63/,
        );
        return true;
      },
    );
  });

  it('bounds the clusters and the aliases', () => {
    const many = `clusters:\n${Array.from({ length: MAX_CLUSTERS + 1 }, (_, i) => `  - name: c${i}\n`).join('')}`;
    assert.match(problemOf(many).message, new RegExp(`${MAX_CLUSTERS + 1} clusters; at most ${MAX_CLUSTERS}`));
    // A billion laughs: aliases of aliases.
    let bomb = 'a: &a [x, x, x, x, x, x, x, x, x, x]\n';
    for (let i = 0; i < 8; i++)
      bomb += `${String.fromCharCode(98 + i)}: &${String.fromCharCode(98 + i)} [*${String.fromCharCode(97 + i)}, *${String.fromCharCode(97 + i)}, *${String.fromCharCode(97 + i)}, *${String.fromCharCode(97 + i)}, *${String.fromCharCode(97 + i)}, *${String.fromCharCode(97 + i)}, *${String.fromCharCode(97 + i)}, *${String.fromCharCode(97 + i)}, *${String.fromCharCode(97 + i)}, *${String.fromCharCode(97 + i)}]\n`;
    assert.throws(() => parseFleet(`${bomb}clusters:\n  - name: a\n`, FLEET_FILE, functions), /alias|Excessive/i);
  });

  it('gives each function its KLW_FLEET, which the function side reads back', () => {
    const fleet = parseFleet(GOOD, FLEET_FILE, functions);
    const value = fleetEnvValue(fleet, 'pod-policy');
    assert.deepEqual(JSON.parse(value), {
      'prod-eu': { enforcement: 'Deny', kubeVersion: '1.29' },
      staging: { enforcement: 'Warn', kubeVersion: '1.27' },
    });
    const runtime = fleetFromEnv({ [FLEET_ENV]: fleetEnvValue(fleet, 'add-labels') });
    assert.deepEqual(
      [...runtime!.entries()],
      [
        ['prod-eu', { kubeVersion: '1.29' }],
        ['staging', { enforcement: 'Audit', kubeVersion: '1.27' }],
      ],
    );
  });

  it('selects one cluster or all, and names the known ones for an unknown name', () => {
    const fleet = parseFleet(GOOD, FLEET_FILE, functions);
    assert.deepEqual(
      selectClusters(fleet, { cluster: 'staging' }).map((c) => c.name),
      ['staging'],
    );
    assert.equal(selectClusters(fleet, { all: true }).length, 2);
    assert.deepEqual(selectClusters(undefined, {}), []);
    assert.throws(
      () => selectClusters(fleet, { cluster: 'prod' }),
      /no cluster named "prod" in clusters\.yaml; the clusters are prod-eu, staging/,
    );
    assert.throws(
      () => selectClusters(undefined, { cluster: 'prod' }),
      /--cluster needs the fleet file clusters\.yaml/,
    );
  });
});

describe('loading the fleet file', () => {
  const root = mkdtempSync(join(tmpdir(), 'klw-fleet-'));
  after(() => rmSync(root, { recursive: true, force: true }));

  it('is undefined without the file: one implicit cluster, as before', () => {
    assert.equal(loadFleet(root, functions), undefined);
  });

  it('reads the file, and refuses a symbolic link, a folder and a hostile size', () => {
    writeFileSync(join(root, FLEET_FILE), GOOD);
    assert.equal(loadFleet(root, functions)!.clusters.length, 2);
    const linked = mkdtempSync(join(tmpdir(), 'klw-fleet-link-'));
    try {
      symlinkSync(join(root, FLEET_FILE), join(linked, FLEET_FILE));
      assert.throws(() => loadFleet(linked, functions), /symbolic link/);
      rmSync(join(linked, FLEET_FILE));
      writeFileSync(join(linked, FLEET_FILE), `# ${'x'.repeat(FLEET_FILE_MAX_BYTES)}\n`);
      assert.throws(() => loadFleet(linked, functions), /bytes; at most/);
    } finally {
      rmSync(linked, { recursive: true, force: true });
    }
  });
});
