// The `request` variable and the object's numbers as the API server gives them to matchConditions:
// the AdmissionRequest converted to JSON (empty `omitempty` fields absent), integers exact.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseJson } from '../../../lib/json.ts';
import { compileExpression, isCompileError, type AuthorizationAttributes } from '../../../lib/matchconditions/index.ts';
import { createMatcher } from '../../../lib/matchconditions/matcher.ts';
import { variablesFor } from '../../../lib/matchconditions/variables.ts';
import type { AdmissionRequest } from '../../../lib/review/schemas.ts';
import { admissionReview } from '../../../lib/testing/index.ts';

/** The value of `expression` for `request`, or `error: <message>`. */
function evaluate(
  expression: string,
  request: AdmissionRequest,
  authorize?: (a: AuthorizationAttributes) => { decision: 'Allow' | 'Deny' | 'NoOpinion' },
): unknown {
  const compiled = compileExpression(expression);
  if (isCompileError(compiled)) throw new Error(compiled.message);
  try {
    return compiled.run(variablesFor(request, authorize));
  } catch (err) {
    const e = err as { summary?: string; message: string };
    return `error: ${e.summary ?? e.message}`;
  }
}

const namespaceObject = { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team-a' } };
/** A cluster-scoped CREATE: the review has no namespace. */
const clusterScoped = (): AdmissionRequest => {
  const r = admissionReview(namespaceObject, { operation: 'CREATE' }).request;
  return {
    ...r,
    kind: { group: '', version: 'v1', kind: 'Namespace' },
    resource: { group: '', version: 'v1', resource: 'namespaces' },
    namespace: undefined,
  } as AdmissionRequest;
};

describe('request: empty fields are absent, as the API server leaves them out', () => {
  it('a cluster-scoped object has no request.namespace: reading it is "no such key", has() is false', () => {
    const request = clusterScoped();
    assert.equal(request.namespace, undefined);
    assert.equal(evaluate('has(request.namespace)', request), false);
    assert.match(String(evaluate("request.namespace != 'kube-system'", request)), /^error: no such key: namespace/);
    assert.match(String(evaluate("request.namespace == ''", request)), /^error: no such key: namespace/);
  });

  it('so a namespace condition on a cluster-scoped object follows failurePolicy', () => {
    const conditions = [{ name: 'not-kube-system', expression: "request.namespace != 'kube-system'" }];
    const fail = createMatcher(conditions, 'Fail').evaluate(clusterScoped());
    assert.ok('error' in fail && !('matched' in fail), JSON.stringify(fail));
    assert.equal(
      fail.error,
      "expression 'request.namespace != 'kube-system'' resulted in error: no such key: namespace",
    );
    const ignore = createMatcher(conditions, 'Ignore').evaluate(clusterScoped());
    assert.deepEqual({ ...ignore, error: undefined }, { matched: false, name: 'not-kube-system', error: undefined });
    // Guarded as the API server's users guard it, the condition answers.
    const guarded = [{ name: 'ns', expression: "!has(request.namespace) || request.namespace != 'kube-system'" }];
    assert.deepEqual(createMatcher(guarded).evaluate(clusterScoped()), { matched: true });
  });

  it('a namespaced object has its namespace', () => {
    const request = admissionReview(
      { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' } },
      { namespace: 'default' },
    ).request;
    assert.equal(evaluate('has(request.namespace)', request), true);
    assert.equal(evaluate("request.namespace != 'kube-system'", request), true);
  });

  it('a generateName create has no request.name', () => {
    const request = {
      ...admissionReview({ apiVersion: 'v1', kind: 'Pod', metadata: { generateName: 'p-' } }, { namespace: 'd' })
        .request,
      name: undefined,
    };
    assert.equal(evaluate('has(request.name)', request as AdmissionRequest), false);
    assert.match(String(evaluate("request.name == ''", request as AdmissionRequest)), /^error: no such key: name/);
  });

  it('subResource and requestSubResource only when there is one', () => {
    const plain = admissionReview(
      { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' } },
      { namespace: 'd' },
    ).request;
    assert.equal(evaluate('has(request.subResource) || has(request.requestSubResource)', plain), false);
    const status = { ...plain, subResource: 'status', requestSubResource: 'status' };
    assert.equal(evaluate("request.subResource == 'status' && request.requestSubResource == 'status'", status), true);
  });

  it('empty userInfo fields are absent; dryRun is always there', () => {
    const request = {
      ...admissionReview({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' } }, { namespace: 'd' }).request,
      userInfo: {},
    };
    const r = request as AdmissionRequest;
    assert.equal(evaluate('has(request.userInfo.username) || has(request.userInfo.uid)', r), false);
    assert.equal(evaluate('has(request.userInfo.groups) || has(request.userInfo.extra)', r), false);
    assert.match(String(evaluate("'system:nodes' in request.userInfo.groups", r)), /^error: no such key: groups/);
    assert.equal(evaluate('request.dryRun == false', r), true);
    const full = { ...r, userInfo: { username: 'alice', uid: 'u1', groups: ['dev'], extra: { scopes: ['a'] } } };
    assert.equal(evaluate("request.userInfo.username == 'alice' && request.userInfo.groups == ['dev']", full), true);
    assert.equal(evaluate("request.userInfo.extra.scopes == ['a'] && request.userInfo.uid == 'u1'", full), true);
  });

  it("called for an equivalent resource: kind is the webhook's, resource is the request's own", () => {
    const base = admissionReview(
      { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'd' } },
      { namespace: 'd' },
    ).request;
    const request = {
      ...base,
      kind: { group: 'apps', version: 'v1', kind: 'Deployment' },
      resource: { group: 'apps', version: 'v1', resource: 'deployments' },
      requestKind: { group: 'apps', version: 'v1beta1', kind: 'Deployment' },
      requestResource: { group: 'apps', version: 'v1beta1', resource: 'deployments' },
    };
    assert.equal(evaluate("request.kind.version == 'v1' && request.requestKind.version == 'v1beta1'", request), true);
    assert.equal(
      evaluate("request.resource.version == 'v1beta1' && request.requestResource.version == 'v1beta1'", request),
      true,
    );
    // authorizer.requestResource asks about the request's own resource too.
    const asked: AuthorizationAttributes[] = [];
    evaluate("authorizer.requestResource.check('get').allowed()", request, (a) => {
      asked.push(a);
      return { decision: 'Allow' };
    });
    assert.equal(asked[0]?.group, 'apps');
    assert.equal(asked[0]?.resource, 'deployments');
    assert.equal(asked[0]?.namespace, 'd');
    assert.equal(asked[0]?.name, 'd');
  });
});

describe("numbers from the object: int64 exactly, as the API server's decoder", () => {
  it('an integer beyond 2^53 in the review is read exactly', () => {
    const review = admissionReview(
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' } },
      { namespace: 'd' },
    );
    const text = JSON.stringify(review).replace(
      '"metadata":{',
      '"spec":{"big":9007199254740993,"max":9223372036854775807},"metadata":{',
    );
    const request = (parseJson(text) as typeof review).request;
    assert.equal(evaluate('object.spec.big == 9007199254740993', request), true);
    assert.equal(evaluate('object.spec.big - 1 == 9007199254740992', request), true);
    assert.equal(evaluate('object.spec.max == 9223372036854775807', request), true);
    assert.match(String(evaluate('object.spec.max + 1 > 0', request)), /^error: .*overflow/i);
  });
});
