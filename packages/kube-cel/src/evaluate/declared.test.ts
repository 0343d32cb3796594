// The environment an expression compiles in without its type check: a bundle's expressions share one
// of the parts they name together, and an environment built for more parts serves one for fewer
// (scope.test.ts shows such environments answer alike).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { precompile } from '../compile.ts';
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
