import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { admissionReview } from '../../../../lib/harness/reviews.ts';
import { Deployment } from '../../../../lib/k8s/kinds.ts';
import { defineMutatingPolicy } from '../../../../lib/policies/mutating/define.ts';
import { defaultObject } from '../../../../lib/policies/mutating/defaults.ts';
import { on } from '../../../../lib/rule-builder.ts';
import { expectMutatingPolicyParity } from '../../../../lib/testing/mutating-policies.ts';

const core = (kind: string) => ({ group: '', version: 'v1', kind });
const apps = (kind: string) => ({ group: 'apps', version: 'v1', kind });
const batch = (kind: string) => ({ group: 'batch', version: 'v1', kind });

/** What PodSpec's defaulter adds to an empty spec. */
const POD_SPEC = {
  dnsPolicy: 'ClusterFirst',
  restartPolicy: 'Always',
  schedulerName: 'default-scheduler',
  securityContext: {},
  terminationGracePeriodSeconds: 30,
};
/** What Container's defaulter adds (an image with no tag is `latest`). */
const CONTAINER = { terminationMessagePath: '/dev/termination-log', terminationMessagePolicy: 'File' };

// Restated from Kubernetes pkg/apis/core/v1/defaults.go (SetDefaults_Pod, _PodSpec, _Container,
// _Probe, _HTTPGetAction, _Volume and its sources, _Service) and the fields core/v1 types default.
describe('core/v1 defaulters (defaults.go)', () => {
  it('defaults a Pod: its spec, containers, probes, ports, volumes; requests from limits; host ports', () => {
    const pod = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'p' },
      spec: {
        hostNetwork: true,
        containers: [
          {
            name: 'a',
            image: 'nginx',
            ports: [{ containerPort: 80 }],
            resources: { limits: { cpu: '1' }, requests: { memory: '1Gi' } },
            livenessProbe: { httpGet: { port: 80 }, periodSeconds: 5 },
            env: [{ name: 'N', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } }],
          },
        ],
        initContainers: [{ name: 'i', image: 'busybox:1.36', imagePullPolicy: 'Never' }],
        volumes: [{ name: 'e' }, { name: 's', secret: { secretName: 's' } }, { name: 'h', hostPath: { path: '/x' } }],
      },
    };
    assert.deepEqual(defaultObject(core('Pod'), pod), {
      ...pod,
      spec: {
        ...POD_SPEC,
        hostNetwork: true,
        enableServiceLinks: true,
        containers: [
          {
            ...CONTAINER,
            name: 'a',
            image: 'nginx',
            imagePullPolicy: 'Always',
            ports: [{ containerPort: 80, protocol: 'TCP', hostPort: 80 }],
            resources: { limits: { cpu: '1' }, requests: { memory: '1Gi', cpu: '1' } },
            livenessProbe: {
              httpGet: { port: 80, path: '/', scheme: 'HTTP' },
              periodSeconds: 5,
              timeoutSeconds: 1,
              successThreshold: 1,
              failureThreshold: 3,
            },
            env: [{ name: 'N', valueFrom: { fieldRef: { fieldPath: 'metadata.name', apiVersion: 'v1' } } }],
          },
        ],
        initContainers: [{ ...CONTAINER, name: 'i', image: 'busybox:1.36', imagePullPolicy: 'Never' }],
        volumes: [
          { name: 'e', emptyDir: {} },
          { name: 's', secret: { secretName: 's', defaultMode: 420 } },
          { name: 'h', hostPath: { path: '/x', type: '' } },
        ],
      },
    });
    assert.deepEqual(pod.spec.containers[0]!.ports, [{ containerPort: 80 }], 'the object given is left as it is');
  });

  it('pulls an image IfNotPresent unless its tag is latest (a digest has no tag)', () => {
    const pull = (image: string) =>
      (
        defaultObject(core('Pod'), { spec: { containers: [{ name: 'a', image }] } }) as {
          spec: { containers: Array<{ imagePullPolicy: string }> };
        }
      ).spec.containers[0]!.imagePullPolicy;
    assert.equal(pull('nginx:latest'), 'Always');
    assert.equal(pull('registry:5000/nginx'), 'Always');
    assert.equal(pull('registry:5000/nginx:1.2'), 'IfNotPresent');
    assert.equal(pull('nginx@sha256:abc'), 'IfNotPresent');
  });

  it('defaults a Service by its type', () => {
    const lb = defaultObject(core('Service'), {
      spec: { type: 'LoadBalancer', ports: [{ port: 80 }], sessionAffinity: 'ClientIP' },
      status: { loadBalancer: { ingress: [{ ip: '1.2.3.4' }, { hostname: 'h' }] } },
    });
    assert.deepEqual(lb, {
      spec: {
        type: 'LoadBalancer',
        ports: [{ port: 80, protocol: 'TCP', targetPort: 80 }],
        sessionAffinity: 'ClientIP',
        sessionAffinityConfig: { clientIP: { timeoutSeconds: 10800 } },
        externalTrafficPolicy: 'Cluster',
        internalTrafficPolicy: 'Cluster',
        allocateLoadBalancerNodePorts: true,
      },
      status: { loadBalancer: { ingress: [{ ip: '1.2.3.4', ipMode: 'VIP' }, { hostname: 'h' }] } },
    });
    const plain = defaultObject(core('Service'), {
      spec: { ports: [{ port: 80, targetPort: 'http' }], sessionAffinityConfig: { clientIP: {} } },
    });
    assert.deepEqual(plain, {
      spec: {
        ports: [{ port: 80, targetPort: 'http', protocol: 'TCP' }],
        sessionAffinity: 'None',
        type: 'ClusterIP',
        internalTrafficPolicy: 'Cluster',
      },
    });
  });

  it('leaves a kind without a defaulter here as it is (a ConfigMap: its empty data is not written)', () => {
    const cm = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' } };
    assert.equal(defaultObject(core('ConfigMap'), cm), cm);
  });
});

// Restated from Kubernetes pkg/apis/apps/v1/defaults.go and batch/v1/defaults.go.
describe('apps/v1 and batch/v1 defaulters (defaults.go)', () => {
  const template = { spec: { containers: [{ name: 'a', image: 'x:1' }] } };
  const defaultedTemplate = {
    spec: { ...POD_SPEC, containers: [{ ...CONTAINER, name: 'a', image: 'x:1', imagePullPolicy: 'IfNotPresent' }] },
  };

  it('defaults a Deployment, keeping an explicit zero', () => {
    assert.deepEqual(defaultObject(apps('Deployment'), { spec: { replicas: 0, template } }), {
      spec: {
        replicas: 0,
        template: defaultedTemplate,
        strategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: '25%', maxSurge: '25%' } },
        revisionHistoryLimit: 10,
        progressDeadlineSeconds: 600,
      },
    });
    assert.deepEqual(defaultObject(apps('Deployment'), { spec: { strategy: { type: 'Recreate' } } }), {
      spec: { strategy: { type: 'Recreate' }, replicas: 1, revisionHistoryLimit: 10, progressDeadlineSeconds: 600 },
    });
  });

  it('defaults a DaemonSet, a StatefulSet and a ReplicaSet', () => {
    assert.deepEqual(defaultObject(apps('DaemonSet'), { spec: {} }), {
      spec: {
        updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 1, maxSurge: 0 } },
        revisionHistoryLimit: 10,
      },
    });
    assert.deepEqual(defaultObject(apps('StatefulSet'), { spec: { template, volumeClaimTemplates: [{ spec: {} }] } }), {
      spec: {
        template: defaultedTemplate,
        volumeClaimTemplates: [{ spec: { volumeMode: 'Filesystem' }, status: { phase: 'Pending' } }],
        podManagementPolicy: 'OrderedReady',
        updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: 0 } },
        persistentVolumeClaimRetentionPolicy: { whenDeleted: 'Retain', whenScaled: 'Retain' },
        replicas: 1,
        revisionHistoryLimit: 10,
      },
    });
    assert.deepEqual(defaultObject(apps('ReplicaSet'), { spec: {} }), { spec: { replicas: 1 } });
  });

  it('defaults a Job (its labels from its template) and a CronJob (its job template untouched but the pod)', () => {
    const labelled = { metadata: { labels: { app: 'x' } }, ...template };
    assert.deepEqual(defaultObject(batch('Job'), { spec: { template: labelled } }), {
      metadata: { labels: { app: 'x' } },
      spec: {
        template: { metadata: { labels: { app: 'x' } }, ...defaultedTemplate },
        completions: 1,
        parallelism: 1,
        backoffLimit: 6,
        completionMode: 'NonIndexed',
        suspend: false,
      },
    });
    const parallel = defaultObject(batch('Job'), { spec: { completions: 5 } }) as { spec: Record<string, unknown> };
    assert.equal(parallel.spec.parallelism, 1);
    assert.equal(parallel.spec.completions, 5);
    assert.deepEqual(defaultObject(batch('CronJob'), { spec: { jobTemplate: { spec: { template } } } }), {
      spec: {
        jobTemplate: { spec: { template: defaultedTemplate } },
        concurrencyPolicy: 'Allow',
        suspend: false,
        successfulJobsHistoryLimit: 3,
        failedJobsHistoryLimit: 1,
      },
    });
  });
});

describe('the object is defaulted after each mutation, as the API server does', () => {
  it('a container a JSON patch adds is defaulted; served from Lambda the patch carries the defaults', async () => {
    const policy = defineMutatingPolicy({
      name: 'sidecar',
      matchConstraints: { resourceRules: [on(Deployment).create()] },
      mutations: [
        {
          patchType: 'JSONPatch',
          jsonPatch: {
            expression:
              '[JSONPatch{op: "add", path: "/spec/template/spec/containers/-", value: Object.spec.template.spec.containers{name: "proxy", image: "envoy:v1", ports: [Object.spec.template.spec.containers.ports{containerPort: 9901}]}}]',
          },
        },
      ],
    });
    const deployment = defaultObject(apps('Deployment'), {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web', namespace: 'default' },
      spec: { template: { spec: { containers: [{ name: 'a', image: 'x:1' }] } } },
    });
    const request = admissionReview(deployment as never, { namespace: 'default' }).request;
    const outcome = policy.evaluate(request);
    assert.deepEqual(outcome.status, undefined);
    const containers = (outcome.object as { spec: { template: { spec: { containers: unknown[] } } } }).spec.template
      .spec.containers;
    assert.deepEqual(containers[1], {
      ...CONTAINER,
      name: 'proxy',
      image: 'envoy:v1',
      imagePullPolicy: 'IfNotPresent',
      ports: [{ containerPort: 9901, protocol: 'TCP' }],
    });
    const { webhook } = await expectMutatingPolicyParity(policy, deployment as never, { namespace: 'default' });
    assert.ok(webhook?.patch.length);
  });
});
