// Property tests are sized in one place: every fc.assert runs FUZZ_RUNS times (test/helpers.ts),
// which a deep run raises, and none builds fast-check's two-second table of every code point.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { anyCodePoint } from '../arbitraries.ts';
import { FUZZ_RUNS, fuzzRunsFrom } from '../helpers.ts';

const root = process.cwd();

/** The test files of the repository (packages included), relative to it, with their text. */
function testFiles(): Array<{ file: string; text: string }> {
  return ['test', 'packages', 'functions']
    .flatMap((dir) => readdirSync(join(root, dir), { recursive: true, withFileTypes: true }))
    .filter((d) => d.isFile() && /\.test\.m?ts$/.test(d.name) && !d.parentPath.includes('node_modules'))
    .map((d) => join(d.parentPath, d.name))
    .map((path) => ({ file: relative(root, path), text: readFileSync(path, 'utf8') }));
}

/** Where `text` breaks the rules: a property with a run count of its own, or none, or the binary unit. */
export function sizingFaults(file: string, text: string): string[] {
  const faults: string[] = [];
  const asserts = text.match(/\bfc\.assert\(/g)?.length ?? 0;
  const shared = text.match(/numRuns: FUZZ_RUNS\b/g)?.length ?? 0;
  if (asserts !== shared) faults.push(`${file}: ${asserts} fc.assert, ${shared} with { numRuns: FUZZ_RUNS }`);
  for (const m of text.matchAll(/numRuns: (?!FUZZ_RUNS\b)[^,}\s]+/g)) faults.push(`${file}: ${m[0]}`);
  if (/unit: ['"]binary['"]/.test(text))
    faults.push(`${file}: unit 'binary' (use binaryString of test/arbitraries.ts)`);
  return faults;
}

describe('property tests', () => {
  it('all run FUZZ_RUNS times, and none uses the binary unit', () => {
    // This file's own examples of faults aside.
    const files = testFiles().filter((f) => f.file !== 'test/repo/fuzz.test.ts');
    assert.ok(files.filter((f) => f.text.includes('fc.assert(')).length >= 6);
    assert.deepEqual(
      files.flatMap((f) => sizingFaults(f.file, f.text)),
      [],
    );
  });

  it('finds a run count of its own, a missing one and the binary unit', () => {
    const prop = 'fc.assert(fc.property(fc.nat(), () => {})';
    assert.deepEqual(sizingFaults('a', `${prop}, { numRuns: 3000 });`), [
      'a: 1 fc.assert, 0 with { numRuns: FUZZ_RUNS }',
      'a: numRuns: 3000',
    ]);
    assert.deepEqual(sizingFaults('b', `${prop});`), ['b: 1 fc.assert, 0 with { numRuns: FUZZ_RUNS }']);
    assert.deepEqual(sizingFaults('c', `${prop}, { numRuns: FUZZ_RUNS });`), []);
    assert.deepEqual(sizingFaults('d', "fc.string({ unit: 'binary' })"), [
      "d: unit 'binary' (use binaryString of test/arbitraries.ts)",
    ]);
  });

  it('run 200 times unless KLW_FUZZ_RUNS says otherwise, which npm run test:deep does', () => {
    assert.equal(fuzzRunsFrom(undefined), 200);
    assert.equal(fuzzRunsFrom(''), 200);
    assert.equal(fuzzRunsFrom('5000'), 5000);
    for (const bad of ['0', '-3', '1.5', 'many', '1e400'])
      assert.throws(() => fuzzRunsFrom(bad), /KLW_FUZZ_RUNS="[^"]*": give a whole number of runs from 1/, bad);
    assert.equal(FUZZ_RUNS, fuzzRunsFrom(process.env.KLW_FUZZ_RUNS));
    const scripts = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).scripts as Record<string, string>;
    const deep = /^KLW_FUZZ_RUNS=(\d+) /.exec(scripts['test:deep'] ?? '');
    assert.ok(deep && Number(deep[1]) > 200, scripts['test:deep']);
  });
});

describe('anyCodePoint', () => {
  // Through its unmapper, which fast-check calls to shrink a value it did not make itself.
  const mine = (value: string) => anyCodePoint.canShrinkWithoutContext(value);

  it('draws every code point but the surrogates, from U+0000 to U+10FFFF', () => {
    const seen = fc.sample(anyCodePoint, { numRuns: 2000, seed: 1 }).map((c) => c.codePointAt(0)!);
    assert.ok(seen.every((c) => c <= 0x10ffff && (c < 0xd800 || c > 0xdfff)));
    assert.ok(
      seen.some((c) => c > 0xffff),
      'astral code points',
    );
    assert.ok(
      seen.some((c) => c < 0x80),
      'ASCII',
    );
    for (const c of ['\u0000', '\ud7ff', '\ue000', '\u{10ffff}', '😀', 'a']) assert.ok(mine(c), c);
    for (const bad of ['\ud800', '\udfff', 'ab', '', '😀a']) assert.ok(!mine(bad), JSON.stringify(bad));
  });
});
