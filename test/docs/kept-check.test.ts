// The docs' type-check keeps a pass by content: it stands while the key and every file the check
// read are unchanged, any change runs the check again, and a failure is never kept.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { type Finished, keptTypeCheck, listedFiles } from './kept-check.ts';

const dir = mkdtempSync(join(tmpdir(), 'klw-kept-check-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** A check that lists `files` (as tsc --listFiles does) and exits with `code`, counting its runs. */
function fakeCheck(files: string[], code = 0) {
  const check = async (): Promise<Finished> => {
    check.runs++;
    return { code, stdout: `${files.join('\n')}\n`, stderr: code ? 'a.ts(1,1): error TS1: no' : '' };
  };
  check.runs = 0;
  return check;
}

describe('a kept type-check', () => {
  const a = join(dir, 'a.ts');
  const b = join(dir, 'b.d.ts');

  it('reads the files tsc listed, not its errors', () => {
    assert.deepEqual(listedFiles(`${a}\nsrc/a.ts(1,2): error TS2322: x\n${b}\n`), [a, b]);
  });

  it('stands while the key and the files read are the same, and runs again on any change', async () => {
    const record = join(dir, 'pass.json');
    writeFileSync(a, 'export const a = 1;\n');
    writeFileSync(b, 'export declare const b: number;\n');
    const check = fakeCheck([a, b]);
    assert.equal((await keptTypeCheck(record, ['k'], check)).kept, false);
    assert.deepEqual(await keptTypeCheck(record, ['k'], check), { code: 0, stdout: '', stderr: '', kept: true });
    assert.equal(check.runs, 1);
    // Another key: checked again.
    assert.equal((await keptTypeCheck(record, ['k', 'other'], check)).kept, false);
    assert.equal(check.runs, 2);
    assert.equal((await keptTypeCheck(record, ['k', 'other'], check)).kept, true);
    // A file read changed: checked again, and that pass kept in turn.
    writeFileSync(b, 'export declare const b: string;\n');
    assert.equal((await keptTypeCheck(record, ['k', 'other'], check)).kept, false);
    assert.equal((await keptTypeCheck(record, ['k', 'other'], check)).kept, true);
    // A file read removed: checked again.
    rmSync(a);
    assert.equal((await keptTypeCheck(record, ['k', 'other'], check)).kept, false);
    assert.equal(check.runs, 4);
  });

  it('never keeps a failure, nor a pass that listed no file', async () => {
    const record = join(dir, 'failed.json');
    writeFileSync(a, 'export const a = 1;\n');
    const failing = fakeCheck([a], 2);
    for (let i = 0; i < 2; i++) {
      const out = await keptTypeCheck(record, ['k'], failing);
      assert.deepEqual([out.code, out.kept], [2, false]);
      assert.match(out.stderr, /error TS1/);
    }
    assert.equal(failing.runs, 2);
    const listless = fakeCheck([]);
    await keptTypeCheck(join(dir, 'listless.json'), ['k'], listless);
    await keptTypeCheck(join(dir, 'listless.json'), ['k'], listless);
    assert.equal(listless.runs, 2);
  });

  it('takes no record from a link planted in its place, and replaces the link', async () => {
    const record = join(dir, 'planted.json');
    writeFileSync(a, 'export const a = 1;\n');
    const check = fakeCheck([a]);
    const elsewhere = join(dir, 'elsewhere.json');
    await keptTypeCheck(elsewhere, ['k'], check);
    symlinkSync(elsewhere, record);
    assert.equal((await keptTypeCheck(record, ['k'], check)).kept, false);
    assert.equal((await keptTypeCheck(record, ['k'], check)).kept, true);
    assert.equal(check.runs, 2);
  });
});
