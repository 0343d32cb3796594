// Timestamps and durations as cel-go (Go's time.Time and time.Duration) has them, as the API server
// runs it: nanoseconds end to end, Go's parsing and printing, cel-go's arithmetic, ranges, accessors
// and messages. Expected answers follow Go's semantics (time.Parse, time.ParseDuration,
// strconv.FormatFloat, strconv.Atoi) and cel-go's types, worked out by hand.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { compileExpression, isCompileError } from '../compile.ts';

/** Evaluates `expression` with `o` (dyn) bound: values given through `o` skip the literal validators. */
function run(expression: string, o: unknown = null): unknown {
  const compiled = compileExpression(expression, { declarations: { o: 'dyn' } });
  if (isCompileError(compiled)) throw new Error(compiled.message);
  return compiled.run({ o });
}

/** The message of the evaluation error of `expression`. */
function failure(expression: string, o: unknown = null): string {
  try {
    run(expression, o);
  } catch (err) {
    return (err as Error).message;
  }
  return assert.fail(`${expression} did not fail`);
}

const str = (expression: string, o?: unknown) => run(`string(${expression})`, o);
const TIMESTAMP_CONVERSION = "type conversion error from 'string' to 'google.protobuf.Timestamp'";
const DURATION_CONVERSION = "type conversion error from 'string' to 'google.protobuf.Duration'";

describe('timestamp(string): RFC 3339 as Go parses it', () => {
  it('keeps nine fraction digits and prints them as RFC3339Nano (trailing zeros dropped)', () => {
    assert.equal(str("timestamp('2024-01-01T00:00:00.123456789Z')"), '2024-01-01T00:00:00.123456789Z');
    assert.equal(str("timestamp('9999-12-31T23:59:59.999999999Z')"), '9999-12-31T23:59:59.999999999Z');
    assert.equal(str("timestamp('2024-01-01T00:00:00.500Z')"), '2024-01-01T00:00:00.5Z');
    assert.equal(str("timestamp('2024-01-01T00:00:00.000000001Z')"), '2024-01-01T00:00:00.000000001Z');
    assert.equal(str("timestamp('2024-01-01T00:00:00.000Z')"), '2024-01-01T00:00:00Z');
    assert.equal(str("timestamp('0001-01-01T00:00:00Z')"), '0001-01-01T00:00:00Z');
  });

  it('reads what Go reads: ten fraction digits (the tenth ignored), a comma, a one-digit hour', () => {
    assert.equal(str("timestamp('2024-01-01T00:00:00.1234567891Z')"), '2024-01-01T00:00:00.123456789Z');
    assert.equal(str("timestamp('2024-01-01T00:00:00,25Z')"), '2024-01-01T00:00:00.25Z');
    assert.equal(str("timestamp('2024-01-01T5:06:07Z')"), '2024-01-01T05:06:07Z');
  });

  it('keeps the offset it is written with for string(), UTC for the accessors', () => {
    assert.equal(str("timestamp('2024-01-01T00:00:00+05:30')"), '2024-01-01T00:00:00+05:30');
    assert.equal(str("timestamp('2024-01-01T00:00:00.25-08:00')"), '2024-01-01T00:00:00.25-08:00');
    // A zero offset is UTC, printed Z, whatever its sign.
    assert.equal(str("timestamp('2024-01-01T00:00:00+00:00')"), '2024-01-01T00:00:00Z');
    assert.equal(str("timestamp('2024-01-01T00:00:00-00:00')"), '2024-01-01T00:00:00Z');
    assert.equal(run("timestamp('2024-01-01T00:00:00+05:30').getHours()"), 18n);
    assert.equal(run("timestamp('2024-01-01T00:00:00+05:30').getDate()"), 31n);
    assert.equal(run("int(timestamp('1970-01-01T05:30:00+05:30'))"), 0n);
    // Go's general parser allows offsets up to 24 hours and 60 minutes.
    assert.equal(run("int(timestamp('2024-01-01T00:00:00+24:00'))"), 1704067200n - 86400n);
    assert.equal(run("int(timestamp('2024-01-01T00:00:00-00:60'))"), 1704067200n + 3600n);
  });

  it("refuses what Go refuses, in cel-go's words", () => {
    for (const bad of [
      '2024-01-01T00:00:00', // no zone
      '2024-01-01t00:00:00Z',
      '2024-01-01T00:00:00z',
      '2024-1-01T00:00:00Z',
      '2024-01-01T24:00:00Z',
      '2024-01-01T00:60:00Z',
      '2024-01-01T00:00:60Z',
      '2024-02-30T00:00:00Z',
      '2023-02-29T00:00:00Z',
      '2024-13-01T00:00:00Z',
      '2024-01-01T00:00:00.Z',
      '2024-01-01T00:00:00+25:00',
      '2024-01-01T00:00:00+0530',
      '10000-01-01T00:00:00Z',
      ' 2024-01-01T00:00:00Z',
    ]) {
      assert.equal(failure('timestamp(o)', bad), TIMESTAMP_CONVERSION, bad);
    }
    assert.equal(run("timestamp(o) == timestamp('2024-02-29T00:00:00Z')", '2024-02-29T00:00:00Z'), true);
  });

  it('is a timestamp overflow outside 0001-01-01..9999-12-31 UTC, however it is written', () => {
    assert.equal(failure('timestamp(o)', '0000-12-31T23:59:59Z'), 'timestamp overflow');
    assert.equal(failure('timestamp(o)', '0001-01-01T00:00:00+00:01'), 'timestamp overflow');
    assert.equal(failure('timestamp(o)', '9999-12-31T23:59:59-00:01'), 'timestamp overflow');
  });
});

describe('timestamp(int), int(timestamp)', () => {
  it('reads Unix seconds in UTC, within range', () => {
    assert.equal(str('timestamp(1234567890)'), '2009-02-13T23:31:30Z');
    assert.equal(str('timestamp(-62135596800)'), '0001-01-01T00:00:00Z');
    assert.equal(str('timestamp(253402300799)'), '9999-12-31T23:59:59Z');
    assert.equal(failure('timestamp(o)', 253402300800n), 'timestamp overflow');
    assert.equal(failure('timestamp(o)', -62135596801n), 'timestamp overflow');
  });

  it('int() is the Unix second, rounded down', () => {
    assert.equal(run("int(timestamp('1969-12-31T23:59:59.999999999Z'))"), -1n);
    assert.equal(run("int(timestamp('2009-02-13T23:31:30.5Z'))"), 1234567890n);
  });
});

describe('duration(string): Go duration syntax', () => {
  it('reads every unit, fractions, signs and sums of parts', () => {
    const cases: Array<[string, string]> = [
      ['1h2m3.5s', '3723.5s'],
      ['-1.5h', '-5400s'],
      ['+3s', '3s'],
      ['1us', '0.000001s'],
      ['1\u00b5s', '0.000001s'], // micro sign
      ['1\u03bcs', '0.000001s'], // Greek mu
      ['1ns', '0.000000001s'],
      ['-1ns', '-0.000000001s'],
      ['1.5ms', '0.0015s'],
      ['.5s', '0.5s'],
      ['1.s', '1s'],
      ['0', '0s'],
      ['-0', '0s'],
      ['0.1s', '0.1s'],
      ['1m30s', '90s'],
      ['1h1h', '7200s'],
      ['1.0000000001s', '1s'],
      ['1000000s', '1000000s'],
      // Printed through a float64: a long duration's nanoseconds round.
      ['2562047h47m16.854775807s', '9223372036.854776s'],
      ['-9223372036854775808ns', '-9223372036.854776s'],
    ];
    for (const [text, printed] of cases) assert.equal(str('duration(o)', text), printed, text);
  });

  it("refuses what Go refuses, in cel-go's words", () => {
    for (const bad of [
      '',
      '1',
      '-',
      's',
      '.s',
      '1d',
      '1h 2m',
      '1S',
      '--1s',
      '1e3s',
      '9223372036854775808ns',
      '2562047h47m16.854775808s',
      '9223372037s',
      '1constructor',
    ]) {
      assert.equal(failure('duration(o)', bad), DURATION_CONVERSION, JSON.stringify(bad));
    }
  });

  it('duration(int) is declared and always refused, as in cel-go', () => {
    assert.equal(failure('duration(o)', 5n), "type conversion error from 'int' to 'google.protobuf.Duration'");
  });

  it('int() is the nanoseconds', () => {
    assert.equal(run("int(duration('1.5s'))"), 1_500_000_000n);
    assert.equal(run("int(duration('-1ns'))"), -1n);
  });
});

describe('comparison and equality to the nanosecond', () => {
  const a = "timestamp('2024-01-01T00:00:00.999Z')";
  const b = "timestamp('2024-01-01T00:00:00.999000001Z')";

  it('orders and compares timestamps and durations by their nanoseconds', () => {
    assert.equal(run(`${a} < ${b}`), true);
    assert.equal(run(`${b} <= ${a}`), false);
    assert.equal(run(`${b} > ${a}`), true);
    assert.equal(run(`${a} >= ${b}`), false);
    assert.equal(run(`${a} == ${b}`), false);
    assert.equal(run(`${a} != ${b}`), true);
    assert.equal(run(`${a} == timestamp('2024-01-01T05:30:00.999+05:30')`), true);
    assert.equal(run("duration('1.000000001s') > duration('1s')"), true);
    assert.equal(run("duration('1.000000001s') == duration('1s')"), false);
    assert.equal(run("duration('60s') == duration('1m')"), true);
    assert.equal(run("dyn(duration('1ns')) < dyn(duration('2ns'))"), true);
  });

  it('inside lists, maps and membership', () => {
    assert.equal(run(`[${a}] == [${b}]`), false);
    assert.equal(run(`${a} in [${b}]`), false);
    assert.equal(run(`${b} in [${a}, ${b}]`), true);
    assert.equal(run("{'k': duration('1s')} == {'k': duration('1.000000001s')}"), false);
  });
});

describe('arithmetic in every order cel-go declares', () => {
  const t = "timestamp('2024-01-01T00:00:00.999999999Z')";

  it('adds and subtracts with nanosecond carries', () => {
    assert.equal(str(`${t} + duration('1ns')`), '2024-01-01T00:00:01Z');
    assert.equal(str(`${t} - duration('-2ns')`), '2024-01-01T00:00:01.000000001Z');
    assert.equal(str(`duration('1ns') + ${t}`), '2024-01-01T00:00:01Z');
    assert.equal(str("timestamp('2024-01-01T00:00:00Z') - duration('1ns')"), '2023-12-31T23:59:59.999999999Z');
    assert.equal(str(`${t} - timestamp('2024-01-01T00:00:00.000000001Z')`), '0.999999998s');
    assert.equal(str(`timestamp('2024-01-01T00:00:00.000000001Z') - ${t}`), '-0.999999998s');
    assert.equal(str("duration('1.5s') + duration('-2s')"), '-0.5s');
    assert.equal(str("duration('1s') - duration('1ns')"), '0.999999999s');
  });

  it('types duration + timestamp as a timestamp', () => {
    const sum = "duration('1h') + timestamp('2024-01-01T00:00:00Z')";
    assert.equal(run(`type(${sum}) == google.protobuf.Timestamp`), true);
    assert.equal(run(`(${sum}).getHours()`), 1n);
    assert.equal(run(`${sum} == timestamp('2024-01-01T01:00:00Z')`), true);
    const compiled = compileExpression(`${sum} > timestamp('2024-01-01T00:00:00Z')`);
    assert.ok(!isCompileError(compiled) && compiled.type === 'bool');
  });

  it('keeps the offset of the timestamp through arithmetic', () => {
    assert.equal(str("timestamp('2024-01-01T23:30:00+05:30') + duration('1h')"), '2024-01-02T00:30:00+05:30');
    assert.equal(str("duration('1h') + timestamp('2024-01-01T23:30:00-05:00')"), '2024-01-02T00:30:00-05:00');
  });

  it('is a timestamp overflow past 9999-12-31T23:59:59.999999999Z or before 0001-01-01', () => {
    assert.equal(failure("timestamp('9999-12-31T23:59:59.999999999Z') + duration('1ns')"), 'timestamp overflow');
    assert.equal(failure("duration('-1ns') + timestamp('0001-01-01T00:00:00Z')"), 'timestamp overflow');
    assert.equal(failure("timestamp('0001-01-01T00:00:00Z') - duration('1ns')"), 'timestamp overflow');
    assert.equal(
      str("timestamp('9999-12-31T23:59:59.999999998Z') + duration('1ns')"),
      '9999-12-31T23:59:59.999999999Z',
    );
  });

  it('is an integer overflow past the int64 nanoseconds of a duration', () => {
    const max = "duration('2562047h47m16.854775807s')";
    assert.equal(failure(`${max} + duration('1ns')`), 'integer overflow');
    assert.equal(failure(`duration('-1ns') - ${max} - duration('1ns')`), 'integer overflow');
    assert.equal(
      failure("timestamp('2262-04-11T23:47:16.854775808Z') - timestamp('1970-01-01T00:00:00Z')"),
      'integer overflow',
    );
    assert.equal(
      str("timestamp('2262-04-11T23:47:16.854775807Z') - timestamp('1970-01-01T00:00:00Z')"),
      '9223372036.854776s',
    );
    // Subtracting the most negative duration negates it first, which overflows.
    assert.equal(failure("timestamp('2024-01-01T00:00:00Z') - duration('-9223372036854775808ns')"), 'integer overflow');
  });
});

describe('accessors', () => {
  const t = "timestamp('2024-03-10T06:59:59.987654321Z')";

  it('read the UTC calendar by default, as the API server (DefaultUTCTimeZone)', () => {
    const fields: Array<[string, bigint]> = [
      ['getFullYear', 2024n],
      ['getMonth', 2n],
      ['getDate', 10n],
      ['getDayOfMonth', 9n],
      ['getDayOfYear', 69n],
      ['getDayOfWeek', 0n],
      ['getHours', 6n],
      ['getMinutes', 59n],
      ['getSeconds', 59n],
      ['getMilliseconds', 987n],
    ];
    for (const [name, value] of fields) assert.equal(run(`${t}.${name}()`), value, name);
    assert.equal(run("timestamp('0001-01-01T00:00:00Z').getDayOfWeek()"), 1n);
    assert.equal(run("timestamp('2024-12-31T12:00:00Z').getDayOfYear()"), 365n);
    assert.equal(run("timestamp('1969-12-31T23:59:59.999999999Z').getMilliseconds()"), 999n);
  });

  it('read an IANA zone with its rules at that instant', () => {
    assert.equal(run(`${t}.getHours('America/New_York')`), 1n);
    assert.equal(run("timestamp('2024-03-10T07:00:00Z').getHours('America/New_York')"), 3n);
    assert.equal(run(`${t}.getDate('Australia/Sydney')`), 10n);
    assert.equal(run(`${t}.getMinutes('Asia/Kathmandu')`), 44n);
    assert.equal(run(`${t}.getMilliseconds('Asia/Kathmandu')`), 987n);
    // Before time zones: local mean time, New York's 4:56:02 behind UTC; the year before 1 is 0.
    assert.equal(run("timestamp('0001-01-01T00:00:00Z').getFullYear('America/New_York')"), 0n);
    assert.equal(run("timestamp('0001-01-01T00:00:00Z').getSeconds('America/New_York')"), 58n);
    assert.equal(run(`${t}.getHours('UTC')`), 6n);
    assert.equal(run(`${t}.getHours('')`), 6n);
  });

  it('read a `±hh:mm` offset as cel-go does: Atoi of each part, the minutes subtracted after a minus', () => {
    assert.equal(run(`${t}.getHours('+05:30')`), 12n);
    assert.equal(run(`${t}.getMinutes('+05:30')`), 29n);
    assert.equal(run(`${t}.getHours('05:30')`), 12n);
    assert.equal(run(`${t}.getMinutes('-00:30')`), 29n);
    assert.equal(run(`${t}.getHours('-00:30')`), 6n);
    assert.equal(run(`${t}.getMinutes('-01:30')`), 29n);
    assert.equal(run(`${t}.getHours('-01:30')`), 5n);
    assert.equal(run(`${t}.getDayOfMonth('-07:00')`), 8n);
    // Atoi takes any int: 30 hours ahead.
    assert.equal(run(`${t}.getDate('30:00')`), 11n);
  });

  it("refuses a zone Go refuses, in Go's words", () => {
    assert.equal(failure(`${t}.getHours('Mars/Olympus_Mons')`), 'unknown time zone Mars/Olympus_Mons');
    assert.equal(failure(`${t}.getHours('+0530')`), 'unknown time zone +0530');
    assert.equal(failure(`${t}.getHours('../etc/passwd')`), 'time: invalid location name');
    assert.equal(failure(`${t}.getHours('/UTC')`), 'time: invalid location name');
    assert.equal(failure(`${t}.getHours('+05:x')`), 'strconv.Atoi: parsing "x": invalid syntax');
    assert.equal(failure(`${t}.getHours(':30')`), 'strconv.Atoi: parsing "": invalid syntax');
    assert.equal(failure(`${t}.getHours('05:30:00')`), 'strconv.Atoi: parsing "30:00": invalid syntax');
    assert.equal(
      failure(`${t}.getHours('99999999999999999999:00')`),
      'strconv.Atoi: parsing "99999999999999999999": value out of range',
    );
    assert.equal(failure(`${t}.getHours('\u00e9:00')`), 'strconv.Atoi: parsing "\u00e9": invalid syntax');
  });

  it("of durations truncate toward zero, through Go's float64 hours, minutes and seconds", () => {
    assert.equal(run("duration('-1.5h').getHours()"), -1n);
    assert.equal(run("duration('-90m30s').getMinutes()"), -90n);
    assert.equal(run("duration('-1.999s').getSeconds()"), -1n);
    assert.equal(run("duration('-1.999999s').getMilliseconds()"), -1999n);
    assert.equal(run("duration('999999999ns').getSeconds()"), 0n);
    // Whole units plus the rest in float64: close enough to the next unit, it rounds up.
    assert.equal(run("duration('2562046h59m59.9999999s').getHours()"), 2562047n);
    assert.equal(run("duration('9000000000.999999999s').getSeconds()"), 9000000001n);
    assert.equal(run("duration('9000000000.999999999s').getMilliseconds()"), 9000000000999n);
  });
});

describe('timestamps and durations in the libraries', () => {
  it('sort, min, max, isSorted and sum by nanoseconds', () => {
    const a = "timestamp('2024-01-01T00:00:00.000000002Z')";
    const b = "timestamp('2024-01-01T00:00:00.000000001Z')";
    assert.equal(run(`[${a}, ${b}].sort() == [${b}, ${a}]`), true);
    assert.equal(run(`[${a}, ${b}].min() == ${b}`), true);
    assert.equal(run(`[${a}, ${b}].isSorted()`), false);
    assert.equal(run("[duration('2ns'), duration('1ns')].sort() == [duration('1ns'), duration('2ns')]"), true);
    assert.equal(run("[duration('1.000000002s'), duration('1.000000001s')].max() == duration('1.000000002s')"), true);
    assert.equal(str("[duration('1s'), duration('0.5s'), duration('1ns')].sum()"), '1.500000001s');
    assert.equal(failure("[duration('2562047h'), duration('2562047h')].sum()"), 'integer overflow');
  });

  it('string.format prints them as string() does', () => {
    assert.equal(run("'%s'.format([timestamp('2024-01-01T00:00:00.5+01:00')])"), '2024-01-01T00:00:00.5+01:00');
    assert.equal(run("'%s'.format([duration('1.5s')])"), '1.5s');
  });

  it('optional.ofNonZeroValue skips the zero time (0001-01-01T00:00:00Z) and the zero duration', () => {
    assert.equal(run("optional.ofNonZeroValue(timestamp('0001-01-01T00:00:00Z')).hasValue()"), false);
    assert.equal(run('optional.ofNonZeroValue(timestamp(0)).hasValue()'), true);
    assert.equal(run("optional.ofNonZeroValue(timestamp('0001-01-01T00:00:00.000000001Z')).hasValue()"), true);
    assert.equal(run("optional.ofNonZeroValue(duration('0s')).hasValue()"), false);
    assert.equal(run("optional.ofNonZeroValue(duration('1ns')).hasValue()"), true);
  });
});

describe('conversions of literals, refused when the expression is compiled', () => {
  const compileMessage = (expression: string, minor = 34) => {
    const compiled = compileExpression(expression, { kubeVersion: { major: 1, minor } });
    return isCompileError(compiled) ? compiled.message.split('\n')[0] : undefined;
  };

  it('refuses a literal the conversion refuses, pointing at the literal as the literal validators do', () => {
    assert.equal(
      compileMessage("timestamp('2024-02-30T00:00:00Z') == timestamp(0)"),
      'compilation failed: ERROR: <input>:1:11: invalid timestamp argument',
    );
    assert.equal(
      compileMessage('timestamp(253402300800) == timestamp(0)'),
      'compilation failed: ERROR: <input>:1:11: invalid timestamp argument',
    );
    assert.equal(
      compileMessage('timestamp(-62135596801) == timestamp(0)'),
      'compilation failed: ERROR: <input>:1:11: invalid timestamp argument',
    );
    assert.equal(
      compileMessage("duration('1d') > duration('1s')"),
      'compilation failed: ERROR: <input>:1:10: invalid duration argument',
    );
    assert.equal(
      compileMessage("duration('9223372037s') > duration('1s')"),
      'compilation failed: ERROR: <input>:1:10: invalid duration argument',
    );
    assert.equal(
      compileMessage("duration(5) > duration('1s')"),
      'compilation failed: ERROR: <input>:1:10: invalid duration argument',
    );
    assert.ok(compileMessage("duration('1d') > duration('1s')", 28));
  });

  it('accepts the literals Go reads, and leaves a computed argument to evaluation', () => {
    assert.equal(compileMessage("timestamp('2024-01-01T00:00:00.123456789+05:30') == timestamp(0)"), undefined);
    assert.equal(compileMessage("duration('1h2m3.5s') > duration('1\u00b5s')"), undefined);
    assert.equal(compileMessage("duration(['1d'][0]) > duration('1s')"), undefined);
    assert.equal(failure("duration(['1d'][0]) > duration('1s')"), DURATION_CONVERSION);
  });
});

describe('hostile sizes', () => {
  // Megabyte strings, as an object's fields may hold: each is read in one pass (a pass per part, or
  // a message scanned again from every position, would run for hours, and the test with it).
  const MB = 1_000_000;

  it('reads a duration of a million parts, and long runs of digits', () => {
    assert.equal(str('duration(o)', '1ns'.repeat(MB)), '0.001s');
    assert.equal(str('duration(o)', `${'0'.repeat(3 * MB)}1s`), '1s');
    assert.equal(str('duration(o)', `.${'9'.repeat(3 * MB)}s`), '1s');
    assert.equal(failure('duration(o)', `${'9'.repeat(3 * MB)}s`), DURATION_CONVERSION);
  });

  it('reads long fractions and zones, and quotes a long zone in its message', () => {
    assert.equal(str('timestamp(o)', `2024-01-01T00:00:00.${'1'.repeat(3 * MB)}Z`), '2024-01-01T00:00:00.111111111Z');
    assert.equal(run('timestamp(0).getHours(o)', `+05:${'0'.repeat(3 * MB)}30`), 5n);
    const digits = '9'.repeat(3 * MB);
    assert.equal(
      failure('timestamp(0).getHours(o)', `${digits}:00`),
      `strconv.Atoi: parsing "${digits}": value out of range`,
    );
    assert.equal(failure('timestamp(0).getHours(o)', 'A'.repeat(3 * MB)), `unknown time zone ${'A'.repeat(3 * MB)}`);
  });
});
