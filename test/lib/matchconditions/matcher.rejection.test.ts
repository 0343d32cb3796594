// The API server's words when matchConditions fail to evaluate: each condition's error as the CEL
// filter words it (admission/plugin/cel filter.go: `expression '<expr>' resulted in error: <msg>`,
// `compilation error: <msg>`), several joined as apimachinery's utilerrors aggregate prints them, and
// the request rejected as webhook.go's ShouldCallHook rejects it: Forbidden, naming the group,
// resource and name (apierrors.NewForbidden).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KubeObject } from '../../../lib/index.ts';
import { createMatcher, forbiddenByConditions } from '../../../lib/matchconditions/matcher.ts';
import { admissionReview } from '../../../lib/testing/index.ts';

const deployment = (name?: string): KubeObject =>
  ({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { ...(name ? { name } : { generateName: 'web-' }), namespace: 'default' },
    spec: { replicas: 2 },
  }) as KubeObject;

describe("a failing condition's error", () => {
  it("is the filter's `expression '<expr>' resulted in error: <cel-go message>`, the expression as written", () => {
    const expression = "  object.spec.template.metadata.labels['app'] == 'web'";
    const outcome = createMatcher([{ name: 'app', expression }], 'Fail').evaluate(
      admissionReview(deployment('web')).request,
    );
    assert.deepEqual(outcome, {
      error: `expression '${expression}' resulted in error: no such key: template`,
      name: 'app',
    });
  });

  it('joins the errors of several conditions in brackets, each message once (utilerrors aggregate)', () => {
    const conditions = [
      { name: 'a', expression: 'object.spec.x == 1' },
      { name: 'b', expression: 'object.spec.replicas / 0 == 1' },
      { name: 'c', expression: 'object.spec.x == 1' },
      { name: 'd', expression: 'true' },
    ];
    const outcome = createMatcher(conditions, 'Fail').evaluate(admissionReview(deployment('web')).request);
    assert.deepEqual(outcome, {
      error:
        "[expression 'object.spec.x == 1' resulted in error: no such key: x, " +
        "expression 'object.spec.replicas / 0 == 1' resulted in error: division by zero]",
      name: 'a',
    });
  });

  it('of a condition that does not compile is `compilation error: <compiler message>`', () => {
    const outcome = createMatcher([{ name: 'v', expression: "isSemver('1.2.3')" }], 'Fail', {
      kubeVersion: { major: 1, minor: 30 },
    }).evaluate(admissionReview(deployment('web')).request);
    assert.ok('error' in outcome);
    assert.match(
      outcome.error,
      /^compilation error: matchCondition "v" is not available in Kubernetes 1\.30: compilation failed: ERROR: <input>:1:1: undeclared reference to 'isSemver'/,
    );
  });

  it('gives way to a false condition, which skips the call', () => {
    const conditions = [
      { name: 'a', expression: 'object.spec.x == 1' },
      { name: 'b', expression: 'false' },
    ];
    assert.deepEqual(createMatcher(conditions, 'Fail').evaluate(admissionReview(deployment('web')).request), {
      matched: false,
      name: 'b',
    });
  });
});

describe('the rejection (apierrors.NewForbidden)', () => {
  const error = "expression 'object.x' resulted in error: no such key: x";

  it('names the resource with its group, and the object', () => {
    assert.deepEqual(forbiddenByConditions(admissionReview(deployment('web')).request, error), {
      code: 403,
      reason: 'Forbidden',
      message: `deployments.apps "web" is forbidden: ${error}`,
    });
  });

  it('names a core resource without a group', () => {
    const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'ns' } } as KubeObject;
    assert.equal(forbiddenByConditions(admissionReview(pod).request, error).message, `pods "p" is forbidden: ${error}`);
  });

  it('leaves the name out when the request has none (generateName)', () => {
    assert.equal(
      forbiddenByConditions(admissionReview(deployment()).request, error).message,
      `deployments.apps is forbidden: ${error}`,
    );
  });

  it('says only `forbidden` without a resource', () => {
    assert.equal(
      forbiddenByConditions({ resource: { group: '', version: 'v1', resource: '' } }, error).message,
      `forbidden: ${error}`,
    );
  });
});
