import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { allow, defineMutatingWebhook, defineValidatingWebhook, deny, type KubeObject } from '../../../lib/index.ts';
import { createLogger } from '../../../lib/log.ts';
import { enforceMatchConditions } from '../../../lib/matchconditions/index.ts';
import { loadRegexEngine, regexCacheSize } from '../../../packages/kube-cel/src/libraries/regex.ts';
import { admissionReview, invoke } from '../../../lib/testing/index.ts';

const podRules = [{ operations: ['CREATE' as const], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'] }];
const pod = (labels?: Record<string, string>): KubeObject =>
  ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'web', namespace: 'default', ...(labels ? { labels } : {}) },
    spec: { containers: [{ name: 'app', image: 'app:1' }] },
  }) as KubeObject;
// The function's own answer, as an old API server (which drops matchConditions) would get it.
const asOldCluster = { matchConditions: false };

describe('enforceMatchConditions (in-function enforcement)', () => {
  let calls = 0;
  const teamOnly = defineValidatingWebhook(
    enforceMatchConditions({
      name: 'team-only',
      rules: podRules,
      matchConditions: [
        { name: 'has-team', expression: "has(object.metadata.labels) && 'team' in object.metadata.labels" },
        { name: 'not-breakglass', expression: "!authorizer.requestResource.check('breakglass').allowed()" },
      ],
      validate: () => (calls++, deny('team pods are frozen')),
    }),
  );

  it('marks the registration', () => {
    assert.equal(teamOnly.registration.enforceMatchConditions, true);
    assert.equal(teamOnly.registration.matchConditions?.length, 2);
  });

  it('admits what the conditions exclude without running validate', async () => {
    calls = 0;
    const result = await invoke(teamOnly, admissionReview(pod(), { namespace: 'default' }), asOldCluster);
    assert.equal(result.allowed, true);
    assert.equal(calls, 0);
  });

  it('runs validate when the conditions hold; conditions on authorizer are left to the API server', async () => {
    calls = 0;
    const result = await invoke(teamOnly, admissionReview(pod({ team: 'a' }), { namespace: 'default' }), asOldCluster);
    assert.equal(result.allowed, false);
    assert.equal(result.status?.message, 'team pods are frozen');
    assert.equal(calls, 1);
  });

  it('rejects by failurePolicy Fail when a condition fails to evaluate', async () => {
    const lines: string[] = [];
    const strict = defineValidatingWebhook(
      enforceMatchConditions({
        name: 'strict',
        rules: podRules,
        matchConditions: [{ name: 'team', expression: "object.metadata.labels['team'] == 'a'" }],
        validate: () => allow(),
      }),
    );
    const result = await invoke(strict, admissionReview(pod(), { namespace: 'default' }), {
      ...asOldCluster,
      handlerOptions: { logger: createLogger({ level: 'warn', sink: (l) => lines.push(l) }) },
    });
    assert.equal(result.allowed, false);
    assert.equal(result.status?.code, 403);
    assert.equal(
      result.status?.message,
      `pods "web" is forbidden: expression 'object.metadata.labels['team'] == 'a'' resulted in error: no such key: labels`,
    );
    assert.match(
      lines.join('\n'),
      /"msg":"matchConditions failed to evaluate; rejected by failurePolicy Fail".*"condition":"team"/,
    );
  });

  it('admits by failurePolicy Ignore (the mutating default) when a condition fails, without mutating', async () => {
    let mutated = false;
    const lenient = defineMutatingWebhook(
      enforceMatchConditions({
        name: 'lenient',
        rules: podRules,
        matchConditions: [{ name: 'team', expression: "object.metadata.labels['team'] == 'a'" }],
        mutate: (p) => {
          mutated = true;
          p.metadata!.labels = { ...p.metadata!.labels, touched: 'yes' };
        },
      }),
    );
    const result = await invoke(lenient, admissionReview(pod(), { namespace: 'default' }), asOldCluster);
    assert.equal(result.allowed, true);
    assert.deepEqual(result.patch, []);
    assert.equal(mutated, false);
    const labelled = await invoke(lenient, admissionReview(pod({ team: 'a' }), { namespace: 'default' }), asOldCluster);
    assert.equal(mutated, true);
    assert.deepEqual(labelled.patch, [{ op: 'add', path: '/metadata/labels/touched', value: 'yes' }]);
  });

  it('keeps the webhook name and failurePolicy the registration gets', () => {
    const named = enforceMatchConditions({
      name: 'x',
      webhookName: 'x.example.com',
      failurePolicy: 'Ignore',
      rules: podRules,
      validate: () => allow(),
    });
    assert.equal(named.webhookName, 'x.example.com');
    assert.equal(named.failurePolicy, 'Ignore');
    assert.equal(named.enforceMatchConditions, true);
  });

  it('an expression stopped at the cost limit follows failurePolicy', async () => {
    const items = Array.from({ length: 2000 }, (_, i) => i);
    const big = { ...pod({ team: 'a' }), items } as KubeObject;
    // A map inside a map over 2,000 items: about 16 million operations, past the limit.
    const quadratic = [{ name: 'quadratic', expression: 'object.items.map(x, object.items.map(y, x + y)).size() > 0' }];
    let calls = 0;
    const failing = defineValidatingWebhook(
      enforceMatchConditions({
        name: 'costly',
        rules: podRules,
        failurePolicy: 'Fail',
        matchConditions: quadratic,
        validate: () => (calls++, allow()),
      }),
    );
    const rejected = await invoke(failing, admissionReview(big, { namespace: 'default' }), asOldCluster);
    assert.equal(rejected.allowed, false);
    assert.equal(
      rejected.status?.message,
      `pods "web" is forbidden: expression '${quadratic[0]!.expression}' resulted in error: operation cancelled: actual cost limit exceeded`,
    );
    const ignoring = defineValidatingWebhook(
      enforceMatchConditions({
        name: 'costly',
        rules: podRules,
        failurePolicy: 'Ignore',
        matchConditions: quadratic,
        validate: () => (calls++, deny('never')),
      }),
    );
    assert.equal((await invoke(ignoring, admissionReview(big, { namespace: 'default' }), asOldCluster)).allowed, true);
    assert.equal(calls, 0);
  });

  it('inside Lambda, compiles the conditions when the function is defined (the init phase), not in the first review', async () => {
    const before = regexCacheSize();
    const saved = process.env.AWS_LAMBDA_FUNCTION_NAME;
    process.env.AWS_LAMBDA_FUNCTION_NAME = 'eager';
    try {
      defineValidatingWebhook(
        enforceMatchConditions({
          name: 'eager',
          rules: podRules,
          matchConditions: [{ name: 'named', expression: "object.metadata.name.matches('^eager-[0-9]+$')" }],
          validate: () => deny('named'),
        }),
      );
    } finally {
      if (saved === undefined) delete process.env.AWS_LAMBDA_FUNCTION_NAME;
      else process.env.AWS_LAMBDA_FUNCTION_NAME = saved;
    }
    // A condition with a regular expression is compiled once the RE2 engine is loaded, still in
    // the init phase: after the pending loads, before any review.
    await loadRegexEngine();
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(regexCacheSize(), before + 1);
  });

  it('outside Lambda, compiles the conditions on the first review, not when the function is defined', async () => {
    // Compiling checks regex literals, which puts them in the pattern cache: its size shows when.
    const before = regexCacheSize();
    const lazy = defineValidatingWebhook(
      enforceMatchConditions({
        name: 'lazy',
        rules: podRules,
        matchConditions: [{ name: 'named', expression: "object.metadata.name.matches('^lazy-[0-9]+$')" }],
        validate: () => deny('named'),
      }),
    );
    assert.equal(regexCacheSize(), before);
    const result = await invoke(lazy, admissionReview(pod(), { namespace: 'default' }), asOldCluster);
    assert.equal(result.allowed, true);
    assert.equal(regexCacheSize(), before + 1);
  });
});
