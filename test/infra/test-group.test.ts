// What a group of test files runs between its files (infra/test-group.mjs): what a file left
// changed in the process is named and, where it can be, put back.
import assert from 'node:assert/strict';
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { describe, it } from 'node:test';
import { processState, restoreProcess } from '../../infra/test-group.mjs';

describe('the state a grouped test file must put back', () => {
  it('names a changed directory, variables and listeners added, and puts back the first two', () => {
    const before = processState();
    const elsewhere = realpathSync(mkdtempSync(`${tmpdir()}/klw-test-group-`));
    const listener = () => {};
    process.chdir(elsewhere);
    process.env.KLW_GROUP_ADDED = 'x';
    process.env.PATH = `${process.env.PATH}:/nowhere`;
    process.on('SIGUSR2', listener);
    try {
      assert.deepEqual(restoreProcess(before), [
        `the working directory (now ${elsewhere}, was ${before.cwd})`,
        'process.env.KLW_GROUP_ADDED',
        'process.env.PATH',
        "a process 'SIGUSR2' listener",
      ]);
      assert.equal(process.cwd(), before.cwd);
      assert.equal(process.env.KLW_GROUP_ADDED, undefined);
      assert.equal(process.env.PATH, before.env.PATH);
    } finally {
      process.off('SIGUSR2', listener);
      process.chdir(before.cwd);
      rmSync(elsewhere, { recursive: true, force: true });
    }
    assert.deepEqual(restoreProcess(before), [], 'nothing left');
  });

  it("leaves a variable the modules set at import, unless the file's text names it", () => {
    const before = processState();
    process.env.KLW_GROUP_MODULES = 'set at import';
    const imported = processState();
    const other = (name: string) => name === 'KLW_GROUP_OWN';
    assert.deepEqual(restoreProcess(before, imported, other), []);
    assert.equal(process.env.KLW_GROUP_MODULES, 'set at import', 'kept, as a process of its own would have it');
    process.env.KLW_GROUP_MODULES = 'changed by a test';
    assert.deepEqual(restoreProcess(before, imported, other), ['process.env.KLW_GROUP_MODULES']);
    assert.equal(process.env.KLW_GROUP_MODULES, undefined);
    process.env.KLW_GROUP_OWN = 'set by the file at import';
    const ownImported = processState();
    assert.deepEqual(restoreProcess(before, ownImported, other), ['process.env.KLW_GROUP_OWN']);
    assert.equal(process.env.KLW_GROUP_OWN, undefined);
  });
});
