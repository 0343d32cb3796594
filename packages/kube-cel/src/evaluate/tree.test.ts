// Expression trees answer as the engine answers: the same values and costs wherever the tree
// evaluator answers, and the engine's answer (value, error, cost) wherever it gives up, over the CEL
// conformance cases and random expressions over random admission requests, under random cost limits.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Environment } from '../engine.ts';
import { type CompiledExpression, compileExpression, isCompileError, loadPrecompiled, precompile } from '../compile.ts';
import { clearPrecompiled, type PrecompiledExpression, usePrecompiled } from '../precompiled.ts';
import { balanceLogic } from '../parse/logic-balance.ts';
import { admissionVariables, type AdmissionRequest } from '../admission/variables.ts';
import { isTree, type Tree, treeOf } from './tree.ts';
import { runTree } from './tree-run.ts';
import { treeCompiled } from './tree-compiled.ts';
import { conformanceCases, KUBERNETES_SECTIONS } from '../../test/conformance-suite.ts';
import { exclusionOf } from '../../test/conformance-exclusions.ts';
import { declarationsOf, valueBindings } from '../../test/engines.ts';
import { type Seeded, seeded } from '../../test/seeded.ts';

/** The API server's per-expression cost limit. */
const LIMIT = 1_000_000;

/** What an evaluation answered, value or error, and its cost, as text. */
function answer(run: () => { value: unknown; cost: number }): string {
  try {
    const { value, cost } = run();
    return `value ${typeof value === 'bigint' ? `${value}n` : JSON.stringify(value)} cost ${cost}`;
  } catch (err) {
    const e = err as { message?: string; cost?: number; constructor?: { name?: string } };
    return `error ${e.constructor?.name}: ${e.message} cost ${e.cost}`;
  }
}

/** The engine's compilation of a form, without its tree. */
function byEngine(form: PrecompiledExpression): CompiledExpression {
  const { tree: _, ...rest } = form;
  const loaded = loadPrecompiled(rest, { declarations: form.declarations });
  assert.ok(loaded, form.expression);
  return loaded;
}

const STRINGS = [
  '',
  'app',
  'kube-system',
  'registry.example.com/web',
  'registry.example.com/',
  '😀',
  'Ünï',
  'x'.repeat(25),
];
const SCALARS: unknown[] = [...STRINGS, 0, 3, 5, 7, -1, 1.5, 2.0, true, false, null, 9007199254740993];

/** A random JSON value: scalars, lists and maps, nested up to `d`. */
function json(r: Seeded, d: number): unknown {
  const k = d <= 0 ? 0 : r.int(6);
  if (k <= 2) return r.pick(SCALARS);
  if (k === 3) return Array.from({ length: r.int(4) }, () => json(r, d - 1));
  return Object.fromEntries(
    Array.from({ length: r.int(4) }, () => [r.pick(['app', 'a', 'image', 'x', '']), json(r, d - 1)]),
  );
}

/** A random admission request: the fields conditions read, sometimes absent or of another type. */
function request(r: Seeded): AdmissionRequest {
  const container = () => ({
    name: r.pick(STRINGS),
    image: r.pick(r.int(5) ? STRINGS : SCALARS),
    ...(r.int(2) ? { securityContext: r.int(4) ? { privileged: r.pick([true, false, 'yes', null]) } : {} } : {}),
  });
  const labels = r.int(4)
    ? Object.fromEntries(
        r.pick([
          [],
          [['app', 'web']],
          [
            ['team', 'a'],
            ['app', ''],
          ],
        ]),
      )
    : json(r, 2);
  const object = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: r.pick(STRINGS), namespace: r.pick(STRINGS), ...(r.int(3) ? { labels } : {}) },
    spec: {
      ...(r.int(5) ? { replicas: r.pick([0, 3, 5, 6, 2.5, '5']) } : {}),
      ...(r.int(6) ? { containers: Array.from({ length: r.int(4) }, container) } : { containers: json(r, 2) }),
    },
  };
  return {
    uid: 'u',
    kind: { group: '', version: 'v1', kind: 'Pod' },
    resource: { group: '', version: 'v1', resource: 'pods' },
    operation: r.pick(['CREATE', 'UPDATE']),
    ...(r.int(4) ? { namespace: r.pick(STRINGS) } : {}),
    userInfo: {
      username: r.pick(STRINGS),
      ...(r.int(3) ? { groups: r.pick([[], ['system:nodes'], ['a', 'b']]) } : {}),
    },
    object,
    oldObject: r.int(2) ? object : null,
  } as unknown as AdmissionRequest;
}

const PATHS = [
  'object.metadata.name',
  'object.metadata.labels',
  'object.metadata.labels.app',
  'object.spec.replicas',
  'object.spec.containers',
  'object.spec.missing',
  'request.namespace',
  'request.userInfo.groups',
  'request.userInfo.username',
  'request.operation',
  'oldObject.metadata.name',
  'params',
  'namespaceObject',
];
const LITERALS = [
  "'app'",
  "''",
  "'kube-system'",
  "'😀'",
  '5',
  '0',
  '1.5',
  '5.0',
  '5u',
  'true',
  'null',
  "'registry.example.com/'",
];

/** A random expression over the paths, of what trees hold and a little beyond. */
function expr(r: Seeded, d: number, vars: string[] = []): string {
  const path = () =>
    vars.length && r.int(2)
      ? `${r.pick(vars)}${r.pick(['', '.image', '.securityContext', '.securityContext.privileged'])}`
      : r.pick(PATHS);
  const value = () => (r.int(2) ? path() : r.pick(LITERALS));
  if (d <= 0) return r.pick([value(), `has(${path()}.x)`, 'true']);
  const v = `v${d}`;
  switch (r.int(14)) {
    case 0:
      return `has(${r.pick(['object.metadata.labels', 'object.spec.replicas', 'request.namespace', 'object.metadata'])}${r.pick(['', '.app'])})`;
    case 1:
      return `${value()} ${r.pick(['==', '!='])} ${value()}`;
    case 2:
      return `${r.pick(LITERALS)} in ${path()}`;
    case 3:
      return `!(${expr(r, d - 1, vars)})`;
    case 4:
      return `(${expr(r, d - 1, vars)}) ${r.pick(['&&', '||'])} (${expr(r, d - 1, vars)})`;
    case 5:
      return `${path()}.${r.pick(['all', 'exists'])}(${v}, ${expr(r, d - 1, [...vars, v])})`;
    case 6:
      return `${value()} ${r.pick(['<', '<=', '>', '>='])} ${value()}`;
    case 7:
      return `${value()}.${r.pick(['startsWith', 'endsWith'])}(${value()})`;
    case 8:
      return `string(${path()}) + ${r.pick(LITERALS)}`;
    case 9:
      return `${value()} + ${value()}`;
    case 10:
      return `size(${path()}) > 1`;
    case 11:
      return `${path()}.exists_one(${v}, ${expr(r, d - 1, [...vars, v])})`;
    case 12:
      return `(${expr(r, d - 1, vars)}) ? ${value()} : ${value()}`;
    default:
      return path();
  }
}

describe('expression trees', () => {
  it('answer random expressions over random requests as the engine, under random cost limits', () => {
    let answered = 0;
    let compared = 0;
    for (const seed of [1, 7, 42, 1234]) {
      const r = seeded(seed);
      for (let i = 0; i < 250; i++) {
        const e = expr(r, 1 + r.int(3));
        const policy = { variables: 'map<string, dyn>', params: 'dyn' };
        const form = precompile(e, { declarations: r.int(2) ? policy : undefined });
        if (!form?.tree) continue;
        const carried = JSON.parse(JSON.stringify(form)) as PrecompiledExpression;
        const engine = byEngine(carried);
        const tree = treeCompiled(carried, () => engine, LIMIT)!;
        for (let j = 0; j < 6; j++) {
          const vars = admissionVariables(request(r), { params: r.int(2) ? json(r, 2) : null });
          // Whole doubles, which equal ints of the same value, as a review may write them (`5.0`).
          const spec = (vars.object as { spec: Record<string, unknown> }).spec;
          if (!r.int(3)) spec.replicas = r.pick([5, 0, -0, 1.5]);
          const full = answer(() => engine.evaluate(vars, LIMIT));
          const cost = Number(/cost (\d+)/.exec(full)?.[1] ?? 0);
          for (const limit of [LIMIT, cost, cost - 1, cost + 1, r.int(cost + 2)]) {
            const want = answer(() => engine.evaluate(vars, limit));
            const fast = runTree(carried.tree as Tree, vars, limit);
            if (fast) {
              answered++;
              assert.equal(
                answer(() => fast),
                want,
                `${e} (limit ${limit})`,
              );
            }
            assert.equal(
              answer(() => tree.evaluate(vars, limit)),
              want,
              `${e} (limit ${limit})`,
            );
            compared++;
          }
        }
      }
    }
    assert.ok(answered > 1500 && compared > 8000, `answered ${answered} of ${compared}`);
  });

  it('answer a table of conditions over objects of every kind as the engine', () => {
    const expressions = [
      'object.spec.replicas == 5',
      'object.spec.replicas != 5',
      'object.spec.replicas <= 5',
      '5 in object.spec.values',
      "'app' in object.spec.values",
      "object.spec.values.exists(v, v == 'app')",
      'object.spec.values.all(v, v > 1)',
      "'n: ' + string(object.spec.replicas)",
      "has(object.spec.values) && object.spec.values != ''",
      "object.spec.values.startsWith('ap') || object.spec.values.endsWith('p')",
    ];
    const values: unknown[] = [5, 5n, -0, 0n, '5', 'app', null, true, [5, 5n], ['app', 'x'], [2n, 3n], { app: 1n }, {}];
    let answered = 0;
    for (const e of expressions) {
      const form = precompile(e)!;
      assert.ok(form.tree, e);
      const engine = byEngine(form);
      for (const replicas of values)
        for (const v of values) {
          const vars = { object: { spec: { replicas, values: v } } };
          const fast = runTree(form.tree as Tree, vars, LIMIT);
          const want = answer(() => engine.evaluate(vars, LIMIT));
          if (fast) answered++;
          if (fast)
            assert.equal(
              answer(() => fast),
              want,
              `${e} with ${String(replicas)}, ${String(v)}`,
            );
        }
    }
    assert.ok(answered > 200, `answered ${answered}`);
  });

  it('answer the CEL conformance cases as the engine wherever they answer', () => {
    let answered = 0;
    const env = new Environment({ unlistedVariablesAreDyn: true });
    const sections = new Set<string>(KUBERNETES_SECTIONS);
    for (const c of conformanceCases().filter((c) => sections.has(c.section) && !exclusionOf(c))) {
      const declarations = declarationsOf(c);
      const form = precompile(c.expr, { declarations });
      if (!form) continue;
      let vars: Record<string, unknown>;
      try {
        vars = valueBindings(c);
      } catch {
        continue;
      }
      // The case's own variables read as a tree reads admission variables: the tree of its text.
      let parsed: ReturnType<typeof env.parse>['ast'];
      try {
        parsed = env.parse(form.text).ast;
      } catch {
        continue; // optional syntax, which no tree holds
      }
      balanceLogic(parsed);
      const tree = treeOf(parsed, Object.keys(declarations));
      if (!tree) continue;
      const fast = runTree(tree, vars, LIMIT);
      if (!fast) continue;
      assert.equal(
        answer(() => fast),
        answer(() => byEngine(form).evaluate(vars, LIMIT)),
        `${c.path}: ${c.expr}`,
      );
      answered++;
    }
    assert.ok(answered > 100, `answered ${answered} cases`);
  });

  it('are made for the typical conditions and validations, and not for what they do not hold', () => {
    const made = (e: string) => precompile(e, { declarations: { variables: 'map<string, dyn>' } })?.tree;
    for (const e of [
      "request.namespace != 'kube-system'",
      "!('system:nodes' in request.userInfo.groups)",
      "has(object.metadata.labels) && 'app' in object.metadata.labels",
      "object.spec.containers.exists(c, c.image != '')",
      "object.spec.containers.all(c, c.image.startsWith('registry.example.com/'))",
      "'at most 5 replicas, got ' + string(object.spec.replicas)",
      'object.spec.replicas <= 5',
    ])
      assert.ok(made(e), e);
    for (const e of [
      'variables.a == 1',
      "authorizer.group('').resource('pods').check('get').allowed()",
      'object.spec.replicas <= 5.0',
      'size(object.spec.containers) > 1',
      "object.metadata.name.matches('^a')",
      '-1 < object.spec.replicas',
      "string('a') == 'a'",
      'object.metadata.?labels.orValue({}) == {}',
      'object.spec.containers.map(c, c.image)',
      '[1, 2].exists(object, object > 1)',
    ])
      assert.equal(made(e), undefined, e);
  });

  it('are evaluated by compile, and the engine only where they give up', () => {
    const e = "has(object.metadata.labels) && 'app' in object.metadata.labels";
    const form = precompile(e)!;
    const withLabels = admissionVariables(request(seeded(3)));
    (withLabels.object as { metadata: Record<string, unknown> }).metadata.labels = { app: 'web' };
    const without = { ...withLabels, object: { metadata: { labels: 'not a map' } } };
    let engines = 0;
    const engine = byEngine(form);
    const tree = treeCompiled(form, () => (engines++, engine), LIMIT)!;
    assert.deepEqual(tree.evaluate(withLabels), { value: true, cost: 6 });
    assert.equal(engines, 0);
    assert.equal(
      answer(() => tree.evaluate(without)),
      answer(() => engine.evaluate(without)),
    );
    assert.equal(engines, 1);
    try {
      usePrecompiled([form]);
      const compiled = compileExpression(e, { typeCheck: false });
      assert.ok(!isCompileError(compiled));
      assert.equal(compiled.run(withLabels), true);
      assert.equal(compiled.lastCost, 6);
      assert.match(
        answer(() => compiled.evaluate(without)),
        /^error CelEvaluationError: .* cost 4$|^error/,
      );
    } finally {
      clearPrecompiled();
    }
  });

  it('of another shape, or with typed declarations, are left to the engine', () => {
    const form = precompile("request.namespace == 'a'")!;
    for (const tree of [undefined, ['id'], ['nope', ['lit', 1]], ['int', '1e3'], ['.', ['id', 'x'], 3]])
      assert.equal(
        treeCompiled({ ...form, tree: tree as Tree }, () => byEngine(form), LIMIT),
        undefined,
      );
    assert.equal(isTree(['!', ['lit', true]]), true);
    const typed = { ...form, declarations: { x: 'int' } };
    assert.equal(
      treeCompiled(typed, () => byEngine(form), LIMIT),
      undefined,
    );
  });
});
