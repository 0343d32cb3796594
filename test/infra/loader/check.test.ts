// The loader's check of a module's exports reads a policy's native objects only for a module that
// declares a policy: the policy code (and the CEL engine it pulls in) is not loaded for the others.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { loadFunctions } from '../../../infra/functions.ts';
import { checkModule, type PolicyReader } from '../../../infra/loader/check.ts';
import { policyOf, policyRegistrationOf } from '../../../infra/policies/registration.ts';
import { allow, defineValidatingWebhook, on, Pod } from '../../../lib/index.ts';
import { MUTATING, samplePolicies, VALIDATING } from '../policies/project.ts';
import { GOOD_WEBHOOK, keptFunctions } from '../scratch-projects.ts';

const { validatingWebhook, validating, mutatingWebhook, mutating } = samplePolicies();

/** A policy reader that counts how often it is asked for. */
function counted(): { readPolicy: () => Promise<PolicyReader>; asked: () => number } {
  let asked = 0;
  return {
    readPolicy: async () => {
      asked++;
      return policyRegistrationOf;
    },
    asked: () => asked,
  };
}

describe("the loader's check of a module", () => {
  it('does not ask for the policy reader for a plain webhook', async () => {
    const { readPolicy, asked } = counted();
    const webhook = defineValidatingWebhook({ name: 'plain', rules: [on(Pod).create()], validate: () => allow() });
    const checked = await checkModule('plain', 'functions/plain/index.ts', { default: webhook }, readPolicy);
    assert.equal(policyOf(checked.registration), undefined);
    assert.equal(asked(), 0);
  });

  it('reads the policy of a validating or mutating policy', async () => {
    const { readPolicy, asked } = counted();
    const checkedValidating = await checkModule(
      'replica-limit',
      'functions/replica-limit/index.ts',
      { default: validatingWebhook },
      readPolicy,
    );
    assert.deepEqual(policyOf(checkedValidating.registration), validating);
    const checkedMutating = await checkModule(
      'add-team',
      'functions/add-team/index.ts',
      { default: mutatingWebhook },
      readPolicy,
    );
    assert.deepEqual(policyOf(checkedMutating.registration), mutating);
    assert.equal(asked(), 2);
  });

  it("registers the policies of a project's policy functions in the loader's child, and none for the others", async () => {
    // Only loaded: kept across runs (scratch-projects.ts), the loader's build of it with it.
    const root = await keptFunctions('check-policies', {
      'replica-limit': VALIDATING(),
      'add-team': MUTATING,
      plain: GOOD_WEBHOOK('plain'),
    });
    const functions = await loadFunctions(root);
    assert.deepEqual(
      functions.map((f) => [f.name, policyOf(f.registration)?.kind]),
      [
        ['add-team', 'MutatingAdmissionPolicy'],
        ['plain', undefined],
        ['replica-limit', 'ValidatingAdmissionPolicy'],
      ],
    );
  });
});
