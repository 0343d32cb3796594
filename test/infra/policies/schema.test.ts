// Strict validation of policy objects against their version's schema (generated from Kubernetes'
// OpenAPI): unknown fields, wrong types and repeated keys of keyed lists refused with their path.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { admissionTypeName, schemaProblems } from '../../../infra/policies/schema.ts';

const vap = (spec: Record<string, unknown>) => ({
  apiVersion: 'admissionregistration.k8s.io/v1beta1',
  kind: 'ValidatingAdmissionPolicy',
  metadata: { name: 'p' },
  spec: { failurePolicy: 'Fail', validations: [{ expression: 'true' }], ...spec },
});
const type = admissionTypeName('v1beta1', 'ValidatingAdmissionPolicy')!;

describe('schemaProblems', () => {
  it('knows the kinds of each version: MAP v1 and v1beta1, VAP v1 and v1beta1, not VAP v1alpha2', () => {
    for (const [version, kind] of [
      ['v1', 'MutatingAdmissionPolicy'],
      ['v1beta1', 'MutatingAdmissionPolicyBinding'],
      ['v1', 'ValidatingAdmissionPolicyBinding'],
      ['v1beta1', 'ValidatingAdmissionPolicy'],
    ])
      assert.ok(admissionTypeName(version!, kind!), `${version} ${kind}`);
    assert.equal(admissionTypeName('v1alpha2', 'ValidatingAdmissionPolicy'), undefined);
    assert.equal(admissionTypeName('v1', 'ValidatingAdmissionPolicySpecs'), undefined);
  });
  it('a valid object has no problem', () => {
    assert.deepEqual(schemaProblems(vap({}), type), []);
  });
  it('an unknown field, a wrong type, a repeated key of a keyed list: each with its path', () => {
    assert.deepEqual(schemaProblems(vap({ severity: 'high' }), type), ['.spec.severity: field not declared in schema']);
    assert.match(schemaProblems(vap({ failurePolicy: 1 }), type).join(), /^\.spec\.failurePolicy: expected string/);
    const repeated = vap({
      matchConditions: [
        { name: 'a', expression: 'true' },
        { name: 'a', expression: 'false' },
      ],
    });
    assert.match(
      schemaProblems(repeated, type).join(),
      /spec\.matchConditions: duplicate entries for key \[name="a"\]/,
    );
  });
});
