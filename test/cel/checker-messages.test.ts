/**
 * The checker refuses what cel-go's checker refuses, in its words and at its positions (checker.go,
 * errors.go; the display of common/error.go: the line, dots up to a caret). Each answer below is
 * derived from cel-go's checker: the overload of an operator by its internal name, a
 * conditional as `_?_:_(bool, A, A)`, logical operators by argument, macros by their expansion.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { compileExpression, isCompileError } from '../../packages/kube-cel/src/compile.ts';
import { checkMatchConditions } from '../../lib/matchconditions/rules.ts';

/** The compile error's message without its prefix, or the type the expression checks as. */
function said(expression: string): string {
  const r = compileExpression(expression);
  return isCompileError(r) ? r.message.replace(/^compilation failed: /, '') : `type ${r.type}`;
}

/** The first line of each error (`ERROR: <input>:l:c: message`). */
function errors(expression: string): string[] {
  return said(expression)
    .split('\n')
    .filter((l) => l.startsWith('ERROR: '));
}

const refusals: Array<[string, string]> = [
  // Operators by their internal names, at the operator.
  ['1 + "a"', "ERROR: <input>:1:3: found no matching overload for '_+_' applied to '(int, string)'"],
  ['1 == 1.0', "ERROR: <input>:1:3: found no matching overload for '_==_' applied to '(int, double)'"],
  ["1 != 'a'", "ERROR: <input>:1:3: found no matching overload for '_!=_' applied to '(int, string)'"],
  ["2 < 'a'", "ERROR: <input>:1:3: found no matching overload for '_<_' applied to '(int, string)'"],
  ["1 in 'a'", "ERROR: <input>:1:3: found no matching overload for '@in' applied to '(int, string)'"],
  ['!1', "ERROR: <input>:1:1: found no matching overload for '!_' applied to '(int)'"],
  ["-'a'", "ERROR: <input>:1:1: found no matching overload for '-_' applied to '(string)'"],
  ['[1][1u]', "ERROR: <input>:1:4: found no matching overload for '_[_]' applied to '(list(int), uint)'"],
  ["{1: 2}['a']", "ERROR: <input>:1:7: found no matching overload for '_[_]' applied to '(map(int, int), string)'"],
  // Functions and methods, at the opening parenthesis; a member call's receiver before a dot.
  ['size(1)', "ERROR: <input>:1:5: found no matching overload for 'size' applied to '(int)'"],
  ["'a'.startsWith(1)", "ERROR: <input>:1:15: found no matching overload for 'startsWith' applied to 'string.(int)'"],
  ['[1].join()', "ERROR: <input>:1:9: found no matching overload for 'join' applied to 'list(int).()'"],
  [
    'sets.contains([1.0], [1])',
    "ERROR: <input>:1:14: found no matching overload for 'sets.contains' applied to '(list(double), list(int))'",
  ],
  // A member call on a dyn receiver: its arguments still pick an overload.
  [
    'object.spec.image.startsWith(1)',
    "ERROR: <input>:1:29: found no matching overload for 'startsWith' applied to 'dyn.(int)'",
  ],
  [
    'object.metadata.name.split(1).size() > 1',
    "ERROR: <input>:1:27: found no matching overload for 'split' applied to 'dyn.(int)'",
  ],
  [
    "object.metadata.name.charAt('a') == 'b'",
    "ERROR: <input>:1:28: found no matching overload for 'charAt' applied to 'dyn.(string)'",
  ],
  ['object.x + true', "ERROR: <input>:1:10: found no matching overload for '_+_' applied to '(dyn, bool)'"],
  ['object.x in 1', "ERROR: <input>:1:10: found no matching overload for '@in' applied to '(dyn, int)'"],
  // Undeclared names.
  ['x == 1', "ERROR: <input>:1:1: undeclared reference to 'x' (in container '')"],
  ['foo(1)', "ERROR: <input>:1:4: undeclared reference to 'foo' (in container '')"],
  ["quantity('1').mul(2)", "ERROR: <input>:1:18: undeclared reference to 'mul' (in container '')"],
  // Conditionals and logical operators.
  ["true ? 1 : 'a'", "ERROR: <input>:1:6: found no matching overload for '_?_:_' applied to '(bool, int, string)'"],
  ['1 ? true : false', "ERROR: <input>:1:3: found no matching overload for '_?_:_' applied to '(int, bool, bool)'"],
  ['1 && true', "ERROR: <input>:1:1: expected type 'bool' but found 'int'"],
  ["true || 'a'", "ERROR: <input>:1:9: expected type 'bool' but found 'string'"],
  // Macros: all and exists join steps with _&&_ and _||_, the others with _?_:_ at the call.
  ['[1].all(x, x)', "ERROR: <input>:1:12: expected type 'bool' but found 'int'"],
  ['[1].exists(x, 1)', "ERROR: <input>:1:15: expected type 'bool' but found 'int'"],
  ['[1].exists_one(x, 1)', "ERROR: <input>:1:15: found no matching overload for '_?_:_' applied to '(int, int, int)'"],
  [
    '[1].filter(x, 1).size() == 0',
    "ERROR: <input>:1:11: found no matching overload for '_?_:_' applied to '(int, list(int), list(int))'",
  ],
  [
    '[1].map(x, 1, x).size() == 0',
    "ERROR: <input>:1:8: found no matching overload for '_?_:_' applied to '(int, list(int), list(int))'",
  ],
  [
    '(1).all(x, true)',
    "ERROR: <input>:1:2: expression of type 'int' cannot be range of a comprehension (must be list, map, or dynamic)",
  ],
  ['[1].map(1, x) == []', 'ERROR: <input>:1:9: argument must be a simple name'],
  ['[1].all(i.j, v, true)', 'ERROR: <input>:1:9: argument must be a simple name'],
  ['has(object)', 'ERROR: <input>:1:5: invalid argument to has() macro'],
  // `a.?b` is a call of `_?._` to cel-go's parser, which has() does not take.
  ['has(object.?spec)', 'ERROR: <input>:1:11: invalid argument to has() macro'],
  // A refusal of the parser comes alone: the checker does not run.
  ['has(object.spec.?x) || x', 'ERROR: <input>:1:16: invalid argument to has() macro'],
  ['[1].all(i, v, v)', "ERROR: <input>:1:15: expected type 'bool' but found 'int'"],
  [
    '[1].transformList(i, v, v, v * 2) == []',
    "ERROR: <input>:1:18: found no matching overload for '_?_:_' applied to '(int, list(int), list(int))'",
  ],
  [
    "{'a': 1}.transformMap(k, v, v, v * 2) == {}",
    "ERROR: <input>:1:22: found no matching overload for '_?_:_' applied to '(int, map(string, int), map(string, int))'",
  ],
  [
    "[1].transformMapEntry(i, v, v, {'a': v}) == {}",
    "ERROR: <input>:1:22: found no matching overload for '_?_:_' applied to '(int, map(string, int), map(string, int))'",
  ],
  [
    '[1].existsOne(i, v, v)',
    "ERROR: <input>:1:14: found no matching overload for '_?_:_' applied to '(int, int, int)'",
  ],
  // Aggregate literals of one type (HomogeneousAggregateLiterals).
  ["[1, 'a'] == []", "ERROR: <input>:1:5: expected type 'int' but found 'string'"],
  // The request's declared fields, namespaceObject's, the libraries' opaque types.
  [
    'request.operation + 1 == 2',
    "ERROR: <input>:1:19: found no matching overload for '_+_' applied to '(string, int)'",
  ],
  [
    "request.dryRun == 'true'",
    "ERROR: <input>:1:16: found no matching overload for '_==_' applied to '(bool, string)'",
  ],
  ["request.operations == 'CREATE'", "ERROR: <input>:1:8: undefined field 'operations'"],
  [
    "request['operation'] == 'CREATE'",
    "ERROR: <input>:1:8: found no matching overload for '_[_]' applied to '(kubernetes.AdmissionRequest, string)'",
  ],
  [
    "request.userInfo.groups == 'a'",
    "ERROR: <input>:1:25: found no matching overload for '_==_' applied to '(list(string), string)'",
  ],
  [
    "request.kind.kind.size() == 'a'",
    "ERROR: <input>:1:26: found no matching overload for '_==_' applied to '(int, string)'",
  ],
  ['has(request.operations)', "ERROR: <input>:1:4: undefined field 'operations'"],
  ["request.?operations.orValue('') == ''", "ERROR: <input>:1:8: undefined field 'operations'"],
  ['namespaceObject.?metadata.?labelz.orValue({}) == {}', "ERROR: <input>:1:26: undefined field 'labelz'"],
  ['has(request.userInfo.uids)', "ERROR: <input>:1:4: undefined field 'uids'"],
  ["namespaceObject.metadata.labelz['a'] == 'b'", "ERROR: <input>:1:25: undefined field 'labelz'"],
  ["quantity('1').value == 1", "ERROR: <input>:1:14: type 'kubernetes.Quantity' does not support field selection"],
  [
    "authorizer.group(1).resource('pods').check('get').allowed()",
    "ERROR: <input>:1:17: found no matching overload for 'group' applied to 'kubernetes.authorization.Authorizer.(int)'",
  ],
  [
    "authorizer.check('get')",
    "ERROR: <input>:1:17: found no matching overload for 'check' applied to 'kubernetes.authorization.Authorizer.(string)'",
  ],
  ["isIP(cidr('192.168.0.0/24'))", "ERROR: <input>:1:5: found no matching overload for 'isIP' applied to '(net.CIDR)'"],
];

describe("compile errors in cel-go's checker words", () => {
  for (const [expression, expected] of refusals) {
    it(expression, () => assert.deepEqual(errors(expression), [expected]));
  }

  it('goes on past an error and lists each, in the order of their positions', () => {
    assert.deepEqual(errors('x + y'), [
      "ERROR: <input>:1:1: undeclared reference to 'x' (in container '')",
      "ERROR: <input>:1:5: undeclared reference to 'y' (in container '')",
    ]);
    assert.deepEqual(errors("size(1) == 1 && 'a' + 1 == 'b'"), [
      "ERROR: <input>:1:5: found no matching overload for 'size' applied to '(int)'",
      "ERROR: <input>:1:21: found no matching overload for '_+_' applied to '(string, int)'",
    ]);
    // A dyn operand picks the overload of the other: `dyn + int` is an int.
    assert.deepEqual(errors("object.x + 1 == 'a'"), [
      "ERROR: <input>:1:14: found no matching overload for '_==_' applied to '(int, string)'",
    ]);
    // An error's node is of a type any use accepts: no second error for `undeclared + 1`.
    assert.deepEqual(errors('x + 1 == 2'), ["ERROR: <input>:1:1: undeclared reference to 'x' (in container '')"]);
    // A function of a namespace the environment lacks: the namespace is undeclared, and so is the name.
    assert.deepEqual(errors('sets.foo([1])'), [
      "ERROR: <input>:1:1: undeclared reference to 'sets' (in container '')",
      "ERROR: <input>:1:9: undeclared reference to 'foo' (in container '')",
    ]);
    assert.deepEqual(errors('sets.size() == 1'), [
      "ERROR: <input>:1:1: undeclared reference to 'sets' (in container '')",
    ]);
    assert.deepEqual(errors('optional.of(1, 2) == optional.none()'), [
      "ERROR: <input>:1:12: found no matching overload for 'optional.of' applied to '(int, int)'",
    ]);
    // The optional library's macros, as cel-go declares and expands them.
    assert.deepEqual(errors('1.orValue(2) == 2'), [
      "ERROR: <input>:1:10: found no matching overload for 'orValue' applied to 'int.(int)'",
    ]);
    assert.deepEqual(errors("optional.of(1).orValue('a') == 'a'"), [
      "ERROR: <input>:1:23: found no matching overload for 'orValue' applied to 'optional_type(int).(string)'",
    ]);
    assert.deepEqual(errors('optional.of(1).or(2).hasValue()'), [
      "ERROR: <input>:1:18: found no matching overload for 'or' applied to 'optional_type(int).(int)'",
    ]);
    assert.deepEqual(errors('1.optMap(x, x).hasValue()'), [
      "ERROR: <input>:1:9: found no matching overload for 'hasValue' applied to 'int.()'",
      "ERROR: <input>:1:9: found no matching overload for 'value' applied to 'int.()'",
    ]);
    assert.deepEqual(errors('optional.of(1).optFlatMap(x, x).hasValue()'), [
      "ERROR: <input>:1:26: found no matching overload for '_?_:_' applied to '(bool, int, optional_type(dyn))'",
    ]);
    // A macro name with the wrong arguments is no macro, and no function either.
    assert.deepEqual(errors('object.exists(x)'), [
      "ERROR: <input>:1:14: undeclared reference to 'exists' (in container '')",
      "ERROR: <input>:1:15: undeclared reference to 'x' (in container '')",
    ]);
  });

  it('lists the first 100 errors and counts the others, as cel-go', () => {
    const expression = Array.from({ length: 103 }, (_, i) => `x${i}`).join(' + ');
    const lines = said(expression).split('\n');
    assert.equal(lines.filter((l) => l.startsWith('ERROR: ')).length, 100);
    assert.equal(lines.at(-1), '3 more errors were truncated');
    assert.match(lines.at(-4)!, /undeclared reference to 'x99'/);
  });

  it('shows the line and dots up to a caret, as cel-go displays an error', () => {
    assert.equal(
      said("object.metadata.name == 'a' &&\n  1 + 'a' == 'b'"),
      "ERROR: <input>:2:5: found no matching overload for '_+_' applied to '(int, string)'\n" +
        " |   1 + 'a' == 'b'\n | ....^",
    );
    // A tab of the line is shown as a space.
    assert.equal(
      said("object.x == 1 &&\t1 + 'a' == 'b'"),
      "ERROR: <input>:1:20: found no matching overload for '_+_' applied to '(int, string)'\n" +
        " | object.x == 1 && 1 + 'a' == 'b'\n | ...................^",
    );
    // A character of more than one UTF-8 byte gets a full-width dot.
    assert.equal(
      said("'é' + 1 == 'a'"),
      "ERROR: <input>:1:5: found no matching overload for '_+_' applied to '(string, int)'\n" +
        " | 'é' + 1 == 'a'\n | .\uff0e..^",
    );
  });

  it('accepts what cel-go accepts', () => {
    for (const expression of [
      "object.metadata.name + 'x' == 'a'",
      "has(request.userInfo.username) && request.userInfo.username != ''",
      "has(object.metadata.labels) && 'team' in object.metadata.labels",
      "request.kind.kind == 'Pod' && request.operation in ['CREATE', 'UPDATE']",
      "namespaceObject == null || namespaceObject.metadata.name != 'kube-system'",
      'request.options == null || has(request.options.dryRun)',
      "object.spec.containers.all(c, c.image.startsWith('registry.example.com/'))",
      "{'a': 1}[dyn('a')] == 1",
      'true ? 1 : dyn(2)',
      "object.spec.image.startsWith('registry.example.com/')",
      "object.metadata.name.indexOf('-') > 0",
      'object.x < true',
      'object.spec.items.sum() > 1',
    ])
      assert.ok(!said(expression).startsWith('ERROR'), `${expression}: ${said(expression)}`);
  });
});

describe('a condition that is not bool', () => {
  it("is refused with the API server's words, a dyn one as well, naming the type from 1.32", () => {
    const cases: Array<[string, string]> = [
      ['1', 'int'],
      ['object.spec.enabled', 'dyn'],
      ["[request.name, 'a']", 'list(string)'],
      ['object.spec.items', 'dyn'],
      ['[object.a]', 'list(dyn)'],
      ['{}', 'map(dyn, dyn)'],
      ['null', 'null_type'],
      ['object.?spec', 'optional_type(dyn)'],
    ];
    for (const [expression, type] of cases) {
      const [problem] = checkMatchConditions([{ name: 'c', expression }]);
      assert.equal(
        problem?.message,
        `matchCondition "c": ${JSON.stringify(expression)}: must evaluate to bool but got ${type}`,
      );
      const [older] = checkMatchConditions([{ name: 'c', expression }], { kubeVersion: { major: 1, minor: 31 } });
      assert.equal(older?.message, `matchCondition "c": ${JSON.stringify(expression)}: must evaluate to bool`);
    }
  });
});

describe('type deductions of literals, as cel-go joins element types', () => {
  const types: Array<[string, string]> = [
    // An empty literal's element type is free: the other elements bind it.
    ['[[], [1]]', 'list<list<int>>'],
    ['[[1], []]', 'list<list<int>>'],
    ['[[[[[]]]], [], [[[]]]]', 'list<list<list<list<list<dyn>>>>>'],
    ["[{}, {'a': 1}]", 'list<map<string, int>>'],
    ['[optional.none(), optional.of(1)]', 'list<optional<int>>'],
    ['[optional.of(1), optional.none()]', 'list<optional<int>>'],
    // null is assignable to an object, opaque or optional type: compared, or a conditional's branch.
    ['request.kind == null', 'bool'],
    ['null != request.userInfo', 'bool'],
    ["quantity('1') == null", 'bool'],
    ['optional.of(1) != null', 'bool'],
    ['true ? request.kind : null', 'kubernetes.GroupVersionKind'],
    ['false ? null : namespaceObject.metadata', 'kubernetes.NamespaceMetadata'],
    // A conditional's branches join as well.
    ['true ? [] : [1]', 'list<int>'],
    ["false ? {'a': 1} : {}", 'map<string, int>'],
    ['true ? optional.none() : optional.of(1)', 'optional<int>'],
    // What nothing binds is dyn once the outermost literal is checked.
    ['[[]][0]', 'list'],
  ];
  for (const [expression, type] of types) it(expression, () => assert.equal(said(expression), `type ${type}`));

  it('joins null with an optional or an object type before 1.29; the literal validator refuses it after', () => {
    const v128 = { kubeVersion: { major: 1, minor: 28 } };
    for (const e of ['[optional.of(1), null][0]', '[request, null][0]']) {
      const r = compileExpression(e, v128);
      // A dyn element: the engine's typed lists refuse a null element when indexed.
      assert.equal(isCompileError(r) ? r.message : r.type, 'dyn', e);
      assert.match(said(e), /expected type '.+' but found 'null_type'/, e);
    }
  });

  it('evaluates what it accepts as cel-go does', () => {
    const run = (e: string) => {
      const r = compileExpression(e, { kubeVersion: { major: 1, minor: 28 } });
      assert.ok(!isCompileError(r), e);
      return r.run({ object: null, oldObject: null, namespaceObject: null });
    };
    assert.equal(run("[quantity('1'), null][1] == null"), true);
    assert.equal(run("quantity('1') == null"), false);
    assert.equal(run("quantity('1') != null"), true);
    assert.equal(run("(false ? quantity('1') : null) == null"), true);
    assert.equal(run('[[], [1]][1][0]'), 1n);
  });

  it('still refuses elements of different types', () => {
    assert.deepEqual(errors('[[1], [true]] == []'), [
      "ERROR: <input>:1:7: expected type 'list(int)' but found 'list(bool)'",
    ]);
    assert.deepEqual(errors("(true ? [] : [1])[0] + 'a' == 'b'"), [
      "ERROR: <input>:1:22: found no matching overload for '_+_' applied to '(int, string)'",
    ]);
    assert.deepEqual(errors('[null, 1] == []'), ["ERROR: <input>:1:8: expected type 'null_type' but found 'int'"]);
  });
});
