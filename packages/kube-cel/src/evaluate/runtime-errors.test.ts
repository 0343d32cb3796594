// Evaluation errors in cel-go's words (v0.26, pinned by Kubernetes 1.34): each row is a situation a
// condition can meet at run time, with the message cel-go gives for it, derived from its source
// (common/types err.go, overflow.go, int.go, uint.go, double.go, string.go, list.go, optional.go;
// interpreter/attributes.go and interpretable.go; common/decls MaybeNoSuchOverload; the standard
// library's bindings). The API server puts that message after `expression '<expr>' resulted in error: `.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { compileExpression, isCompileError } from '../compile.ts';
import { celGoWords } from './runtime-errors.ts';

/** A JSON object as the API server decodes it: integers are ints, numbers with a fraction doubles. */
const object = {
  s: 'abc',
  digits: '12',
  n: 5n,
  max: 9223372036854775807n,
  min: -9223372036854775808n,
  neg: -1n,
  d: 1.5,
  big: 1e300,
  b: true,
  list: [1n, 2n],
  map: { a: 1n },
  nul: null,
  pattern: '[',
  spec: { containers: [] },
};

/** The error message (its summary) evaluating `expression` with `object` raises; a value fails. */
function errorOf(expression: string): string {
  const compiled = compileExpression(expression, { declarations: { o: 'dyn' } });
  if (isCompileError(compiled)) return `compile: ${compiled.message.split('\n')[0]}`;
  try {
    return `value: ${String(compiled.run({ o: object, object, oldObject: null }))}`;
  } catch (err) {
    return (err as { summary?: string }).summary ?? (err as Error).message;
  }
}

/** Rows: expression → cel-go's message. */
function table(rows: Array<[string, string]>): void {
  const wrong = rows
    .map(([expr, want]) => [expr, want, errorOf(expr)] as const)
    .filter(([, want, got]) => got !== want)
    .map(([expr, want, got]) => `${expr}: want ${JSON.stringify(want)}, got ${JSON.stringify(got)}`);
  assert.deepEqual(wrong, [], `${wrong.length} of ${rows.length} rows differ`);
}

describe('arithmetic errors (common/types overflow.go, int.go, uint.go)', () => {
  it('division and modulus by zero', () => {
    table([
      ['o.n / 0 == 1', 'division by zero'],
      ['o.n % 0 == 1', 'modulus by zero'],
      ['dyn(1u) / dyn(0u) == dyn(1u)', 'division by zero'],
      ['dyn(1u) % dyn(0u) == dyn(1u)', 'modulus by zero'],
    ]);
    // A double divided by zero is an infinity, not an error.
    assert.equal(errorOf('o.d / 0.0 > 1.0'), 'value: true');
  });

  it('int64 overflow of + - * / % and negation is `integer overflow`, without the value', () => {
    table([
      ['o.max + 1 == 0', 'integer overflow'],
      ['o.min - 1 == 0', 'integer overflow'],
      ['o.max * 2 == 0', 'integer overflow'],
      ['o.min / -1 == 0', 'integer overflow'],
      ['o.min % -1 == 0', 'integer overflow'],
      ['-o.min == 0', 'integer overflow'],
    ]);
  });

  it('uint64 overflow is `unsigned integer overflow`, lowercase', () => {
    table([
      ['dyn(1u) - dyn(2u) == dyn(0u)', 'unsigned integer overflow'],
      ['dyn(18446744073709551615u) + dyn(1u) == dyn(0u)', 'unsigned integer overflow'],
      ['dyn(18446744073709551615u) * dyn(2u) == dyn(0u)', 'unsigned integer overflow'],
    ]);
  });
});

describe('conversions (double.go, int.go, uint.go, string.go)', () => {
  it('a number out of range overflows, as the checked conversions of overflow.go say', () => {
    table([
      ['int(o.big) == 0', 'integer overflow'],
      ['int(-o.big) == 0', 'integer overflow'],
      ['uint(-o.d) == 0u', 'unsigned integer overflow'],
      ['uint(o.neg) == 0u', 'unsigned integer overflow'],
      ['int([9223372036854775808u][0]) == 0', 'integer overflow'],
    ]);
  });

  it("a string that does not parse is `type conversion error from 'string' to '<type>'` (strconv's error dropped)", () => {
    table([
      ['int(o.s) == 0', "type conversion error from 'string' to 'int'"],
      ["int(o.digits + 'x') == 0", "type conversion error from 'string' to 'int'"],
      ["int(' ' + o.digits) == 0", "type conversion error from 'string' to 'int'"],
      ["int('9223372036854775808' + o.s.substring(3)) == 0", "type conversion error from 'string' to 'int'"],
      ['uint(o.s) == 0u', "type conversion error from 'string' to 'uint'"],
      ["uint('-' + o.digits) == 0u", "type conversion error from 'string' to 'uint'"],
      ['double(o.s) == 0.0', "type conversion error from 'string' to 'double'"],
      ['bool(o.s)', "type conversion error from 'string' to 'bool'"],
    ]);
    assert.equal(errorOf("int('+' + o.digits) == 12"), 'value: true');
    // What Go's strconv.ParseBool reads is no error.
    assert.equal(errorOf("bool(o.s.substring(3) + 'T') && !bool('F' + o.s.substring(3))"), 'value: true');
  });
});

describe('missing keys and indexes (interpreter/attributes.go, list.go)', () => {
  it('a key or field a map lacks, of the object or of a literal, and a field of null', () => {
    table([
      ['o.map.zzz == 1', 'no such key: zzz'],
      ["o.map['zzz'] == 1", 'no such key: zzz'],
      ['o.spec.replicas == 1', 'no such key: replicas'],
      ["{'a': 1}[o.s] == 1", 'no such key: abc'],
      ['o.map[1] == 1', 'no such key: 1'],
      ['o.map[o.b] == 1', 'no such key: true'],
      // oldObject on CREATE is null: selecting a field of it finds no key.
      ['oldObject.spec == null', 'no such key: spec'],
      ['o.nul.x == 1', 'no such key: x'],
      ['o.s.x == 1', 'no such key: x'],
      ['o.n.x == 1', 'no such key: x'],
    ]);
  });

  it('a list index out of range, on the object or a literal, is `index out of bounds: <index>`', () => {
    table([
      ['o.list[5] == 1', 'index out of bounds: 5'],
      ['o.list[-1] == 1', 'index out of bounds: -1'],
      ['o.list[5u] == 1', 'index out of bounds: 5'],
      ['o.list[2.0] == 1', 'index out of bounds: 2'],
      ['[1, 2][o.n] == 1', 'index out of bounds: 5'],
      ['o.spec.containers[0] == null', 'index out of bounds: 0'],
    ]);
  });

  it('a list indexed by a value no index can be (types.IndexOrError)', () => {
    table([
      ['o.list[o.s] == 1', "unsupported index type 'string' in list"],
      ['o.list[o.b] == 1', "unsupported index type 'bool' in list"],
      ['o.list[o.d] == 1', 'unsupported index value 1.5 in list'],
      // A field of a list is the field's name as an index.
      ['o.list.x == 1', "unsupported index type 'string' in list"],
    ]);
  });
});

describe('runtime types no overload takes (dyn operands)', () => {
  it('an operator the left operand has the trait of, or receives: `no such overload`', () => {
    table([
      ['o.s < 1', 'no such overload'],
      ['o.n + o.d == 1.0', 'no such overload'],
      ['o.d + o.n == 1.0', 'no such overload'],
      ['o.n < o.s', 'no such overload'],
      ['o.list + o.n == o.n', 'no such overload'],
      ['-o.s == 1', 'no such overload'],
      ['-o.b == 1', 'no such overload'],
      ['!o.s', 'no such overload'],
      ["'a' in o.s", 'no such overload'],
      ['o.n in o.n', 'no such overload'],
    ]);
  });

  it('an operator the left operand lacks the trait of names the operator (`no such overload: _+_`)', () => {
    table([
      ['o.b + 1 == 1', 'no such overload: _+_'],
      ['o.map + o.map == {}', 'no such overload: _+_'],
      ['o.nul + 1 == 1', 'no such overload: _+_'],
      ['o.nul < 1', 'no such overload: _<_'],
      ['o.list >= 1', 'no such overload: _>=_'],
      ['o.d % o.d == o.d', 'no such overload: _%_'],
      ['-o.list == []', 'no such overload: -_'],
      ['-o.nul == 1', 'no such overload: -_'],
    ]);
  });

  it('&&, || and ?: of a non-bool operand, and so the macros built on them', () => {
    table([
      ['o.s && true', 'no such overload'],
      ['o.s || false', 'no such overload'],
      ['o.s ? 1 == 1 : false', 'no such overload'],
      ['o.list.all(x, x)', 'no such overload'],
      ['o.list.exists(x, x)', 'no such overload'],
    ]);
    // A decided answer absorbs the error, as in cel-go.
    assert.equal(errorOf('o.s || true'), 'value: true');
    assert.equal(errorOf('o.s && false'), 'value: false');
  });

  it('size and matches are singletons asking a trait: `no such overload: size`', () => {
    table([
      ['size(o.n) == 1', 'no such overload: size'],
      ['o.n.size() == 1', 'no such overload: size'],
      ['size(o.nul) == 0', 'no such overload: size'],
      ["o.n.matches('a')", 'no such overload: matches'],
      ['o.s.matches(o.n)', 'no such overload'],
    ]);
  });

  it('contains, startsWith and endsWith run unguarded: `no such overload`', () => {
    table([
      ['o.s.startsWith(o.n)', 'no such overload'],
      ['o.s.contains(o.n)', 'no such overload'],
      ["o.n.endsWith('a')", 'no such overload'],
      ["o.list.exists(x, x.startsWith('a'))", 'no such overload'],
    ]);
  });

  it('guarded functions name themselves and the runtime types (common/decls MaybeNoSuchOverload)', () => {
    table([
      ["o.n.lowerAscii() == ''", 'no such overload: lowerAscii(int)'],
      ["o.s.charAt(o.s) == ''", 'no such overload: charAt(string, string)'],
      ['o.n.isSorted()', 'no such overload: isSorted(int)'],
      ['int(o.b) == 1', 'no such overload: int(bool)'],
      ["string(o.list) == ''", 'no such overload: string(list)'],
      ['double(o.nul) == 1.0', 'no such overload: double(null_type)'],
      ['sets.contains(o.s, [1])', 'no such overload: sets.contains(string, list)'],
    ]);
  });
});

describe('regular expressions, strings, optionals, maps, comprehensions', () => {
  it('a pattern built at run time that RE2 refuses is Go regexp error', () => {
    table([['o.s.matches(o.pattern)', 'error parsing regexp: missing closing ]: `[`']]);
  });

  it("the strings extension's range errors", () => {
    table([
      ["o.s.substring(5) == ''", 'index out of range: 5'],
      ["o.s.substring(2, 1) == ''", 'invalid substring range. start: 2, end: 1'],
      ["o.s.charAt(10) == ''", 'index out of range: 10'],
      ["o.s.indexOf('a', 10) == 1", 'index out of range: 10'],
    ]);
  });

  it('the value of an optional without one (optional.go)', () => {
    table([
      ['optional.none().value() == 1', 'optional.none() dereference'],
      ["o.?zz.value() == ''", 'optional.none() dereference'],
    ]);
  });

  it('a map literal given a key twice keeps the last value (cel-go builds a Go map)', () => {
    assert.equal(errorOf("{o.s: 1, dyn('abc'): 2}['abc'] == 2"), 'value: true');
  });

  it('a comprehension over a value that is neither a list nor a map (interpretable.go, %T of the value)', () => {
    table([
      ['o.n.all(x, x > 0)', "got 'types.Int', expected iterable type"],
      ['o.s.exists(x, true)', "got 'types.String', expected iterable type"],
      ['o.nul.map(x, x).size() == 0', "got 'types.Null', expected iterable type"],
      ['o.n.all(i, v, true)', 'unsupported comprehension range type: types.Int'],
    ]);
  });

  it("the lists library passes over elements cel-go's Compare cannot order (lists.go)", () => {
    assert.equal(errorOf('[o.s, o.n].isSorted()'), 'value: true');
    assert.equal(errorOf('[o.n, o.s].max() == o.n && [o.n, o.s].min() == o.n'), 'value: true');
    assert.equal(errorOf('[o.n, o.d, dyn(7u)].max() == dyn(7u) && [o.d, o.n].isSorted()'), 'value: true');
    // sum adds with each type's own Add: an element of another kind is no overload.
    table([
      ['[o.n, o.s].sum() == 1', 'no such overload'],
      ['[o.d, o.n].sum() == o.d', 'no such overload'],
    ]);
  });

  it('NaN is not ordered (double.go Compare)', () => {
    table([['o.d / 0.0 * 0.0 < 1.0', 'NaN values cannot be ordered']]);
  });

  it('the cost limit (interpreter/runtimecost.go)', () => {
    const compiled = compileExpression('o.list.map(x, o.list.map(y, y)).size() > 0', { declarations: { o: 'dyn' } });
    assert.ok(!isCompileError(compiled));
    assert.throws(() => compiled.run({ o: object }, 10), /^.*operation cancelled: actual cost limit exceeded$/);
  });
});

describe('celGoWords', () => {
  it('leaves words that are already cel-go', () => {
    for (const said of ['no such key: x', 'division by zero', 'no such overload', 'index out of range: 3'])
      assert.equal(celGoWords(said), undefined, said);
  });

  it('reads types with parameters and commas', () => {
    assert.equal(
      celGoWords('no such overload: dyn<map<string, int>> + dyn<map<string, int>>'),
      'no such overload: _+_',
    );
    assert.equal(
      celGoWords("found no matching overload for 'map<string, list<int>>.foo(list<int>, int)'"),
      'no such overload: foo(map, list, int)',
    );
  });
});
