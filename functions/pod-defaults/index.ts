import { defineMutatingWebhook } from 'kube-lambda-webhooks';
import { CONTAINER_LISTS, podRules, type Container, type Pod } from '../pod.ts';
import { parseQuantity } from './quantity.ts';

/** Label set on every pod this webhook has defaulted. */
export const DEFAULTED_LABEL = 'webhooks.kube-lambda.dev/defaulted';

/** Default limits, from DEFAULT_CPU_LIMIT and DEFAULT_MEMORY_LIMIT (500m and 256Mi when unset). */
export function defaultLimits(env: NodeJS.ProcessEnv = process.env): Record<'cpu' | 'memory', string> {
  return { cpu: env.DEFAULT_CPU_LIMIT || '500m', memory: env.DEFAULT_MEMORY_LIMIT || '256Mi' };
}

/** Default limits with their parsed values, for comparing against requests. */
interface Limits {
  text: Record<'cpu' | 'memory', string>;
  value: Record<'cpu' | 'memory', number>;
}

function limitsFrom(env: NodeJS.ProcessEnv): Limits {
  const text = defaultLimits(env);
  return { text, value: { cpu: parseQuantity(text.cpu), memory: parseQuantity(text.memory) } };
}

// The environment of a Lambda execution environment does not change: read it once.
let processLimits: Limits | undefined;

/**
 * Adds the missing cpu and memory limits of one container. A limit below the container's
 * own request would make the API server reject the pod, so such a request becomes the limit.
 */
function addLimits(container: Container, defaults: Limits): void {
  const resources = (container.resources ??= {});
  for (const resource of ['cpu', 'memory'] as const) {
    if (resources.limits?.[resource] !== undefined) continue;
    const request = resources.requests?.[resource];
    const value =
      request !== undefined && parseQuantity(request) > defaults.value[resource] ? request : defaults.text[resource];
    (resources.limits ??= {})[resource] = value;
  }
}

/** Fills in what the user left unset: runAsNonRoot, container limits and the defaulted label. */
export function applyDefaults(pod: Pod, env: NodeJS.ProcessEnv = process.env): void {
  const spec = (pod.spec ??= {});
  const securityContext = (spec.securityContext ??= {});
  if (securityContext.runAsNonRoot === undefined) securityContext.runAsNonRoot = true;
  const defaults = env === process.env ? (processLimits ??= limitsFrom(env)) : limitsFrom(env);
  // Ephemeral containers may not have resources; init containers and containers may.
  for (const list of CONTAINER_LISTS.filter((l) => l !== 'ephemeralContainers')) {
    for (const container of spec[list] ?? []) addLimits(container, defaults);
  }
  const metadata = (pod.metadata ??= {});
  const labels = (metadata.labels ??= {});
  if (labels[DEFAULTED_LABEL] === undefined) labels[DEFAULTED_LABEL] = 'true';
}

/** Mutating webhook: secure and bounded defaults for new pods. Fails open; reinvoked if others change the pod. */
export const webhook = defineMutatingWebhook<Pod>({
  name: 'pod-defaults',
  rules: podRules(['CREATE']),
  failurePolicy: 'Ignore',
  reinvocationPolicy: 'IfNeeded',
  lambda: { environment: { DEFAULT_CPU_LIMIT: '500m', DEFAULT_MEMORY_LIMIT: '256Mi' } },
  mutate: (pod) => applyDefaults(pod),
});

/** The Lambda handler. */
export const handler = webhook.handler;
export default webhook;
