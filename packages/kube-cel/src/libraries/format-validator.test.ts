// string.format's validator (cel-go's strings extension from version 1; Kubernetes 1.29+): a literal
// format string with a list literal of arguments is checked when the expression is compiled, and
// list and map literals inside a format call are exempt from the homogeneous literal check.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { compileExpression, isCompileError } from '../compile.ts';

const compile = (expression: string, minor = 34): string => {
  const compiled = compileExpression(expression, { kubeVersion: { major: 1, minor } });
  return isCompileError(compiled) ? compiled.message.split('\n')[0]! : 'ok';
};

const OK = 'ok';
/** Expression, and the compile error (after `<input>:1:1: `) or OK. */
const CASES: Array<[string, string]> = [
  ["'%s'.format(['a']) == 'a'", OK],
  ["'%d %s'.format([1, 'a']) == '1 a'", OK],
  [
    "'%s'.format([[1, 'a'], {1: 'a', 'b': 2}]) != ''",
    'too many arguments supplied to string.format (expected 1, got 2)',
  ],
  ["'%s %s'.format([[1, 'a'], {1: 'a', 'b': 2}]) != ''", OK],
  ["'%s'.format(['a', 'b']) == ''", 'too many arguments supplied to string.format (expected 1, got 2)'],
  ["'%s %s'.format(['a']) == ''", 'index 1 out of range'],
  ["'%'.format([]) == ''", 'unexpected end of string'],
  ["'%s'.format([]) == ''", 'index 0 out of range'],
  ["'%q'.format(['a']) == ''", 'could not parse formatting clause: unrecognized formatting clause "q"'],
  [
    "'%.'.format([1.0]) == ''",
    'could not parse formatting clause: error while parsing precision: could not find end of precision specifier',
  ],
  [
    "'%d'.format(['a']) == ''",
    'error during formatting: decimal clause can only be used on integers, was given string',
  ],
  [
    "'%d'.format([1.5]) == ''",
    'error during formatting: decimal clause can only be used on integers, was given double',
  ],
  ["'%f'.format([1]) == ''", 'error during formatting: fixed-point clause can only be used on doubles, was given int'],
  ["'%f %e'.format(['NaN', 2.0]) != ''", OK],
  ["'%o'.format([true]) == ''", 'error during formatting: octal clause can only be used on integers, was given bool'],
  ["'%b %b %x %X'.format([true, 1u, b'a', 'z']) != ''", OK],
  [
    "'%x'.format([1.5]) == ''",
    'error during formatting: only integers, byte buffers, and strings can be formatted as hex, was given double',
  ],
  [
    "'%s'.format([optional.of(1)]) == ''",
    'error during formatting: string clause can only be used on strings, bools, bytes, ints, doubles, maps, lists, ' +
      'types, durations, and timestamps, was given optional_type',
  ],
  [
    "'%s'.format([[quantity('1')]]) == ''",
    'error during formatting: string clause can only be used on strings, bools, bytes, ints, doubles, maps, lists, ' +
      'types, durations, and timestamps, was given kubernetes.Quantity',
  ],
  ["'%s %s %s %s'.format([int, null, timestamp('2020-01-01T00:00:00Z'), duration('1s')]) != ''", OK],
  // A dyn argument passes any clause; a non-literal argument list or format string is not checked.
  ["'%d %f'.format([object.a, object.b]) != ''", OK],
  ["'%s'.format(object.list) != ''", OK],
  ["object.f.format(['a', 'b']) != ''", OK],
  ["'%%'.format([]) == '%'", OK],
];

describe('string.format checked when compiled, as cel-go validates it', () => {
  for (const [expression, expected] of CASES) {
    it(expression, () => {
      const got = compile(expression);
      assert.equal(got === OK ? OK : got.replace(/^compilation failed: ERROR: <input>:\d+:\d+: /, ''), expected);
    });
  }

  it('list literals inside a format call may mix types; elsewhere they may not', () => {
    assert.equal(compile("'%s'.format([[1, 'a']]) != ''"), OK);
    assert.match(compile("[[1, 'a']].size() == 1"), /expected type 'int' but found 'string'/);
  });

  it('from 1.29, with the strings library version 2', () => {
    assert.match(compile("'%d'.format(['a']) == ''", 28), /undeclared reference to 'format'/);
    assert.match(compile("'%d'.format(['a']) == ''", 29), /decimal clause/);
  });
});
