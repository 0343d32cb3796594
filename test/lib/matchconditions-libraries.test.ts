// The Kubernetes CEL libraries bound into the matchConditions environment, at the expression level:
// each row is an expression and the API server's answer (cel-go with Kubernetes' libraries), or its
// error, and the version from which the environment has it.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { compileExpression, isCompileError } from '../../lib/matchconditions/index.ts';

const v = (minor: number) => ({ major: 1, minor });
type Answer = { value: unknown } | { error: RegExp } | { compile: RegExp };

/** The answer of `expression` in the stored-expressions environment of 1.`minor` (the newest by default). */
function answer(expression: string, minor?: number): Answer {
  const compiled = compileExpression(expression, minor === undefined ? {} : { kubeVersion: v(minor) });
  if (isCompileError(compiled)) return { compile: new RegExp(compiled.message.split('\n')[0]!.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')) };
  try {
    return { value: compiled.run({}) };
  } catch (err) {
    return { error: new RegExp((err as Error).message.split('\n')[0]!.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')) };
  }
}

/** Asserts each row: [expression, expected value | Error (evaluation error message) | /compile error/]. */
function table(rows: Array<[string, unknown]>, minor?: number): void {
  for (const [expression, expected] of rows) {
    const got = answer(expression, minor);
    if (expected instanceof Error) {
      assert.ok('error' in got, `${expression}: expected an evaluation error, got ${JSON.stringify(got, big)}`);
      assert.match(expected.message, got.error, expression);
    } else if (expected instanceof RegExp) {
      assert.ok('compile' in got, `${expression}: expected a compile error, got ${JSON.stringify(got, big)}`);
      assert.match(got.compile.source.replaceAll('\\', ''), expected, expression);
    } else {
      assert.ok('value' in got, `${expression}: ${JSON.stringify(got, big)} ${'error' in got ? got.error : ''}`);
      assert.deepEqual(got.value, expected, expression);
    }
  }
}
const big = (_: string, x: unknown) => (typeof x === 'bigint' ? `${x}n` : x instanceof RegExp ? x.source : x);

describe('strings library, by code point', () => {
  it('indexes code points, not UTF-16 units', () => {
    table([
      ["'a😀b'.indexOf('b')", 2n],
      ["'a😀b😀'.lastIndexOf('😀')", 3n],
      ["'a😀b'.charAt(1)", '😀'],
      ["'a😀b'.charAt(3)", ''],
      ["'a😀bc'.substring(2)", 'bc'],
      ["'a😀bc'.substring(1, 3)", '😀b'],
      ["'x😀y😀z'.indexOf('😀', 2)", 3n],
      ["'a😀b'.charAt(4)", new Error('index out of range: 4')],
      ["''.indexOf('a')", new Error('index out of range: 0')],
      ["'abc'.substring(2, 1)", new Error('invalid substring range. start: 2, end: 1')],
    ]);
  });

  it('answers as Go: ASCII-only casing, Go white space, replace and split of the empty string', () => {
    table([
      ["'ÀbC'.lowerAscii()", 'Àbc'],
      ["'àbC'.upperAscii()", 'àBC'],
      ["'\\u00a0 x \\t'.trim()", 'x'],
      ["'\\ufeffx'.trim()", '\ufeffx'],
      ["'abc'.replace('', '-')", '-a-b-c-'],
      ["'aaa'.replace('a', 'b', 2)", 'bba'],
      ["'a,b,c'.split(',', 2)", ['a', 'b,c']],
      ["'a😀'.split('')", ['a', '😀']],
      ["['a', 'b'].join('-')", 'a-b'],
      ["['a', 'b'].join()", 'ab'],
    ]);
  });

  it('converts doubles to strings as Go strconv does', () => {
    table([
      ['string(123456789.0)', '1.23456789e+08'],
      ['string(1.5)', '1.5'],
      ['string(100000.0)', '100000'],
      ['string(1e21)', '1e+21'],
      ['string(0.000001)', '1e-06'],
      ['string(-0.0)', '-0'],
      ["string(double('NaN'))", 'NaN'],
      ["string(double('-Inf'))", '-Inf'],
      ['string(12)', '12'],
      ['string(true)', 'true'],
    ]);
  });

  it('formats and quotes from 1.29', () => {
    table([
      ["'%d items in %s'.format([3, 4])", '3 items in 4'],
      ["'%.2f'.format([2.5])", '2.50'],
      ["'%x'.format([255])", 'ff'],
      ["'%s'.format([[1, 2]])", '[1, 2]'],
      ["'%d'.format([])", new Error('index 0 out of range')],
      ["strings.quote('a\"b\\n')", '"a\\"b\\n"'],
      ["strings.quote('😀')", '"😀"'],
    ]);
    table([["strings.quote('a')", /undeclared reference to 'strings'/], ["'%d'.format([1])", /undeclared reference to 'format'/]], 28);
    table([["strings.quote('a')", '"a"']], 29);
  });

  it('names the functions as the user wrote them in messages, and refuses the internal names', () => {
    table([
      ["'a'.indexOf(1)", /found no matching overload for 'string\.indexOf\(int\)'/],
      ['string([1])', /found no matching overload for 'string\(list<int>\)'/],
      ["strings.quote(1)", /found no matching overload for 'strings\.quote\(int\)'/],
      ["'a'.indexOf__k8s('a')", /undeclared reference to 'indexOf__k8s'/],
    ]);
  });
});
