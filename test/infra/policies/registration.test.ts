// What a policy function registers beside its webhook: its native objects as v1 data, its serve
// mode; nothing for a plain webhook; the loader's check attaches it to the registration.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { checkModule } from '../../../infra/loader/check.ts';
import { policyOf, policyRegistrationOf } from '../../../infra/policies/registration.ts';
import { allow, defineValidatingWebhook, on, Pod } from '../../../lib/index.ts';
import { samplePolicies } from './project.ts';

const { validatingWebhook, validating, mutatingWebhook, mutating } = samplePolicies();
const FILE = 'functions/replica-limit/index.ts';

describe('policyRegistrationOf', () => {
  it('a validating policy: its VAP and binding in v1, plain JSON', () => {
    assert.equal(validating.kind, 'ValidatingAdmissionPolicy');
    assert.equal(validating.serve, 'auto');
    assert.equal(validating.policy.metadata.name, 'replica-limit');
    assert.equal(validating.binding.spec.policyName, 'replica-limit');
    assert.deepEqual(JSON.parse(JSON.stringify(validating)), validating, 'data only: it crosses the loader process');
  });
  it('a mutating policy: its MAP and binding, the serve it asks for', () => {
    assert.equal(mutating.kind, 'MutatingAdmissionPolicy');
    assert.equal(mutating.binding.metadata.name, 'add-team');
    const webhook = {
      ...mutatingWebhook,
      mutatingPolicy: { ...mutatingWebhook.mutatingPolicy, serve: 'webhook' as const },
    };
    assert.equal(policyRegistrationOf(webhook, FILE)!.serve, 'webhook');
  });
  it('a plain webhook registers no policy', () => {
    const webhook = defineValidatingWebhook({ name: 'plain', rules: [on(Pod).create()], validate: () => allow() });
    assert.equal(policyRegistrationOf(webhook, FILE), undefined);
  });
  it('an unknown serve is an error naming the file and the values', () => {
    const webhook = {
      ...validatingWebhook,
      validatingPolicy: { ...validatingWebhook.validatingPolicy, serve: 'always' },
    };
    assert.throws(
      () => policyRegistrationOf(webhook, FILE),
      /^KlwError: functions\/replica-limit\/index.ts: serve is "always"; write serve: 'auto'/,
    );
  });
  it("the loader's check puts it on the registration", async () => {
    const checked = await checkModule('replica-limit', FILE, { default: validatingWebhook });
    assert.deepEqual(policyOf(checked.registration), validating);
    assert.equal(
      policyOf(validatingWebhook.registration),
      undefined,
      "the webhook's own registration is left as it was",
    );
  });
});
