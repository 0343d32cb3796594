import { allow, byOperation, defineValidatingWebhook, deny, type Decision } from 'kube-lambda-webhooks';
import { CONTAINER_LISTS, podRules, type Pod } from '../pod.ts';

/** Host namespaces a pod may not share with its node. */
const HOST_FIELDS = ['hostNetwork', 'hostPID', 'hostIPC'] as const;

/**
 * The tag of an image reference, or undefined when it has none. A digest (`@sha256:…`)
 * pins the image, so it counts as tagged. The tag is after the last `:` that follows the
 * last `/`, so a registry port (`registry:5000/app`) is not mistaken for one.
 */
export function imageTag(image: string): string | undefined {
  if (image.includes('@')) return '@digest';
  const name = image.slice(image.lastIndexOf('/') + 1);
  const colon = name.lastIndexOf(':');
  return colon < 0 ? undefined : name.slice(colon + 1);
}

/** The pod's name, or its generateName prefix for pods created by controllers. */
function podName(pod: Pod): string {
  const meta = pod.metadata as { name?: string; generateName?: string } | undefined;
  return meta?.name || (meta?.generateName ? `${meta.generateName}*` : '');
}

/**
 * Problems a denial lists; any more are counted, so the message stays short whatever the pod
 * (a pod may have thousands of containers, and ten are enough to act on).
 */
const LISTED_PROBLEMS = 10;

/** How a container of a list is named in messages: `container`, `initContainer`, `ephemeralContainer`. */
const kindOf = (list: (typeof CONTAINER_LISTS)[number]) => (list === 'containers' ? 'container' : list.slice(0, -1));

/**
 * A warning per container whose image is untagged or `:latest`, made only when asked for:
 * `allow` stops asking once the API server could show no more, so a pod with any number of
 * containers costs no more than it shows.
 */
function* imageWarnings(spec: NonNullable<Pod['spec']>): Generator<string> {
  for (const list of CONTAINER_LISTS) {
    for (const container of spec[list] ?? []) {
      const tag = container.image === undefined ? '@none' : imageTag(container.image);
      if (tag === undefined || tag === 'latest') {
        yield `${kindOf(list)} "${container.name}" uses image "${container.image}" ${tag ? 'with the :latest tag' : 'without a tag'}; pin a version`;
      }
    }
  }
}

/** Denies privileged containers and host namespaces; warns on untagged or `:latest` images. */
export function judgePod(pod: Pod): Decision {
  const spec = pod.spec ?? {};
  const problems: string[] = [];
  let unlisted = 0;
  const problem = (text: string) => {
    if (problems.length < LISTED_PROBLEMS) problems.push(text);
    else unlisted++;
  };
  for (const list of CONTAINER_LISTS) {
    for (const container of spec[list] ?? []) {
      if (container.securityContext?.privileged === true) problem(`${kindOf(list)} "${container.name}" is privileged`);
    }
  }
  for (const field of HOST_FIELDS) if (spec[field] === true) problem(`spec.${field} is true`);
  if (problems.length) {
    return deny(
      `pod "${podName(pod)}" is not allowed: ${problems.join('; ')}${unlisted ? `; and ${unlisted} more` : ''}`,
    );
  }
  return allow(imageWarnings(spec));
}

/** Validating webhook: pods may not be privileged or share the node's namespaces. */
export const webhook = defineValidatingWebhook<Pod>({
  name: 'pod-policy',
  rules: podRules(['CREATE', 'UPDATE']),
  failurePolicy: 'Fail',
  validate: byOperation<Pod>({
    onCreate: (pod) => judgePod(pod),
    // An update is judged on the new object alone.
    onUpdate: (_old, pod) => judgePod(pod),
  }),
});

/** The Lambda handler. */
export const handler = webhook.handler;
export default webhook;
