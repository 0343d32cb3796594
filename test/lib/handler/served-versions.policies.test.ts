// One compile version for both policy kinds served from Lambda: the calling fleet cluster's
// Kubernetes version, else the definition's kubernetesVersion, else the newest. Each case runs
// a validating and a mutating policy through the function's handler, called by a fleet cluster
// by its path secret, so either kind drifting from the rule fails here.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Deployment, on } from '../../../lib/index.ts';
import { lambdaContext, toEvent } from '../../../lib/harness/events.ts';
import { createLogger } from '../../../lib/log.ts';
import { defineMutatingPolicy, defineValidatingPolicy } from '../../../lib/policies/index.ts';
import { admissionReview } from '../../../lib/testing/index.ts';

const EAST = 'e'.repeat(43);
const WEST = 'w'.repeat(43);
const SECRETS = JSON.stringify({ east: EAST, west: WEST });

// The ip library came with Kubernetes 1.30: a 1.29 environment lacks it, a 1.31 one has it.
const NEW_ONLY = "isIP('10.0.0.1')";

const deployment = {
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'web', namespace: 'default' },
  spec: { replicas: 1 },
};

/** A policy of each kind whose one expression needs the ip library; each admits (or labels) when it compiles. */
const kinds = {
  validating: (kubernetesVersion?: string) =>
    defineValidatingPolicy({
      name: 'needs-ip',
      matchConstraints: { resourceRules: [on(Deployment).create()] },
      validations: [{ expression: NEW_ONLY, message: 'not an IP' }],
      ...(kubernetesVersion ? { kubernetesVersion } : {}),
    }),
  mutating: (kubernetesVersion?: string) =>
    defineMutatingPolicy({
      name: 'needs-ip',
      matchConstraints: { resourceRules: [on(Deployment).create()] },
      mutations: [
        {
          patchType: 'JSONPatch',
          jsonPatch: {
            expression: `${NEW_ONLY} ? [JSONPatch{op: 'add', path: '/metadata/labels', value: {'ip': 'yes'}}] : []`,
          },
        },
      ],
      ...(kubernetesVersion ? { kubernetesVersion } : {}),
    }),
};

interface Answer {
  allowed: boolean;
  patch?: string;
  status?: { message?: string };
}

/** The webhook's answer to a create of a Deployment, called by `secret`'s cluster with the fleet `versions`. */
async function answer(
  webhook: ReturnType<(typeof kinds)['validating']> | ReturnType<(typeof kinds)['mutating']>,
  versions: Record<string, { kubeVersion?: string }> | undefined,
  secret: string,
): Promise<Answer> {
  const env = versions ? { KLW_FLEET: JSON.stringify(versions), KLW_FLEET_PATH_SECRETS: SECRETS } : {};
  const handler = webhook.withOptions({ env, logger: createLogger({ level: 'error', sink: () => {} }) });
  const path = versions ? `/needs-ip/${secret}` : '/needs-ip';
  const result = await handler(toEvent(admissionReview(deployment), { path, format: 'http' }), lambdaContext());
  assert.equal(result.statusCode, 200, result.body);
  return (JSON.parse(result.body) as { response: Answer }).response;
}

/** Whether the expression compiled: admitted (labelled, for the mutating policy), else refused for it. */
function compiled(kind: keyof typeof kinds, a: Answer): boolean {
  if (a.allowed) {
    if (kind === 'mutating') assert.ok(a.patch, 'a policy that compiled labels the object');
    return true;
  }
  assert.match(a.status?.message ?? '', /isIP/, 'refused for the expression that does not compile');
  return false;
}

describe('a policy served from Lambda compiles in the calling cluster’s version', () => {
  const fleet = { east: { kubeVersion: '1.29' }, west: { kubeVersion: '1.31' } };
  for (const kind of ['validating', 'mutating'] as const) {
    it(`${kind}: an expression newer than the caller fails there, though the definition is newer`, async () => {
      const webhook = kinds[kind]('1.31');
      assert.equal(compiled(kind, await answer(webhook, fleet, EAST)), false, 'east is 1.29');
      assert.equal(compiled(kind, await answer(webhook, fleet, WEST)), true, 'west is 1.31');
    });

    it(`${kind}: a newer caller compiles it, though the definition is older`, async () => {
      const webhook = kinds[kind]('1.29');
      assert.equal(compiled(kind, await answer(webhook, fleet, WEST)), true, 'west is 1.31');
      assert.equal(compiled(kind, await answer(webhook, fleet, EAST)), false, 'east is 1.29');
    });

    it(`${kind}: a caller without a version takes the definition's, else the newest`, async () => {
      const unversioned = { east: {}, west: { kubeVersion: '1.29' } };
      assert.equal(compiled(kind, await answer(kinds[kind]('1.29'), unversioned, EAST)), false);
      assert.equal(compiled(kind, await answer(kinds[kind]('1.31'), unversioned, EAST)), true);
      assert.equal(compiled(kind, await answer(kinds[kind](), unversioned, EAST)), true);
      assert.equal(compiled(kind, await answer(kinds[kind]('1.29'), undefined, '')), false, 'no fleet');
      assert.equal(compiled(kind, await answer(kinds[kind]('1.31'), undefined, '')), true, 'no fleet');
    });
  }
});
