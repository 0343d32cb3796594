// The element types of empty literals, bound by their first use as cel-go's checker binds them.
// Rows restated from cel-go's checker/checker_test.go (named), and the overload order of
// common/stdlib/standard.go where a free type variable meets an operator.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { compileExpression, isCompileError } from '../compile.ts';

/** The expression's type, or its refusal's first line; `s` is a string, `t` a dyn. */
function checked(expression: string): string {
  const compiled = compileExpression(expression, { declarations: { s: 'string', t: 'dyn' } });
  return isCompileError(compiled) ? compiled.message.split('\n')[0]! : compiled.type;
}

const refused = (at: string, message: string) => `compilation failed: ERROR: <input>:${at}: ${message}`;
const noOverload = (at: string, name: string, types: string) =>
  refused(at, `found no matching overload for '${name}' applied to '${types}'`);

describe('empty literals: element types inferred from their use (cel-go checker_test.go)', () => {
  it('types a literal by what its elements join and what it is added to', () => {
    assert.equal(checked('[] + [1,2,3,] + [4]'), 'list<int>');
    assert.equal(checked('size([] + [1])'), 'int');
    assert.equal(checked('[]'), 'list');
    assert.equal(checked('{}'), 'map');
    // The map macro's filter binds the key type to bool.
    assert.equal(checked('[{}.map(c,c,c)]+[{}.map(c,c,c)]'), 'list<list<bool>>');
  });

  it('refuses a membership no binding satisfies: x in y makes y a list of x', () => {
    assert.equal(checked('[].map(x, [].map(y, x in y && y in x))'), noOverload('1:33', '@in', '(list(dyn), dyn)'));
  });
});

describe("a comprehension's predicate binds its range's element type", () => {
  it('refuses adding a list of another type to a filtered empty list', () => {
    assert.equal(checked('[].filter(n, n == -1.5) + [3]'), noOverload('1:25', '_+_', '(list(double), list(int))'));
    assert.equal(checked('[].filter(n, n == -1.5) + [3.0]'), 'list<double>');
    assert.equal(checked('[].filter(n, n == -1.5)'), 'list<double>');
  });

  it('types the variable of a comprehension over the filtered list', () => {
    assert.equal(checked('[].filter(n, n == -1.5).map(n, n / 2)'), noOverload('1:34', '_/_', '(double, int)'));
    assert.equal(checked('[].filter(n, n == -1.5).map(n, n / 2.0)'), 'list<double>');
    assert.equal(checked('[].map(x, x * 2).exists(y, y == 1u)'), noOverload('1:30', '_==_', '(int, uint)'));
  });

  it("binds by the first overload that fits, in cel-go's order (int < double comes before double < double)", () => {
    assert.equal(checked('[].filter(n, n < 1.5) + [1]'), 'list<int>');
    assert.equal(checked('[].filter(n, n < 1.5) + [1.5]'), noOverload('1:23', '_+_', '(list(int), list(double))'));
    assert.equal(checked('[].map(n, -n) + [1.5]'), 'list<double>');
  });

  it('refuses a field of a bound element, branches and elements that do not join', () => {
    assert.equal(
      checked('[].filter(n, n == 1.5)[0].foo'),
      refused('1:26', "type 'double' does not support field selection"),
    );
    assert.equal(
      checked('true ? [].filter(n, n == 1.5) : [1]'),
      noOverload('1:6', '_?_:_', '(bool, list(double), list(int))'),
    );
    assert.equal(checked('[[].filter(n, n == 1.5)[0], 1]'), refused('1:29', "expected type 'double' but found 'int'"));
  });

  it('leaves a variable nothing binds dyn, and a field of it dyn', () => {
    assert.equal(checked('[].map(x, x)'), 'list');
    assert.equal(checked('[].exists(x, x.foo == 1) && [].map(n, n + 1)[0] == 1'), 'bool');
    assert.equal(checked("string([][0]) == 'a'"), 'bool');
    assert.equal(checked("[].exists(x, x.startsWith('a'))"), 'bool');
  });
});

describe('an operator with a free type variable binds it by its first overload', () => {
  it("binds `[][1] + dyn` to bytes, _+_'s first overload, which indexOf on a string does not take", () => {
    assert.equal(checked('s.indexOf([][1] + t)'), noOverload('1:10', 'indexOf', 'string.(bytes)'));
    assert.equal(checked('s.indexOf([][1] + [][2])'), noOverload('1:10', 'indexOf', 'string.(bytes)'));
  });

  it('binds it to the other operand when only that overload fits', () => {
    assert.equal(checked("s.indexOf([][1] + 'b')"), 'int');
    assert.equal(checked('s.indexOf([][1] + s)'), 'int');
    assert.equal(checked('[][1] + [1]'), 'list<int>');
  });
});
