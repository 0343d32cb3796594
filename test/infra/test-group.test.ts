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

  it("leaves a variable the modules set, unless the file's text names it or it was there before", () => {
    const before = processState();
    const own = (name: string) => name === 'KLW_GROUP_OWN';
    process.env.KLW_GROUP_MODULES = 'set by a module the file loads';
    assert.deepEqual(restoreProcess(before, own), []);
    assert.equal(
      process.env.KLW_GROUP_MODULES,
      'set by a module the file loads',
      'kept, as a process of its own has it',
    );
    const withIt = processState();
    process.env.KLW_GROUP_MODULES = 'changed';
    assert.deepEqual(restoreProcess(withIt, own), ['process.env.KLW_GROUP_MODULES']);
    assert.equal(process.env.KLW_GROUP_MODULES, 'set by a module the file loads');
    delete process.env.KLW_GROUP_MODULES;
    process.env.KLW_GROUP_OWN = 'set by the file';
    assert.deepEqual(restoreProcess(before, own), ['process.env.KLW_GROUP_OWN']);
    assert.equal(process.env.KLW_GROUP_OWN, undefined);
  });

  it('names a listener added only by a file that adds listeners itself', () => {
    const before = processState();
    const listener = () => {};
    process.once('exit', listener);
    try {
      assert.deepEqual(
        restoreProcess(before, (name) => name !== 'process.on'),
        [],
        "a module's",
      );
      assert.deepEqual(
        restoreProcess(before, () => true),
        ["a process 'exit' listener"],
      );
    } finally {
      process.off('exit', listener);
    }
  });
});
