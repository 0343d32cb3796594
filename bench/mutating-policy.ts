// A mutating policy served from Lambda against the same change written as a TypeScript mutating
// function, warm, in the same run: a policy with two apply-configuration mutations (a label, a
// pod field) on a pod's creation, both answered through the function's handler.
// Run alone: node --import tsx bench/mutating-policy.ts [--quick]
import { pathToFileURL } from 'node:url';
import { defineMutatingWebhook } from '../lib/admission/webhook.ts';
import { Pod } from '../lib/k8s/kinds.ts';
import { defaultObject } from '../lib/policies/mutating/defaults.ts';
import { defineMutatingPolicy } from '../lib/policies/mutating/define.ts';
import { on } from '../lib/rule-builder.ts';
import { invoke, toEvent } from '../lib/testing/index.ts';
import type { WebhookHandler } from '../lib/webhook.ts';
import { compare, podReview, table } from './measure.ts';

/**
 * The goal: the policy's evaluation (CEL, the structured merge of each configuration, the pod's
 * defaulters after each, the patch) within twice the hand-written function's time.
 */
const POLICY_RATIO = 2;

/** The two mutations, as a policy and as TypeScript. */
const policy = defineMutatingPolicy({
  name: 'pod-team',
  matchConstraints: { resourceRules: [on(Pod).create()] },
  mutations: [
    {
      patchType: 'ApplyConfiguration',
      applyConfiguration: { expression: 'Object{metadata: Object.metadata{labels: {"team": "platform"}}}' },
    },
    {
      patchType: 'ApplyConfiguration',
      applyConfiguration: { expression: 'Object{spec: Object.spec{automountServiceAccountToken: false}}' },
    },
  ],
});
const written = defineMutatingWebhook({
  name: 'pod-team-ts',
  rules: [on(Pod).create()],
  mutate: (pod) => {
    pod.metadata = { ...pod.metadata, labels: { ...pod.metadata?.labels, team: 'platform' } };
    pod.spec = { ...pod.spec!, automountServiceAccountToken: false };
  },
});

/** Warm calls of both handlers on the pod's review, as the API server sends it (defaulted). */
export async function mutatingPolicySpeed(): Promise<void> {
  const object = defaultObject({ group: '', version: 'v1', kind: 'Pod' }, podReview.request.object);
  const review = { ...podReview, request: { ...podReview.request, object } };
  const [byPolicy, byFunction] = await Promise.all([invoke(policy, review), invoke(written, review)]);
  if (JSON.stringify(byPolicy.object) !== JSON.stringify(byFunction.object))
    throw new Error('the policy and the function do not make the same change');
  const event = (path: string) => toEvent(review, { base64: true, path, timeout: '5s' });
  const context = { awsRequestId: 'bench', getRemainingTimeInMillis: () => 5000 };
  const call = (handler: WebhookHandler, path: string) => {
    const e = event(path);
    return () => handler(e as never, context as never);
  };
  const write = process.stdout.write;
  process.stdout.write = (() => true) as typeof process.stdout.write;
  try {
    await compare(
      'warm: mutating policy, two apply configurations, against the same change in TypeScript',
      call(policy.handler as WebhookHandler, '/pod-team'),
      call(written.handler as WebhookHandler, '/pod-team-ts'),
      200,
      POLICY_RATIO,
    );
  } finally {
    process.stdout.write = write;
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  await mutatingPolicySpeed();
  process.stdout.write(`${table()}\n`);
}
