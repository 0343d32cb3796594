// The environment an expression compiles in without its type check: a bundle's expressions share one
// of the parts they name together, and an environment built for more parts serves one for fewer
// (scope.test.ts shows such environments answer alike).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { compileExpression, type CompileOptions, isCompileError, precompile } from '../compile.ts';
import { loadLibraries } from '../libraries/all.ts';
import { clearPrecompiled, usePrecompiled } from '../precompiled.ts';
import { environmentOf, forgetDeclaredEnvironments } from './declared.ts';
import { SCOPE, scopedEnvironment } from './environment.ts';

const unchecked = { typeCheck: false };
const declarations = { variables: 'map<string, dyn>' };

describe('the environment of an expression compiled without its type check', () => {
  it('is one built for more parts, when there is one', () => {
    clearPrecompiled();
    forgetDeclaredEnvironments();
    const wider = scopedEnvironment(SCOPE.authorizer | SCOPE.namespace);
    assert.equal(environmentOf(unchecked, "authorizer.path('/').check('get').allowed()", false), wider);
    assert.equal(environmentOf(unchecked, 'namespaceObject == null', false), wider);
    const declaredWider = environmentOf(
      { ...unchecked, declarations },
      "authorizer.path('/').check('get').allowed() && variables.x",
      false,
    );
    assert.equal(environmentOf({ ...unchecked, declarations }, 'variables.x', false), declaredWider);
  });

  it("is one for a bundle's expressions: of the parts they name together", () => {
    const forms = ['object.a == 1', "request.name == 'x'", "namespaceObject.metadata.name == 'y'"].map(
      (e) => precompile(e)!,
    );
    clearPrecompiled();
    forgetDeclaredEnvironments();
    usePrecompiled(forms);
    const object = environmentOf(unchecked, 'object.a == 1', false);
    assert.equal(environmentOf(unchecked, "request.name == 'x'", false), object);
    assert.equal(environmentOf(unchecked, "namespaceObject.metadata.name == 'y'", false), object);
    // An expression without a form gets it too; the libraries stay each expression's own.
    assert.equal(environmentOf(unchecked, 'oldObject == null', false), object);
    assert.notEqual(environmentOf(unchecked, "object.a.lowerAscii() == 'a'", true), object);
    // The same with declarations: the forms made with them, not the others.
    usePrecompiled(['variables.a == 1', 'request.name == variables.b'].map((e) => precompile(e, { declarations })!));
    const declared = environmentOf({ ...unchecked, declarations }, 'variables.a == 1', false);
    assert.equal(environmentOf({ ...unchecked, declarations }, 'request.name == variables.b', false), declared);
    assert.notEqual(declared, object);
    clearPrecompiled();
  });
});

/** The value of `expression` compiled with `options` and without its type check, or its error. */
function answer(expression: string, options: CompileOptions, variables: Record<string, unknown> = {}): unknown {
  const compiled = compileExpression(expression, { ...options, typeCheck: false });
  if (isCompileError(compiled)) return `compile: ${compiled.message}`;
  try {
    return compiled.evaluate(variables).value;
  } catch (err) {
    return `error: ${(err as Error).message.split('\n')[0]}`;
  }
}

describe('an expression compiled with `libraries`', () => {
  const equal = 'variables.a == variables.b';
  /** Two equal IPs as an expression computes them (a policy's variables). */
  const ips = () => {
    const ip = answer("ip('10.0.0.1')", {});
    return { variables: { a: ip, b: ip } };
  };

  it("reads the libraries' values where the environment without them is built already", async () => {
    await loadLibraries();
    clearPrecompiled();
    forgetDeclaredEnvironments();
    // The environment without the libraries, built for an expression of plain values.
    assert.equal(answer(equal, { declarations }, { variables: { a: 1n, b: 1n } }), true);
    const values = ips();
    assert.equal(answer(equal, { declarations, libraries: true }, values), true);
    assert.equal(
      answer(`[${equal}, variables.a != null]`, { declarations, libraries: true }, values)?.toString(),
      'true,true',
    );
    // Without `libraries`, that environment knows no IP (what a policy's variable gave it before).
    assert.match(String(answer(equal, { declarations }, values)), /^error: Unsupported type/);
  });

  it('records the decision in its precompiled form, and honours it where the form was made without', async () => {
    await loadLibraries();
    clearPrecompiled();
    forgetDeclaredEnvironments();
    assert.equal(precompile(equal, { declarations })!.libraries, false);
    assert.equal(precompile(equal, { declarations, libraries: true })!.libraries, true);
    // A form made without (the same text in a policy of plain variables) shows it was loaded by its text.
    const lean = { ...precompile(equal, { declarations })!, text: 'variables.a != variables.b' };
    usePrecompiled([lean]);
    assert.equal(answer(equal, { declarations }, { variables: { a: 1n, b: 1n } }), false);
    assert.equal(answer(equal, { declarations, libraries: true }, ips()), false);
    clearPrecompiled();
  });
});
