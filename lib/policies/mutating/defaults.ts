/**
 * The API server's defaulters of the most used built-in kinds, restated from Kubernetes'
 * pkg/apis/core/v1, apps/v1 and batch/v1 defaults.go (and the fields their types default
 * declaratively), as a table of types: each type's field defaults, the defaulting only code can
 * say, and the types of its nested fields. The mutating-policy dispatcher runs them on the object
 * after each mutation, as the API server's scheme does.
 */

type Obj = Record<string, unknown>;

const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
/** A field Go reads as unset: absent, null, or a string's or plain integer's zero value. */
const unset = (v: unknown) => v === undefined || v === null || v === '' || v === 0;
/** Thrown by a write in a dry run: the object needs defaulting. */
const WOULD_WRITE = new Error('the object needs defaulting');
/** True while a dry run asks whether the object needs any default (no write is made). */
let dryRun = false;

/** Sets a field (every write of the defaulters goes through here, so a dry run can refuse it). */
function put(o: Obj, key: string, value: unknown): void {
  if (dryRun) throw WOULD_WRITE;
  o[key] = value;
}

/** The object at `key`, made when absent (Go's `if x == nil { x = &T{} }`). */
function child(o: Obj, key: string): Obj {
  if (!isObj(o[key])) put(o, key, {});
  return o[key] as Obj;
}

/** How a type is defaulted: fields set when unset, code for the rest, the types of nested fields. */
interface TypeDefaults {
  /** Defaults of Go value fields: set where the field is absent, null, `''` or `0`. */
  fields?: Record<string, unknown>;
  /** Defaults of Go pointer fields: set where the field is absent or null (an explicit `0` or `false` stays). */
  pointers?: Record<string, unknown>;
  /** Defaulting that reads other fields (SetDefaults_<Type>), run before the fields'. */
  code?: (o: Obj) => void;
  /** Nested fields by type: `Type` for an object, `[Type]` for a list of them. */
  nested?: Record<string, string | [string]>;
}

/** DefaultTerminationGracePeriodSeconds, the default mode of projected files (0644), a token's hour. */
const TERMINATION_GRACE_SECONDS = 30;
const DEFAULT_FILE_MODE = 0o644;
const TOKEN_EXPIRATION_SECONDS = 3600;
/** DefaultClientIPServiceAffinitySeconds: three hours. */
const CLIENT_IP_AFFINITY_SECONDS = 10_800;

/** The tag of an image reference as ParseImageName reads it: `latest` when none and no digest. */
function imageTag(image: string): string {
  if (image.includes('@')) {
    const name = image.slice(0, image.indexOf('@'));
    const colon = name.lastIndexOf(':');
    return colon > name.lastIndexOf('/') ? name.slice(colon + 1) : '';
  }
  const colon = image.lastIndexOf(':');
  return colon > image.lastIndexOf('/') ? image.slice(colon + 1) : 'latest';
}

/** The fields a Volume's source may be in: none set defaults it to an emptyDir. */
const isVolumeSource = (key: string) => key !== 'name';

/** SetDefaults_Pod's copy of each container's limits into its unset requests, and the host ports of host networking. */
function podOnly(pod: Obj): void {
  const spec = isObj(pod.spec) ? pod.spec : undefined;
  if (!spec) return;
  for (const list of ['containers', 'initContainers']) {
    for (const container of Array.isArray(spec[list]) ? spec[list] : []) {
      const resources = isObj(container) && isObj(container.resources) ? container.resources : undefined;
      if (!resources || !isObj(resources.limits)) continue;
      const requests = child(resources, 'requests');
      for (const [key, value] of Object.entries(resources.limits)) if (!(key in requests)) put(requests, key, value);
    }
  }
  if (spec.enableServiceLinks === undefined || spec.enableServiceLinks === null) put(spec, 'enableServiceLinks', true);
  if (spec.hostNetwork !== true) return;
  for (const list of ['containers', 'initContainers'])
    for (const container of Array.isArray(spec[list]) ? spec[list] : [])
      for (const port of isObj(container) && Array.isArray(container.ports) ? container.ports : [])
        if (isObj(port) && unset(port.hostPort)) put(port, 'hostPort', port.containerPort);
}

function service(o: Obj): void {
  const spec = child(o, 'spec');
  if (unset(spec.sessionAffinity)) put(spec, 'sessionAffinity', 'None');
  if (spec.sessionAffinity === 'None' && 'sessionAffinityConfig' in spec) {
    if (dryRun) throw WOULD_WRITE;
    delete spec.sessionAffinityConfig;
  }
  if (spec.sessionAffinity === 'ClientIP') {
    const clientIP = (spec.sessionAffinityConfig as { clientIP?: { timeoutSeconds?: unknown } } | undefined)?.clientIP;
    if (clientIP?.timeoutSeconds === undefined || clientIP.timeoutSeconds === null)
      put(spec, 'sessionAffinityConfig', { clientIP: { timeoutSeconds: CLIENT_IP_AFFINITY_SECONDS } });
  }
  if (unset(spec.type)) put(spec, 'type', 'ClusterIP');
  for (const port of Array.isArray(spec.ports) ? spec.ports : []) {
    if (!isObj(port)) continue;
    if (unset(port.protocol)) put(port, 'protocol', 'TCP');
    if (unset(port.targetPort)) put(port, 'targetPort', port.port);
  }
  const externalIPs = Array.isArray(spec.externalIPs) && spec.externalIPs.length > 0;
  const external =
    spec.type === 'LoadBalancer' || spec.type === 'NodePort' || (spec.type === 'ClusterIP' && externalIPs);
  if (external && unset(spec.externalTrafficPolicy)) put(spec, 'externalTrafficPolicy', 'Cluster');
  if (unset(spec.internalTrafficPolicy) && ['NodePort', 'LoadBalancer', 'ClusterIP'].includes(spec.type as string))
    put(spec, 'internalTrafficPolicy', 'Cluster');
  if (spec.type !== 'LoadBalancer') return;
  if (spec.allocateLoadBalancerNodePorts === undefined || spec.allocateLoadBalancerNodePorts === null)
    put(spec, 'allocateLoadBalancerNodePorts', true);
  const ingress = (o.status as { loadBalancer?: { ingress?: unknown[] } } | undefined)?.loadBalancer?.ingress;
  for (const entry of Array.isArray(ingress) ? ingress : [])
    if (isObj(entry) && !unset(entry.ip) && unset(entry.ipMode)) put(entry, 'ipMode', 'VIP');
}

/** A rolling update's defaults under `strategy` when its type is (or defaults to) RollingUpdate. */
function rollingUpdate(strategy: Obj, defaults: Obj): void {
  if (unset(strategy.type)) put(strategy, 'type', 'RollingUpdate');
  if (strategy.type !== 'RollingUpdate') return;
  const rolling = child(strategy, 'rollingUpdate');
  for (const [key, value] of Object.entries(defaults))
    if (rolling[key] === undefined || rolling[key] === null) put(rolling, key, value);
}

function statefulSet(o: Obj): void {
  const spec = child(o, 'spec');
  if (unset(spec.podManagementPolicy)) put(spec, 'podManagementPolicy', 'OrderedReady');
  const strategy = child(spec, 'updateStrategy');
  if (unset(strategy.type)) {
    put(strategy, 'type', 'RollingUpdate');
    child(strategy, 'rollingUpdate');
  }
  const rolling = strategy.rollingUpdate;
  if (
    strategy.type === 'RollingUpdate' &&
    isObj(rolling) &&
    (rolling.partition === undefined || rolling.partition === null)
  )
    put(rolling, 'partition', 0);
  const retention = child(spec, 'persistentVolumeClaimRetentionPolicy');
  if (unset(retention.whenDeleted)) put(retention, 'whenDeleted', 'Retain');
  if (unset(retention.whenScaled)) put(retention, 'whenScaled', 'Retain');
}

function job(o: Obj): void {
  const spec = child(o, 'spec');
  const none = (v: unknown) => v === undefined || v === null;
  if (none(spec.completions) && none(spec.parallelism)) {
    put(spec, 'completions', 1);
    put(spec, 'parallelism', 1);
  }
  const labels = (spec.template as { metadata?: { labels?: unknown } } | undefined)?.metadata?.labels;
  const metadata = child(o, 'metadata');
  if (isObj(labels) && !(isObj(metadata.labels) && Object.keys(metadata.labels).length))
    put(metadata, 'labels', { ...labels });
}

/** The table: each type's defaulting, by the name of its Go type. */
const TYPES: Record<string, TypeDefaults> = {
  Pod: { code: podOnly, nested: { spec: 'PodSpec' } },
  PodTemplateSpec: { nested: { spec: 'PodSpec' } },
  PodSpec: {
    fields: { dnsPolicy: 'ClusterFirst', restartPolicy: 'Always', schedulerName: 'default-scheduler' },
    pointers: { securityContext: {}, terminationGracePeriodSeconds: TERMINATION_GRACE_SECONDS },
    nested: {
      volumes: ['Volume'],
      containers: ['Container'],
      initContainers: ['Container'],
      ephemeralContainers: ['Container'],
    },
  },
  Container: {
    code: (c) => {
      if (unset(c.imagePullPolicy))
        put(c, 'imagePullPolicy', imageTag(String(c.image ?? '')) === 'latest' ? 'Always' : 'IfNotPresent');
    },
    fields: { terminationMessagePath: '/dev/termination-log', terminationMessagePolicy: 'File' },
    nested: {
      ports: ['ContainerPort'],
      env: ['EnvVar'],
      livenessProbe: 'Probe',
      readinessProbe: 'Probe',
      startupProbe: 'Probe',
      lifecycle: 'Lifecycle',
    },
  },
  ContainerPort: { fields: { protocol: 'TCP' } },
  EnvVar: { nested: { valueFrom: 'EnvVarSource' } },
  EnvVarSource: { nested: { fieldRef: 'ObjectFieldSelector' } },
  ObjectFieldSelector: { fields: { apiVersion: 'v1' } },
  Probe: {
    fields: { timeoutSeconds: 1, periodSeconds: 10, successThreshold: 1, failureThreshold: 3 },
    nested: { httpGet: 'HTTPGetAction' },
  },
  Lifecycle: { nested: { postStart: 'LifecycleHandler', preStop: 'LifecycleHandler' } },
  LifecycleHandler: { nested: { httpGet: 'HTTPGetAction' } },
  HTTPGetAction: { fields: { path: '/', scheme: 'HTTP' } },
  Volume: {
    code: (v) => {
      if (!Object.keys(v).some((k) => isVolumeSource(k) && v[k] !== null && v[k] !== undefined)) put(v, 'emptyDir', {});
    },
    nested: {
      secret: 'ModeOnly',
      configMap: 'ModeOnly',
      downwardAPI: 'DownwardAPIVolumeSource',
      projected: 'ProjectedVolumeSource',
      hostPath: 'HostPathVolumeSource',
    },
  },
  ModeOnly: { pointers: { defaultMode: DEFAULT_FILE_MODE } },
  DownwardAPIVolumeSource: { pointers: { defaultMode: DEFAULT_FILE_MODE }, nested: { items: ['DownwardAPIFile'] } },
  DownwardAPIFile: { nested: { fieldRef: 'ObjectFieldSelector' } },
  ProjectedVolumeSource: { pointers: { defaultMode: DEFAULT_FILE_MODE }, nested: { sources: ['VolumeProjection'] } },
  VolumeProjection: {
    nested: { serviceAccountToken: 'ServiceAccountTokenProjection', downwardAPI: 'DownwardAPIProjection' },
  },
  DownwardAPIProjection: { nested: { items: ['DownwardAPIFile'] } },
  ServiceAccountTokenProjection: { pointers: { expirationSeconds: TOKEN_EXPIRATION_SECONDS } },
  HostPathVolumeSource: { code: (h) => h.type ?? put(h, 'type', '') },
  Service: { code: service },
  Deployment: {
    code: (o) => rollingUpdate(child(child(o, 'spec'), 'strategy'), { maxUnavailable: '25%', maxSurge: '25%' }),
    nested: { spec: 'DeploymentSpec' },
  },
  DeploymentSpec: {
    pointers: { replicas: 1, revisionHistoryLimit: 10, progressDeadlineSeconds: 600 },
    nested: { template: 'PodTemplateSpec' },
  },
  DaemonSet: {
    code: (o) => rollingUpdate(child(child(o, 'spec'), 'updateStrategy'), { maxUnavailable: 1, maxSurge: 0 }),
    nested: { spec: 'DaemonSetSpec' },
  },
  DaemonSetSpec: { pointers: { revisionHistoryLimit: 10 }, nested: { template: 'PodTemplateSpec' } },
  StatefulSet: { code: statefulSet, nested: { spec: 'StatefulSetSpec' } },
  StatefulSetSpec: {
    pointers: { replicas: 1, revisionHistoryLimit: 10 },
    nested: { template: 'PodTemplateSpec', volumeClaimTemplates: ['PersistentVolumeClaim'] },
  },
  PersistentVolumeClaim: {
    code: (o) => {
      if (unset(child(o, 'status').phase)) put(child(o, 'status'), 'phase', 'Pending');
    },
    nested: { spec: 'PersistentVolumeClaimSpec' },
  },
  PersistentVolumeClaimSpec: { pointers: { volumeMode: 'Filesystem' } },
  ReplicaSet: { nested: { spec: 'ReplicaSetSpec' } },
  ReplicaSetSpec: { pointers: { replicas: 1 }, nested: { template: 'PodTemplateSpec' } },
  Job: { code: job, nested: { spec: 'JobSpec' } },
  JobSpec: {
    pointers: { parallelism: 1, backoffLimit: 6, completionMode: 'NonIndexed', suspend: false },
    nested: { template: 'PodTemplateSpec' },
  },
  CronJob: { nested: { spec: 'CronJobSpec' } },
  CronJobSpec: {
    fields: { concurrencyPolicy: 'Allow' },
    pointers: { suspend: false, successfulJobsHistoryLimit: 3, failedJobsHistoryLimit: 1 },
    nested: { jobTemplate: 'JobTemplateSpec' },
  },
  JobTemplateSpec: { nested: { spec: 'JobTemplateJobSpec' } },
  JobTemplateJobSpec: { nested: { template: 'PodTemplateSpec' } },
};

/** The kinds defaulted, by `group/version/Kind` (the core group is empty). */
export const DEFAULTED_KINDS: Readonly<Record<string, string>> = {
  '/v1/Pod': 'Pod',
  '/v1/Service': 'Service',
  'apps/v1/Deployment': 'Deployment',
  'apps/v1/StatefulSet': 'StatefulSet',
  'apps/v1/DaemonSet': 'DaemonSet',
  'apps/v1/ReplicaSet': 'ReplicaSet',
  'batch/v1/Job': 'Job',
  'batch/v1/CronJob': 'CronJob',
};

/** A type's table entry as lists, made once. */
interface Prepared {
  code?: (o: Obj) => void;
  fields: Array<[string, unknown]>;
  pointers: Array<[string, unknown]>;
  nested: Array<[string, string | [string]]>;
}
const prepared = new Map<string, Prepared>();

/** Defaults one value of a type in place, its nested values after it. */
function defaultAs(type: string, value: unknown): void {
  if (!isObj(value)) return;
  let entry = prepared.get(type);
  if (!entry) {
    const defaults = TYPES[type];
    if (!defaults) return;
    entry = {
      ...(defaults.code ? { code: defaults.code } : {}),
      fields: Object.entries(defaults.fields ?? {}),
      pointers: Object.entries(defaults.pointers ?? {}),
      nested: Object.entries(defaults.nested ?? {}),
    };
    prepared.set(type, entry);
  }
  entry.code?.(value);
  for (const [key, fallback] of entry.fields) if (unset(value[key])) put(value, key, fallback);
  for (const [key, fallback] of entry.pointers)
    if (value[key] === undefined || value[key] === null) put(value, key, isObj(fallback) ? { ...fallback } : fallback);
  for (const [key, nested] of entry.nested) {
    const field = value[key];
    if (typeof nested === 'string') defaultAs(nested, field);
    else if (Array.isArray(field)) for (const item of field) defaultAs(nested[0]!, item);
  }
}

/**
 * The object defaulted as the API server's scheme defaults its kind: the object itself when its
 * kind has no defaulter here or it needs no default (a dry run asks first, so an object the API
 * server already defaulted is not copied), else a defaulted copy (the object itself is left as it is).
 */
export function defaultObject(
  kind: { group: string; version: string; kind: string },
  object: Record<string, unknown>,
): Record<string, unknown> {
  const type = DEFAULTED_KINDS[`${kind.group}/${kind.version}/${kind.kind}`];
  if (!type) return object;
  dryRun = true;
  try {
    defaultAs(type, object);
    return object;
  } catch (err) {
    if (err !== WOULD_WRITE) throw err;
  } finally {
    dryRun = false;
  }
  const copy = structuredClone(object);
  defaultAs(type, copy);
  return copy;
}
