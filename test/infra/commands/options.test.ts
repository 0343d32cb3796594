// The options several commands share: their flags and defaults.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DEFAULT_STATE_DIR } from '../../../infra/secrets/index.ts';
import { regionOption, STATE_DIR_DEFAULT, stageOption, stateDirOption } from '../../../infra/commands/options.ts';

describe('shared command options', () => {
  it("default --state-dir to the secrets' local state folder, restated without importing it", () => {
    assert.equal(STATE_DIR_DEFAULT, DEFAULT_STATE_DIR);
    const option = stateDirOption('local state directory');
    assert.deepEqual(
      [option.long, option.defaultValue, option.description],
      ['--state-dir', DEFAULT_STATE_DIR, 'local state directory'],
    );
  });

  it('take a stage (default dev) and a region without a default', () => {
    assert.deepEqual([stageOption().long, stageOption().defaultValue], ['--stage', 'dev']);
    assert.deepEqual([regionOption().long, regionOption().defaultValue], ['--region', undefined]);
  });
});
