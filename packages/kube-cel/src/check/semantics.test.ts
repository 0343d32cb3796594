// cel-go's semantics where the CEL engine's own differ: aggregate literals, heterogeneous equality and
// membership, numeric comparison across kinds, list indexes, int64 overflow, map literals, bytes order,
// and the two-variable comprehensions of 1.32.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { compileExpression, isCompileError } from '../compile.ts';

const v = (minor: number) => ({ major: 1, minor });

/** Compiles `expression` (with `o` a dyn variable) and runs it with `o`; throws a compile error. */
function run(expression: string, o: unknown = null, options: { typeCheck?: boolean } = {}): unknown {
  const compiled = compileExpression(expression, { declarations: { o: 'dyn' }, ...options });
  if (isCompileError(compiled)) throw new Error(compiled.message);
  return compiled.run({ o });
}

function refusal(expression: string, minor?: number): string {
  const compiled = compileExpression(expression, {
    declarations: { o: 'dyn' },
    ...(minor ? { kubeVersion: v(minor) } : {}),
  });
  return isCompileError(compiled) ? compiled.message : '';
}

describe('aggregate literals as the API server checks them (HomogeneousAggregateLiterals)', () => {
  it('refuses elements of different types, as cel-go does', () => {
    assert.match(refusal("[1, 'a']"), /expected type 'int' but found 'string'/);
    assert.match(refusal('[1, 2.0]'), /expected type 'int' but found 'double'/);
    assert.match(refusal("{'a': 1, 'b': 'x'}"), /expected type 'int' but found 'string'/);
  });

  it('refuses a dyn element beside a typed one from 1.29 (the literal validator); all dyn mix', () => {
    assert.match(refusal('[o.s, 1].size() == 2'), /expected type 'dyn' but found 'int'/);
    assert.match(refusal('[1, o.s].size() == 2'), /expected type 'int' but found 'dyn'/);
    assert.match(refusal("{'a': o.s, 'b': 2}.b == 2"), /expected type 'dyn' but found 'int'/);
    assert.deepEqual(run('[o.s, dyn(1)]', { s: 'a' }), ['a', 1n]);
    assert.equal(run("{'a': o.s, 'b': dyn(2)}.b == 2", { s: 'a' }), true);
  });

  it("lets format's literal arguments mix types, nested literals too, and no literal outside format", () => {
    assert.equal(run("'%d %s %s'.format([1, 'a', [2, 'b']])"), '1 a [2, "b"]');
    assert.equal(run("'%s'.format([{'a': 1, 'b': 'x'}])"), '{"a":1, "b":"x"}');
    assert.match(refusal("[1, 'a'].size() == 2 && '%s'.format([1]) == '1'"), /expected type 'int'/);
  });

  it('types an empty literal so that a macro over it checks', () => {
    assert.equal(run('[].all(e, e > 0)'), true);
    assert.equal(run('[].exists(e, e > 0)'), false);
  });
});

describe('values compared as cel-go compares them', () => {
  const o = { x: 1.0, big: 9007199254740993n, a: ['one'], b: [2n, 3n], l: [7n, 8n, 9n] };

  it('equality across int, uint and double is by value', () => {
    assert.equal(run('o.x == 1', o), true);
    assert.equal(run('o.x != 1', o), false);
    assert.equal(run('dyn(1u) == 1', o), true);
    assert.equal(run('[dyn(1.0)] == [1]', o), true);
    assert.equal(run("{'k': dyn(2u)} == {'k': 2}", o), true);
  });

  it('values of different types are unequal, not an error', () => {
    assert.equal(run('o.a == o.b', o), false);
    assert.equal(run("dyn('1') == 1", o), false);
    assert.equal(run('o.x == null', o), false);
  });

  it('membership finds a number of another kind', () => {
    assert.equal(run('dyn(3u) in [5, 4, 3]', o), true);
    assert.equal(run('o.x in [1, 2]', o), true);
    assert.equal(run('dyn(3.0) in {3: true}', o), true);
    assert.equal(run("dyn(1) in {'1': true}", o), false);
  });

  it('orders int and double through float64, as cel-go', () => {
    assert.equal(run('dyn(9223372036854775807) < 9223372036854775808.0', o), false);
    assert.equal(run('dyn(9223372036854775807) >= 9223372036854775808.0', o), true);
    assert.equal(run('o.x < 2', o), true);
  });

  it('indexes a list with a uint or a whole double', () => {
    assert.equal(run('o.l[dyn(0u)]', o), 7n);
    assert.equal(run('o.l[dyn(2.0)]', o), 9n);
    assert.throws(() => run('o.l[dyn(1.5)]', o), /unsupported index/);
  });

  it('int64 overflow of -, / and % is an error', () => {
    assert.throws(() => run('-(-9223372036854775808)'), /overflow/);
    assert.throws(() => run('dyn(-9223372036854775808) / -1'), /overflow/);
    assert.throws(() => run('dyn(-9223372036854775808) % -1'), /overflow/);
    assert.equal(run('dyn(-9223372036854775807) / -1'), 9223372036854775807n);
  });

  it('keeps the same semantics when compiled without checking (in-function enforcement)', () => {
    assert.equal(run('o.x == 1', o, { typeCheck: false }), true);
    assert.equal(run('dyn(3u) in [5, 4, 3]', o, { typeCheck: false }), true);
  });

  it('orders bytes as Go does', () => {
    assert.equal(run("b'a' < b'b'"), true);
    assert.equal(run("b'' < b' '"), true);
    assert.equal(run("b'abc' >= b'abc'"), true);
    assert.equal(run("b'\\xff' > b'a'"), true);
  });
});

describe('map literals', () => {
  it('keeps keys of every type distinct and findable', () => {
    assert.equal(run("{dyn(1): 'a', dyn('1'): 'b'}[1]"), 'a');
    assert.equal(run('true in {true: 1}'), true);
    assert.equal(run("{6: 'six', 7: 'seven'}.exists_one(k, k % 5 == 2)"), true);
  });

  it('a map of string keys has no int key, even one that reads the same', () => {
    assert.throws(() => run("{'1': 'a'}[dyn(1)]"), /no such key/);
    assert.throws(() => run('o.m[dyn(1)]', { m: { '1': 'a' } }), /no such key/);
    assert.equal(run("o.m['1']", { m: { '1': 'a' } }), 'a');
  });

  it('keeps keys named like object properties', () => {
    assert.equal(run("{'__proto__': 1, 'constructor': 2}.size()"), 2n);
    assert.equal(run("{'constructor': 2}['constructor']"), 2n);
  });

  it('keeps the last value of a key given twice, as cel-go (a Go map of values, 1 and 1u two keys)', () => {
    assert.equal(run('{1: 2, 1: 3}[1]'), 3n);
    assert.equal(run("{o.s: 1, dyn('a'): 2} == {'a': 2}", { s: 'a' }), true);
    assert.equal(run('{dyn(1): 2, dyn(1u): 3}.size()'), 2n);
  });
});

describe('two-variable comprehensions (1.32)', () => {
  it('ranges over a list with its index and over a map with its key', () => {
    assert.equal(run('[1, 2, 3].all(i, v, v == i + 1)'), true);
    assert.equal(run('[1, 2, 3].exists(i, v, i == 1 && v == 2)'), true);
    assert.equal(run('[5, 7, 8].existsOne(i, v, v % 5 == i)'), true);
    assert.deepEqual(run('[2, 4, 6].transformList(i, v, v / 2 + i)'), [1n, 3n, 5n]);
    assert.deepEqual(run('[2, 4, 6].transformList(i, v, i != 1, v)'), [2n, 6n]);
    assert.deepEqual(run("{'a': 1, 'b': 2}.transformMap(k, v, v * 10)"), { a: 10n, b: 20n });
    assert.deepEqual(run("{'a': 1, 'b': 2}.transformMap(k, v, k == 'b', v)"), { b: 2n });
    assert.equal(
      run("o.labels.all(k, v, k.startsWith('app') && v != '')", { labels: { app: 'x', appver: '1' } }),
      true,
    );
  });

  it('answers all and exists as cel-go when a step errors: a decisive step wins', () => {
    assert.equal(run('[1, 2, 3].all(i, v, 6 / (2 - v) == i)'), false);
    assert.throws(() => run('[1, 2, 3].all(i, v, v / i != 17)'), /division by zero/);
    assert.throws(() => run('[3, 2, 1, 0].existsOne(i, v, v / i > 1)'), /division by zero/);
  });

  it('refuses a predicate that is not bool and variables that are not names', () => {
    assert.match(refusal('[1].all(i, v, v)'), /expected type 'bool' but found 'int'/);
    assert.match(refusal('[1].all(i, i, true)'), /must be different/);
    assert.match(refusal('[1].all(i.j, v, true)'), /argument must be a simple name/);
  });

  it('arrives in 1.32: undeclared before', () => {
    assert.match(refusal('[1].all(i, v, true)', 31), /undeclared reference to 'all'/);
    assert.match(refusal('[1].existsOne(i, v, true)', 31), /undeclared reference to 'existsOne'/);
    assert.match(refusal("{'a': 1}.transformMap(k, v, v)", 31), /undeclared reference to 'transformMap'/);
    assert.equal(refusal('[1].all(i, v, true)', 32), '');
    assert.equal(refusal('[1].all(v, true)', 31), '');
  });

  it('charges every step against the cost limit', () => {
    const compiled = compileExpression('o.all(i, v, o.all(j, w, true))', { declarations: { o: 'dyn' } });
    assert.ok(!isCompileError(compiled));
    const o = Array.from({ length: 1000 }, () => 1n);
    assert.throws(() => compiled.run({ o }), /cost limit exceeded/);
    assert.equal(compiled.run({ o: o.slice(0, 10) }), true);
  });
});

describe('what cel-go accepts and the engine did not', () => {
  it('a double written without digits before its point', () => {
    assert.equal(run('.5 + .25 == 0.75'), true);
    assert.equal(run('-.5 < 0.0'), true);
    assert.deepEqual(run("['.5', 'a.5'].size()"), 2n);
    const bad = compileExpression('1 > .5x');
    assert.ok(isCompileError(bad));
    assert.equal(bad.column, 7, 'the position is in the text as written');
  });

  it('a library call on a dyn receiver returns dyn', () => {
    assert.equal(run('o.nums.max() > 1', { nums: [1n, 2n] }), true);
    assert.equal(run('o.nums.min() < 2.5', { nums: [1n, 2n] }), true);
  });

  it('namespaceObject is null for webhooks, and comparable with null', () => {
    const compiled = compileExpression('namespaceObject == null');
    assert.ok(!isCompileError(compiled));
    assert.equal(
      compiled.run({ object: null, oldObject: null, request: {}, namespaceObject: null, authorizer: null }),
      true,
    );
  });

  it('sign() of a quantity is a global function, as the API server declares it', () => {
    assert.equal(run("sign(quantity('-1'))"), -1n);
    assert.match(refusal("quantity('-1').sign()"), /no matching overload/);
  });

  it('int() and uint() of strings as Go parses them; of doubles within range', () => {
    assert.throws(() => run("int('')"), /type conversion error from 'string' to 'int'/);
    assert.throws(() => run("int(' 1')"), /type conversion error from 'string' to 'int'/);
    assert.throws(() => run("int('0x10')"), /type conversion error from 'string' to 'int'/);
    assert.equal(run("int('-42')"), -42n);
    assert.throws(() => run("uint('+1')"), /type conversion error from 'string' to 'uint'/);
    assert.throws(() => run('int(dyn(1e19))'), /: integer overflow\n/);
    assert.throws(() => run('uint(dyn(-1.0))'), /unsigned integer overflow/);
  });

  it('sum() of ints reports int64 overflow', () => {
    assert.throws(() => run('[9223372036854775807, 1].sum()'), /overflow/);
    assert.equal(run('[9223372036854775806, 1].sum()'), 9223372036854775807n);
  });
});

describe('equality of deep values', () => {
  it('compares objects nested 10,000 levels (as deep as the API server accepts)', () => {
    const deep = (leaf: unknown) => {
      let v: unknown = leaf;
      for (let i = 0; i < 10_000; i++) v = { a: [v] };
      return v;
    };
    assert.equal(run('o.x == o.y', { x: deep(1n), y: deep(1.0) }), true);
    assert.equal(run('o.x == o.y', { x: deep(1n), y: deep(2n) }), false);
    assert.equal(run('o.x != o.y', { x: deep('a'), y: deep('b') }), true);
  });
});

describe('string() of bytes', () => {
  it('is the UTF-8 text, and an error for bytes that are not UTF-8, as cel-go', () => {
    assert.equal(run("string(b'abc')"), 'abc');
    assert.throws(() => run("string(b'\\xff')"), /invalid UTF-8/);
  });
});

describe('bytes literals as cel-go reads them', () => {
  it('characters beyond ASCII are their UTF-8 bytes', () => {
    assert.equal(run("b'ÿ' == b'\\303\\277'"), true);
    assert.equal(run("size(b'é')"), 2n);
  });

  it('raw bytes keep their backslashes', () => {
    assert.equal(run("br'\\d' == b'\\\\d'"), true);
    assert.equal(run('size(bR"""a\\n""")'), 3n);
  });

  it('a compile error after a rewritten literal points into the text as written', () => {
    const bad = compileExpression("br'\\d' == 1 +");
    assert.ok(isCompileError(bad));
    assert.equal(bad.line, 1);
    assert.ok(bad.column <= "br'\\d' == 1 +".length + 1, `${bad.column}`);
  });
});

describe('map literal keys', () => {
  it('are ints, uints, bools or strings: others are an error, as cel-go', () => {
    assert.throws(() => run('{dyn(null): 1}.size()'), /unsupported key type/);
    assert.throws(() => run('{dyn(1.5): 1}.size()'), /unsupported key type/);
    assert.equal(run("{1: 'a', 2: 'b'}.size()"), 2n);
  });
});
