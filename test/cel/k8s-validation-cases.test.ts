// Kubernetes' table of validation expressions (k8s-validation-table.ts), each row compiled and
// evaluated in the matchConditions environment with the object given as JSON, as the API server
// reads it: a valid row evaluates to true, an error row fails (to compile or to evaluate) with a
// message containing Kubernetes' words, a cost row spends the units the API server reports.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseJson } from '../../lib/json.ts';
import { compileExpression, isCompileError } from '../../packages/kube-cel/src/compile.ts';
import { toCel } from '../../lib/matchconditions/variables.ts';
import {
  KNOWN_DIFFERENCES,
  VALIDATION_GROUPS,
  type ValidationGroup,
} from '../../packages/kube-cel/test/k8s-validation-table.ts';

/** What a row answers here: its value and cost, or the message of its compile or evaluation error. */
type Answer = { value: unknown; cost: number } | { error: string };

function answer(expression: string, group: ValidationGroup): Answer {
  const compiled = compileExpression(expression);
  if (isCompileError(compiled)) return { error: compiled.message.split('\n')[0]! };
  const variables = {
    object: toCel(parseJson(group.object)),
    oldObject: group.oldObject === undefined ? null : toCel(parseJson(group.oldObject)),
    namespaceObject: null,
  };
  try {
    return { value: compiled.run(variables), cost: compiled.lastCost };
  } catch (err) {
    const e = err as { summary?: string; message?: string };
    return { error: e.summary ?? e.message ?? String(err) };
  }
}

const shown = (a: Answer): string =>
  'error' in a
    ? `error: ${a.error}`
    : `${typeof a.value === 'bigint' ? `${a.value}n` : JSON.stringify(a.value)} (cost ${a.cost})`;

/** Why a row differs from Kubernetes' answer, or undefined when it agrees. */
function difference(group: ValidationGroup, expression: string, expected: Expected): string | undefined {
  const got = answer(expression, group);
  if (expected.kind === 'true') return 'value' in got && got.value === true ? undefined : shown(got);
  if (expected.kind === 'cost') return 'value' in got && got.cost === expected.cost ? undefined : shown(got);
  return 'error' in got && got.error.includes(expected.words) ? undefined : shown(got);
}

type Expected = { kind: 'true' } | { kind: 'error'; words: string } | { kind: 'cost'; cost: number };

/** The key of a row in KNOWN_DIFFERENCES: a cost row's is `cost: ` and its expression. */
const key = (expression: string, expected: Expected): string =>
  expected.kind === 'cost' ? `cost: ${expression}` : expression;

function rows(group: ValidationGroup): Array<[string, Expected]> {
  return [
    ...group.valid.map((e): [string, Expected] => [e, { kind: 'true' }]),
    ...(group.errors ?? []).map(([e, words]): [string, Expected] => [e, { kind: 'error', words }]),
    ...(group.costs ?? []).map(([e, cost]): [string, Expected] => [e, { kind: 'cost', cost }]),
  ];
}

describe("Kubernetes' validation expressions (TestValidationExpressions), on a JSON object", () => {
  for (const group of VALIDATION_GROUPS) {
    it(group.name, () => {
      const differing: string[] = [];
      for (const [expression, expected] of rows(group)) {
        const why = difference(group, expression, expected);
        const known = KNOWN_DIFFERENCES[key(expression, expected)];
        if (known !== undefined) {
          assert.ok(why !== undefined, `${expression} now agrees with Kubernetes: remove it from KNOWN_DIFFERENCES`);
          continue;
        }
        if (why !== undefined) differing.push(`${expression.slice(0, 160)} => ${why}`);
      }
      assert.deepEqual(differing, []);
    });
  }

  it('every known difference is a row of the table', () => {
    const all = new Set(VALIDATION_GROUPS.flatMap((g) => rows(g).map(([e, expected]) => key(e, expected))));
    assert.deepEqual(
      Object.keys(KNOWN_DIFFERENCES).filter((e) => !all.has(e)),
      [],
    );
  });
});
