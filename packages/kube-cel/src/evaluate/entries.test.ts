// Optional entries of list and map literals (`[?x]`, `{?'k': v}`) and backtick-quoted fields, as
// cel-go's parser reads them in the API server's environment.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type CompileError, compileExpression, isCompileError } from '../compile.ts';

const declarations = { o: 'dyn', m: 'map<string, int>' };

function run(expression: string, o: unknown = null, m: unknown = {}): unknown {
  const compiled = compileExpression(expression, { declarations });
  if (isCompileError(compiled)) throw new Error(compiled.message);
  return compiled.run({ o, m });
}

/** The compile error of `expression` (failing when it compiles). */
function refusal(expression: string, options: Parameters<typeof compileExpression>[1] = {}): CompileError {
  const compiled = compileExpression(expression, options);
  assert.ok(isCompileError(compiled), `${expression} compiles`);
  return compiled;
}

const v = (minor: number) => ({ kubeVersion: { major: 1, minor } });

describe('optional entries of list and map literals', () => {
  it('leave out an entry whose optional has no value, and hold the value of one that has', () => {
    assert.deepEqual(run('[?optional.none(), 1]'), [1n]);
    assert.deepEqual(run('[?optional.of(2)]'), [2n]);
    assert.deepEqual(run('[1, ?optional.none(), 2, ?optional.of(3), 4]'), [1n, 2n, 3n, 4n]);
    assert.deepEqual(run("{?'k': optional.none()}"), {});
    assert.deepEqual(run("{?'k': optional.of(1), 'j': 2}"), { k: 1n, j: 2n });
    assert.deepEqual(run("{?'k': optional.of(null)}"), { k: null });
    assert.equal(run("has({?'foo': optional.none()}.foo)"), false);
    assert.equal(run("{?'k': optional.none()} == {}"), true);
  });

  it('read optional chains of variables', () => {
    assert.deepEqual(run('[?o.?spec.?replicas]', { spec: { replicas: 3n } }), [3n]);
    assert.deepEqual(run('[?o.?spec.?replicas]', { spec: {} }), []);
    assert.deepEqual(run("{?'r': o.?spec.?replicas}", {}), {});
    assert.deepEqual(run("[?m[?'a'], ?m[?'b']]", null, { a: 1n }), [1n]);
  });

  it('nest, with ternaries inside entries and keys', () => {
    assert.deepEqual(run('[?optional.of([?optional.none(), ?optional.of(1)]), ?optional.none()]'), [[1n]]);
    assert.deepEqual(run('[?true ? optional.of(1) : optional.none()]'), [1n]);
    assert.deepEqual(run("{?false ? 'a' : 'b': optional.of(1)}"), { b: 1n });
    assert.deepEqual(run("{?'a': optional.of({?'b': optional.none()})}"), { a: {} });
    assert.deepEqual(run('[[?optional.none()], [?optional.of(1)]]'), [[], [1n]]);
    assert.deepEqual(run('[?optional.of(1)].map(x, [?optional.of(x)])'), [[1n]]);
  });

  it('leave strings and comments that contain `[?` and `{?` alone', () => {
    assert.deepEqual(run("['[?', ?optional.of('{?k: 1}')]"), ['[?', '{?k: 1}']);
    assert.deepEqual(run("{'[?': '?]', ?'{?': optional.of(r'[?')}"), { '[?': '?]', '{?': '[?' });
    assert.deepEqual(run('[ // [?x, {?\n ?optional.of("]")]'), [']']);
  });

  it('take out an earlier key when an entry of the same key has no value, as cel-go builds maps', () => {
    assert.deepEqual(run("{'a': 1, ?'a': optional.none()}"), {});
  });

  it('type as cel-go: the optional value type, dyn for dyn', () => {
    const list = compileExpression('[?optional.of(1), 2]');
    assert.ok(!isCompileError(list));
    assert.equal(list.type, 'list<int>');
    const map = compileExpression("{?'k': optional.of('v')}");
    assert.ok(!isCompileError(map));
    assert.equal(map.type, 'map<string, string>');
    assert.equal(run('type([?optional.of(1)]) == list'), true);
    assert.equal(run("type({?'k': optional.none()}) == map"), true);
    assert.deepEqual(run('[?dyn(optional.of(1)), 2]'), [1n, 2n]);
  });

  it('refuse a value that is not optional after `?` in cel-go words, where it is', () => {
    const list = refusal('[1, ?2]');
    assert.match(list.message, /ERROR: <input>:1:6: expected type 'optional_type\(int\)' but found 'int'/);
    const map = refusal("{?'k': 'v'}");
    assert.match(map.message, /ERROR: <input>:1:8: expected type 'optional_type\(string\)' but found 'string'/);
    assert.match(refusal('[?[1]]').message, /expected type 'optional_type\(list\(int\)\)' but found 'list\(int\)'/);
    // Where the text is rewritten before parsing (`.5`), positions are those of the text as written.
    assert.match(refusal('[.5,\n  ?1.5]').message, /ERROR: <input>:2:4: expected type 'optional_type\(double\)'/);
  });

  it('fail evaluation on a dyn value that is not optional, as cel-go', () => {
    assert.throws(() => run('[?o]', 1n), /cannot initialize optional list element from non-optional value 1/);
    assert.throws(() => run("{?'k': o}", 'x'), /cannot initialize optional entry 'k' from non-optional value x/);
  });

  it('refuse `?` anywhere but before an element or a key', () => {
    for (const expression of [
      "{'k': ?optional.of(1)}",
      'size(?[1])',
      '[(?optional.of(1))]',
      '[1 + ?optional.of(1)]',
      '[?]',
      '[??optional.of(1)]',
      '?optional.of(1)',
    ])
      refusal(expression);
  });

  it('charge what cel-go charges: the literal and its entries, nothing for the unwrapping', () => {
    const cost = (expression: string) => {
      const compiled = compileExpression(expression);
      assert.ok(!isCompileError(compiled));
      compiled.run({});
      return compiled.lastCost;
    };
    // A list is created (10), optional.of is one call (1).
    assert.equal(cost('[?optional.of(1)]'), 11);
    assert.equal(cost('[?optional.of(1)]'), cost('[optional.of(1)]'));
    // A map is created (30).
    assert.equal(cost("{?'k': optional.none()}"), 31);
  });

  it('arrive with optional types in 1.28: refused before with the parser error at the `?`', () => {
    const list = refusal('[1, ?optional.none()]', v(27));
    assert.match(list.message, /ERROR: <input>:1:5: unsupported syntax '\?'/);
    const map = refusal("{'a': 1,\n ?'k': 2}", v(27));
    assert.match(map.message, /ERROR: <input>:2:2: unsupported syntax '\?'/);
    assert.ok(!isCompileError(compileExpression('[1, ?optional.none()]', v(28))));
    assert.match(refusal('type(1) == optional_type', v(27)).message, /undeclared reference to 'optional_type'/);
  });

  it('before 1.28, reports the first optional syntax by position: the `.` of `.?`, the `[` of `[?`', () => {
    assert.match(refusal('object.?spec', v(27)).message, /<input>:1:7: unsupported syntax '\.\?'/);
    assert.match(refusal('object . ? spec', v(27)).message, /<input>:1:8: unsupported syntax '\.\?'/);
    assert.match(refusal("object[?'spec']", v(27)).message, /<input>:1:7: unsupported syntax '\[\?'/);
    assert.match(refusal('[?object.?spec]', v(27)).message, /<input>:1:2: unsupported syntax '\?'/);
    assert.match(refusal('[object.?a, ?object.?b]', v(27)).message, /<input>:1:8: unsupported syntax '\.\?'/);
  });

  it('refuse hostile nesting as cel-go refuses depth past its limit, never overflowing the stack', () => {
    for (const open of ['[?', "{?'k': ", '[1, ?']) {
      const deep = `${open.repeat(10_000)}optional.of(1)${(open.startsWith('[') ? ']' : '}').repeat(10_000)}`;
      const compiled = compileExpression(deep);
      assert.ok(isCompileError(compiled), open);
      assert.match(compiled.message, /expression recursion limit exceeded: 250/);
    }
    // Within the limit, nesting evaluates.
    assert.deepEqual(run(`${'[?optional.of('.repeat(20)}1${')]'.repeat(20)}`), [
      [[[[[[[[[[[[[[[[[[[1n]]]]]]]]]]]]]]]]]]],
    ]);
  });

  it('are read by environments with declarations (their own parser) and without', () => {
    assert.deepEqual(run('[?optional.of(1)]'), [1n]);
    const plain = compileExpression('[?optional.of(1)] == [1]');
    assert.ok(!isCompileError(plain));
    assert.equal(plain.run({}), true);
  });

  it('keep the probe that reaches the parser out of users’ reach', () => {
    assert.match(refusal('parser__probe(1)').message, /undeclared reference to 'parser__probe'/);
  });
});

describe('the type of optionals', () => {
  it('is optional_type', () => {
    assert.equal(run('type(optional.none()) == optional_type'), true);
    assert.equal(run('type(optional.of(1)) == optional_type'), true);
    assert.equal(run('type(optional_type) == type'), true);
    assert.equal(run('type(1) == optional_type'), false);
  });
});

describe('backtick-quoted fields', () => {
  it('are refused at compile as the API server refuses them (no identifier escape syntax)', () => {
    const field = refusal("{'a-b': 1}.`a-b` == 1");
    assert.match(field.message, /ERROR: <input>:1:12: unsupported syntax '`'/);
    assert.match(refusal('has(object.`b/c`)').message, /<input>:1:12: unsupported syntax '`'/);
    assert.match(refusal('object.?`b c`.hasValue()').message, /<input>:1:9: unsupported syntax '`'/);
  });

  it('leave backticks inside strings alone', () => {
    assert.equal(run("'a.`b`' + \".`c`\" == 'a.`b`.`c`'"), true);
    assert.equal(run("r'''.`x`''' == '.`x`'"), true);
  });
});
