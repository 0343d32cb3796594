// Kubernetes' own runtime cost cases for its CEL libraries, restated: each expression evaluates
// to what the API server answers, for the cost units cel-go's tracker (with Kubernetes' library
// cost estimator) reports for it.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { AuthorizationAttributes } from '../../packages/kube-cel/src/libraries/authorizer.ts';
import { variablesFor } from '../../lib/matchconditions/variables.ts';
import { admissionReview } from '../../lib/testing/index.ts';
import { compileExpression, isCompileError } from '../../packages/kube-cel/src/compile.ts';
import { anyValue, type Case, checkAll, compile, error, value } from '../../packages/kube-cel/test/k8s-cases.ts';

/**
 * Evaluates `expr` itself (no wrapper) and asserts only its cost and that it does not fail. The
 * library's cost tests build their programs without OptOptimize, so their literals are charged.
 */
const costs = (rows: Array<[string, number]>, vars?: Record<string, unknown>): Case[] =>
  rows.map(([expr, cost]) => ({ expr, expect: anyValue, vars, cost, optimize: false }));

const INTS = '[1, 2, 3, 4, 5]';
const UINTS = '[uint(1), uint(2), uint(3), uint(4), uint(5)]';
const DOUBLES = '[1.0, 2.0, 3.0, 4.0, 5.0]';
const BOOLS = '[false, true, false, true, false]';
const STRS = `[${Array(5).fill("'012345678901'").join(', ')}]`;
const BYTES = `[${Array(5).fill("bytes('012345678901')").join(', ')}]`;
const DURATIONS = "[duration('1s'), duration('2s'), duration('3s'), duration('4s'), duration('5s')]";
const TIMESTAMPS = `[${[1, 2, 3, 4, 5].map((d) => `timestamp('2011-01-0${d}T00:00:00.000+01:00')`).join(', ')}]`;
const STRING50 = `'${'0123456789'.repeat(5)}'`;

describe('library call costs, as cel-go charges them', () => {
  it('lists: sum, isSorted, max, min by the list traversal', () => {
    const rows: Array<[string, number]> = [
      [`${INTS}.sum()`, 15],
      [`${UINTS}.sum()`, 20],
      [`${DOUBLES}.sum()`, 15],
      [`${DURATIONS}.sum()`, 20],
    ];
    for (const op of ['isSorted', 'max', 'min']) {
      rows.push(
        [`${INTS}.${op}()`, 15],
        [`${UINTS}.${op}()`, 20],
        [`${DOUBLES}.${op}()`, 15],
        [`${BOOLS}.${op}()`, 15],
        [`${STRS}.${op}()`, 15],
        [`${DURATIONS}.${op}()`, 20],
        [`${TIMESTAMPS}.${op}()`, 20],
      );
    }
    checkAll(costs(rows));
  });

  it('indexOf and lastIndexOf on lists and strings', () => {
    const rows: Array<[string, number]> = [];
    for (const op of ['indexOf', 'lastIndexOf']) {
      rows.push(
        [`${INTS}.${op}(3)`, 15],
        [`${UINTS}.${op}(uint(3))`, 21],
        [`${DOUBLES}.${op}(3.0)`, 15],
        [`${BOOLS}.${op}(true)`, 15],
        [`${STRS}.${op}('x')`, 15],
        [`${DURATIONS}.${op}(duration('3s'))`, 21],
        [`${TIMESTAMPS}.${op}(timestamp('2011-01-03T00:00:00.000+01:00'))`, 21],
        [`${STRING50}.${op}('123')`, 5],
      );
    }
    checkAll(costs(rows));
  });

  it('urls: parsing by the string, accessors one unit', () => {
    const base = "url('https:://kubernetes.io/')";
    const rows: Array<[string, number]> = ['getScheme', 'getHostname', 'getHost', 'getPort', 'getEscapedPath'].map(
      (op) => [`${base}.${op}()`, 4],
    );
    rows.push(
      [`${base}.getQuery()`, 4],
      [`${base} == url('https:://kubernetes.io/')`, 7],
      [`${base} == url('http://x.b')`, 5],
    );
    checkAll(costs(rows));
  });

  it('ip: parsing by the string, accessors one unit, isCanonical twice the string', () => {
    const rows: Array<[string, number]> = [];
    for (const [ip, base] of [
      ["ip('192.168.0.1')", 2],
      ["ip('2001:db8:3333:4444:5555:6666:7777:8888')", 4],
    ] as const) {
      rows.push([ip, base], [`${ip} == ip('192.168.0.1')`, base + 3]);
      for (const op of ['family', 'isUnspecified', 'isLoopback', 'isLinkLocalMulticast', 'isLinkLocalUnicast']) {
        rows.push([`${ip}.${op}()`, base + 1]);
      }
      rows.push([`${ip}.isGlobalUnicast()`, base + 1]);
    }
    rows.push(
      ["ip.isCanonical('192.168.0.1')", 3],
      ["ip.isCanonical('2001:db8:3333:4444:5555:6666:7777:8888')", 8],
      ["ip.isCanonical('2001:db8::abcd')", 3],
    );
    checkAll(costs(rows));
  });

  it('cidr: parsing, accessors and containment', () => {
    const v4 = "cidr('192.168.0.0/16')";
    const v6 = "cidr('2001:db8::/32')";
    const rows: Array<[string, number]> = [];
    for (const c of [v4, v6]) {
      rows.push([c, 2], [`${c}.ip()`, 3], [`${c}.prefixLength()`, 3], [`${c}.masked()`, 3], [`${c} == ${v6}`, 5]);
    }
    for (const [op, extra] of [
      [".containsCIDR(cidr('192.0.0.0/30'))", 5],
      [".containsCIDR(cidr('192.168.0.0/16'))", 5],
      [".containsCIDR('192.0.0.0/30')", 5],
      [".containsCIDR('192.168.0.0/16')", 5],
      [".containsIP(ip('192.0.0.1'))", 2],
      [".containsIP(ip('192.169.0.1'))", 3],
      [".containsIP(ip('192.169.169.250'))", 3],
      [".containsIP('192.0.0.1')", 2],
      [".containsIP('192.169.0.1')", 3],
    ] as const) {
      rows.push([`${v4}${op}`, 2 + extra]);
    }
    for (const [op, extra] of [
      [".containsCIDR(cidr('2001:db8::/126'))", 5],
      [".containsCIDR(cidr('2001:db8::/32'))", 5],
      [".containsCIDR('2001:db8::/126')", 5],
      [".containsCIDR('2001:db8::/32')", 5],
      [".containsIP(ip('2001:db8:3333:4444:5555:6666:7777:8888'))", 5],
      [".containsIP(ip('2001:db8::1'))", 3],
      [".containsIP('2001:db8:3333:4444:5555:6666:7777:8888')", 5],
      [".containsIP('2001:db8::1')", 3],
    ] as const) {
      rows.push([`${v6}${op}`, 2 + extra]);
    }
    checkAll(costs(rows));
  });

  it('strings: by the size of the string touched', () => {
    checkAll(
      costs([
        ["'ABCDEFGHIJ abcdefghij'.lowerAscii()", 3],
        ["'ABCDEFGHIJ abcdefghij'.upperAscii()", 3],
        ["strings.quote('ABCDEFGHIJ abcdefghij')", 3],
        ["'abc 123 def 123'.replace('123', '456')", 3],
        ["'abc 123 def 123'.replace('', 'x')", 3],
        ["'abc 123 def 123'.replace('123', '')", 3],
        ["'abc 123 def 123'.replace('123', '456', 1)", 3],
        ["'abc 123 def 123'.split(' ')", 3],
        ["'abc 123 def 123'.split(' ', 1)", 3],
        ["'abc 123 def 123'.substring(5)", 2],
        ["'abc 123 def 123'.substring(5, 8)", 2],
        ["'  abc 123 def 123  '.trim()", 2],
        ["['aa', 'bb', 'cc', 'd', 'e', 'f', 'g', 'h', 'i', 'j'].join(' ')", 15],
        ["['aa', 'bb', 'cc', 'd', 'e', 'f', 'g', 'h', 'i', 'j'].join()", 13],
        ["'%s and %s'.format(['a', 'b'])", 11],
        [`'${'x'.repeat(1000)}%s'.format(['a'])`, 10 + 101],
        ["'abc 123 def 123'.find('123')", 2],
        ["'abc 123 def 123'.findAll('123')", 2],
        ["'abc 123 def 123'.findAll('123', 1)", 2],
      ]),
    );
  });

  it('authorizer: builders one unit, a check 350,000', () => {
    const authorizer = variablesFor(admissionReview({ kind: 'Pod' }).request!, () => ({
      decision: 'Allow',
    })).authorizer;
    const resource =
      "authorizer.group('apps').resource('deployments').subresource('status').namespace('test').name('backend')";
    checkAll(
      costs(
        [
          ["authorizer.path('/healthz')", 2],
          [resource, 6],
          ["authorizer.path('/healthz').check('get').allowed()", 350003],
          [`${resource}.check('create').allowed()`, 350007],
          [`${resource}.check('create').reason()`, 350007],
          [`${resource}.check('create').errored()`, 350007],
          [`${resource}.check('create').error()`, 350007],
        ],
        { authorizer },
      ),
    );
  });

  it('authorizer checks in a comprehension: two fit under the limit, a third does not (cost.go)', () => {
    // Kubernetes sets a check's cost "to allow for only two authorization checks per expression":
    // two checks of TestAuthzLibrary's resource (350,007 each) and a comprehension's reads and calls
    // stay under the per-call limit of 1,000,000; three exceed it, wherever they are made.
    const asked: string[] = [];
    const authorizer = variablesFor(admissionReview({ kind: 'Pod' }).request!, (a) => {
      asked.push(a.name ?? '');
      return { decision: 'Allow' };
    }).authorizer;
    const check = (v: string) =>
      `authorizer.group('apps').resource('deployments').subresource('status').namespace('test').name(${v}).check('create').allowed()`;
    const limit = error('operation cancelled: actual cost limit exceeded');
    const cases: Case[] = [
      { expr: `['a', 'b'].all(n, ${check('n')})`, vars: { authorizer }, expect: value(true) },
      { expr: `['a', 'b'].exists(n, !${check('n')})`, vars: { authorizer }, expect: value(false) },
      { expr: `['a', 'b'].map(n, ${check('n')}) == [true, true]`, vars: { authorizer }, expect: value(true) },
      { expr: `['a', 'b'].filter(n, ${check('n')}).size() == 2`, vars: { authorizer }, expect: value(true) },
      { expr: `['a', 'b', 'c'].map(n, n != 'c', ${check('n')}).all(x, x)`, vars: { authorizer }, expect: value(true) },
      { expr: `['a', 'b', 'c'].exists(n, n == 'b' && ${check('n')})`, vars: { authorizer }, expect: value(true) },
      { expr: `['a', 'b', 'c'].all(n, ${check('n')})`, vars: { authorizer }, expect: limit },
      { expr: `['a', 'b', 'c'].exists_one(n, ${check('n')})`, vars: { authorizer }, expect: limit },
    ];
    checkAll(cases);
    for (const c of cases.slice(0, 5)) {
      const compiled = compileExpression(c.expr);
      assert.ok(!isCompileError(compiled));
      compiled.run({ authorizer });
      assert.ok(compiled.lastCost > 700_014 && compiled.lastCost < 1_000_000, `${c.expr}: ${compiled.lastCost}`);
    }
    assert.ok(
      asked.every((name) => ['a', 'b'].includes(name)),
      'a check past the limit is never made',
    );
  });

  it('authorizer selectors (from 1.32): parsed in the check, charged by their length', () => {
    const asked: AuthorizationAttributes[] = [];
    const authorizer = variablesFor(admissionReview({ kind: 'Pod' }).request!, (a) => {
      asked.push(a);
      return { decision: a.labelSelectorRequirements?.[0]?.key === 'app' ? 'Allow' : 'Deny' };
    }).authorizer;
    const pods = "authorizer.group('').resource('pods')";
    // A selector of n characters costs 10 (its list) + ceil(n / 10) (the parse) + 50 for each of
    // the ceil(n / 2) requirements it could hold (a struct and a values list), beside the variable
    // and the builders (1 each) and the check: 'app=web' is 10 + 1 + 4 × 50.
    checkAll([
      {
        expr: `${pods}.labelSelector('app=web').check('list').allowed()`,
        vars: { authorizer },
        expect: value(true),
        cost: 350215,
      },
      { expr: `${pods}.labelSelector('tier=db').check('list').allowed()`, vars: { authorizer }, expect: value(false) },
      // 29 characters: 10 + 3 + 15 × 50.
      {
        expr: `${pods}.fieldSelector('spec.nodeName=node-0123456789').check('list')`,
        vars: { authorizer },
        expect: anyValue,
        cost: 350766,
      },
      // 31 characters: 10 + 4 + 16 × 50.
      {
        expr: `${pods}.fieldSelector('spec.nodeName=node-012345678901').check('list')`,
        vars: { authorizer },
        expect: anyValue,
        cost: 350817,
      },
      // Empty selectors are charged their list (10 each) and left out of the check.
      {
        expr: `${pods}.fieldSelector('').labelSelector('').check('list')`,
        vars: { authorizer },
        expect: anyValue,
        cost: 350023,
      },
      { expr: `${pods}.labelSelector('a')`, vars: { authorizer }, expect: anyValue, cost: 64 },
      {
        expr: `${pods}.labelSelector('app=web').check('list').allowed()`,
        vars: { authorizer },
        minor: 31,
        expect: compile(/labelSelector/),
      },
    ]);
    assert.deepEqual(asked[2], {
      user: asked[2]!.user,
      verb: 'list',
      group: '',
      resource: 'pods',
      fieldSelectorRequirements: [{ field: 'spec.nodeName', operator: '=', value: 'node-0123456789' }],
    });
    assert.equal(
      Object.keys(asked[4]!).some((k) => k.includes('Selector')),
      false,
    );
  });

  it('quantity: parsing by the string, operations one unit', () => {
    checkAll(
      costs([
        ['quantity("12Mi")', 1],
        ['isQuantity("20")', 1],
        ['isQuantity("20M")', 1],
        ['quantity("200M") == quantity("200M")', 3],
        ['quantity("200M") == quantity("0.2G") && quantity("0.2G") == quantity("200M")', 6],
        [
          'quantity("2M") == quantity("0.002G") && quantity("2000k") == quantity("2M") && quantity("0.002G") == quantity("2000k")',
          9,
        ],
        ['quantity("50M").isLessThan(quantity("50Mi"))', 3],
        ['quantity("50Mi").isGreaterThan(quantity("50M"))', 3],
        ['quantity("200M").compareTo(quantity("0.2G")) > 0', 4],
        ['quantity("50k").add(quantity("20")) == quantity("50.02k")', 5],
        ['quantity("50k").sub(quantity("20")) == quantity("49.98k")', 5],
        ['quantity("50k").sub(20) == quantity("49980")', 4],
        ['quantity("50k").add(20).sub(quantity("100k")).asInteger() > 0', 6],
        ['quantity("50k").add(20).sub(quantity("100k")).sub(-50000).asInteger() > 0', 7],
        ['quantity("50k").asInteger() > 0', 3],
        ['quantity("50").isInteger()', 2],
        ['quantity("50.703k").asApproximateFloat() > 0.0', 3],
      ]),
    );
  });

  it('format: validation by the string and the pattern', () => {
    checkAll(
      costs([
        ['format.named("dns1123subdomain")', 1],
        ['format.named("dns1123Subdomain").value().validate("my-name")', 17],
        ['format.named("dns1123Label").value().validate("my-name")', 10],
        ['format.named("dns1123Label").value() == format.named("dns1123Label").value()', 5],
      ]),
    );
  });

  it('sets: by the product of the list sizes', () => {
    checkAll(
      costs([
        ['sets.contains([], [])', 21],
        ['sets.contains([1], [])', 21],
        ['sets.contains([1], [1])', 22],
        ['sets.contains([1], [1, 1])', 23],
        ['sets.contains([1, 1], [1])', 23],
        ['sets.contains([2, 1], [1])', 23],
        ['sets.contains([1, 2, 3, 4], [2, 3])', 29],
        ['!sets.contains([1], [2])', 23],
        ['!sets.contains([1], [1, 2])', 24],
        ['sets.equivalent([], [])', 21],
        ['sets.equivalent([1], [1])', 23],
        ['sets.equivalent([1], [1, 1])', 25],
        ['sets.equivalent([1, 1], [1])', 25],
        ['!sets.equivalent([2, 1], [1])', 26],
        ['!sets.equivalent([1], [1, 2])', 26],
        ['sets.intersects([1], [1])', 22],
        ['sets.intersects([1], [1, 1])', 23],
        ['sets.intersects([1, 1], [1])', 23],
        ['sets.intersects([2, 1], [1])', 23],
        ['sets.intersects([1], [1, 2])', 23],
        ['!sets.intersects([], [])', 22],
        ['!sets.intersects([1], [])', 22],
        ['!sets.intersects([1], [2])', 23],
      ]),
    );
  });

  it('sets: lists mixing types are refused, as the API server checks literals are homogeneous', () => {
    checkAll([
      { expr: 'sets.contains([1, 2u], [2])', expect: compile(/expected type 'int' but found 'uint'/) },
      { expr: 'sets.equivalent([1], [1u, 1.0])', expect: compile(/expected type 'uint' but found 'double'/) },
      {
        expr: 'sets.intersects([[1], [2, 3]], [[1, 2], [2, 3.0]])',
        expect: compile(/expected type 'int' but found 'double'/),
      },
    ]);
  });

  it('sets: dyn elements mix with others, equal numbers of any kind one member', () => {
    checkAll([
      { expr: 'sets.contains(dyn([1u]), [1])', expect: value(true) },
      { expr: 'sets.contains(dyn("a"), [1])', expect: { error: /^no such overload: sets\.contains\(string, list\)/ } },
      { expr: 'sets.contains([dyn(1), dyn(2u)], [dyn(2), dyn(2.0)])', expect: value(true) },
      { expr: 'sets.equivalent([1, 2, 3], [dyn(3u), dyn(2.0), dyn(1)])', expect: value(true) },
      { expr: '!sets.intersects([1], [dyn("1"), dyn(2)])', expect: value(true) },
      { expr: 'sets.contains([[dyn(1)], [dyn(2), dyn(3)]], [[dyn(2), dyn(3.0)]])', expect: value(true) },
    ]);
  });

  it('semver: parsing by the string, operations one unit', () => {
    checkAll(
      costs([
        ['semver("1.0.0")', 1],
        ['semver("1234.56789012345.67890123456789")', 4],
        ['isSemver("1.0.0")', 1],
        ['isSemver("1234.56789012345.67890123456789")', 4],
        ['semver("1.2.3").major()', 2],
        ['semver("1.2.3").minor()', 2],
        ['semver("1.2.3").patch()', 2],
        ['semver("1.0.0").isLessThan(semver("1.1.0"))', 3],
        ['semver("1.1.0").isGreaterThan(semver("1.0.0"))', 3],
        ['semver("1.0.0").compareTo(semver("1.2.3"))', 3],
      ]),
    );
  });

  it('conversions and comparisons of strings and bytes by their size', () => {
    checkAll(
      costs([
        [`${BYTES}.isSorted()`, 25],
        [`${BYTES}.indexOf(bytes('x'))`, 26],
        ["'ABCDEFGHIJ abcdefghij'.lowerAscii() == 'abcdefghij ABCDEFGHIJ'.lowerAscii()", 9],
        ["strings.quote('ABCDEFGHIJ abcdefghij') == strings.quote('ABCDEFGHIJ abcdefghij')", 9],
      ]),
    );
  });

  it('one-variable macros: what cel-go charges their two-variable forms', () => {
    checkAll(
      costs([
        ['[1, 2].all(v, v > 0)', 21],
        ['[1, 2].map(v, v + 1)', 49],
      ]),
    );
  });

  it('exists and exists_one: the negation, and the loop test that stops exists', () => {
    checkAll(
      costs([
        ['[1, 2].exists(v, v > 0)', 20],
        ['[1, 2].exists_one(v, v > 0)', 20],
        // The loop test that stops `exists` or `all` early is charged; at the last element there is none.
        ['[1, 2, 3].exists(v, v > 0)', 20],
        ['[1, 2, 3].exists(v, v > 2)', 29],
        ['[1, 2, 3].all(v, v < 0)', 18],
        ['[1, 2].exists_one(v, v > 1)', 19],
        ['[[1], [2]].all(l, l.exists(v, v > 0))', 53],
      ]),
    );
  });

  it('filter, and map with a filter: the conditional is free, a skipped element reads the accumulator', () => {
    checkAll(
      costs([
        ['[1, 2].filter(v, v > 0)', 51],
        ['[1, 2].filter(v, v > 1)', 39],
        ['[1, 2].map(v, v > 0, v + 1)', 53],
      ]),
    );
  });

  it('two-variable comprehensions: per step, as cel-go charges', () => {
    checkAll(
      costs([
        ["{'a': 1, 'b': 2}.all(k, v, v > 0)", 41],
        ["{'a': 1, 'b': 2}.exists(k, v, v > 0)", 40],
        ["{'a': 1, 'b': 2}.existsOne(k, v, v > 0)", 40],
        ["{'a': 1, 'b': 2}.transformMap(k, v, v + 1)", 71],
        ["{'a': 1, 'b': 2}.transformMap(k, v, v < 5, v + 1)", 75],
        ["{'a': 1, 'b': 2}.transformMapEntry(k, v, {k: v + 1})", 131],
        ["{'a': 1, 'b': 2}.transformMapEntry(k, v, v < 5, {k: v + 1})", 135],
        ['[1, 2].all(i, v, v > 0)', 21],
        ['[1, 2].exists(i, v, v > 0)', 20],
        ['[1, 2].existsOne(i, v, v > 0)', 20],
        ['[1, 2].transformList(i, v, v + 1)', 49],
        ['[1, 2].transformList(i, v, v < 5, v + 1)', 53],
      ]),
    );
  });

  it("transformMapEntry: merges each step's map, refuses a key twice and a transform that is no map", () => {
    checkAll([
      { expr: "{'a': 1, 'b': 2}.transformMapEntry(k, v, {k + k: v * 10})", expect: value({ aa: 10n, bb: 20n }) },
      { expr: "{'a': 1, 'b': 2}.transformMapEntry(k, v, v > 1, {k: v})", expect: value({ b: 2n }) },
      { expr: '[5, 6].transformMapEntry(i, v, {v: i}) == {5: 0, 6: 1}', expect: value(true) },
      {
        expr: "{'a': 1, 'b': 2}.transformMapEntry(k, v, {'x': v})",
        expect: { error: /insert failed: key x already exists/ },
      },
      { expr: "{'a': 1}.transformMapEntry(k, v, v)", expect: compile(/transform must be a map/) },
      { expr: "{'a': 1}.transformMapEntry(k, v, {k: v})", minor: 31, expect: compile(/transformMapEntry/) },
    ]);
  });
});
