// What every benchmark shares: the ratio of a measure to a baseline taken in the same run, the
// rows of the results table, and the table itself.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const root = fileURLToPath(new URL('..', import.meta.url));
export const quick = process.argv.includes('--quick');
/** The AdmissionReview the benchmarks send: a pod's creation. */
export const podReview = JSON.parse(readFileSync(join(root, 'test/events/reviews/pod-create-v1.json'), 'utf8'));

/** One row of the results table. */
export interface Row {
  benchmark: string;
  measured: string;
  baseline: string;
  ratio: number;
  target: string;
  met: boolean;
  min?: number;
  max?: number;
}
export const rows: Row[] = [];
export const extra: Record<string, unknown> = {};

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

export function log(line: string): void {
  process.stderr.write(`${line}\n`);
}

/** Nanoseconds per call of `fn` over one sample of `iterations` calls. */
async function sample(fn: () => unknown | Promise<unknown>, iterations: number): Promise<number> {
  const start = process.hrtime.bigint();
  for (let i = 0; i < iterations; i++) await fn();
  return Number(process.hrtime.bigint() - start) / iterations;
}

/**
 * Measures `subject` against `floor` in many short pairs, alternating which runs first, and
 * takes the median of the per-pair ratios: a slow moment of the machine hits both sides of a
 * pair alike, so the ratio holds steady where absolute times drift.
 */
export async function compare(
  benchmark: string,
  subject: () => unknown,
  floor: () => unknown,
  iterations: number,
  target: number,
  per = 1,
): Promise<void> {
  for (let i = 0; i < 3; i++) {
    await sample(floor, iterations);
    await sample(subject, iterations);
  }
  const a: number[] = [];
  const b: number[] = [];
  const pairs = quick ? 11 : 31;
  for (let round = 0; round < pairs; round++) {
    if (round % 2) {
      a.push(await sample(subject, iterations));
      b.push(await sample(floor, iterations));
    } else {
      b.push(await sample(floor, iterations));
      a.push(await sample(subject, iterations));
    }
  }
  const ratios = a.map((v, i) => v / b[i]!);
  const ratio = median(ratios);
  const sorted = [...ratios].sort((x, y) => x - y);
  rows.push({
    benchmark,
    measured: `${(median(a) / 1000 / per).toFixed(2)} µs${per > 1 ? '/object' : ''}`,
    baseline: `${(median(b) / 1000 / per).toFixed(2)} µs${per > 1 ? '/object' : ''}`,
    ratio,
    // The middle half of the pairs: the spread a reader can expect between runs.
    min: sorted[Math.floor(sorted.length / 4)]!,
    max: sorted[Math.floor((sorted.length * 3) / 4)]!,
    target: Number.isFinite(target) ? `≤ ${target}x` : 'measured',
    met: ratio <= target,
  });
  log(`${benchmark}: ${ratio.toFixed(2)}x`);
}

export function table(): string {
  const lines = [
    '| benchmark | measured | baseline | ratio (spread) | target | met |',
    '| --- | --- | --- | --- | --- | --- |',
  ];
  for (const r of rows) {
    const spread = r.min !== undefined ? ` (${r.min.toFixed(2)}–${r.max!.toFixed(2)})` : '';
    lines.push(
      `| ${r.benchmark} | ${r.measured} | ${r.baseline} | ${r.ratio.toFixed(2)}x${spread} | ${r.target} | ${r.met ? 'yes' : '**no**'} |`,
    );
  }
  return lines.join('\n');
}

/**
 * Cold starts of `cold` against `empty`, fresh processes in pairs fed `input`: the medians of
 * each side, the median of the per-pair ratios and the middle half of those ratios.
 */
export async function pairedColdStarts(
  cold: string[],
  empty: string[],
  input: string,
): Promise<{ measured: string; baseline: string; ratio: number; min: number; max: number }> {
  const a: number[] = [];
  const b: number[] = [];
  for (let i = 0; i < (quick ? 5 : 21); i++) {
    b.push(await runProcess(empty, input));
    a.push(await runProcess(cold, input));
  }
  const ratios = a.map((v, i) => v / b[i]!).sort((x, y) => x - y);
  return {
    measured: `${median(a).toFixed(1)} ms`,
    baseline: `${median(b).toFixed(1)} ms`,
    ratio: median(ratios),
    min: ratios[Math.floor(ratios.length / 4)]!,
    max: ratios[Math.floor((ratios.length * 3) / 4)]!,
  };
}

/** Wall time of a fresh Node process, in ms. */
export function runProcess(args: string[], input?: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    const child = spawn(process.execPath, args, {
      stdio: ['pipe', 'ignore', 'inherit'],
      env: { ...process.env, KLW_LOG_LEVEL: 'silent' },
    });
    child.on('error', reject);
    child.on('exit', (code) =>
      code === 0 ? resolve(Number(process.hrtime.bigint() - started) / 1e6) : reject(new Error(`exit ${code}`)),
    );
    child.stdin!.end(input ?? '');
  });
}
