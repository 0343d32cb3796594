// Precompiled forms answer as the expressions compiled when used: the same values, errors and costs
// over the CEL conformance cases, and a form is loaded only for the package and engine versions,
// Kubernetes version and declarations it was made for.
// klw-test: no-tsx (createRequire only resolves the engine's path)
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { describe, it } from 'node:test';
import { compileExpression, isCompileError, loadPrecompiled, precompile } from './compile.ts';
import {
  clearPrecompiled,
  ENGINE_VERSION,
  FORM_VERSION,
  PACKAGE_VERSION,
  type PrecompiledExpression,
  RECORDED_KEY,
  usePrecompiled,
} from './precompiled.ts';
import { conformanceCases, KUBERNETES_SECTIONS } from '../test/conformance-suite.ts';
import { exclusionOf } from '../test/conformance-exclusions.ts';
import { declarationsOf, valueBindings } from '../test/engines.ts';

/** What an evaluation answered, value or error, and what it cost, as text. */
function answer(
  run: (vars: Record<string, unknown>) => { value: unknown; cost: number },
  vars: Record<string, unknown>,
) {
  try {
    const { value, cost } = run(vars);
    return `value ${inspect(value)} cost ${cost}`;
  } catch (err) {
    const e = err as { message?: string; cost?: number; constructor?: { name?: string } };
    return `error ${e.constructor?.name}: ${e.message} cost ${e.cost}`;
  }
}

/** A value's text: bigints, maps, typed objects kept apart. */
function inspect(v: unknown): string {
  return JSON.stringify(v, (_, x) => {
    if (typeof x === 'bigint') return `${x}n`;
    if (x instanceof Map) return { map: [...x] };
    if (x instanceof Uint8Array) return { bytes: [...x] };
    if (x && typeof x === 'object' && !Array.isArray(x) && x.constructor !== Object)
      return { [x.constructor?.name ?? '?']: String(x), ...x };
    return x;
  });
}

/** A form through JSON, as a bundle carries it. */
const carried = (form: PrecompiledExpression): PrecompiledExpression => JSON.parse(JSON.stringify(form));

describe('precompiled forms', () => {
  it('answer every CEL conformance case as the expression compiled when used', () => {
    let compared = 0;
    const sections = new Set<string>(KUBERNETES_SECTIONS);
    for (const c of conformanceCases().filter((c) => sections.has(c.section) && !exclusionOf(c))) {
      const declarations = declarationsOf(c);
      const options = { declarations, typeCheck: false as const };
      const runtime = compileExpression(c.expr, options);
      const form = precompile(c.expr, { declarations });
      if (isCompileError(runtime)) {
        assert.equal(form, undefined, `${c.path}: no form for what does not compile`);
        continue;
      }
      assert.ok(form, `${c.path}: a form for what compiles`);
      const loaded = loadPrecompiled(carried(form), { declarations });
      assert.ok(loaded, `${c.path}: the form loads`);
      let vars: Record<string, unknown>;
      try {
        vars = valueBindings(c);
      } catch {
        continue;
      }
      assert.equal(loaded.type, runtime.type, c.path);
      assert.equal(loaded.usesAuthorizer, runtime.usesAuthorizer, c.path);
      assert.equal(
        answer((v) => loaded.evaluate(v), vars),
        answer((v) => runtime.evaluate(v), vars),
        `${c.path}: ${c.expr}`,
      );
      compared++;
    }
    assert.ok(compared > 1000, `compared ${compared} cases`);
  });

  it('are loaded by compile for the same expression, Kubernetes version and declarations only', () => {
    // A form whose text is another expression shows which one compile loaded.
    const form = { ...precompile('1 + 1', { kubeVersion: { major: 1, minor: 30 } })!, text: '40 + 2' };
    const value = (options: Parameters<typeof compileExpression>[1]) => {
      const compiled = compileExpression('1 + 1', { ...options, typeCheck: false });
      assert.ok(!isCompileError(compiled));
      return compiled.evaluate({}).value;
    };
    try {
      usePrecompiled([form]);
      assert.equal(value({ kubeVersion: { major: 1, minor: 30 } }), 42n);
      assert.equal(value({ kubeVersion: { major: 1, minor: 31 } }), 2n);
      assert.equal(value({ kubeVersion: { major: 1, minor: 30 }, declarations: { x: 'int' } }), 2n);
      // The type check is never skipped: checked compilations compile.
      const checked = compileExpression('1 + 1', { kubeVersion: { major: 1, minor: 30 } });
      assert.ok(!isCompileError(checked));
      assert.equal(checked.evaluate({}).value, 2n);
    } finally {
      clearPrecompiled();
    }
  });

  it('of another package or engine version, or not of a form shape, are compiled again', () => {
    const made = precompile('1 + 1')!;
    const forms = [
      { ...made, text: '40 + 2', form: FORM_VERSION.replace(PACKAGE_VERSION, '0.0.1') },
      { ...made, text: '40 + 2', form: FORM_VERSION.replace(ENGINE_VERSION, '7.0.0') },
      { ...made, text: 40 },
      null,
      'x',
    ];
    try {
      usePrecompiled(forms);
      const compiled = compileExpression('1 + 1', { typeCheck: false });
      assert.ok(!isCompileError(compiled));
      assert.equal(compiled.evaluate({}).value, 2n);
    } finally {
      clearPrecompiled();
    }
  });

  it('that no longer parse or pass the screen are compiled again', () => {
    const made = precompile('1 + 1')!;
    try {
      for (const text of ['1 +', "'a'.json()"]) {
        assert.equal(loadPrecompiled({ ...made, text }), undefined, text);
        usePrecompiled([{ ...made, text }]);
        const compiled = compileExpression('1 + 1', { typeCheck: false });
        assert.ok(!isCompileError(compiled));
        assert.equal(compiled.evaluate({}).value, 2n, text);
      }
    } finally {
      clearPrecompiled();
    }
  });

  it('are recorded while KUBE_CEL_RECORD is 1, once each', () => {
    const key = Symbol.for(RECORDED_KEY);
    const global = globalThis as unknown as Record<symbol, PrecompiledExpression[] | undefined>;
    delete global[key];
    process.env.KUBE_CEL_RECORD = '1';
    try {
      for (let i = 0; i < 2; i++) compileExpression("request.namespace == 'a'", { typeCheck: false });
      compileExpression("request.namespace == 'b'", {});
      compileExpression('1 +', { typeCheck: false });
    } finally {
      delete process.env.KUBE_CEL_RECORD;
    }
    assert.deepEqual(
      global[key]!.map((f) => f.expression),
      ["request.namespace == 'a'"],
    );
    delete global[key];
  });

  it('name the versions of package.json and of the engine it depends on', () => {
    const own = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
    // The engine exports no package.json: it is beside the folder of its entry module.
    const entry = createRequire(import.meta.url).resolve('@marcbachmann/cel-js');
    const engine = JSON.parse(readFileSync(join(dirname(entry), '..', 'package.json'), 'utf8'));
    assert.equal(PACKAGE_VERSION, own.version);
    assert.equal(ENGINE_VERSION, engine.version);
  });
});
