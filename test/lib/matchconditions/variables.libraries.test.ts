// The Kubernetes CEL libraries bound into the matchConditions environment, at the expression level:
// each row is an expression and the API server's answer (cel-go with Kubernetes' libraries), or its
// error, and the version from which the environment has it.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { admissionReview } from '../../../lib/testing/index.ts';
import {
  compileExpression,
  CostLimitExceeded,
  isCompileError,
  type AuthorizationAttributes,
} from '../../../packages/kube-cel/src/compile.ts';
import { variablesFor } from '../../../lib/matchconditions/variables.ts';

const v = (minor: number) => ({ major: 1, minor });
type Answer = { value: unknown } | { error: RegExp } | { compile: RegExp };

/** The answer of `expression` in the stored-expressions environment of 1.`minor` (the newest by default). */
function answer(expression: string, minor?: number): Answer {
  const compiled = compileExpression(expression, minor === undefined ? {} : { kubeVersion: v(minor) });
  if (isCompileError(compiled)) return { compile: literally(compiled.message.split('\n')[0]!) };
  try {
    return { value: compiled.run({}) };
  } catch (err) {
    return { error: literally((err as Error).message.split('\n')[0]!) };
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
/** The `authorizer` variable of a request, deciding with `authorize`. */
function variablesAuthorizer(authorize: (a: AuthorizationAttributes) => { decision: 'Allow' }): unknown {
  return variablesFor(admissionReview({ kind: 'Pod' }).request!, authorize).authorizer;
}
/** A pattern matching `text` literally. */
const literally = (text: string): RegExp => new RegExp(text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
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
      ["'%d'.format(dyn([]))", new Error('index 0 out of range')],
      ["strings.quote('a\"b\\n')", '"a\\"b\\n"'],
      ["strings.quote('😀')", '"😀"'],
    ]);
    table(
      [
        ["strings.quote('a')", /undeclared reference to 'strings'/],
        ["'%d'.format([1])", /undeclared reference to 'format'/],
      ],
      28,
    );
    table([["strings.quote('a')", '"a"']], 29);
  });

  it('names the functions as the user wrote them in messages, and refuses the internal names', () => {
    table([
      ["'a'.indexOf(1)", /found no matching overload for 'indexOf' applied to 'string\.\(int\)'/],
      ['string([1])', /found no matching overload for 'string' applied to '\(list\(int\)\)'/],
      ['strings.quote(1)', /found no matching overload for 'strings\.quote' applied to '\(int\)'/],
      ["'a'.indexOf__k8s('a')", /undeclared reference to 'indexOf__k8s'/],
    ]);
  });
});

describe('Kubernetes libraries, each from its version', () => {
  it('sets from 1.29', () => {
    table([
      ['sets.contains([1, 2, 3], [3, 1])', true],
      ['sets.contains([1], [1, 2])', false],
      ['sets.contains([1, 2], [])', true],
      ['sets.equivalent([1, 2, 2], [2, 1])', true],
      ['sets.equivalent([1], [1, 3])', false],
      ["sets.intersects(['a', 'b'], ['c', 'b'])", true],
      ['sets.intersects([1], [])', false],
      [
        'sets.contains([1.0], [1])',
        /found no matching overload for 'sets\.contains' applied to '\(list\(double\), list\(int\)\)'/,
      ],
    ]);
    table([['sets.contains([1], [1])', /undeclared reference to 'sets'/]], 28);
  });

  it('ip and cidr from 1.30', () => {
    table([
      ["ip('192.168.0.1').family()", 4n],
      ["ip('::1').family()", 6n],
      ["ip('::1').isLoopback()", true],
      ["ip('0.0.0.0').isUnspecified()", true],
      ["ip('fe80::1').isLinkLocalUnicast()", true],
      ["ip('ff02::1').isLinkLocalMulticast()", true],
      ["ip('8.8.8.8').isGlobalUnicast()", true],
      ["ip('127.0.0.1') == ip('127.0.0.1')", true],
      ["string(ip('2001:DB8::1'))", '2001:db8::1'],
      ["isIP('1.2.3')", false],
      ["isIP('127.0.0.1%eth0')", false],
      ["ip.isCanonical('2001:db8::1')", true],
      ["ip.isCanonical('2001:DB8::1')", false],
      [
        "ip('1.2.3')",
        new Error(
          'IP Address "1.2.3" parse error during conversion from string: ParseAddr("1.2.3"): IPv4 address too short',
        ),
      ],
      ["cidr('10.0.0.0/8').containsIP('10.1.2.3')", true],
      ["cidr('10.0.0.0/8').containsIP(ip('11.0.0.1'))", false],
      ["cidr('10.0.0.0/8').containsCIDR('10.0.0.0/16')", true],
      // The library compares the masked prefix with the other address unmasked (netip.PrefixFrom).
      ["cidr('10.0.0.0/8').containsCIDR('10.1.0.0/16')", false],
      ["cidr('10.1.0.0/16').containsCIDR(cidr('10.0.0.0/8'))", false],
      ["cidr('192.168.1.5/24').prefixLength()", 24n],
      ["string(cidr('192.168.1.5/24').masked())", '192.168.1.0/24'],
      ["cidr('192.168.1.5/24').ip() == ip('192.168.1.5')", true],
      ["isCIDR('10.0.0.0/33')", false],
    ]);
    table(
      [
        ["isIP('1.2.3.4')", /undeclared reference to 'isIP'/],
        ["cidr('10.0.0.0/8')", /undeclared reference to 'cidr'/],
      ],
      29,
    );
  });

  it('format from 1.31', () => {
    table([
      ["format.dns1123Label().validate('my-name').hasValue()", false],
      ["format.dns1123Label().validate('My_Name').hasValue()", true],
      ["format.named('uuid').hasValue()", true],
      ["format.named('nope').hasValue()", false],
      ["format.named('date').value().validate('2024-02-30').value()", ['invalid date']],
    ]);
    table([["format.uuid().validate('x').hasValue()", /undeclared reference to 'format'/]], 30);
  });

  it('semver from 1.33', () => {
    table([
      ["semver('1.2.3').isLessThan(semver('1.10.0'))", true],
      ["semver('1.2.3-alpha') == semver('1.2.3-alpha')", true],
      ["semver('2.0.0').compareTo(semver('1.9.9'))", 1n],
      ["semver('v1.2', true).minor()", 2n],
      ["semver('1.2.3').patch()", 3n],
      ["isSemver('1.2')", false],
      ["isSemver('v1.2', true)", true],
      ["semver('1.2')", new Error('No Major.Minor.Patch elements found')],
    ]);
    table([["isSemver('1.2.3')", /undeclared reference to 'isSemver'/]], 32);
  });

  it('lists version 3 from 1.34', () => {
    table([
      ['lists.range(3)', [0n, 1n, 2n]],
      ['[1, 2, 3].reverse()', [3n, 2n, 1n]],
      ['[1, 2, 1, 3].distinct()', [1n, 2n, 3n]],
      ["['b', 'c', 'a'].sort()", ['a', 'b', 'c']],
      ['[[1], [2, 3]].flatten()', [1n, 2n, 3n]],
      ['[1, 2, 3].slice(1, 2)', [2n]],
      ['[1, 2].slice(2, 1)', new Error('cannot slice(2, 1), start index must be less than or equal to end index')],
    ]);
    table(
      [
        ['lists.range(1)', /undeclared reference to 'lists'/],
        ['[1].reverse()', /undeclared reference to 'reverse'/],
      ],
      33,
    );
  });
});

describe('authorizer.serviceAccount', () => {
  const asked: AuthorizationAttributes[] = [];
  const authorizer = (expression: string): unknown => {
    const compiled = compileExpression(expression);
    assert.ok(!isCompileError(compiled), expression);
    const authorize = (a: AuthorizationAttributes) => (asked.push(a), { decision: 'Allow' as const });
    return compiled.run({ authorizer: variablesAuthorizer(authorize) });
  };

  it('checks as the service account, with its two groups only', () => {
    const expression = "authorizer.serviceAccount('ci', 'deployer').group('').resource('pods').check('get').allowed()";
    assert.equal(authorizer(expression), true);
    assert.deepEqual(asked.at(-1)!.user, {
      username: 'system:serviceaccount:ci:deployer',
      groups: ['system:serviceaccounts', 'system:serviceaccounts:ci'],
    });
  });

  it('refuses names that are not valid, the name checked first', () => {
    const as = (ns: string, name: string) => () =>
      authorizer(`authorizer.serviceAccount('${ns}', '${name}').path('/').check('get')`);
    assert.throws(as('ci', 'Not_Valid'), /Invalid service account name/);
    assert.throws(as('a.b', 'x'), /Invalid service account namespace/);
    assert.throws(as('A', 'B'), /Invalid service account name/);
  });
});

describe('library calls are charged by the sizes they touch', () => {
  const costOf = (expression: string, object: unknown): number => {
    const compiled = compileExpression(expression);
    assert.ok(!isCompileError(compiled), expression);
    compiled.run({ object });
    return compiled.lastCost;
  };
  const stopped = (expression: string, object: unknown): boolean => {
    const compiled = compileExpression(expression);
    assert.ok(!isCompileError(compiled), expression);
    try {
      compiled.run({ object });
      return false;
    } catch (err) {
      return err instanceof CostLimitExceeded;
    }
  };

  it('charges string functions a tenth of a unit per character', () => {
    const small = costOf('object.s.lowerAscii() != ""', { s: 'a' });
    const large = costOf('object.s.lowerAscii() != ""', { s: 'A'.repeat(100_000) });
    assert.equal(large - small, 10_000 - 1);
    // replace and split traverse twice.
    const split = "object.s.split(',').size() > 0";
    assert.equal(costOf(split, { s: 'a'.repeat(1000) }) - costOf(split, { s: 'a' }), 199);
  });

  it('charges an authorizer check 350,000 units: the third in one expression passes the limit', () => {
    const check = "authorizer.path('/').check('get').allowed()";
    const compiled = compileExpression(`${check} || ${check}`);
    assert.ok(!isCompileError(compiled));
    compiled.run({ authorizer: variablesAuthorizer(() => ({ decision: 'Allow' })) });
    compiled.run({ authorizer: variablesAuthorizer(() => ({ decision: 'Allow' })) });
    assert.ok(compiled.lastCost >= 350_000 && compiled.lastCost < 350_100, String(compiled.lastCost));
    const three = compileExpression(`!${check} || !${check} || !${check} || true`);
    assert.ok(!isCompileError(three));
    const allow = variablesAuthorizer(() => ({ decision: 'Allow' }));
    assert.throws(() => three.run({ authorizer: allow }), CostLimitExceeded);
  });

  it('stops sets over large lists at the limit (quadratic cost) before comparing them', () => {
    const lists = { a: Array.from({ length: 2000 }, (_, i) => i), b: Array.from({ length: 2000 }, (_, i) => -i) };
    assert.equal(stopped('sets.intersects(object.a, object.b)', lists), true);
    assert.equal(stopped('sets.intersects(object.a.slice(0, 10), object.b.slice(0, 10))', lists), false);
  });

  it('charges regex searches by text and pattern size', () => {
    // (1 + 1,000,000) / 10 units of text × 40 / 4 units of pattern: past the limit, refused before searching.
    const text = { s: 'ab'.repeat(500_000) };
    const pattern = '(a|b)+c?d*e*f*g*h*i*j*k*l*m*n*o*p*q*r*s*';
    assert.equal(pattern.length, 40);
    assert.equal(stopped(`object.s.findAll('${pattern}').size() >= 0`, text), true);
    assert.equal(stopped(`object.s.matches('${pattern}')`, text), true);
    assert.equal(stopped(`matches(object.s, '${pattern}')`, text), true);
    assert.ok(costOf("object.s.find('a') == 'a'", { s: 'ab'.repeat(500) }) >= 101);
  });
});
