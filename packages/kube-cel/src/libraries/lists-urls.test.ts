// Kubernetes' lists, regex and URL libraries, restated from the examples the libraries document:
// the expression and the API server's answer.
import { describe, it } from 'node:test';
import { checkAll, compile, error, value, type Case } from '../../test/k8s-cases.ts';

const rows = (list: Array<[string, ReturnType<typeof value>]>): Case[] =>
  list.map(([expr, expect]) => ({ expr, expect }));

describe('lists library', () => {
  it("sum adds to the zero of the overload's type, so a list sums to its elements' type", () => {
    // lists.go: sum starts from zeroValuesOfSummableTypes[type]; cost_test.go TestListsCost sums
    // uintListLiteral, [uint(1), …, uint(5)], under the uint overload (list_uint_sum_uint).
    checkAll(
      rows([
        ['[uint(1), uint(2), uint(3), uint(4), uint(5)].sum() == 15u', value(true)],
        ['type([1u, 2u].sum()) == uint', value(true)],
        ['type(dyn([1u, 2u]).sum()) == uint', value(true)],
        ['type([1u].filter(x, false).sum()) == uint', value(true)],
        ['type([1.0].filter(x, false).sum()) == double', value(true)],
        ['type([1].filter(x, false).sum()) == int', value(true)],
        ['type([].sum()) == int', value(true)],
        ['[18446744073709551615u, 1u].sum()', error('unsigned integer overflow')],
      ]),
    );
  });

  it('isSorted, sum, min, max, indexOf and lastIndexOf', () => {
    checkAll(
      rows([
        ['[1, 2, 3].isSorted()', value(true)],
        ["['a', 'b', 'b', 'c'].isSorted()", value(true)],
        ['[2.0, 1.0].isSorted()', value(false)],
        ['[1].isSorted()', value(true)],
        ['[].isSorted()', value(true)],
        ['[1, 3].sum()', value(4n)],
        ['[1.0, 3.0].sum()', value(4)],
        ["[duration('1m'), duration('1s')].sum() == duration('61s')", value(true)],
        ['[].sum() == 0', value(true)],
        ['[1, 3].min()', value(1n)],
        ['[1, 3].max()', value(3n)],
        ['[1].min()', value(1n)],
        ['[].min()', error('min called on empty list')],
        ['[].max()', error('max called on empty list')],
        ['[1, 2, 2, 3].indexOf(2)', value(1n)],
        ["['a', 'b', 'b', 'c'].lastIndexOf('b')", value(2n)],
        ['[1.0].indexOf(1.1)', value(-1n)],
        ["[].indexOf('string')", value(-1n)],
        // CEL equality: numbers of any kind by value, lists and maps by their elements.
        ['[dyn(1), dyn(2u)].indexOf(2)', value(1n)],
        ['[dyn(1), dyn(2u), dyn(2.0)].lastIndexOf(2)', value(2n)],
        ["[{'a': 1}, {'b': 1}].indexOf({'b': 1})", value(1n)],
        ["[{1: 'a'}, {2: 'a'}].indexOf({2: 'a'})", value(1n)],
        ["[{1: 'a'}, {2: 'a'}, {1: 'a'}].distinct().size()", value(2n)],
        ['[dyn(1), dyn(1u), dyn(1.0), dyn(2)].distinct() == [1, 2]', value(true)],
      ]),
    );
  });

  it('indexOf and lastIndexOf of a dyn list compare by value, as the one overload cel-go has', () => {
    const vars = { o: { ints: [1n, 2n, 2n, 3n], strs: ['a'] } };
    const declarations = { o: 'dyn' };
    checkAll([
      { expr: 'o.ints.indexOf(2.0)', expect: value(1n), vars, declarations },
      { expr: 'o.ints.lastIndexOf(2.0)', expect: value(2n), vars, declarations },
      { expr: 'o.ints.indexOf(10.0)', expect: value(-1n), vars, declarations },
      { expr: 'o.strs.indexOf(1)', expect: value(-1n), vars, declarations },
      { expr: '[1, 2].indexOf(dyn(2.0))', expect: value(1n) },
      // Known element types that differ are still refused by the checker.
      {
        expr: "[1, 2].indexOf('a')",
        expect: compile(/no matching overload for 'indexOf' applied to 'list\(int\)\.\(string\)'/),
      },
      {
        expr: '[1, 2].lastIndexOf(2.0)',
        expect: compile(/no matching overload for 'lastIndexOf' applied to 'list\(int\)\.\(double\)'/),
      },
    ]);
  });

  it('sums only numbers and durations, compares only comparable types', () => {
    checkAll(
      rows([
        ["['a', 'b'].sum()", compile(/sum/)],
        ['[true, false].sum()', compile(/sum/)],
        ["[quantity('1')].sum()", compile(/sum/)],
        ["[quantity('1'), quantity('2')].max()", compile(/max/)],
        ['[[1], [2]].min()', compile(/min/)],
      ]),
    );
  });
});

describe('regex library', () => {
  it('find and findAll, with RE2 patterns', () => {
    checkAll(
      rows([
        ["'abc 123'.find('[0-9]+')", value('123')],
        ["'abc 123'.find('xyz')", value('')],
        ["'123 abc 456'.findAll('[0-9]+')", value(['123', '456'])],
        ["'123 abc 456'.findAll('[0-9]+', 1)", value(['123'])],
        ["'123 abc 456'.findAll('xyz')", value([])],
        ["'123 abc 456'.findAll('[0-9]+', 0)", value([])],
        ["'123 abc 456'.findAll('[0-9]+', -1)", value(['123', '456'])],
        ["'abc'.find('(')", compile(/missing closing \)|error parsing regexp/)],
      ]),
    );
  });
});

describe('url library', () => {
  it('parses absolute URIs and absolute paths only', () => {
    checkAll(
      rows([
        ["isURL('https://user:pass@example.com:80/path?query=val#fragment')", value(true)],
        ["isURL('/absolute-path')", value(true)],
        ["isURL('https://a:b:c/')", value(false)],
        ["isURL('../relative-path')", value(false)],
        ["url('https://a:b:c/')", error(/^URL parse error during conversion from string: /)],
        ["url('../relative-path')", error(/^URL parse error during conversion from string: /)],
      ]),
    );
  });

  it('reads the parts of a URL', () => {
    checkAll(
      rows([
        ["url('/path').getScheme()", value('')],
        ["url('https://example.com/').getScheme()", value('https')],
        ["url('https://example.com:80/').getHost()", value('example.com:80')],
        ["url('https://example.com/').getHost()", value('example.com')],
        ["url('https://[::1]:80/').getHost()", value('[::1]:80')],
        ["url('https://[::1]/').getHost()", value('[::1]')],
        ["url('/path').getHost()", value('')],
        ["url('https://example.com:80/').getHostname()", value('example.com')],
        ["url('https://127.0.0.1:80/').getHostname()", value('127.0.0.1')],
        ["url('https://[::1]:80/').getHostname()", value('::1')],
        ["url('/path').getHostname()", value('')],
        ["url('https://example.com:80/').getPort()", value('80')],
        ["url('https://example.com/').getPort()", value('')],
        ["url('/path').getPort()", value('')],
        ["url('https://example.com/path').getEscapedPath()", value('/path')],
        ["url('https://example.com/path with spaces/').getEscapedPath()", value('/path%20with%20spaces/')],
        ["url('https://example.com').getEscapedPath()", value('')],
        ["url('https://example.com/path?k1=a&k2=b&k2=c').getQuery()", value({ k1: ['a'], k2: ['b', 'c'] })],
        [
          "url('https://example.com/path?key with spaces=value with spaces').getQuery()",
          value({ 'key with spaces': ['value with spaces'] }),
        ],
        ["url('https://example.com/path?').getQuery()", value({})],
        ["url('https://example.com/path').getQuery()", value({})],
      ]),
    );
  });
});
