// The package's facade: compile for a version and mode, check, evaluate with a cost limit per call,
// errors under one base class, and evaluations that never share a meter.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  admissionVariables,
  type AdmissionRequest,
  type Authorize,
  CelCompileError,
  CelError,
  CelEvaluationError,
  check,
  compile,
  CostLimitExceeded,
  PER_CALL_COST_LIMIT,
  type Program,
} from './index.ts';

const request: AdmissionRequest = {
  kind: { group: '', version: 'v1', kind: 'Pod' },
  resource: { group: '', version: 'v1', resource: 'pods' },
  operation: 'CREATE',
  namespace: 'default',
  name: 'web',
  userInfo: { username: 'alice' },
  object: { metadata: { name: 'web', labels: { app: 'web' } }, spec: { containers: [{ name: 'a' }, { name: 'b' }] } },
};
const allow: Authorize = () => ({ decision: 'Allow', reason: '' });

/** Fails when `fn` does not throw an error of `type`; returns the error. */
function thrown<T>(fn: () => unknown, type: new (...args: never[]) => T): T {
  try {
    fn();
  } catch (err) {
    assert.ok(err instanceof type, `${String(err)} is a ${type.name}`);
    return err;
  }
  assert.fail(`did not throw ${type.name}`);
}

describe('compile, check and evaluate', () => {
  it('evaluates with the variables of a request and answers the cost', () => {
    const program = compile("object.metadata.labels.app == 'web' && request.operation == 'CREATE'");
    assert.equal(program.type, 'bool');
    assert.equal(program.usesAuthorizer, false);
    const { value, cost } = program.evaluate(admissionVariables(request));
    assert.equal(value, true);
    assert.ok(cost > 0, `cost ${cost}`);
  });

  it('refuses what the API server refuses, with a CelCompileError under CelError', () => {
    const err = thrown(() => compile('object.metadata.name == 1 +'), CelCompileError);
    assert.ok(err instanceof CelError);
    assert.equal(err.expression, 'object.metadata.name == 1 +');
    assert.equal(err.line, 1);
    assert.ok(err.column > 0);
    const checked = check("request.operation + 1 == 'x'");
    assert.equal(checked.valid, false);
    if (!checked.valid) assert.match(checked.error.message, /found no matching overload for '_\+_'/);
    assert.deepEqual(check("size(object.metadata.name) > 0 && object.metadata.name.startsWith('w')"), {
      valid: true,
      type: 'bool',
    });
  });

  it('compiles for a Kubernetes version and mode', () => {
    // The sets library comes with Kubernetes 1.29: a configuration created for 1.29 is compiled in
    // 1.28's environment, one minor version back.
    const expression = 'sets.contains([1, 2], [1])';
    assert.equal(check(expression, { kubeVersion: { major: 1, minor: 28 } }).valid, false);
    assert.equal(check(expression, { kubeVersion: { major: 1, minor: 29 }, mode: 'stored' }).valid, true);
    assert.equal(check(expression, { kubeVersion: { major: 1, minor: 29 }, mode: 'create' }).valid, false);
    assert.equal(check(expression, { kubeVersion: { major: 1, minor: 30 }, mode: 'create' }).valid, true);
  });

  it('stops at the cost limit passed per call, and evaluates again under another', () => {
    const program = compile('object.spec.containers.all(c, c.name.size() > 0)');
    const variables = admissionVariables(request);
    const { cost } = program.evaluate(variables);
    const stopped = thrown(() => program.evaluate(variables, { costLimit: cost - 1 }), CostLimitExceeded);
    assert.ok(stopped instanceof CelError);
    assert.equal(stopped.message, 'operation cancelled: actual cost limit exceeded');
    assert.ok(stopped.cost > cost - 1, `cost ${stopped.cost} past the limit`);
    assert.deepEqual(program.evaluate(variables, { costLimit: cost }), { value: true, cost });
    assert.equal(program.evaluate(variables, { costLimit: PER_CALL_COST_LIMIT }).cost, cost);
  });

  it("fails an evaluation with cel-go's message as a CelEvaluationError", () => {
    const program = compile("object.metadata.annotations['x'] == 'y'");
    const err = thrown(() => program.evaluate(admissionVariables(request)), CelEvaluationError);
    assert.ok(err instanceof CelError);
    assert.equal(err.message, 'no such key: annotations');
    assert.ok(err.cost > 0);
  });
});

describe('evaluations never share a meter', () => {
  /** The variables of `request`, with an authorizer that runs `during` on each check. */
  const withAuthorizer = (during: () => void) =>
    admissionVariables(request, {
      authorize: () => {
        during();
        return { decision: 'Allow', reason: '' };
      },
    });
  const outer = compile("object.spec.containers.all(c, authorizer.path('/' + c.name).check('get').allowed())");
  const inner = compile('[1, 2, 3, 4, 5, 6, 7, 8].exists(x, x > 7)');

  it('an evaluation inside another, stopped at its own limit, leaves the outer one metered', () => {
    const alone = outer.evaluate(admissionVariables(request, { authorize: allow }));
    assert.equal(alone.value, true);
    let stops = 0;
    const variables = withAuthorizer(() => {
      thrown(() => inner.evaluate({}, { costLimit: 1 }), CostLimitExceeded);
      stops++;
    });
    assert.deepEqual(outer.evaluate(variables), alone);
    assert.equal(stops, 2);
    // The outer limit still holds after the inner evaluations ended.
    thrown(() => outer.evaluate(variables, { costLimit: alone.cost - 1 }), CostLimitExceeded);
  });

  it('the same program evaluated inside itself keeps each loop and cost apart', () => {
    const alone = outer.evaluate(admissionVariables(request, { authorize: allow }));
    let depth = 0;
    const nested: number[] = [];
    const variables = withAuthorizer(() => {
      if (depth > 0) return;
      depth++;
      nested.push(outer.evaluate(admissionVariables(request, { authorize: allow })).cost);
      depth--;
    });
    assert.deepEqual(outer.evaluate(variables), alone);
    assert.deepEqual(nested, [alone.cost, alone.cost]);
  });

  it('programs hold no state between evaluations', () => {
    const programs: Program[] = [outer, inner];
    const first = programs.map((p) => p.evaluate(admissionVariables(request, { authorize: allow })).cost);
    thrown(
      () => outer.evaluate(admissionVariables(request, { authorize: allow }), { costLimit: 2 }),
      CostLimitExceeded,
    );
    const again = programs.map((p) => p.evaluate(admissionVariables(request, { authorize: allow })).cost);
    assert.deepEqual(again, first);
  });
});
