// The options several commands share: their flags and defaults.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { describeSources, sourceNames } from '../../../lib/internal.ts';
import * as audit from '../../../infra/audit/index.ts';
import { FLEET_FILE as FLEET_FILE_SOURCE } from '../../../infra/fleet/file.ts';
import { DEFAULT_CONFIGURATION_NAME as NAME_SOURCE } from '../../../infra/manifests.ts';
import { NODE_OPTION_HELP as NODE_HELP_SOURCE } from '../../../infra/node-binary.ts';
import { KEPT_BUILDS_ENV as KEPT_BUILDS_SOURCE } from '../../../infra/build-kept.ts';
import { DEFAULT_STATE_DIR } from '../../../infra/secrets/index.ts';
import {
  AUDIT_INCOMPLETE,
  DEFAULT_CONFIGURATION_NAME,
  DEFAULT_PAGE_SIZE,
  describeEventSources,
  eventSourceNames,
  FLEET_FILE,
  KEPT_BUILDS_ENV,
  NODE_OPTION_HELP,
  nodeOption,
  regionOption,
  STATE_DIR_DEFAULT,
  stageOption,
  stateDirOption,
} from '../../../infra/commands/options.ts';

describe('shared command options', () => {
  it("default --state-dir to the secrets' local state folder, restated without importing it", () => {
    assert.equal(STATE_DIR_DEFAULT, DEFAULT_STATE_DIR);
    const option = stateDirOption('local state directory');
    assert.deepEqual(
      [option.long, option.defaultValue, option.description],
      ['--state-dir', DEFAULT_STATE_DIR, 'local state directory'],
    );
  });

  it("restate the fleet file, the configurations' name, the help of --node and the audit's constants", () => {
    assert.equal(FLEET_FILE, FLEET_FILE_SOURCE);
    assert.equal(DEFAULT_CONFIGURATION_NAME, NAME_SOURCE);
    assert.equal(NODE_OPTION_HELP, NODE_HELP_SOURCE);
    assert.equal(nodeOption().description, NODE_HELP_SOURCE);
    assert.equal(AUDIT_INCOMPLETE, audit.AUDIT_INCOMPLETE);
    assert.equal(KEPT_BUILDS_ENV, KEPT_BUILDS_SOURCE);
    assert.equal(DEFAULT_PAGE_SIZE, audit.DEFAULT_PAGE_SIZE);
  });

  it("restate the library's event sources, in its order and with its descriptions", () => {
    assert.deepEqual(eventSourceNames(), sourceNames());
    assert.equal(describeEventSources(), describeSources());
  });

  it('take a stage (default dev) and a region without a default', () => {
    assert.deepEqual([stageOption().long, stageOption().defaultValue], ['--stage', 'dev']);
    assert.deepEqual([regionOption().long, regionOption().defaultValue], ['--region', undefined]);
  });
});
