import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createLogger, RawJson, writesRawJson, type Logger } from '../../lib/log.ts';

describe('RawJson in log lines', () => {
  const value = {
    Timestamp: 1700000000000,
    CloudWatchMetrics: [{ Namespace: 'N', Dimensions: [['webhook']], Metrics: [{ Name: 'M', Unit: 'Count' }] }],
  };
  const text = JSON.stringify(value);

  it('is written as its text, the same bytes as the value itself', () => {
    const lines: string[] = [];
    const log = createLogger({ sink: (line) => lines.push(line), base: { webhook: 'w' } });
    log.info('review', { a: 1, _aws: new RawJson(text), b: 'x', c: new RawJson('[1,2]') });
    log.info('review', { a: 1, _aws: value, b: 'x', c: [1, 2] });
    assert.equal(lines[0]!.slice(lines[0]!.indexOf('"msg"')), lines[1]!.slice(lines[1]!.indexOf('"msg"')));
  });

  it('serialises as its value anywhere else', () => {
    assert.equal(JSON.stringify({ x: new RawJson(text) }), JSON.stringify({ x: value }));
  });

  it('leaves a line that cannot be written failing as before', () => {
    const log = createLogger({ sink: () => {} });
    assert.throws(() => log.info('x', { r: new RawJson('1'), big: 1n }), /BigInt/);
    assert.equal(JSON.stringify({ r: new RawJson('1') }), '{"r":1}');
  });

  it('is known to loggers of createLogger only', () => {
    const other: Logger = { debug() {}, info() {}, warn() {}, error() {} };
    assert.equal(writesRawJson(createLogger()), true);
    assert.equal(writesRawJson(other), false);
  });
});

describe('log line time', () => {
  it('is new Date().toISOString(), within a second and across seconds, years and the epoch', () => {
    const lines: string[] = [];
    const log = createLogger({ sink: (line) => lines.push(line) });
    const instants = [
      0, 1, 9, 10, 99, 100, 999, 1000, 1714564800000, 1714564800007, 1714564800999, 1714564801050, 951782399999,
      253402300799999, 253402300800000, -1, -1001,
    ];
    const now = Date.now;
    try {
      for (const t of instants) {
        Date.now = () => t;
        log.info('x');
      }
    } finally {
      Date.now = now;
    }
    assert.deepEqual(
      lines.map((l) => JSON.parse(l).time),
      instants.map((t) => new Date(t).toISOString()),
    );
  });
});
