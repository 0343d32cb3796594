import assert from 'node:assert/strict';
import { describe, it, mock } from 'node:test';
import { GetParameterCommand, ParameterNotFound, SSMClient } from '@aws-sdk/client-ssm';
import { mockClient } from 'aws-sdk-client-mock';
import { allow, defineConversionWebhook, defineValidatingWebhook, deny } from '../../../lib/index.ts';
import { createLogger } from '../../../lib/log.ts';
import { enforceMatchConditions } from '../../../lib/matchconditions/index.ts';
import { lambdaContext } from '../../../lib/harness/events.ts';
import { admissionReview, conversionReview, toEvent } from '../../../lib/testing/index.ts';
import { emfProblems } from '../emf.ts';

const EAST = 'e'.repeat(43);
const WEST = 'w'.repeat(43);
const WEST_OLD = 'W'.repeat(43);
const SERVICE = 's'.repeat(43);

const denying = defineValidatingWebhook({ name: 'pod-policy', rules: [], validate: () => deny('no pods today') });
const review = admissionReview({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' } });
const fleet = JSON.stringify({ east: { enforcement: 'Deny' }, west: { enforcement: 'Warn' } });

/** One call through the handler: status, parsed body and log lines. */
async function call(
  path: string,
  env: NodeJS.ProcessEnv,
  webhook: typeof denying | ReturnType<typeof defineConversionWebhook> = denying,
  body: unknown = review,
) {
  const raw: string[] = [];
  const handler = webhook.withOptions({ env, logger: createLogger({ level: 'debug', sink: (l) => raw.push(l) }) });
  const result = await handler(toEvent(body, { path, format: 'http' }), lambdaContext());
  const lines = raw.map((l) => JSON.parse(l) as Record<string, unknown>);
  return { status: result.statusCode, body: result.body, raw, lines };
}

/** The `response` of an AdmissionReview reply. */
function response(body: string): { allowed: boolean; warnings?: string[] } {
  return (JSON.parse(body) as { response: { allowed: boolean; warnings?: string[] } }).response;
}

describe('a fleet function names its caller by the path secret', () => {
  const env = { KLW_FLEET: fleet, KLW_FLEET_PATH_SECRETS: JSON.stringify({ east: EAST, west: `${WEST},${WEST_OLD}` }) };

  it('two clusters, the same review: Deny for one, Warn for the other, each named in the log', async () => {
    const east = await call(`/pod-policy/${EAST}`, env);
    assert.equal(east.status, 200);
    assert.equal(response(east.body).allowed, false);
    const west = await call(`/pod-policy/${WEST}`, env);
    assert.equal(west.status, 200);
    const answer = response(west.body);
    assert.equal(answer.allowed, true);
    assert.match(answer.warnings?.[0] ?? '', /would deny the request: no pods today/);
    const eastLine = east.lines.find((l) => l.msg === 'review');
    const westLine = west.lines.find((l) => l.msg === 'review');
    assert.equal(eastLine?.cluster, 'east');
    assert.equal(westLine?.cluster, 'west');
    assert.equal(westLine?.enforcement, 'Warn');
    for (const l of [...east.raw, ...west.raw]) assert.ok(!l.includes(EAST) && !l.includes(WEST), `secret in ${l}`);
  });

  it('the cluster is an EMF dimension next to the webhook, valid EMF', async () => {
    const out = await call(`/pod-policy/${WEST}`, env);
    const index = out.lines.findIndex((l) => l.msg === 'review');
    type Emf = { _aws: { CloudWatchMetrics: { Dimensions: string[][] }[] } };
    const line = out.lines[index] as Emf;
    const dimensions = line._aws.CloudWatchMetrics[0]!.Dimensions;
    assert.deepEqual(dimensions, [['webhook', 'operation'], ['webhook'], ['webhook', 'cluster']]);
    assert.deepEqual(emfProblems(out.raw[index]!), []);
    // An open function's line names no fleet cluster: the dimension value stays bounded.
    const open = defineValidatingWebhook({ name: 'open-policy', rules: [], auth: 'none', validate: () => allow() });
    const unknown = await call('/open-policy', env, open);
    const openIndex = unknown.lines.findIndex((l) => l.msg === 'review');
    assert.equal(unknown.lines[openIndex]!.cluster, 'unknown');
    assert.deepEqual(emfProblems(unknown.raw[openIndex]!), []);
  });

  it('the cluster setting wins over KLW_ENFORCEMENT; a cluster without one falls back to it', async () => {
    const settings = JSON.stringify({ east: { enforcement: 'Deny' }, west: {} });
    const mixed = { ...env, KLW_FLEET: settings, KLW_ENFORCEMENT: 'Audit' };
    assert.equal(response((await call(`/pod-policy/${EAST}`, mixed)).body).allowed, false);
    const west = await call(`/pod-policy/${WEST}`, mixed);
    assert.equal(response(west.body).allowed, true);
    assert.equal(west.lines.find((l) => l.msg === 'review')?.enforcement, 'Audit');
  });

  it('an unknown secret, or the service-wide one, answers 404 like an unknown route', async () => {
    const withService = { ...env, KLW_PATH_SECRET: SERVICE };
    for (const path of ['/pod-policy/unknown-secret-unknown-secret-00', `/pod-policy/${SERVICE}`, '/pod-policy']) {
      const out = await call(path, withService);
      assert.equal(out.status, 404, path);
      assert.equal(out.body, '{"message":"Not Found"}');
      assert.ok(out.lines.some((l) => l.status === 404 && l.reason === 'missing or wrong path secret'));
    }
  });

  it('a retired cluster secret answers 404 while the other cluster still works', async () => {
    assert.equal((await call(`/pod-policy/${WEST_OLD}`, env)).status, 200, 'previous secret during rotation');
    const retired = { ...env, KLW_FLEET_PATH_SECRETS: JSON.stringify({ east: EAST, west: WEST }) };
    assert.equal((await call(`/pod-policy/${WEST_OLD}`, retired)).status, 404);
    assert.equal((await call(`/pod-policy/${WEST}`, retired)).status, 200);
    assert.equal((await call(`/pod-policy/${EAST}`, retired)).status, 200);
  });

  it('a broken fleet setting answers 500, never falling back to the service secret', async () => {
    const broken = { KLW_FLEET: '{not json', KLW_PATH_SECRET: SERVICE };
    const out = await call(`/pod-policy/${SERVICE}`, broken);
    assert.equal(out.status, 500);
    assert.ok(out.lines.some((l) => l.level === 'error' && String(l.msg).includes('KLW_FLEET')));
  });

  it('conversion webhooks are named by cluster too', async () => {
    const conv = defineConversionWebhook({
      name: 'crontab-conversion',
      crd: 'crontabs.example.com',
      convert: (o, d) => ({ ...o, apiVersion: d }),
    });
    const body = conversionReview([], 'example.com/v1');
    const out = await call(`/crontab-conversion/${EAST}`, env, conv, body);
    assert.equal(out.status, 200);
    assert.equal(out.lines.find((l) => l.msg === 'review')?.cluster, 'east');
    assert.equal((await call('/crontab-conversion/nope-nope-nope-nope-nope', env, conv, body)).status, 404);
  });

  it("an auth: 'none' function has no caller cluster: logged as unknown", async () => {
    const open = defineValidatingWebhook({ name: 'open-policy', rules: [], auth: 'none', validate: () => allow() });
    const out = await call('/open-policy', env, open);
    assert.equal(out.status, 200);
    assert.equal(out.lines.find((l) => l.msg === 'review')?.cluster, 'unknown');
  });
});

describe('every line of a fleet request names its cluster and request', () => {
  const env = { KLW_FLEET: fleet, KLW_FLEET_PATH_SECRETS: JSON.stringify({ east: EAST, west: WEST }) };
  const chatty = defineValidatingWebhook({
    name: 'pod-policy',
    rules: [],
    validate: (_review, ctx) => {
      // A function cannot pass itself off as another cluster.
      ctx.log.warn('user warning', { cluster: 'west', note: 1 });
      // A method taken off the logger still writes the request's line.
      const { info } = ctx.log;
      info('detached');
      throw new Error('boom');
    },
  });

  it("a user warning and the function's failure carry the calling cluster and request id", async () => {
    const out = await call(`/pod-policy/${EAST}`, env, chatty);
    const warning = out.lines.find((l) => l.msg === 'user warning');
    const requestId = out.lines.find((l) => l.msg === 'review')?.requestId;
    assert.equal(typeof requestId, 'string');
    assert.deepEqual(
      [warning?.level, warning?.cluster, warning?.requestId, warning?.note],
      ['warn', 'east', requestId, 1],
    );
    const detached = out.lines.find((l) => l.msg === 'detached');
    assert.deepEqual([detached?.cluster, detached?.requestId], ['east', requestId]);
    const failure = out.lines.find((l) => l.level === 'error');
    assert.equal(failure?.cluster, 'east');
    assert.equal(failure?.requestId, requestId);
    assert.match(String(failure?.error), /boom/);
    const west = await call(`/pod-policy/${WEST}`, env, chatty);
    assert.ok(west.lines.length >= 3);
    assert.ok(west.lines.every((l) => l.cluster === 'west'));
  });

  it('a request refused after authentication (a bad body) names its cluster; a refused secret names none', async () => {
    const bad = await call(`/pod-policy/${EAST}`, env, denying, { kind: 'AdmissionReview' });
    assert.equal(bad.status, 400);
    assert.equal(bad.lines.find((l) => l.msg === 'rejected')?.cluster, 'east');
    const refused = await call('/pod-policy/nope-nope-nope-nope-nope', env);
    assert.equal(refused.lines.find((l) => l.msg === 'rejected')?.cluster, undefined);
  });

  it('without a fleet the lines carry the request id and no cluster', async () => {
    const out = await call('/pod-policy', {}, chatty);
    const warning = out.lines.find((l) => l.msg === 'user warning');
    assert.equal(warning?.requestId, out.lines.find((l) => l.msg === 'review')?.requestId);
    assert.equal(warning?.cluster, 'west', 'a field of its own, there being no cluster to name');
  });
});

describe("in-function matchConditions use the calling cluster's Kubernetes version", () => {
  const versions = JSON.stringify({ east: { kubeVersion: '1.29' }, west: { kubeVersion: '1.31' } });
  const env = { KLW_FLEET: versions, KLW_FLEET_PATH_SECRETS: JSON.stringify({ east: EAST, west: WEST }) };
  let calls = 0;
  const seen: Array<[string | undefined, string | undefined]> = [];
  // The ip library came with Kubernetes 1.30: east's environment lacks it, west's has it.
  const byAddress = defineValidatingWebhook(
    enforceMatchConditions({
      name: 'pod-policy',
      rules: [],
      matchConditions: [{ name: 'has-ip', expression: "isIP('10.0.0.1')" }],
      validate: (_review, ctx) => (calls++, seen.push([ctx.cluster, ctx.kubeVersion]), deny('no pods today')),
    }),
  );

  it('a condition newer than the cluster fails by failurePolicy there, naming the version; it runs in the other', async () => {
    calls = 0;
    const east = await call(`/pod-policy/${EAST}`, env, byAddress);
    const answer = (JSON.parse(east.body) as { response: { allowed: boolean; status?: { message?: string } } })
      .response;
    assert.equal(answer.allowed, false);
    assert.equal(calls, 0, 'the function did not run');
    const warning = east.lines.find((l) => l.level === 'warn');
    assert.equal(warning?.cluster, 'east');
    assert.match(String(warning?.error), /matchCondition "has-ip" is not available in Kubernetes 1\.29/);
    const west = await call(`/pod-policy/${WEST}`, env, byAddress);
    assert.equal(response(west.body).allowed, false);
    assert.equal(calls, 1);
    assert.deepEqual(seen.at(-1), ['west', '1.31']);
  });

  it("without a version in the fleet, the newest environment (or the registration's) applies", async () => {
    calls = 0;
    const unversioned = { ...env, KLW_FLEET: JSON.stringify({ east: {}, west: { kubeVersion: '1.29' } }) };
    await call(`/pod-policy/${EAST}`, unversioned, byAddress);
    assert.equal(calls, 1);
    assert.deepEqual(seen.at(-1), ['east', undefined]);
    await call(`/pod-policy/${WEST}`, unversioned, byAddress);
    assert.equal(calls, 1, 'west is 1.29 now: the condition fails there');
  });
});

describe('a deployed fleet function reads each cluster secret from SSM', () => {
  it('a cluster whose parameter is gone is refused; the other keeps working', async () => {
    const ssm = mockClient(SSMClient);
    try {
      const template = '/klw/fleet-handler/clusters/{cluster}/path-secret';
      ssm
        .on(GetParameterCommand, { Name: '/klw/fleet-handler/clusters/east/path-secret' })
        .resolves({ Parameter: { Value: EAST } });
      ssm
        .on(GetParameterCommand, { Name: '/klw/fleet-handler/clusters/west/path-secret' })
        .rejects(new ParameterNotFound({ message: 'Parameter not found', $metadata: {} }));
      const env = {
        KLW_FLEET: fleet,
        KLW_FLEET_PATH_SECRET_SSM: template,
        AWS_LAMBDA_FUNCTION_NAME: 'svc-prod-pod-policy',
      };
      const east = await call(`/pod-policy/${EAST}`, env);
      assert.equal(east.status, 200);
      assert.equal(east.lines.find((l) => l.msg === 'review')?.cluster, 'east');
      const west = await call(`/pod-policy/${WEST}`, env);
      assert.equal(west.status, 404);
      const line = west.lines.find((l) => l.status === 404) as { problems?: string[] };
      assert.match(String(line.problems), /cluster west: could not read SSM parameter/);
      const names = ssm.commandCalls(GetParameterCommand).map((c) => c.args[0].input.Name);
      assert.ok(
        names.every((n) => n?.startsWith('/klw/fleet-handler/clusters/')),
        'only cluster parameters are read',
      );
    } finally {
      ssm.restore();
    }
  });
  const silent = "a silent SSM is given the request's read time only: its cluster is refused, the other answered";
  // The timeout is a hang guard only: a read that is never aborted fails the test instead of hanging the run.
  it(silent, { timeout: 120_000 }, async () => {
    const ssm = mockClient(SSMClient);
    mock.timers.enable({ apis: ['setTimeout'] });
    try {
      const template = '/klw/fleet-silent/clusters/{cluster}/path-secret';
      ssm
        .on(GetParameterCommand, { Name: '/klw/fleet-silent/clusters/east/path-secret' })
        .callsFake(() => new Promise(() => {}));
      ssm
        .on(GetParameterCommand, { Name: '/klw/fleet-silent/clusters/west/path-secret' })
        .resolves({ Parameter: { Value: WEST } });
      const env = { KLW_FLEET: fleet, KLW_FLEET_PATH_SECRET_SSM: template };
      const raw: string[] = [];
      const handler = denying.withOptions({ env, logger: createLogger({ level: 'debug', sink: (l) => raw.push(l) }) });
      // 400 ms left: a budget of 300 ms (less the 100 ms margin), so 150 ms for the reads.
      const context = { awsRequestId: 'r', getRemainingTimeInMillis: () => 400 };
      const west = handler(toEvent(review, { path: `/pod-policy/${WEST}` }), context);
      while (ssm.commandCalls(GetParameterCommand).length < 2) await new Promise((r) => setImmediate(r));
      mock.timers.tick(150);
      assert.equal((await west).statusCode, 200);
      const east = await handler(toEvent(review, { path: `/pod-policy/${EAST}` }), context);
      assert.equal(east.statusCode, 404);
      const parsed = raw.map((l) => JSON.parse(l) as { status?: number; problems?: string[] });
      const refusal = parsed.find((l) => l.status === 404);
      const timedOut = /cluster east: could not read SSM parameter \S+ \(ParameterTimeout: .* within (\d+) ms\)/;
      const within = timedOut.exec(String(refusal?.problems));
      assert.ok(within, String(refusal?.problems));
      assert.ok(Number(within[1]) <= 150, 'bounded by the time left, not the 3 s cap');
    } finally {
      mock.timers.reset();
      ssm.restore();
    }
  });
});
