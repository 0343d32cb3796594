// Optional types, has() and timestamps as cel-go has them where the CEL engine's own differ.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { compileExpression, isCompileError } from '../compile.ts';

function run(expression: string, o: unknown = null): unknown {
  const compiled = compileExpression(expression, { declarations: { o: 'dyn' } });
  if (isCompileError(compiled)) throw new Error(compiled.message);
  return compiled.run({ o });
}

describe('optionals', () => {
  it('optMap and optFlatMap', () => {
    assert.equal(run('optional.of(42).optMap(y, y + 1).value()'), 43n);
    assert.equal(run('optional.none().optMap(y, y + 1).hasValue()'), false);
    assert.equal(run("{'k': {'s': 'v'}}.?k.optFlatMap(m, m.?s).value()"), 'v');
    assert.equal(run("{'k': {}}.?k.optFlatMap(m, m.?s).hasValue()"), false);
    assert.equal(run('o.?spec.optMap(s, s.replicas).orValue(1) == 3', { spec: { replicas: 3n } }), true);
  });

  it('optional.ofNonZeroValue: none for a zero value', () => {
    for (const zero of ["''", '0', '0u', '0.0', 'false', 'null', '[]', '{}', "b''"])
      assert.equal(run(`optional.ofNonZeroValue(${zero}).hasValue()`), false, zero);
    assert.equal(run('optional.ofNonZeroValue(42).or(optional.of(20)).value()'), 42n);
  });

  it('optionals compare by their values', () => {
    assert.equal(run('optional.none() == optional.none()'), true);
    assert.equal(run('optional.of(1) == optional.of(1)'), true);
    assert.equal(run('optional.of(1) != optional.none()'), true);
    assert.equal(run('optional.of(dyn(1)) == optional.of(1.0)'), true);
  });

  it('arrive with optional types in 1.28', () => {
    const compiled = compileExpression('optional.of(1).optMap(x, x).hasValue()', {
      kubeVersion: { major: 1, minor: 27 },
    });
    assert.ok(isCompileError(compiled));
  });
});

describe('has() of any operand', () => {
  it('tests a field of a map literal, of an optional, of a call result', () => {
    assert.equal(run("has({'a': 1}.a)"), true);
    assert.equal(run("has({'a': 1}.b)"), false);
    assert.equal(run('has({}.?x.y)'), false);
    assert.equal(run("has({'x': {'y': 'z'}}.?x.y)"), true);
    assert.equal(run("has({'foo': optional.none()}.foo)"), true);
  });

  it('keeps a variable chain as before: a missing step before the last is an error', () => {
    assert.equal(run('has(o.m.k)', { m: { k: 1n } }), true);
    assert.equal(run('has(o.m.z)', { m: {} }), false);
    assert.throws(() => run('has(o.q.z)', { m: {} }), /no such key/);
  });

  it('refuses an operand that is not a field selection', () => {
    assert.ok(isCompileError(compileExpression('has(1)')));
  });
});

describe('timestamps', () => {
  const t = "timestamp('2009-02-13T23:31:30Z')";

  it('reads a time zone given as an offset, as Go parses it', () => {
    assert.equal(run(`${t}.getHours('02:00')`), 1n);
    assert.equal(run(`${t}.getHours('+02:00')`), 1n);
    assert.equal(run(`${t}.getFullYear('-09:30')`), 2009n);
    assert.equal(run("timestamp('2009-02-13T02:00:00Z').getDayOfMonth('-02:30')"), 11n);
    assert.equal(run(`${t}.getSeconds('-00:00')`), 30n);
    assert.equal(run(`${t}.getHours('America/New_York')`), 18n);
  });

  it('a timestamp out of 0001..9999 or a duration past a Go duration is an error', () => {
    assert.throws(() => run("timestamp('9999-12-31T23:59:59Z') + duration('1s')"), /^TimeError: timestamp overflow$/);
    assert.throws(() => run("timestamp('0001-01-01T00:00:00Z') - duration('1s')"), /^TimeError: timestamp overflow$/);
    // Go's durations hold ±292 years: a longer one does not convert.
    assert.throws(() => run("duration(['320000000000s'][0])"), /type conversion error from 'string' to 'google/);
    assert.throws(() => run("duration('5000000000s') + duration('5000000000s')"), /^TimeError: integer overflow$/);
    assert.equal(run(`${t} + duration('1h') > ${t}`), true);
  });

  it('string() of a timestamp and a duration', () => {
    assert.equal(run(`string(${t})`), '2009-02-13T23:31:30Z');
    assert.equal(run("string(duration('1000000s'))"), '1000000s');
  });
});
