// `klw logs --cluster X`: one fleet cluster's review lines, filtered on the server and again here.
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { CloudWatchLogsClient, FilterLogEventsCommand } from '@aws-sdk/client-cloudwatch-logs';
import { mockClient } from 'aws-sdk-client-mock';
import { main, program } from '../../../infra/cli.ts';
import { clusterFilterPattern } from '../../../infra/fleet/logs.ts';
import { LOGS_FILTER_PATTERN, printLogs } from '../../../infra/logs.ts';
import { defineValidatingWebhook } from '../../../lib/index.ts';
import { createLogger } from '../../../lib/log.ts';
import { toEvent, admissionReview } from '../../../lib/testing/index.ts';
import { FIXTURE_FUNCTIONS, runKlw } from '../../helpers.ts';

// klw imports a command's module when first run: done here, not while a test holds stdout.
before(() => program());

const T = Date.parse('2026-11-22T10:00:00.000Z');
const review = (name: string, cluster?: string) =>
  JSON.stringify({
    level: 'info',
    msg: 'review',
    webhook: 'pod-policy',
    kind: 'v1/Pod',
    operation: 'CREATE',
    namespace: 'default',
    name,
    decision: 'allowed',
    durationMs: 3,
    ...(cluster ? { cluster } : {}),
  });
const event = (id: string, message: string) => ({ eventId: id, timestamp: T, message });

describe('klw logs --cluster', () => {
  it("asks CloudWatch for the cluster's lines and prints only those, naming the cluster", async () => {
    const logs = mockClient(CloudWatchLogsClient);
    try {
      // The mock ignores the filter: lines of other clusters, and none, come back too.
      logs.on(FilterLogEventsCommand).resolves({
        events: [
          event('1', review('web', 'east')),
          event('2', review('db', 'west')),
          event('3', review('old')),
          event('4', review('api', 'east')),
          event('5', JSON.stringify({ level: 'warn', msg: 'request refused', cluster: 'west' })),
        ],
      });
      const lines: string[] = [];
      const options = { service: 'svc', stage: 'prod', function: 'pod-policy', startTime: T - 1 };
      assert.equal(
        await printLogs(new CloudWatchLogsClient({ region: 'eu-west-1' }), { ...options, cluster: 'east' }, (l) =>
          lines.push(l),
        ),
        2,
      );
      assert.deepEqual(lines, [
        '2026-11-22T10:00:00.000Z pod-policy CREATE v1/Pod default/web allowed 3.0ms cluster=east',
        '2026-11-22T10:00:00.000Z pod-policy CREATE v1/Pod default/api allowed 3.0ms cluster=east',
      ]);
      const all: string[] = [];
      await printLogs(new CloudWatchLogsClient({ region: 'eu-west-1' }), options, (l) => all.push(l));
      assert.equal(all.length, 5);
      const patterns = logs.commandCalls(FilterLogEventsCommand).map((c) => c.args[0].input.filterPattern);
      assert.deepEqual(patterns, [
        '{ ($.cluster = "east") && (($.msg = "review") || ($.level = "warn") || ($.level = "error")) }',
        LOGS_FILTER_PATTERN,
      ]);
    } finally {
      logs.restore();
    }
  });

  it("shows a cluster's warnings and failures as its function wrote them, not another cluster's", async () => {
    const secrets = { east: 'e'.repeat(43), west: 'w'.repeat(43) };
    const env = {
      KLW_FLEET: JSON.stringify({ east: {}, west: {} }),
      KLW_FLEET_PATH_SECRETS: JSON.stringify(secrets),
    };
    const written: string[] = [];
    const webhook = defineValidatingWebhook({
      name: 'pod-policy',
      rules: [],
      validate: (_review, ctx) => {
        ctx.log.warn('quota lookup slow');
        throw new Error('quota service down');
      },
    });
    const handler = webhook.withOptions({ env, logger: createLogger({ sink: (l) => written.push(l) }) });
    const review = admissionReview({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' } });
    for (const cluster of ['east', 'west'] as const)
      await handler(toEvent(review, { path: `/pod-policy/${secrets[cluster]}`, format: 'http' }), {
        awsRequestId: `req-${cluster}`,
      });
    const logs = mockClient(CloudWatchLogsClient);
    try {
      logs.on(FilterLogEventsCommand).resolves({ events: written.map((l, i) => event(String(i), l)) });
      const lines: string[] = [];
      const options = { service: 'svc', stage: 'prod', function: 'pod-policy', startTime: T - 1, cluster: 'east' };
      await printLogs(new CloudWatchLogsClient({ region: 'eu-west-1' }), options, (l) => lines.push(l));
      const failures = lines.filter((l) => / (WARN|ERROR) /.test(l));
      assert.equal(failures.length, 2, lines.join('\n'));
      assert.match(failures[0]!, /pod-policy WARN quota lookup slow cluster=east$/);
      assert.match(failures[1]!, /pod-policy ERROR .*error="Error: quota service down".*cluster=east$/);
      assert.ok(
        lines.every((l) => l.endsWith('cluster=east')),
        lines.join('\n'),
      );
    } finally {
      logs.restore();
    }
  });

  it('refuses a name that is not a cluster label, so nothing reaches the filter pattern', () => {
    for (const bad of ['east") || ($.msg = "review', 'East', '', 'a'.repeat(64)])
      assert.throws(() => clusterFilterPattern(bad), /is not a cluster name/);
  });

  it("is a klw option taking the fleet file's clusters and unknown", async () => {
    const work = mkdtempSync(join(process.cwd(), '.klw-test-fleet-logs-'));
    after(() => rmSync(work, { recursive: true, force: true }));
    cpSync(FIXTURE_FUNCTIONS, join(work, 'functions'), { recursive: true });
    writeFileSync(join(work, 'serverless.yml'), 'service: svc\n');
    const klw = (...args: string[]) =>
      runKlw('--root', work, 'logs', 'pod-policy', '--stage', 'prod', '--region', 'eu-west-1', ...args);
    const logs = mockClient(CloudWatchLogsClient);
    const out: string[] = [];
    const original = process.stdout.write.bind(process.stdout);
    try {
      logs.on(FilterLogEventsCommand).resolves({ events: [event('1', review('web', 'east'))] });
      const noFleet = await klw('--cluster', 'east');
      assert.equal(noFleet.code, 1);
      assert.match(noFleet.stderr, /--cluster needs the fleet file clusters\.yaml/);
      writeFileSync(join(work, 'clusters.yaml'), 'clusters:\n  - name: east\n  - name: west\n');
      const unknown = await klw('--cluster', 'north');
      assert.equal(unknown.code, 1);
      assert.match(unknown.stderr, /no cluster named "north" in clusters\.yaml; the clusters are east, west/);
      assert.equal(logs.commandCalls(FilterLogEventsCommand).length, 0);
      process.stdout.write = ((chunk: string) => (out.push(String(chunk)), true)) as typeof process.stdout.write;
      assert.equal(await main(['node', 'klw', '--root', work, 'logs', 'pod-policy', '--cluster', 'east']), 0);
      assert.equal(await main(['node', 'klw', '--root', work, 'logs', 'pod-policy', '--cluster', 'unknown']), 0);
    } finally {
      process.stdout.write = original;
      logs.restore();
    }
    assert.equal(
      out.join(''),
      '2026-11-22T10:00:00.000Z pod-policy CREATE v1/Pod default/web allowed 3.0ms cluster=east\n',
    );
    assert.deepEqual(
      logs.commandCalls(FilterLogEventsCommand).map((c) => c.args[0].input.filterPattern),
      [clusterFilterPattern('east'), clusterFilterPattern('unknown')],
    );
  });
});
