import type { KubeObject } from 'kube-lambda-webhooks';

/** The parts of a container the reference functions read and write. */
export interface Container {
  name: string;
  image?: string;
  securityContext?: { privileged?: boolean; [key: string]: unknown };
  resources?: { limits?: Record<string, string>; requests?: Record<string, string> };
  [key: string]: unknown;
}

/** The parts of a Pod the reference functions read and write. */
export interface Pod extends KubeObject {
  spec?: {
    containers?: Container[];
    initContainers?: Container[];
    ephemeralContainers?: Container[];
    hostNetwork?: boolean;
    hostPID?: boolean;
    hostIPC?: boolean;
    securityContext?: { runAsNonRoot?: boolean; [key: string]: unknown };
    [key: string]: unknown;
  };
}

/** Every container list of a pod spec, with the field name used in messages. */
export const CONTAINER_LISTS = ['containers', 'initContainers', 'ephemeralContainers'] as const;

/** Pod rules: the core `pods` resource, namespaced. */
export function podRules(operations: Array<'CREATE' | 'UPDATE'>) {
  return [{ operations, apiGroups: [''], apiVersions: ['v1'], resources: ['pods'], scope: 'Namespaced' as const }];
}
