import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  allow,
  defineMutatingWebhook,
  defineValidatingWebhook,
  deny,
  errored,
  type AdmissionRegistrationInput,
  type Enforcement,
  type KubeObject,
} from '../../../lib/index.ts';
import { enforcementEnvFor, isAuditAnnotationKey, resolveEnforcement } from '../../../lib/admission/enforcement.ts';
import { admissionReview, invoke, runAdmissionChain } from '../../../lib/testing/index.ts';
import { captureLogger } from '../../helpers.ts';

type Pod = KubeObject & { spec?: { hostNetwork?: boolean } };
const pod = (hostNetwork: boolean): Pod => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'web', namespace: 'shop' },
  spec: { hostNetwork },
});
const rules: AdmissionRegistrationInput['rules'] = [
  { operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'] },
];

function policy(enforcement?: Enforcement, name = 'no-host-network') {
  return defineValidatingWebhook<Pod>({
    name,
    rules,
    ...(enforcement ? { enforcement } : {}),
    validate: (r) =>
      r.object?.spec?.hostNetwork ? deny('hostNetwork is not allowed').withWarnings('also: looked at it') : allow(),
  });
}

/** Invokes with a captured log and the given environment; returns the result and the review line. */
async function run(webhook: ReturnType<typeof policy>, object: Pod, env: NodeJS.ProcessEnv = {}) {
  const { logger, lines } = captureLogger();
  const result = await invoke(webhook, admissionReview(object), { handlerOptions: { logger, env } });
  return { result, line: lines.find((l) => l.msg === 'review')!, lines };
}

describe('enforcement modes', () => {
  it('Deny (the default) rejects', async () => {
    const { result, line } = await run(policy(), pod(true));
    assert.equal(result.allowed, false);
    assert.equal(result.wouldDeny, undefined);
    assert.equal(line.decision, 'denied');
    assert.equal(line.WouldDeny, 0);
    assert.equal(line.Denied, 1);
  });

  it('Warn admits with the denial as the first warning, and records wouldDeny in the log and metrics', async () => {
    const { result, line } = await run(policy('Warn'), pod(true));
    assert.equal(result.allowed, true);
    assert.equal(result.status, undefined);
    assert.deepEqual(result.warnings, [
      'admission webhook "no-host-network.webhooks.kube-lambda.dev" would deny the request: hostNetwork is not allowed',
      'also: looked at it',
    ]);
    assert.equal(result.wouldDeny, 'hostNetwork is not allowed');
    assert.equal(result.review.response.auditAnnotations, undefined);
    assert.equal(line.decision, 'allowed');
    assert.equal(line.enforcement, 'Warn');
    assert.equal(line.wouldDeny, true);
    assert.equal(line.WouldDeny, 1);
    assert.equal(line.Denied, 0);
    assert.equal(line.Allowed, 1);
  });

  it('Audit admits with the denial in the would-deny audit annotation', async () => {
    const { result, line } = await run(policy('Audit'), pod(true));
    assert.equal(result.allowed, true);
    assert.deepEqual(result.review.response.auditAnnotations, { 'would-deny': 'hostNetwork is not allowed' });
    assert.deepEqual(result.warnings, ['also: looked at it']);
    assert.equal(result.wouldDeny, 'hostNetwork is not allowed');
    assert.equal(line.enforcement, 'Audit');
    assert.equal(line.WouldDeny, 1);
  });

  it('changes nothing for requests that are allowed', async () => {
    for (const mode of ['Warn', 'Audit'] as const) {
      const { result, line } = await run(policy(mode), pod(false));
      assert.equal(result.allowed, true);
      assert.deepEqual(result.warnings, []);
      assert.equal(result.wouldDeny, undefined);
      assert.equal(line.WouldDeny, 0);
    }
  });

  it('is overridden by KLW_ENFORCEMENT, and KLW_ENFORCEMENT_<NAME> overrides both', async () => {
    assert.equal((await run(policy(), pod(true), { KLW_ENFORCEMENT: 'Warn' })).result.allowed, true);
    assert.equal((await run(policy('Warn'), pod(true), { KLW_ENFORCEMENT: 'Deny' })).result.allowed, false);
    const both = await run(policy(), pod(true), { KLW_ENFORCEMENT: 'Warn', KLW_ENFORCEMENT_NO_HOST_NETWORK: 'Audit' });
    assert.deepEqual(both.result.review.response.auditAnnotations, { 'would-deny': 'hostNetwork is not allowed' });
    const other = await run(policy('Warn'), pod(true), { KLW_ENFORCEMENT_SOME_OTHER: 'Deny' });
    assert.equal(other.result.allowed, true);
  });

  it('refuses an override that names no mode: the webhook denies and its review line says why', async () => {
    const { result, line } = await run(policy('Warn'), pod(true), { KLW_ENFORCEMENT: 'warn-only' });
    assert.equal(result.allowed, false);
    assert.match(line.enforcementProblem, /KLW_ENFORCEMENT="warn-only" is not one of Deny, Warn, Audit/);
  });

  it('leaves errored() and failures to failurePolicy', async () => {
    const failing = defineValidatingWebhook({
      name: 'broken',
      rules,
      enforcement: 'Warn',
      validate: () => errored(500, 'backend down'),
    });
    const result = await invoke(failing, admissionReview(pod(true)));
    assert.equal(result.allowed, false);
    assert.equal(result.status?.code, 500);
    const throwing = defineValidatingWebhook({
      name: 'throws',
      rules,
      enforcement: 'Audit',
      validate: () => {
        throw new Error('bug');
      },
    });
    assert.equal((await invoke(throwing, admissionReview(pod(true)), { expectFailure: true })).allowed, false);
  });

  it('turns a mutating webhook denial into an unpatched admission and leaves its patches alone', async () => {
    const w = defineMutatingWebhook<Pod>({
      name: 'mutator',
      rules,
      enforcement: 'Warn',
      mutate: (o) => {
        if (o.spec?.hostNetwork) return deny('no host network\nfor you');
        (o.metadata!.labels ??= {}).checked = 'yes';
      },
    });
    const denied = await invoke(w, admissionReview(pod(true)));
    assert.equal(denied.allowed, true);
    assert.deepEqual(denied.patch, []);
    // Line breaks would make the API server drop the warning: they become spaces.
    assert.deepEqual(denied.warnings, [
      'admission webhook "mutator.webhooks.kube-lambda.dev" would deny the request: no host network for you',
    ]);
    const patched = await invoke(w, admissionReview(pod(false)));
    assert.equal(patched.patch.length, 1);
    assert.equal(patched.wouldDeny, undefined);
  });

  it('is reported by runAdmissionChain', async () => {
    const chain = await runAdmissionChain(pod(true), [policy('Warn'), policy('Audit', 'second-policy')]);
    assert.equal(chain.allowed, true);
    assert.deepEqual(chain.wouldDeny, [
      { webhook: 'no-host-network.webhooks.kube-lambda.dev', message: 'hostNetwork is not allowed' },
      { webhook: 'second-policy.webhooks.kube-lambda.dev', message: 'hostNetwork is not allowed' },
    ]);
    assert.equal(chain.steps[0]!.wouldDeny, 'hostNetwork is not allowed');
  });

  it('is checked when defined', () => {
    assert.throws(
      () => defineValidatingWebhook({ name: 'x', rules, enforcement: 'Dryrun' as never, validate: () => allow() }),
      /enforcement must be one of Deny, Warn, Audit/,
    );
  });

  it('resolves per webhook name', () => {
    assert.equal(enforcementEnvFor('pod-policy'), 'KLW_ENFORCEMENT_POD_POLICY');
    assert.deepEqual(resolveEnforcement({ name: 'a-b' }, { KLW_ENFORCEMENT_A_B: ' Audit ' }), {
      mode: 'Audit',
      source: 'KLW_ENFORCEMENT_A_B',
    });
    assert.deepEqual(resolveEnforcement({ name: 'a-b', enforcement: 'Warn' }, {}), {
      mode: 'Warn',
      source: 'registration',
    });
  });

  it('names each webhook its own variable, however many are asked', () => {
    // The names are kept once made: more than the kept few must still each get their own.
    for (let round = 0; round < 2; round++)
      for (let i = 0; i < 100; i++) assert.equal(enforcementEnvFor(`fn-${i}-x`), `KLW_ENFORCEMENT_FN_${i}_X`);
  });
});

describe('audit annotation keys', () => {
  it('keeps qualified name parts and drops, with a log field, what the API server would refuse', async () => {
    assert.ok(isAuditAnnotationKey('would-deny'));
    assert.ok(isAuditAnnotationKey('a.b_c-1'));
    for (const bad of ['', 'has/slash', '-leading', 'trailing.', 'sp ace', 'x'.repeat(64)])
      assert.equal(isAuditAnnotationKey(bad), false, bad);
    const w = defineValidatingWebhook({
      name: 'annotates',
      rules,
      validate: () => allow().withAuditAnnotations({ ok: '1', 'bad/key': '2' }),
    });
    const { logger, lines } = captureLogger();
    const result = await invoke(w, admissionReview(pod(false)), { handlerOptions: { logger } });
    assert.deepEqual(result.review.response.auditAnnotations, { ok: '1' });
    assert.deepEqual(lines.find((l) => l.msg === 'review')!.droppedAuditAnnotations, ['bad/key']);
  });
});
