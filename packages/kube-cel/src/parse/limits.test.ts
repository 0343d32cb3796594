// cel-go's parser limits, as the API server keeps them (its defaults), at their exact boundaries.
//
// Two counts refuse nesting. The ANTLR parse listener counts, per grammar rule, the rule's
// invocations under way: every nesting through `expr` (parentheses, list and map literals, call
// arguments, indexes, the right branch of `?:`) adds one to `expr`, so 249 levels inside the top
// `expr` pass and 250 are refused; a chain of operators is a loop (a left-recursive rule leaves and
// re-enters itself at each step), but the right operand of `+` is `calc[2]` and of `*` `calc[3]`,
// so `1 + (…)` nests `calc` two deep per level (2n + 1 at the innermost `1`) and `1 + 2 * (…)` three
// deep (3n + 1). The visitor then walks the tree, counting `?:`, relations, arithmetic, selections,
// member calls and indexes on the way down: 250 of them on one path pass, 251 are refused.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { compileExpression, isCompileError } from '../compile.ts';

const LISTENER = 'compilation failed: ERROR: <input>:-1:0: expression recursion limit exceeded: 250';
const VISITOR = 'compilation failed: ERROR: <input>:-1:0: max recursion depth exceeded';

/** The compile error's message, or the type when it compiles. */
function outcome(expression: string): string {
  const result = compileExpression(expression);
  return isCompileError(result) ? result.message : `type ${result.type}`;
}

/** The value of an expression that compiles. */
function value(expression: string): unknown {
  const result = compileExpression(expression);
  assert.ok(!isCompileError(result), isCompileError(result) ? result.message : '');
  return result.run({});
}

const nested = (open: string, inner: string, close: string) => (n: number) =>
  `${open.repeat(n)}${inner}${close.repeat(n)}`;

/** Each kind of chain or nesting: the expression of size n, the largest n accepted, the refusal past it. */
const BOUNDARIES: Array<{ kind: string; of: (n: number) => string; max: number; refusal: string }> = [
  // n `+` under one `>`: n + 1 counted nodes on the left spine.
  { kind: '`+` chain', of: (n) => `${'1 + '.repeat(n)}1 > 0`, max: 249, refusal: VISITOR },
  // n `+`, and the `*` of the leftmost operand below them, under `>`: n + 2.
  { kind: '`*` mixed with `+`', of: (n) => `${'2 * 3 + '.repeat(n)}1 > 0`, max: 248, refusal: VISITOR },
  { kind: '`==` chain', of: (n) => `${'true == '.repeat(n)}true`, max: 250, refusal: VISITOR },
  { kind: 'member chain', of: (n) => `object${'.a'.repeat(n)} == 1`, max: 249, refusal: VISITOR },
  { kind: 'index chain', of: (n) => `object${'[0]'.repeat(n)} == 1`, max: 249, refusal: VISITOR },
  { kind: 'member calls', of: (n) => `'a'${'.lowerAscii()'.repeat(n)} == 'a'`, max: 249, refusal: VISITOR },
  { kind: 'parentheses', of: nested('(', 'true', ')'), max: 249, refusal: LISTENER },
  { kind: 'lists', of: (n) => `${nested('[', '1', ']')(n)}.size() == 1`, max: 249, refusal: LISTENER },
  { kind: 'maps', of: (n) => `${nested('{1: ', '1', '}')(n)}.size() == 1`, max: 249, refusal: LISTENER },
  { kind: 'global calls', of: (n) => `${nested('int(', '1', ')')(n)} == 1`, max: 249, refusal: LISTENER },
  { kind: 'nested indexes', of: (n) => `${nested('[0][', '0', ']')(n)} == 0`, max: 249, refusal: LISTENER },
  { kind: '`?:` chain', of: (n) => `${'true ? false : '.repeat(n)}true`, max: 249, refusal: LISTENER },
  { kind: '1 + (…)', of: (n) => `${nested('1 + (', '1', ')')(n)} > 0`, max: 124, refusal: LISTENER },
  { kind: '1 + 2 * (…)', of: (n) => `${nested('1 + 2 * (', '1', ')')(n)} > 0`, max: 83, refusal: LISTENER },
  { kind: 'true == (…)', of: nested('true == (', 'true', ')'), max: 124, refusal: LISTENER },
];

describe("cel-go's recursion limits", () => {
  for (const { kind, of, max, refusal } of BOUNDARIES) {
    it(`${kind}: ${max} accepted, ${max + 1} refused`, () => {
      assert.equal(outcome(of(max)), 'type bool');
      assert.equal(outcome(of(max + 1)), refusal);
    });
  }

  it('`&&` and `||` chains are loops the parser balances: any length within the size limit', () => {
    assert.equal(outcome(`${'true && '.repeat(2_000)}true`), 'type bool');
    assert.equal(outcome(`${'false || '.repeat(2_000)}true`), 'type bool');
  });

  it('long `&&` and `||` chains evaluate as cel-go evaluates its balanced ones', () => {
    const chain = (op: string, terms: string[]) => terms.join(` ${op} `);
    const many = (term: string, n: number) => Array.from({ length: n }, () => term);
    assert.equal(value(chain('&&', many('true', 12_000))), true);
    assert.equal(value(chain('||', many('false', 10_000))), false);
    // An error anywhere is absorbed by a deciding term anywhere, before or after it.
    const erring = '1 / 0 == 1';
    assert.equal(value(chain('&&', [...many('true', 500), 'false', ...many('true', 500), erring])), false);
    assert.equal(value(chain('&&', [erring, ...many('true', 999), 'false'])), false);
    assert.equal(value(chain('||', [erring, ...many('false', 999), 'true'])), true);
    const result = compileExpression(chain('&&', [...many('true', 500), erring, ...many('true', 500)]));
    assert.ok(!isCompileError(result));
    assert.throws(() => result.run({}), /division by zero/);
  });

  it('runs of `!` and `-` are loops too, folded as cel-go folds them (an even run is nothing)', () => {
    assert.equal(outcome(`${'!'.repeat(10_000)}true`), 'type bool');
    assert.equal(value(`${'!'.repeat(10_001)}true`), false);
    assert.equal(outcome(`${'-'.repeat(10_000)}1 == 1`), 'type bool');
    // A subtraction, then 10,001 negations: 1 - (-1).
    assert.equal(value(`1 ${'-'.repeat(10_002)}1 == 2`), true);
    assert.equal(outcome('!!1 == 1'), 'type bool');
    // The run takes the sign the literal would have had: 9223372036854775808 unsigned is out of range.
    assert.equal(
      outcome('---9223372036854775808 < 0').split('\n')[0],
      'compilation failed: ERROR: <input>:1:4: invalid int literal',
    );
    // An odd run is placed at its first sign, as cel-go places the operation.
    assert.match(outcome("!!!'a'"), /^compilation failed: ERROR: <input>:1:1: /);
  });

  it('hostile input 10,000 deep is a compile error, never a RangeError or a stall', () => {
    for (const deep of [
      `${'('.repeat(10_000)}1${')'.repeat(10_000)}`,
      '['.repeat(10_000),
      `${'1+'.repeat(10_000)}1`,
      `object${'.a'.repeat(10_000)}`,
      `${'a ? b : '.repeat(10_000)}c`,
      `${'!('.repeat(10_000)}true${')'.repeat(10_000)}`,
    ]) {
      const result = compileExpression(deep);
      assert.ok(isCompileError(result), deep.slice(0, 20));
      assert.match(result.message, /^compilation failed: ERROR: <input>:-1:0: /);
    }
  });
});

describe("cel-go's size limit", () => {
  it('100,000 code points pass, one more is refused with the size', () => {
    const of = (n: number) => `'${'a'.repeat(n - 8)}' == ''`;
    assert.equal(outcome(of(100_000)), 'type bool');
    assert.equal(
      outcome(of(100_001)),
      'compilation failed: ERROR: <input>:-1:0: expression code point size exceeds limit: size: 100001, limit 100000',
    );
  });

  it('counts code points, not UTF-16 units (a lone surrogate is one)', () => {
    assert.equal(outcome(`'${'😀'.repeat(99_992)}' == ''`), 'type bool');
    assert.match(outcome(`'${'😀'.repeat(99_992)}\ud800' == ''`), /size: 100001, limit 100000$/);
  });
});

describe('no limit on the length of a literal or an argument list', () => {
  it('lists and maps of 2,000 entries compile, calls of 100 arguments parse, as cel-go has no such limit', () => {
    const numbers = Array.from({ length: 2_000 }, (_, i) => i);
    assert.equal(outcome(`[${numbers.join(', ')}].size() == 2000`), 'type bool');
    assert.equal(outcome(`{${numbers.map((i) => `${i}: 1`).join(', ')}}.size() == 2000`), 'type bool');
    // Past the parser: the checker's refusal of the unknown function, not a parse limit.
    const args = numbers.slice(0, 100).map(() => '1');
    const result = compileExpression(`f(${args.join(', ')})`);
    assert.ok(isCompileError(result));
    assert.doesNotMatch(result.message, /maxCallArguments|Exceeded/);
    assert.match(result.message, /\bf\b/);
  });
});

describe("cel-go's literal limits", () => {
  const TABLE: Array<[string, string]> = [
    ['9223372036854775807 > 0', 'type bool'],
    ['-9223372036854775808 < 0', 'type bool'],
    ['9223372036854775808 > 0', 'ERROR: <input>:1:1: invalid int literal'],
    ['1 - 9223372036854775808 > 0', 'ERROR: <input>:1:5: invalid int literal'],
    ['-9223372036854775809 < 0', 'ERROR: <input>:1:1: invalid int literal'],
    ['0x7fffffffffffffff > 0', 'type bool'],
    ['0x8000000000000000 > 0', 'ERROR: <input>:1:1: invalid int literal'],
    ['18446744073709551615u > 0u', 'type bool'],
    ['18446744073709551616u > 0u', 'ERROR: <input>:1:1: invalid uint literal'],
    ['1e308 > 0.0', 'type bool'],
    ['[1e309]', 'ERROR: <input>:1:2: invalid double literal'],
    ['if', 'ERROR: <input>:1:1: reserved identifier: if'],
  ];
  for (const [expression, expected] of TABLE) {
    it(`${expression}: ${expected}`, () => {
      const said = outcome(expression);
      if (expected.startsWith('type')) assert.equal(said, expected);
      else assert.equal(said.split('\n')[0], `compilation failed: ${expected}`);
    });
  }
});

describe("compile errors printed as cel-go's issues print them", () => {
  it('a dot per character before the column and a caret under it', () => {
    assert.equal(
      outcome('9223372036854775808 + 1 > 0'),
      'compilation failed: ERROR: <input>:1:1: invalid int literal\n | 9223372036854775808 + 1 > 0\n | ^',
    );
    assert.equal(
      outcome('1 +\n  99999999999999999999 > 0'),
      'compilation failed: ERROR: <input>:2:3: invalid int literal\n |   99999999999999999999 > 0\n | ..^',
    );
  });

  it('columns in code points, wide dots under characters beyond ASCII, tabs as spaces', () => {
    assert.equal(
      outcome("'é😀' + '\t' + 9223372036854775808"),
      "compilation failed: ERROR: <input>:1:14: invalid int literal\n | 'é😀' + ' ' + 9223372036854775808\n | .．．..........^",
    );
  });

  it('an error without a position has neither source line nor caret', () => {
    assert.equal(outcome(nested('(', '1', ')')(250)), LISTENER);
  });
});

/** ANTLR's list of the tokens that can start an expression, as cel-go's syntax errors print it. */
const EXPRESSION =
  "{'[', '{', '(', '.', '-', '!', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}";

describe("syntax errors in cel-go's (ANTLR's) words and places", () => {
  // Where an expression must start, a token that cannot start one is deleted when the next can
  // (`extraneous input`), and is otherwise `mismatched input`; where the end must come, one token
  // before it is extraneous, more are mismatched; a closer that is not there is `missing` when what
  // follows could follow it, and an unknown character is the lexer's `token recognition error`,
  // skipped, the parse going on without it. Each error line as the API server prints it.
  const TABLE: Array<[string, string[]]> = [
    ['', [`1:1: Syntax error: mismatched input '<EOF>' expecting ${EXPRESSION}`]],
    ['1 +', [`1:4: Syntax error: mismatched input '<EOF>' expecting ${EXPRESSION}`]],
    ['true &&', [`1:8: Syntax error: mismatched input '<EOF>' expecting ${EXPRESSION}`]],
    ['1 + * 2', [`1:5: Syntax error: extraneous input '*' expecting ${EXPRESSION}`]],
    ['a ? b ((?))', [`1:9: Syntax error: mismatched input '?' expecting ${EXPRESSION}`]],
    ['f(1,)', [`1:5: Syntax error: mismatched input ')' expecting ${EXPRESSION}`]],
    ['1 2', ["1:3: Syntax error: extraneous input '2' expecting <EOF>"]],
    ['1 2 3', ["1:3: Syntax error: mismatched input '2' expecting <EOF>"]],
    ["'a' 'b'", ["1:5: Syntax error: extraneous input ''b'' expecting <EOF>"]],
    ['(1 + 2', ["1:7: Syntax error: missing ')' at '<EOF>'"]],
    ['object[0', ["1:9: Syntax error: missing ']' at '<EOF>'"]],
    ['[(1', ["1:4: Syntax error: mismatched input '<EOF>' expecting ')'"]],
    ['a ? b', ["1:6: Syntax error: mismatched input '<EOF>' expecting ':'"]],
    ['a ? b c', ["1:7: Syntax error: missing ':' at 'c'"]],
    ['{1 2}', ["1:4: Syntax error: missing ':' at '2'"]],
    ['f(1 2)', ["1:5: Syntax error: extraneous input '2' expecting ')'"]],
    ['[1 2]', ["1:4: Syntax error: extraneous input '2' expecting {',', ']'}"]],
    ['[1', ["1:3: Syntax error: mismatched input '<EOF>' expecting {',', ']'}"]],
    ['(a b c)', ["1:4: Syntax error: mismatched input 'b' expecting ')'"]],
    // After a `.`, ANTLR's prediction finds no way on; cel-go rewords it for `.true`, `.false`, `.null`.
    ['object.true == 1', ["1:8: Syntax error: mismatched input 'true' expecting IDENTIFIER"]],
    ['object. true == 1', ["1:9: Syntax error: no viable alternative at input '. true'"]],
    ['a.(b)', ["1:3: Syntax error: no viable alternative at input '.('"]],
    ["object.k! == '1'", ["1:9: Syntax error: mismatched input '!' expecting <EOF>"]],
    [
      '1 # 2',
      ["1:3: Syntax error: token recognition error at: '#'", "1:5: Syntax error: extraneous input '2' expecting <EOF>"],
    ],
    [
      "x == 'é' && é",
      [
        "1:13: Syntax error: token recognition error at: 'é'",
        `1:14: Syntax error: mismatched input '<EOF>' expecting ${EXPRESSION}`,
      ],
    ],
  ];
  for (const [expression, errors] of TABLE) {
    it(JSON.stringify(expression), () => {
      const said = outcome(expression).replace(/^compilation failed: /, '');
      const lines = said.split('\n').filter((l) => l.startsWith('ERROR: '));
      assert.deepEqual(
        lines,
        errors.map((e) => `ERROR: <input>:${e}`),
      );
    });
  }

  it('a NUL or a lone surrogate outside a string is a character no token starts with', () => {
    assert.equal(
      outcome('1 \u0000'),
      "compilation failed: ERROR: <input>:1:3: Syntax error: token recognition error at: '\u0000'\n | 1 \u0000\n | ..^",
    );
    // The API server reads a lone surrogate (invalid UTF-8) as U+FFFD.
    assert.equal(
      outcome('1 \ud800'),
      "compilation failed: ERROR: <input>:1:3: Syntax error: token recognition error at: '\ufffd'\n | 1 \ufffd\n | ..\uff3e",
    );
    assert.equal(outcome("'\u0000\ud800' != ''"), 'type bool');
  });

  it('prints each error with its line and caret, sorted by position', () => {
    assert.equal(
      outcome('1 # 2'),
      "compilation failed: ERROR: <input>:1:3: Syntax error: token recognition error at: '#'\n | 1 # 2\n | ..^\n" +
        "ERROR: <input>:1:5: Syntax error: extraneous input '2' expecting <EOF>\n | 1 # 2\n | ....^",
    );
  });
});
