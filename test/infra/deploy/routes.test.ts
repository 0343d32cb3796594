// What serverless.yml's check shares with the plugin, kept apart from it: the plugin's name and
// each function's route (serverless-plugin.runtime.test.ts checks them in the plugin's functions).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Registration } from '../../../lib/internal.ts';
import { PLUGIN_NAME, routePath } from '../../../infra/deploy/routes.ts';

/** A registration reduced to what a route depends on: its path and its auth. */
const registration = (path: string, auth?: string) => ({ path, ...(auth ? { auth } : {}) }) as unknown as Registration;

describe('routes', () => {
  it('names the plugin as serverless.yml lists it', () => {
    assert.equal(PLUGIN_NAME, 'kube-lambda-webhooks/serverless');
  });

  it('routes a function to its path, with the path secret unless its auth is none', () => {
    assert.equal(routePath(registration('/pod-policy')), '/pod-policy/{secret}');
    assert.equal(routePath(registration('/bearer', 'bearer')), '/bearer/{secret}');
    assert.equal(routePath(registration('/open', 'none')), '/open');
  });
});
