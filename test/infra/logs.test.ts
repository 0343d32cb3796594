import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import {
  CloudWatchLogsClient,
  FilterLogEventsCommand,
  ResourceNotFoundException,
} from '@aws-sdk/client-cloudwatch-logs';
import { mockClient } from 'aws-sdk-client-mock';
import { main, program } from '../../infra/cli.ts';
import { formatLogEvent, logGroupName, LOGS_FILTER_PATTERN, parseSince, printLogs } from '../../infra/logs.ts';
import { FIXTURE_FUNCTIONS, withCapturedOutput } from '../helpers.ts';

// klw imports a command's module when first run: done here, not while a test holds stdout.
before(() => program());

const T = Date.parse('2026-11-22T10:00:00.000Z');
const review = (over: Record<string, unknown> = {}) =>
  JSON.stringify({
    level: 'info',
    time: '2026-11-22T10:00:00.000Z',
    msg: 'review',
    webhook: 'pod-policy',
    requestId: 'r1',
    source: 'http',
    reviewVersion: 'admission.k8s.io/v1',
    uid: 'u',
    kind: 'v1/Pod',
    operation: 'CREATE',
    namespace: 'default',
    name: 'web',
    dryRun: false,
    decision: 'denied',
    code: 403,
    patchOps: 0,
    warnings: 2,
    durationMs: 12.345,
    ...over,
  });
const event = (id: string, timestamp: number, message: string) => ({
  eventId: id,
  timestamp,
  message,
  logStreamName: 's',
  ingestionTime: timestamp,
});

describe('klw logs', () => {
  it('formats one readable line per review, refusal and failure, and skips the rest', () => {
    assert.equal(
      formatLogEvent(event('1', T, review()), 'pod-policy'),
      '2026-11-22T10:00:00.000Z pod-policy CREATE v1/Pod default/web denied (403) 12ms warnings=2',
    );
    assert.equal(
      formatLogEvent(
        event(
          '2',
          T,
          review({
            decision: 'patched',
            code: undefined,
            warnings: 0,
            durationMs: 3.21,
            namespace: undefined,
            name: 'node-1',
            dryRun: true,
          }),
        ),
        'x',
      ),
      '2026-11-22T10:00:00.000Z pod-policy CREATE v1/Pod node-1 patched 3.2ms dry-run',
    );
    const conversion = JSON.stringify({
      level: 'info',
      msg: 'review',
      webhook: 'crontab-conversion',
      desiredAPIVersion: 'stable.example.com/v2',
      objects: 3,
      result: 'Failed',
      message: 'no metadata',
      durationMs: 4,
    });
    assert.equal(
      formatLogEvent(event('3', T, conversion), 'x'),
      '2026-11-22T10:00:00.000Z crontab-conversion CONVERT 3 objects -> stable.example.com/v2 Failed 4.0ms "no metadata"',
    );
    const rejected = JSON.stringify({
      level: 'warn',
      msg: 'rejected',
      webhook: 'pod-policy',
      status: 404,
      reason: 'missing or wrong path secret',
      path: '/pod-policy/***',
    });
    assert.equal(
      formatLogEvent(event('4', T, rejected), 'x'),
      '2026-11-22T10:00:00.000Z pod-policy WARN rejected 404 reason="missing or wrong path secret" path="/pod-policy/***"',
    );
    const failed = `2026-11-22T10:00:00.000Z\tr1\tERROR\t${JSON.stringify({ level: 'error', msg: 'user function failed', errorId: 'abc', error: 'Error: boom' })}`;
    assert.equal(
      formatLogEvent(event('5', T, failed), 'pod-policy'),
      '2026-11-22T10:00:00.000Z pod-policy ERROR user function failed error="Error: boom" errorId="abc"',
    );
    assert.equal(formatLogEvent(event('6', T, 'START RequestId: r1 Version: $LATEST'), 'x'), undefined);
    assert.equal(formatLogEvent(event('7', T, JSON.stringify({ level: 'info', msg: 'cold start' })), 'x'), undefined);
    assert.equal(formatLogEvent(event('8', T, '{ not json'), 'x'), undefined);
  });

  it("reads the function's log group from --since, page by page, filtered on the server", async () => {
    const logs = mockClient(CloudWatchLogsClient);
    try {
      logs
        .on(FilterLogEventsCommand)
        .resolvesOnce({ events: [event('a', T, review())], nextToken: 'page2' })
        .resolvesOnce({ events: [event('b', T + 1, review({ name: 'db' })), event('c', T + 2, 'END RequestId: r1')] });
      const lines: string[] = [];
      const count = await printLogs(
        new CloudWatchLogsClient({ region: 'eu-west-1' }),
        { service: 'svc', stage: 'prod', function: 'pod-policy', startTime: T - 600_000 },
        (l) => lines.push(l),
      );
      assert.equal(count, 2);
      assert.deepEqual(
        lines.map((l) => l.split(' ')[4]),
        ['default/web', 'default/db'],
      );
      const calls = logs.commandCalls(FilterLogEventsCommand).map((c) => c.args[0].input);
      assert.deepEqual(calls[0], {
        logGroupName: '/aws/lambda/svc-prod-pod-policy',
        startTime: T - 600_000,
        filterPattern: LOGS_FILTER_PATTERN,
      });
      assert.equal(calls[1]!.nextToken, 'page2');
    } finally {
      logs.restore();
    }
  });

  it('follows new events without printing any twice, until stopped', async () => {
    const logs = mockClient(CloudWatchLogsClient);
    const controller = new AbortController();
    try {
      let call = 0;
      logs.on(FilterLogEventsCommand).callsFake((input: { startTime: number }) => {
        call++;
        if (call === 1) return { events: [event('a', T, review()), event('b', T + 5, review({ name: 'b' }))] };
        if (call === 2) {
          assert.equal(input.startTime, T + 5, 'polls again from the newest timestamp');
          return { events: [event('b', T + 5, review({ name: 'b' })), event('c', T + 9, review({ name: 'c' }))] };
        }
        controller.abort();
        return { events: [] };
      });
      const lines: string[] = [];
      await printLogs(
        new CloudWatchLogsClient({ region: 'eu-west-1' }),
        {
          service: 'svc',
          stage: 'prod',
          function: 'pod-policy',
          startTime: T,
          follow: true,
          pollMs: 1,
          signal: controller.signal,
        },
        (l) => lines.push(l),
      );
      assert.deepEqual(
        lines.map((l) => l.split(' ')[4]),
        ['default/web', 'default/b', 'default/c'],
      );
    } finally {
      logs.restore();
    }
  });

  it('says when the function has no log group', async () => {
    const logs = mockClient(CloudWatchLogsClient);
    try {
      logs
        .on(FilterLogEventsCommand)
        .rejects(new ResourceNotFoundException({ message: 'The specified log group does not exist.', $metadata: {} }));
      await assert.rejects(
        printLogs(
          new CloudWatchLogsClient({ region: 'eu-west-1' }),
          { service: 'svc', stage: 'prod', function: 'nope', startTime: T },
          () => {},
        ),
        /log group \/aws\/lambda\/svc-prod-nope not found: is nope deployed to stage prod/,
      );
      logs.on(FilterLogEventsCommand).rejects(new Error('AccessDeniedException'));
      await assert.rejects(
        printLogs(
          new CloudWatchLogsClient({ region: 'eu-west-1' }),
          { service: 'svc', stage: 'prod', function: 'nope', startTime: T },
          () => {},
        ),
        /AccessDenied/,
      );
    } finally {
      logs.restore();
    }
  });

  it('reads --since as a duration or an ISO time, and refuses anything else', () => {
    assert.equal(parseSince('10m', T), T - 600_000);
    assert.equal(parseSince('2h', T), T - 7_200_000);
    assert.equal(parseSince('1d', T), T - 86_400_000);
    assert.equal(parseSince('30s', T), T - 30_000);
    assert.equal(parseSince('2026-11-22T09:00:00Z', T), T - 3_600_000);
    for (const bad of ['10', 'yesterday', '5w', '-1h']) assert.throws(() => parseSince(bad, T), /--since/);
    assert.equal(logGroupName('svc', 'dev', 'f'), '/aws/lambda/svc-dev-f');
  });

  it('is a klw command printing to stdout', async () => {
    const work = mkdtempSync(join(process.cwd(), '.klw-test-logs-'));
    after(() => rmSync(work, { recursive: true, force: true }));
    cpSync(FIXTURE_FUNCTIONS, join(work, 'functions'), { recursive: true });
    writeFileSync(join(work, 'serverless.yml'), 'service: svc\n');
    const logs = mockClient(CloudWatchLogsClient);
    // What this run writes, not what the test runner writes meanwhile.
    let out: string;
    try {
      logs
        .on(FilterLogEventsCommand, { logGroupName: '/aws/lambda/svc-prod-pod-policy' })
        .resolves({ events: [event('a', T, review())] });
      const run = await withCapturedOutput(
        () => main(['node', 'klw', '--root', work, 'logs', 'pod-policy', '--stage', 'prod', '--since', '1h']),
        { stdout: true },
      );
      assert.equal(run.result, 0, run.stderr);
      out = run.stdout;
    } finally {
      logs.restore();
    }
    assert.equal(out, '2026-11-22T10:00:00.000Z pod-policy CREATE v1/Pod default/web denied (403) 12ms warnings=2\n');
  });

  it("reads the log group in serverless.yml's provider.region without --region", async () => {
    const work = mkdtempSync(join(process.cwd(), '.klw-test-logs-'));
    after(() => rmSync(work, { recursive: true, force: true }));
    cpSync(FIXTURE_FUNCTIONS, join(work, 'functions'), { recursive: true });
    // Where `klw deploy` without --region deploys; AWS_REGION names another region.
    writeFileSync(
      join(work, 'serverless.yml'),
      "service: svc\nprovider:\n  name: aws\n  region: ${opt:region, 'eu-west-1'}\n",
    );
    const logs = mockClient(CloudWatchLogsClient);
    const original = process.stdout.write.bind(process.stdout);
    const region = process.env.AWS_REGION;
    try {
      logs.on(FilterLogEventsCommand).resolves({ events: [] });
      process.env.AWS_REGION = 'us-west-2';
      process.stdout.write = (() => true) as typeof process.stdout.write;
      assert.equal(await main(['node', 'klw', '--root', work, 'logs', 'pod-policy', '--stage', 'prod']), 0);
      assert.equal(
        await main(['node', 'klw', '--root', work, 'logs', 'pod-policy', '--stage', 'prod', '--region', 'ap-south-1']),
        0,
      );
    } finally {
      process.stdout.write = original;
      if (region === undefined) delete process.env.AWS_REGION;
      else process.env.AWS_REGION = region;
      logs.restore();
    }
    const regions = await Promise.all(
      logs.commandCalls(FilterLogEventsCommand).map((c) => c.thisValue.config.region()),
    );
    assert.deepEqual(regions, ['eu-west-1', 'ap-south-1']);
  });
});
