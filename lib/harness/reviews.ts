import { randomUUID } from 'node:crypto';
import { builtinResources } from '../k8s/resources.ts';
import type { AdmissionReview, ConversionReview, KubeObject, Operation } from '../review/schemas.ts';

/** Options of `admissionReview`; everything not given is derived from the object. */
export interface AdmissionReviewOptions {
  operation?: Operation;
  oldObject?: KubeObject | null;
  userInfo?: AdmissionReview['request']['userInfo'];
  dryRun?: boolean;
  /** Review API version; default v1. */
  version?: 'v1' | 'v1beta1';
  uid?: string;
  namespace?: string;
  name?: string;
  /** Plural resource name; default the built-in resource of the kind, else the kind's English plural. */
  resource?: string;
  subResource?: string;
}

function gvk(object: KubeObject | null | undefined): { group: string; version: string; kind: string } {
  const apiVersion = object?.apiVersion ?? 'v1';
  const slash = apiVersion.lastIndexOf('/');
  return {
    group: slash < 0 ? '' : apiVersion.slice(0, slash),
    version: slash < 0 ? apiVersion : apiVersion.slice(slash + 1),
    kind: object?.kind ?? 'Unknown',
  };
}

/**
 * The plural resource the API server names for a kind: a built-in kind's own (`NetworkPolicy` →
 * `networkpolicies`, `Endpoints` → `endpoints`), else the lower-cased kind's English plural, as CRDs
 * are usually named (`Policy` → `policies`, `Class` → `classes`).
 */
function pluralOf(group: string, kind: string): string {
  const builtin = builtinResources().find((r) => !r.subresource && r.group === group && r.kind === kind);
  if (builtin) return builtin.resource;
  const lower = kind.toLowerCase();
  if (/[^aeiou]y$/.test(lower)) return `${lower.slice(0, -1)}ies`;
  if (/(s|x|z|ch|sh)$/.test(lower)) return `${lower}es`;
  return `${lower}s`;
}

const OPTIONS_KIND: Record<Operation, string | undefined> = {
  CREATE: 'CreateOptions',
  UPDATE: 'UpdateOptions',
  DELETE: 'DeleteOptions',
  CONNECT: undefined,
};

/**
 * Builds an AdmissionReview as the API server sends it. `object` is the new object
 * (pass null for DELETE and give `oldObject`).
 */
export function admissionReview(object: KubeObject | null, options: AdmissionReviewOptions = {}): AdmissionReview {
  const operation = options.operation ?? (object ? (options.oldObject ? 'UPDATE' : 'CREATE') : 'DELETE');
  const subject = object ?? options.oldObject ?? null;
  const kind = gvk(subject);
  const resource = {
    group: kind.group,
    version: kind.version,
    resource: options.resource ?? pluralOf(kind.group, kind.kind),
  };
  const request: AdmissionReview['request'] = {
    uid: options.uid ?? randomUUID(),
    kind,
    resource,
    requestKind: kind,
    requestResource: resource,
    operation,
    userInfo: options.userInfo ?? { username: 'kubernetes-admin', groups: ['system:masters', 'system:authenticated'] },
    object: object ? structuredClone(object) : null,
    oldObject: options.oldObject ? structuredClone(options.oldObject) : null,
    dryRun: options.dryRun ?? false,
  };
  const name = options.name ?? subject?.metadata?.name;
  const namespace = options.namespace ?? subject?.metadata?.namespace;
  if (name) request.name = name;
  if (namespace) request.namespace = namespace;
  if (options.subResource) request.subResource = request.requestSubResource = options.subResource;
  const optionsKind = OPTIONS_KIND[operation];
  if (optionsKind) request.options = { apiVersion: 'meta.k8s.io/v1', kind: optionsKind };
  return { apiVersion: `admission.k8s.io/${options.version ?? 'v1'}`, kind: 'AdmissionReview', request };
}

/** Builds a ConversionReview asking for `objects` at `desiredAPIVersion`. */
export function conversionReview(
  objects: KubeObject[],
  desiredAPIVersion: string,
  options: { version?: 'v1' | 'v1beta1'; uid?: string } = {},
): ConversionReview {
  return {
    apiVersion: `apiextensions.k8s.io/${options.version ?? 'v1'}`,
    kind: 'ConversionReview',
    request: {
      uid: options.uid ?? randomUUID(),
      desiredAPIVersion,
      objects: structuredClone(objects) as ConversionReview['request']['objects'],
    },
  };
}

// Kinds of the resources webhooks most often match; any other plural is singularised.
const KINDS: Record<string, string> = {
  configmaps: 'ConfigMap',
  cronjobs: 'CronJob',
  daemonsets: 'DaemonSet',
  deployments: 'Deployment',
  ingresses: 'Ingress',
  jobs: 'Job',
  namespaces: 'Namespace',
  networkpolicies: 'NetworkPolicy',
  persistentvolumeclaims: 'PersistentVolumeClaim',
  pods: 'Pod',
  replicasets: 'ReplicaSet',
  rolebindings: 'RoleBinding',
  secrets: 'Secret',
  serviceaccounts: 'ServiceAccount',
  services: 'Service',
  statefulsets: 'StatefulSet',
};

/** The kind of a plural resource name: `pods` → `Pod`, `policies` → `Policy`. */
export function kindOf(plural: string): string {
  const known = KINDS[plural];
  if (known) return known;
  const singular = plural.endsWith('ies')
    ? `${plural.slice(0, -3)}y`
    : plural.endsWith('sses')
      ? plural.slice(0, -2)
      : plural.replace(/s$/, '');
  return singular.charAt(0).toUpperCase() + singular.slice(1);
}
